#!/usr/bin/env bash
# Demo tables for `./dev up`: builds a few fixture tables (test/fixtures/generate.py) in the
# demo's REST catalog (the local one, or the one on S3 with ICEPACK_DEMO_STORAGE=s3) when they
# are absent, so a fresh stack has work to do. Tables that
# exist are left alone: Icepack may have compacted them already, and that is the point.
#   tables.sh ensure    build them if any is missing (first run: ~2 minutes of Spark)
#   tables.sh rebuild   drop and build them again (back to many small files and snapshots)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=storage.sh
source "$(dirname "${BASH_SOURCE[0]}")/storage.sh"

uri="$demo_catalog_uri"
out="$ICEPACK_RUN/demo/ground-truth.json"
[[ $ICEPACK_DEMO_STORAGE == local ]] || out="$ICEPACK_RUN/demo/ground-truth-$ICEPACK_DEMO_STORAGE.json"
# Small files in two layouts, position deletes, many snapshots with a tag, a sort order.
keys=(partitioned-small-files unpartitioned-small-files mor-position-deletes many-snapshots sorted)
# REST paths of the same tables (namespace levels joined by %1F), to see whether they exist.
paths=(demo%1Fsales%1Feu/tables/orders demo/tables/events demo%1Fsales/tables/customers_mor
  demo/tables/snapshot_heavy demo/tables/sorted_events)

present() {
  local p
  for p in "${paths[@]}"; do
    curl -fs -o /dev/null --max-time 10 "$uri/v1/namespaces/$p" || return 1
  done
}

build() {
  local p props=()
  for p in "${demo_catalog_properties[@]}"; do props+=(--catalog-property "$p"); done
  eval "$(bash "$ICEPACK_ROOT/deploy/local/spark.sh" env)"
  mkdir -p "$(dirname "$out")"
  log "demo: building the demo tables in $uri (Spark, about 2 minutes; log: $ICEPACK_LOGS/demo-tables.log)"
  "$ICEPACK_PYTHON" "$ICEPACK_ROOT/test/fixtures/generate.py" --catalog-uri "$uri" \
    --catalog-name demo "${props[@]}" --out "$out" --only "${keys[@]}" >>"$ICEPACK_LOGS/demo-tables.log" 2>&1 \
    || die "demo tables could not be built (log: $ICEPACK_LOGS/demo-tables.log)"
  log "demo: tables ready (their ground truth: $out)"
}

cmd_ensure() {
  if present; then
    log "demo: tables present in $uri (rebuild them with: bash deploy/local/demo/tables.sh rebuild)"
    return 0
  fi
  build
}

cmd_rebuild() { build; }

run_subcommand "tables.sh ensure|rebuild" "$@"
