#!/usr/bin/env bash
# The whole local stack in one command.
#   infra.sh up     [redis kafka catalog spark k8s]  install + start + wait (all by default),
#                                                     then create the Kafka topics
#   infra.sh down   [...]                         stop (data is kept under $ICEPACK_RUN)
#   infra.sh status [...]                         one line per service; exit 1 if any is down
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$ICEPACK_ROOT/deploy/local"
all=(redis kafka catalog spark k8s)

services_from_args() {
  local s
  if [[ $# -eq 0 ]]; then set -- "${all[@]}"; fi
  for s in "$@"; do
    [[ " ${all[*]} " == *" $s "* ]] || die "unknown service '$s' (known: ${all[*]})"
  done
  printf '%s\n' "$@"
}

# Each service comes up in its own background job; its log output goes to a file that is
# shown only when it fails, its closing status line (stdout) to the summary. Maven downloads
# serialize themselves (lib.sh mvn_run), so running the jobs side by side is safe; the heavy
# start-ups are the Kafka and catalog JVMs, and on a fresh machine the Go build of the
# Kubernetes control plane (k8s.sh install, ~20 min; `./dev test` starts it first of all).
cmd_up() {
  local services=() s failed=() out
  mapfile -t services < <(services_from_args "$@")
  declare -A pids=()
  local started=$SECONDS
  for s in "${services[@]}"; do
    out="$ICEPACK_LOGS/up-$s.out"
    bash "$here/$s.sh" up >"$out.status" 2>"$out" &
    pids[$s]=$!
  done
  for s in "${services[@]}"; do
    if ! wait "${pids[$s]}"; then failed+=("$s"); fi
  done
  if [[ ${#failed[@]} -gt 0 ]]; then
    for s in "${failed[@]}"; do
      log "$s failed to come up; its output ($ICEPACK_LOGS/up-$s.out) ends with:"
      tail -n 20 "$ICEPACK_LOGS/up-$s.out" >&2
    done
    die "not healthy: ${failed[*]} (logs: $ICEPACK_LOGS)"
  fi
  log "up in $((SECONDS - started))s"
  for s in "${services[@]}"; do cat "$ICEPACK_LOGS/up-$s.out.status"; done
  echo "state: $ICEPACK_RUN  logs: $ICEPACK_LOGS  cache: $ICEPACK_CACHE"
}

cmd_down() {
  local services=() s
  mapfile -t services < <(services_from_args "$@")
  for s in "${services[@]}"; do bash "$here/$s.sh" stop; done
}

cmd_status() {
  local services=() s rc=0
  mapfile -t services < <(services_from_args "$@")
  for s in "${services[@]}"; do bash "$here/$s.sh" status || rc=1; done
  echo "state: $ICEPACK_RUN  logs: $ICEPACK_LOGS  cache: $ICEPACK_CACHE"
  return "$rc"
}

run_subcommand "infra.sh up|down|status [redis kafka catalog spark k8s]" "$@"
