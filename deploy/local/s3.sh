#!/usr/bin/env bash
# An S3-compatible object store for the local stack: moto's S3 server (PyPI `moto[server]`,
# installed into the cached venv) on a loopback port, with the bucket `$ICEPACK_S3_BUCKET`.
# Objects live in the server's memory: a stop loses them. Not started by infra.sh `up` yet.
# Usage: s3.sh install|start|stop|status|wait|up
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

venv="$ICEPACK_CACHE/venv"
python="$venv/bin/python"
s3_dir="$ICEPACK_RUN/s3"
pidfile="$s3_dir/s3.pid"
logfile="$ICEPACK_LOGS/s3.log"
uri="http://127.0.0.1:$ICEPACK_S3_PORT"

cmd_install() {
  [[ -x "$python" ]] || "$(dirname "${BASH_SOURCE[0]}")/spark.sh" install
  "$python" -c 'import moto.server, flask_cors' 2>/dev/null && return 0
  # Serialised: two runs must not pip-install into the same venv at once.
  lock "$venv/.moto-install.lock"
  "$python" -c 'import moto.server, flask_cors' 2>/dev/null && return 0
  log "s3: installing moto[server] into $venv"
  timeout "$ICEPACK_DOWNLOAD_TIMEOUT" "$python" -m pip install --quiet 'moto[server]>=5,<6' >&2
}

healthy() {
  # moto answers ListBuckets without checking the signature.
  curl -fsS -o /dev/null --max-time 5 "$uri/"
}

cmd_start() {
  command -v curl >/dev/null || die "curl is required"
  cmd_install
  lock "$ICEPACK_RUN/.s3.lock"
  if instance_running s3 "$pidfile" "$ICEPACK_S3_PORT"; then
    log "s3: already running (pid $(cat "$pidfile")) on $uri"
    return 0
  fi
  port_open "$ICEPACK_S3_PORT" && die "port $ICEPACK_S3_PORT is taken (ICEPACK_S3_PORT)"
  mkdir -p "$s3_dir"
  record_port "$pidfile" "$ICEPACK_S3_PORT"
  log "s3: starting moto's S3 server on $uri (log: $logfile)"
  daemonize "$pidfile" "$logfile" "$python" -m moto.server -H 127.0.0.1 -p "$ICEPACK_S3_PORT"
}

cmd_wait() {
  local i
  for ((i = 0; i < 60; i++)); do
    if healthy 2>/dev/null; then
      # The warehouse bucket; creating it again is a no-op in us-east-1.
      curl -fsS -o /dev/null --max-time 5 -X PUT "$uri/$ICEPACK_S3_BUCKET" \
        || die "s3: cannot create bucket $ICEPACK_S3_BUCKET"
      return 0
    fi
    if [[ -f "$pidfile" ]] && ! pid_alive "$pidfile"; then
      die "s3 exited during start-up (log: $logfile)"
    fi
    sleep 1
  done
  die "s3 on $uri not healthy after 60s (log: $logfile)"
}

cmd_stop() {
  stop_pidfile s3 "$pidfile" 15
}

cmd_status() {
  if healthy 2>/dev/null; then
    echo "s3       healthy  $uri  bucket: $ICEPACK_S3_BUCKET  log: $logfile"
  else
    echo "s3       down     $uri  log: $logfile"
    return 1
  fi
}

cmd_up() {
  cmd_start
  cmd_wait
  cmd_status
}

run_subcommand "s3.sh install|start|stop|status|wait|up" "$@"
