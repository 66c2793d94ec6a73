#!/usr/bin/env bash
# Ensures a headless Chromium for the console's browser test: Debian's `chromium` package,
# installed with apt-get when missing (as root, or through sudo without a password).
# Prints the browser's executable path. ICEPACK_CHROMIUM overrides it (any Chromium build).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ -n "${ICEPACK_CHROMIUM:-}" ]]; then
  echo "$ICEPACK_CHROMIUM"
  exit 0
fi
found="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$found" ]]; then
  as_root=()
  if [[ "$(id -u)" != 0 ]]; then
    if sudo -n true 2>/dev/null; then
      as_root=(sudo -n)
    else
      echo "chromium is missing and apt-get needs root: install Debian's chromium package" >&2
      exit 1
    fi
  fi
  log "installing chromium with apt-get (once)"
  "${as_root[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq chromium >&2
  found="$(command -v chromium)"
fi
echo "$found"
