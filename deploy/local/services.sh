#!/usr/bin/env bash
# Starts, stops and reports the four Icepack services as separate local processes, on the
# embedded default configuration (deploy/local/icepack.env, overridable from the environment).
#   services.sh start|stop|status [service ...]
# `stop` without a service also stops the dispatcher's local Spark runs.
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
    # The demo on S3 (ICEPACK_DEMO_STORAGE=s3): the AWS SDK's keys for moto.
    # shellcheck source=demo/storage.sh
    source "$ICEPACK_ROOT/deploy/local/demo/storage.sh"
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

# The dispatcher's state directory as the services see it (icepack.env's default).
dispatcher_state_dir() {
  (
    set -a
    # shellcheck source=/dev/null
    source "$ICEPACK_ROOT/deploy/local/icepack.env"
    echo "$ICEPACK_DISPATCHER_STATE_DIR"
  )
}

# Spark runs of the local runner: detached (own session) so that they survive a dispatcher
# restart, which re-attaches to them. Stopping the whole stack stops them too; the next start
# finds them ended without a result and runs them again as a new attempt.
stop_spark_runs() {
  local dir pidfile pid stopped=()
  dir="$(dispatcher_state_dir)"
  for pidfile in "$dir"/*/pid; do
    [[ -f "$pidfile" ]] || continue
    pid="$(grep -o '"pid":[0-9]*' "$pidfile" | cut -d: -f2)"
    [[ -n "$pid" ]] || continue
    # Only while that pid is still the run (its command line names the run directory), not a
    # process that got the number after a reboot.
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$(dirname "$pidfile")" || continue
    kill -TERM -- "-$pid" 2>/dev/null && stopped+=("$pid")
  done
  [[ ${#stopped[@]} -gt 0 ]] || return 0
  local i alive
  for ((i = 0; i < 20; i++)); do
    alive=0
    for pid in "${stopped[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
    if ((alive == 0)); then
      log "stopped ${#stopped[@]} Spark run(s)"
      return 0
    fi
    sleep 1
  done
  for pid in "${stopped[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  log "killed ${#stopped[@]} Spark run(s) that did not stop within 20s"
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
    # The whole stack (./dev down): its Spark runs too. One service alone (a restart) leaves
    # them for the dispatcher to re-attach to.
    [[ $# -gt 0 ]] || stop_spark_runs
    ;;
  status)
    for s in "${services[@]}"; do
      p="$(port_of "$s")"
      if ready "$p"; then state=ready; elif pid_alive "$ICEPACK_RUN/$s.pid"; then state="running, not ready"; else state=stopped; fi
      printf '  %-17s http://127.0.0.1:%s  %s\n' "$s" "$p" "$state"
    done
    ;;
  console-url)
    # The console (ADR 0020), served by the planner. When stderr is a terminal the URL carries
    # the local token in its fragment (never sent to the server; the page keeps it for the
    # session and drops it from the address), so opening it needs no other step; in CI logs not.
    url="http://127.0.0.1:$(port_of planner)/console/"
    if [[ -t 2 && -r "$ICEPACK_RUN/api-token" ]]; then
      echo "$url#token=$(cat "$ICEPACK_RUN/api-token")"
    else
      echo "$url  (sign in with the token in $ICEPACK_RUN/api-token)"
    fi
    ;;
  *) die "usage: services.sh start|stop|status|console-url [service ...]" ;;
esac
