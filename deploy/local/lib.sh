# Shared settings for the local-infrastructure scripts. Source it; do not run it.
# Every value can be overridden from the environment.
set -euo pipefail

ICEPACK_ROOT="${ICEPACK_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
# Downloads (Node, Kafka jars, the REST catalog jar, the Python venv with PySpark) are
# cached outside the repo and reused across clones and runs.
ICEPACK_CACHE="${ICEPACK_CACHE:-$HOME/.cache/icepack}"
# Runtime state of the local stack: data directories, pid files, logs.
ICEPACK_RUN="${ICEPACK_RUN:-$HOME/.local/state/icepack}"
ICEPACK_LOGS="${ICEPACK_LOGS:-$ICEPACK_RUN/logs}"

NODE_VERSION="${NODE_VERSION:-24.22.3}"
PNPM_VERSION="${PNPM_VERSION:-10.34.8}"

ICEPACK_REDIS_PORT="${ICEPACK_REDIS_PORT:-16379}"
ICEPACK_KAFKA_PORT="${ICEPACK_KAFKA_PORT:-19092}"
ICEPACK_KAFKA_CONTROLLER_PORT="${ICEPACK_KAFKA_CONTROLLER_PORT:-19093}"
ICEPACK_CATALOG_PORT="${ICEPACK_CATALOG_PORT:-18181}"

mkdir -p "$ICEPACK_CACHE" "$ICEPACK_RUN" "$ICEPACK_LOGS"

log() { printf '[icepack-local] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# pid_alive FILE: true when FILE names a running process.
pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND once a second until it succeeds.
wait_for() {
  local what="$1" secs="$2"; shift 2
  local i
  for ((i = 0; i < secs; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  die "$what not healthy after ${secs}s (logs: $ICEPACK_LOGS)"
}

# port_open PORT: something listens on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
