# shellcheck shell=bash
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
# The same broker's SASL_PLAINTEXT listener (SCRAM-SHA-512, ACLs enforced); local tests only.
ICEPACK_KAFKA_SASL_PORT="${ICEPACK_KAFKA_SASL_PORT:-19094}"
ICEPACK_CATALOG_PORT="${ICEPACK_CATALOG_PORT:-18181}"
# The S3-compatible store (s3.sh, moto) and its warehouse bucket.
ICEPACK_S3_PORT="${ICEPACK_S3_PORT:-19000}"
ICEPACK_S3_BUCKET="${ICEPACK_S3_BUCKET:-icepack}"
# The second REST catalog, whose warehouse is on that store (s3-catalog.sh).
ICEPACK_S3_CATALOG_PORT="${ICEPACK_S3_CATALOG_PORT:-18182}"
# The REST catalog that enforces OAuth2 (oauth-catalog.sh): Nessie and its management port,
# Keycloak (the token issuer) and its management port.
ICEPACK_OAUTH_CATALOG_PORT="${ICEPACK_OAUTH_CATALOG_PORT:-18183}"
ICEPACK_OAUTH_CATALOG_MGMT_PORT="${ICEPACK_OAUTH_CATALOG_MGMT_PORT:-18184}"
ICEPACK_OAUTH_ISSUER_PORT="${ICEPACK_OAUTH_ISSUER_PORT:-18185}"
ICEPACK_OAUTH_ISSUER_MGMT_PORT="${ICEPACK_OAUTH_ISSUER_MGMT_PORT:-18186}"
# The local Kubernetes control plane (k8s.sh): API server, etcd client and peer, the Spark
# operator's health probe, kwok's server.
ICEPACK_K8S_API_PORT="${ICEPACK_K8S_API_PORT:-16443}"
ICEPACK_ETCD_PORT="${ICEPACK_ETCD_PORT:-12379}"
ICEPACK_ETCD_PEER_PORT="${ICEPACK_ETCD_PEER_PORT:-12380}"
ICEPACK_SPARK_OPERATOR_PORT="${ICEPACK_SPARK_OPERATOR_PORT:-18091}"
ICEPACK_KWOK_PORT="${ICEPACK_KWOK_PORT:-18092}"

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
# require_free_ports VAR…: die naming the setting when the port a variable holds is taken.
require_free_ports() {
  local var
  for var in "$@"; do
    port_open "${!var}" && die "port ${!var} is taken ($var)"
  done
  return 0
}

# --- Versions of what the scripts install (override to try a neighbouring release). ---
ICEPACK_KAFKA_VERSION="${ICEPACK_KAFKA_VERSION:-4.4.0}"
ICEPACK_ICEBERG_VERSION="${ICEPACK_ICEBERG_VERSION:-1.10.1}"
# The Iceberg Spark runtime is built per Spark line and Scala version.
ICEPACK_SPARK_LINE="${ICEPACK_SPARK_LINE:-4.0}"
ICEPACK_PYSPARK_VERSION="${ICEPACK_PYSPARK_VERSION:-4.0.1}"
# The OAuth2-enforcing catalog (oauth-catalog.sh): the newest Nessie runner jar and Keycloak
# distribution that Maven Central serves here (docs/decisions/0030-real-oauth2-catalog.md).
ICEPACK_NESSIE_VERSION="${ICEPACK_NESSIE_VERSION:-0.99.0}"
ICEPACK_KEYCLOAK_VERSION="${ICEPACK_KEYCLOAK_VERSION:-26.7.3}"
# The Kubernetes control plane, built from the Go module proxy (k8s.sh install). The staging
# modules (k8s.io/api, client-go, …) use the matching v0.X.Y tag.
ICEPACK_K8S_VERSION="${ICEPACK_K8S_VERSION:-v1.37.2}"
ICEPACK_ETCD_VERSION="${ICEPACK_ETCD_VERSION:-v3.7.3}"
ICEPACK_KWOK_VERSION="${ICEPACK_KWOK_VERSION:-v0.8.0}"
ICEPACK_SPARK_OPERATOR_VERSION="${ICEPACK_SPARK_OPERATOR_VERSION:-v2.5.2}"
# Upper bound for one download step (mvn, pip, apt), so a stuck mirror fails instead of hanging.
ICEPACK_DOWNLOAD_TIMEOUT="${ICEPACK_DOWNLOAD_TIMEOUT:-1800}"
# A private Maven repository inside the cache: a fresh cache really is fresh, and ~/.m2 stays untouched.
ICEPACK_M2="${ICEPACK_M2:-$ICEPACK_CACHE/m2}"

ICEPACK_LOCK_FDS=()

# lock FILE: holds an exclusive lock on FILE until this (sub)shell exits, so two concurrent
# callers (two test runs, infra.sh and a developer) never install or start the same thing twice.
lock() {
  local fd
  exec {fd}>"$1"
  flock "$fd"
  ICEPACK_LOCK_FDS+=("$fd")
}

# close_locks: for a child that outlives this script (a daemon must not keep our locks).
close_locks() {
  local fd
  for fd in "${ICEPACK_LOCK_FDS[@]}"; do exec {fd}>&-; done
  ICEPACK_LOCK_FDS=()
}

# unlocked COMMAND...: runs COMMAND without this script's lock descriptors. A script that starts
# another service script (which may daemonize a server) while holding a lock must use it: the
# daemon would inherit the descriptor and hold the lock for its whole life.
unlocked() { (close_locks && "$@"); }

# daemonize PIDFILE LOGFILE COMMAND...: runs COMMAND detached in its own session, output to
# LOGFILE, and records its pid. Lock descriptors are closed so the daemon does not hold them.
daemonize() {
  local pidfile="$1" logfile="$2"; shift 2
  (
    close_locks
    cd "$ICEPACK_RUN"
    # Not a process-group leader here, so setsid execs in place and $! is the daemon's pid.
    exec setsid "$@" >>"$logfile" 2>&1 </dev/null
  ) &
  echo "$!" >"$pidfile"
}

# instance_running NAME PIDFILE PORT: true when the instance of this state directory runs on
# PORT. One that runs on another port is an error: a second copy would share its data dir.
# The port is recorded beside the pid file (record_port) when the instance starts.
instance_running() {
  local name="$1" pidfile="$2" port="$3" was
  pid_alive "$pidfile" || return 1
  # No record (started before ports were recorded): trust it.
  was="$(cat "${pidfile%.pid}.port" 2>/dev/null || echo "$port")"
  [[ "$was" == "$port" ]] \
    || die "$name already runs (pid $(cat "$pidfile")) on port $was, not $port: stop it first ($name.sh stop)"
}

record_port() { echo "$2" >"${1%.pid}.port"; }

# stop_pidfile NAME PIDFILE [SECONDS]: SIGTERM, wait for a clean exit, SIGKILL as a last resort.
stop_pidfile() {
  local name="$1" pidfile="$2" secs="${3:-60}" pid i
  if ! pid_alive "$pidfile"; then
    rm -f "$pidfile" "${pidfile%.pid}.port"
    log "$name: not running"
    return 0
  fi
  pid="$(cat "$pidfile")"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 4; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name: still running after ${secs}s, killing pid $pid"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile" "${pidfile%.pid}.port"
  log "$name: stopped"
}

# mvn_run ARGS...: Maven against the cache's repository, quiet, time-boxed. Serialized,
# because concurrent Maven runs corrupt a shared local repository.
mvn_run() (
  command -v mvn >/dev/null || die "Maven (mvn) is required to download jars"
  mkdir -p "$ICEPACK_M2"
  lock "$ICEPACK_CACHE/.m2.lock"
  # Maven 3.8 prints colour resets even in batch mode; strip them from the logs.
  timeout "$ICEPACK_DOWNLOAD_TIMEOUT" mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$ICEPACK_M2" "$@" 2>&1 \
    | sed 's/\x1b\[[0-9;]*m//g' >&2 \
    || die "mvn $* failed (or timed out after ${ICEPACK_DOWNLOAD_TIMEOUT}s)"
)

# maven_file GROUP:ARTIFACT:VERSION[:PACKAGING[:CLASSIFIER]]: downloads one artifact (no
# dependencies; packaging defaults to jar) into the cache's repository and prints its path.
maven_file() {
  local coord="$1" group artifact version packaging classifier path
  IFS=: read -r group artifact version packaging classifier <<<"$coord"
  path="$ICEPACK_M2/${group//.//}/$artifact/$version/$artifact-$version${classifier:+-$classifier}.${packaging:-jar}"
  if [[ ! -s "$path" ]]; then
    log "downloading $coord from Maven Central"
    mvn_run dependency:get -Dartifact="$coord" -Dtransitive=false >&2
  fi
  [[ -s "$path" ]] || die "$coord did not resolve"
  echo "$path"
}

# maven_jar GROUP:ARTIFACT:VERSION: the artifact's jar (maven_file).
maven_jar() { maven_file "$1"; }

# require_java: the JVM services need Java 17 or newer.
require_java() {
  command -v java >/dev/null || die "java (17+) is required"
  local v
  v="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  [[ "${v%%.*}" -ge 17 ]] || die "java 17+ is required, found $v"
}

# run_subcommand USAGE "$@": calls cmd_<subcommand> defined by the sourcing script.
run_subcommand() {
  local usage="$1"; shift
  local sub="${1:-}"
  [[ -n "$sub" ]] || die "usage: $usage"
  shift
  declare -F "cmd_$sub" >/dev/null || die "unknown subcommand '$sub'; usage: $usage"
  "cmd_$sub" "$@"
}
