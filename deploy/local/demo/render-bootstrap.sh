#!/usr/bin/env bash
# Writes the demo bootstrap file (deploy/local/demo/bootstrap.yaml with this stack's catalog
# port and, with ICEPACK_DEMO_STORAGE=s3, the S3 catalog's port and properties filled in) to
# $ICEPACK_RUN/bootstrap.yaml and prints its path; the provisioner applies it at start-up
# (ICEPACK_BOOTSTRAP_FILE in deploy/local/icepack.env).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=storage.sh
source "$(dirname "${BASH_SOURCE[0]}")/storage.sh"

template="$ICEPACK_ROOT/deploy/local/demo/bootstrap.yaml"
out="$ICEPACK_RUN/bootstrap.yaml"
# The properties as a YAML flow mapping ({} for the local catalog).
properties=""
for p in "${demo_catalog_properties[@]}"; do properties+="${properties:+, }'${p%%=*}': '${p#*=}'"; done
sed -e "s/\${ICEPACK_CATALOG_PORT}/$demo_catalog_port/g" \
  -e "s|\${ICEPACK_DEMO_CATALOG_PROPERTIES}|{$properties}|g" "$template" >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
