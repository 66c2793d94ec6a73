#!/usr/bin/env bash
# A second Apache Iceberg REST catalog whose warehouse is on the local S3 store (s3.sh):
# the same runnable iceberg-open-api jar as catalog.sh (it bundles Iceberg's S3FileIO and the
# AWS SDK), its own SQLite file, `s3://$ICEPACK_S3_BUCKET/warehouse` through S3FileIO with
# path-style access to moto. Not started by infra.sh `up` yet.
# Usage: s3-catalog.sh install|start|stop|status|wait|up
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$(dirname "${BASH_SOURCE[0]}")"
jar="$ICEPACK_CACHE/jars/iceberg-open-api-$ICEPACK_ICEBERG_VERSION.jar"
catalog_dir="$ICEPACK_RUN/s3-catalog"
pidfile="$catalog_dir/s3-catalog.pid"
logfile="$ICEPACK_LOGS/s3-catalog.log"
uri="http://127.0.0.1:$ICEPACK_S3_CATALOG_PORT"
# Where the catalog's S3FileIO sends its requests: the store, unless something sits in between
# (the scanner bench puts a request-counting proxy there).
store_endpoint="${ICEPACK_S3_CATALOG_STORE_ENDPOINT:-http://127.0.0.1:$ICEPACK_S3_PORT}"

cmd_install() {
  bash "$here/catalog.sh" install
  bash "$here/s3.sh" install
}

healthy() {
  curl -fsS -o /dev/null --max-time 5 "$uri/v1/config"
}

# moto keeps its objects in memory, the catalog its tables in SQLite: after the store restarted
# empty, the catalog would still list tables whose files are gone (and a maintenance run that
# loads every table of the catalog, such as orphans, would fail on them). The catalog's
# directory and the bucket hold the same random marker; a bucket without it means the store
# lost what the catalog points at, and the catalog starts empty.
marker_file="$catalog_dir/store-marker"
store="http://127.0.0.1:$ICEPACK_S3_PORT/$ICEPACK_S3_BUCKET"

# The marker is the name of an empty object (moto answers listings without a signature).
store_has_marker() {
  curl -fsS --max-time 5 "$store?list-type=2&prefix=.icepack-s3-catalog/$1" 2>/dev/null \
    | grep -q "<Key>.icepack-s3-catalog/$1</Key>"
}

match_store() {
  local ours
  ours="$(cat "$marker_file" 2>/dev/null || true)"
  if [[ -n "$ours" ]] && store_has_marker "$ours"; then return 0; fi
  if [[ -f "$catalog_dir/catalog.db" ]]; then
    log "s3-catalog: the S3 store no longer holds this catalog's files (it restarted empty): starting with an empty catalog"
    rm -f "$catalog_dir/catalog.db"
  fi
  ours="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  curl -fsS -o /dev/null --max-time 5 -X PUT "$store/.icepack-s3-catalog/$ours" \
    || die "s3-catalog: cannot write its marker to s3://$ICEPACK_S3_BUCKET"
  printf '%s\n' "$ours" > "$marker_file"
}

cmd_start() {
  command -v curl >/dev/null || die "curl is required"
  cmd_install
  # Unlocked: the S3 server it may start must not inherit our install lock.
  unlocked bash "$here/s3.sh" up >/dev/null
  lock "$ICEPACK_RUN/.s3-catalog.lock"
  if instance_running s3-catalog "$pidfile" "$ICEPACK_S3_CATALOG_PORT"; then
    log "s3-catalog: already running (pid $(cat "$pidfile")) on $uri"
    return 0
  fi
  port_open "$ICEPACK_S3_CATALOG_PORT" && die "port $ICEPACK_S3_CATALOG_PORT is taken (ICEPACK_S3_CATALOG_PORT)"
  mkdir -p "$catalog_dir"
  match_store
  record_port "$pidfile" "$ICEPACK_S3_CATALOG_PORT"
  log "s3-catalog: starting the REST catalog on s3://$ICEPACK_S3_BUCKET/warehouse at $uri (log: $logfile)"
  # CATALOG_* become catalog properties: `__` → `-`, `_` → `.` (CATALOG_IO__IMPL → io-impl).
  # moto accepts any key; the server's S3FileIO takes them from the AWS environment.
  CATALOG_REST_PORT="$ICEPACK_S3_CATALOG_PORT" \
    CATALOG_CLIENTS=1 \
    CATALOG_WAREHOUSE="s3://$ICEPACK_S3_BUCKET/warehouse" \
    CATALOG_URI="jdbc:sqlite:$catalog_dir/catalog.db" \
    CATALOG_JDBC_USER=icepack \
    CATALOG_JDBC_PASSWORD=icepack \
    CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO \
    CATALOG_S3_ENDPOINT="$store_endpoint" \
    CATALOG_S3_PATH__STYLE__ACCESS=true \
    CATALOG_CLIENT_REGION=us-east-1 \
    AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=icepack AWS_SECRET_ACCESS_KEY=icepack \
    daemonize "$pidfile" "$logfile" java -Xms64m -Xmx384m -XX:+UseSerialGC \
    -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -jar "$jar"
}

cmd_wait() {
  local i
  for ((i = 0; i < 90; i++)); do
    if healthy 2>/dev/null; then return 0; fi
    if [[ -f "$pidfile" ]] && ! pid_alive "$pidfile"; then
      die "s3-catalog exited during start-up (log: $logfile)"
    fi
    sleep 1
  done
  die "s3-catalog on $uri not healthy after 90s (log: $logfile)"
}

cmd_stop() {
  stop_pidfile s3-catalog "$pidfile" 30
}

cmd_status() {
  if healthy 2>/dev/null; then
    echo "s3-catalog healthy  $uri  warehouse: s3://$ICEPACK_S3_BUCKET/warehouse  log: $logfile"
  else
    echo "s3-catalog down     $uri  log: $logfile"
    return 1
  fi
}

cmd_up() {
  cmd_start
  cmd_wait
  cmd_status
}

run_subcommand "s3-catalog.sh install|start|stop|status|wait|up" "$@"
