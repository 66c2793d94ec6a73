#!/usr/bin/env bash
# Starts, stops and reports the four Icepack services as separate local processes, on the
# embedded default configuration (deploy/local/icepack.env, overridable from the environment).
#   services.sh start|stop|status [service ...]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export PATH="$(bash "$ICEPACK_ROOT/deploy/local/node.sh"):$PATH"

ALL=(provisioner metadata-scanner planner dispatcher)
declare -A PORT=([provisioner]=18080 [metadata-scanner]=18081 [planner]=18082 [dispatcher]=18083)

port_of() {
  local var="ICEPACK_$(echo "$1" | tr 'a-z-' 'A-Z_')_PORT"
  echo "${!var:-${PORT[$1]}}"
}

# The local API token: made once per state directory, readable only by its owner, passed to
# the services as a file so it never shows up in a process list or a log.
ensure_api_token() {
  local file="$ICEPACK_RUN/api-token"
  if [[ ! -s "$file" ]]; then
    (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$file")
  fi
  echo "$file"
}

start_one() {
  local svc="$1" port pidfile
  port="$(port_of "$svc")"
  pidfile="$ICEPACK_RUN/$svc.pid"
  if pid_alive "$pidfile"; then
    log "$svc already running (pid $(cat "$pidfile"))"
    return
  fi
  (
    set -a
    # shellcheck source=/dev/null
    source "$ICEPACK_ROOT/deploy/local/icepack.env"
    set +a
    export ICEPACK_SERVICE_NAME="$svc" ICEPACK_HTTP_PORT="$port"
    export ICEPACK_API_TOKEN_FILE="${ICEPACK_API_TOKEN_FILE:-$(ensure_api_token)}"
    # The dispatcher's local runner: spark-submit, the Iceberg runtime jar, and where it keeps
    # its run directories.
    export ICEPACK_CACHE ICEPACK_RUN
    eval "$(bash "$ICEPACK_ROOT/deploy/local/spark.sh" env)"
    cd "$ICEPACK_ROOT/services/$svc"
    # A session of its own: Ctrl-C in the terminal (e.g. on ./dev up's progress) must not reach it.
    nohup setsid node src/main.ts >>"$ICEPACK_LOGS/$svc.log" 2>&1 &
    echo $! >"$pidfile"
  )
  log "started $svc on :$port (log $ICEPACK_LOGS/$svc.log)"
}

ready() { curl -fsS "http://127.0.0.1:$1/readyz" >/dev/null; }

stop_one() {
  local pidfile="$ICEPACK_RUN/$1.pid"
  if pid_alive "$pidfile"; then
    local pid
    pid="$(cat "$pidfile")"
    kill -TERM "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    log "stopped $1"
  fi
  rm -f "$pidfile"
}

action="${1:-status}"
shift || true
services=("$@")
[[ ${#services[@]} -gt 0 ]] || services=("${ALL[@]}")

case "$action" in
  start)
    # The provisioner's bootstrap file (ICEPACK_BOOTSTRAP_FILE): the demo catalog and group.
    bash "$ICEPACK_ROOT/deploy/local/demo/render-bootstrap.sh" >/dev/null
    for s in "${services[@]}"; do start_one "$s"; done
    for s in "${services[@]}"; do wait_for "$s /readyz" 60 ready "$(port_of "$s")"; done
    ;;
  stop)
    for s in "${services[@]}"; do stop_one "$s"; done
    ;;
  status)
    for s in "${services[@]}"; do
      p="$(port_of "$s")"
      if ready "$p"; then state=ready; elif pid_alive "$ICEPACK_RUN/$s.pid"; then state="running, not ready"; else state=stopped; fi
      printf '  %-17s http://127.0.0.1:%s  %s\n' "$s" "$p" "$state"
    done
    ;;
  *) die "usage: services.sh start|stop|status [service ...]" ;;
esac
