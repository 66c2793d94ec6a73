#!/usr/bin/env bash
# Apache Iceberg's REST catalog server (org.apache.iceberg.rest.RESTCatalogServer, the runnable
# iceberg-open-api jar), backed by a SQLite file and a local file:// warehouse.
# Usage: catalog.sh install|start|stop|status|wait|up
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

coord="org.apache.iceberg:iceberg-open-api:$ICEPACK_ICEBERG_VERSION"
jar="$ICEPACK_CACHE/jars/iceberg-open-api-$ICEPACK_ICEBERG_VERSION.jar"
catalog_dir="$ICEPACK_RUN/catalog"
warehouse_dir="$ICEPACK_RUN/warehouse"
pidfile="$catalog_dir/catalog.pid"
logfile="$ICEPACK_LOGS/catalog.log"
uri="http://127.0.0.1:$ICEPACK_CATALOG_PORT"

cmd_install() {
  [[ -s "$jar" ]] && return 0
  require_java
  local path
  path="$(maven_jar "$coord")"
  # The runnable jar is the main artifact; make sure this one really is it.
  if command -v unzip >/dev/null; then
    [[ "$(unzip -p "$path" META-INF/MANIFEST.MF)" == *"Main-Class: org.apache.iceberg.rest.RESTCatalogServer"* ]] \
      || die "$coord is not the runnable REST catalog server jar"
  fi
  mkdir -p "$(dirname "$jar")"
  ln -sfn "$path" "$jar"
}

healthy() {
  curl -fsS -o /dev/null --max-time 5 "$uri/v1/config"
}

cmd_start() {
  command -v curl >/dev/null || die "curl is required"
  cmd_install
  lock "$ICEPACK_RUN/.catalog.lock"
  if instance_running catalog "$pidfile" "$ICEPACK_CATALOG_PORT"; then
    log "catalog: already running (pid $(cat "$pidfile")) on $uri"
    return 0
  fi
  # Jetty binds with SO_REUSEPORT: a second server on a taken port would start and share it.
  if port_open "$ICEPACK_CATALOG_PORT"; then
    healthy || die "port $ICEPACK_CATALOG_PORT is taken by something that is not a REST catalog"
    log "catalog: reusing the REST catalog already listening on $uri (not started by these scripts)"
    return 0
  fi
  mkdir -p "$catalog_dir" "$warehouse_dir"
  record_port "$pidfile" "$ICEPACK_CATALOG_PORT"
  log "catalog: starting Iceberg $ICEPACK_ICEBERG_VERSION REST catalog on $uri (log: $logfile)"
  # Every CATALOG_* variable becomes a catalog property (CATALOG_JDBC_USER → jdbc.user).
  # The SQLite file keeps namespaces and tables across restarts; SQLite ignores the credentials.
  # One pooled connection (`clients`): with the default two, a read on one connection can
  # hold SQLite's lock so every write on the other fails with SQLITE_BUSY until a restart.
  CATALOG_REST_PORT="$ICEPACK_CATALOG_PORT" \
    CATALOG_CLIENTS="${CATALOG_CLIENTS:-1}" \
    CATALOG_WAREHOUSE="file://$warehouse_dir" \
    CATALOG_URI="jdbc:sqlite:$catalog_dir/catalog.db" \
    CATALOG_JDBC_USER="${CATALOG_JDBC_USER:-icepack}" \
    CATALOG_JDBC_PASSWORD="${CATALOG_JDBC_PASSWORD:-icepack}" \
    daemonize "$pidfile" "$logfile" java -Xms64m -Xmx384m -XX:+UseSerialGC \
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -jar "$jar"
}

cmd_wait() {
  local i
  for ((i = 0; i < 90; i++)); do
    if healthy 2>/dev/null; then return 0; fi
    if [[ -f "$pidfile" ]] && ! pid_alive "$pidfile"; then
      die "catalog exited during start-up (log: $logfile)"
    fi
    sleep 1
  done
  die "catalog on $uri not healthy after 90s (log: $logfile)"
}

cmd_stop() {
  stop_pidfile catalog "$pidfile" 30
}

cmd_status() {
  if healthy 2>/dev/null; then
    echo "catalog  healthy  $uri  log: $logfile"
  else
    echo "catalog  down     $uri  log: $logfile"
    return 1
  fi
}

cmd_up() {
  cmd_start
  cmd_wait
  cmd_status
}

run_subcommand "catalog.sh install|start|stop|status|wait|up" "$@"
