#!/usr/bin/env bash
# Writes the demo bootstrap file (deploy/local/demo/bootstrap.yaml with this stack's catalog
# port filled in) to $ICEPACK_RUN/bootstrap.yaml and prints its path; the provisioner applies
# it at start-up (ICEPACK_BOOTSTRAP_FILE in deploy/local/icepack.env).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

template="$ICEPACK_ROOT/deploy/local/demo/bootstrap.yaml"
out="$ICEPACK_RUN/bootstrap.yaml"
sed "s/\${ICEPACK_CATALOG_PORT}/$ICEPACK_CATALOG_PORT/g" "$template" >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
