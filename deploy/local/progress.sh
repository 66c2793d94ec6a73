#!/usr/bin/env bash
# Follows what the local Icepack does, one line per step: tables found and re-scanned, tasks
# planned, running and done with what they changed (icepack.table-state, icepack.task-events).
# Ctrl-C stops following only; `./dev down` stops Icepack.
#   progress.sh [--since ISO-8601]   task events before that instant are not shown
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
node_bin="$(bash "$ICEPACK_ROOT/deploy/local/node.sh")"
export PATH="$node_bin:$PATH"

if [[ "${1:-}" == "--since" ]]; then
  export ICEPACK_FOLLOW_SINCE="${2:?--since needs an instant}"
fi
cd "$ICEPACK_ROOT/test"
# kafkajs 2.2.4 trips a harmless TimeoutNegativeWarning on Node 24; keep it off the screen.
exec node --disable-warning=TimeoutNegativeWarning src/e2e/progress/main.ts
