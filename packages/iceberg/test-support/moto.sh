#!/usr/bin/env bash
# Installs moto's S3 server into the cached venv (once) and runs it in the foreground on
# 127.0.0.1:$1. The S3 FileIO integration test starts it and stops it by its pid.
set -euo pipefail
port="${1:?usage: moto.sh PORT}"
venv="${ICEPACK_CACHE:-$HOME/.cache/icepack}/venv"
[[ -x "$venv/bin/python" ]] || { echo "no venv at $venv: run deploy/local/spark.sh install first" >&2; exit 1; }
if ! "$venv/bin/python" -c 'import moto.server, flask_cors' 2>/dev/null; then
  # Serialised: two test runs must not pip-install into the same venv at once.
  exec 9>"$venv/.moto-install.lock"
  flock 9
  "$venv/bin/python" -c 'import moto.server, flask_cors' 2>/dev/null \
    || timeout 600 "$venv/bin/python" -m pip install --quiet 'moto[server]>=5,<6' >&2
  exec 9>&-
fi
exec "$venv/bin/python" -m moto.server -H 127.0.0.1 -p "$port"
