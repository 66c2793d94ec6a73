#!/usr/bin/env bash
# Runs moto's S3 server in the foreground on 127.0.0.1:$1 (installed into the cached venv by
# deploy/local/s3.sh, once). The S3 FileIO integration test starts it and stops it by its pid.
set -euo pipefail
port="${1:?usage: moto.sh PORT}"
venv="${ICEPACK_CACHE:-$HOME/.cache/icepack}/venv"
bash "$(dirname "${BASH_SOURCE[0]}")/../../../deploy/local/s3.sh" install
exec "$venv/bin/python" -m moto.server -H 127.0.0.1 -p "$port"
