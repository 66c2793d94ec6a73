#!/usr/bin/env bash
# A real Iceberg REST catalog that enforces OAuth2 client credentials, from Maven Central:
# Project Nessie's server (its Iceberg REST API, `nessie-quarkus` runner jar) validates bearer
# tokens that Keycloak (`keycloak-quarkus-dist`) issues for the client-credentials grant. Nessie
# keeps tables on the local S3 store (s3.sh); Keycloak's realm lives in memory and is imported
# at each start. Both need Java 21+. Not started by infra.sh `up`: tests start it on demand.
# Why these two and not Polaris or Gravitino: docs/decisions/0030-real-oauth2-catalog.md.
# Usage: oauth-catalog.sh install|start|stop|status|wait|up
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here="$(dirname "${BASH_SOURCE[0]}")"
nessie_coord="org.projectnessie.nessie:nessie-quarkus:$ICEPACK_NESSIE_VERSION:jar:runner"
nessie_jar="$ICEPACK_CACHE/jars/nessie-quarkus-$ICEPACK_NESSIE_VERSION-runner.jar"
kc_coord="org.keycloak:keycloak-quarkus-dist:$ICEPACK_KEYCLOAK_VERSION:zip"
kc_home="$ICEPACK_CACHE/keycloak-$ICEPACK_KEYCLOAK_VERSION"
state="$ICEPACK_RUN/oauth-catalog"
nessie_pid="$state/nessie.pid"
kc_pid="$state/keycloak.pid"
nessie_log="$ICEPACK_LOGS/oauth-catalog-nessie.log"
kc_log="$ICEPACK_LOGS/oauth-catalog-keycloak.log"
# The confidential client the tests use; its secret is made once per state directory.
client_id=icepack-scanner
# A second client with the same secret whose tokens live short_token_seconds: far shorter than
# a Spark job, which must refresh its token to finish (local-runner-s3.int.test.ts). Keycloak
# counts whole seconds (a 3 s token may be valid 2.1 s), hence Nessie's grace below.
short_client_id=icepack-short-token
short_token_seconds=3
secret_file="$state/client-secret"
realm=icepack
catalog_uri="http://127.0.0.1:$ICEPACK_OAUTH_CATALOG_PORT/iceberg"
issuer_uri="http://127.0.0.1:$ICEPACK_OAUTH_ISSUER_PORT/realms/$realm"

# java21: a java of 21 or newer (both servers are built for 21; the machine's default is 17).
# ICEPACK_JAVA21 names one; else JAVA_HOME's, the one on PATH, or the newest under /usr/lib/jvm.
java21() {
  local candidate v
  for candidate in "${ICEPACK_JAVA21:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" \
    $(ls -d /usr/lib/jvm/*/bin/java 2>/dev/null | sort -rV); do
    [[ -n "$candidate" && -x "$candidate" ]] || continue
    v="$("$candidate" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
    if [[ "${v%%.*}" -ge 21 ]]; then
      echo "$candidate"
      return 0
    fi
  done
  die "Nessie $ICEPACK_NESSIE_VERSION and Keycloak $ICEPACK_KEYCLOAK_VERSION need Java 21+; set ICEPACK_JAVA21 to its java"
}

cmd_install() {
  command -v unzip >/dev/null || die "unzip is required"
  local path tmp
  lock "$ICEPACK_CACHE/.oauth-catalog-install.lock"
  if [[ ! -s "$nessie_jar" ]]; then
    path="$(maven_file "$nessie_coord")"
    mkdir -p "$(dirname "$nessie_jar")"
    ln -sfn "$path" "$nessie_jar"
  fi
  if [[ ! -x "$kc_home/bin/kc.sh" ]]; then
    path="$(maven_file "$kc_coord")"
    tmp="$(mktemp -d "$ICEPACK_CACHE/.keycloak.XXXXXX")"
    unzip -q "$path" -d "$tmp"
    # Augment once here (in-memory database, no health or metrics endpoints), so every start
    # is `start --optimized` and skips the minute-long build.
    JAVA_HOME="$(dirname "$(dirname "$(java21)")")" "$tmp/keycloak-$ICEPACK_KEYCLOAK_VERSION/bin/kc.sh" \
      build --db=dev-mem >"$tmp/build.log" 2>&1 || die "keycloak build failed: $(tail -5 "$tmp/build.log")"
    rm -rf "$kc_home"
    mv "$tmp/keycloak-$ICEPACK_KEYCLOAK_VERSION" "$kc_home"
    rm -rf "$tmp"
  fi
}

catalog_refuses_anonymous() {
  [[ "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$catalog_uri/v1/config")" == 401 ]]
}

issuer_up() {
  curl -fsS -o /dev/null --max-time 5 "$issuer_uri/.well-known/openid-configuration"
}

# realm_json SECRET: one realm, confidential clients that may only use client credentials,
# and the `catalog` scope that Iceberg clients ask for by default. Each token issued is a
# CLIENT_LOGIN event, logged (start_keycloak) so a test can count a client's tokens.
realm_json() {
  cat <<EOF
{
  "realm": "$realm",
  "enabled": true,
  "eventsEnabled": false,
  "eventsListeners": ["jboss-logging"],
  "clientScopes": [
    { "name": "catalog", "protocol": "openid-connect",
      "attributes": { "include.in.token.scope": "true" } },
    { "name": "basic", "protocol": "openid-connect",
      "attributes": { "include.in.token.scope": "false" },
      "protocolMappers": [
        { "name": "sub", "protocol": "openid-connect", "protocolMapper": "oidc-sub-mapper",
          "config": { "access.token.claim": "true", "introspection.token.claim": "true" } } ] }
  ],
  "clients": [
    { "clientId": "$client_id", "enabled": true, "publicClient": false,
      "clientAuthenticatorType": "client-secret", "secret": "$1",
      "serviceAccountsEnabled": true, "standardFlowEnabled": false,
      "directAccessGrantsEnabled": false,
      "defaultClientScopes": ["basic"], "optionalClientScopes": ["catalog"] },
    { "clientId": "$short_client_id", "enabled": true, "publicClient": false,
      "clientAuthenticatorType": "client-secret", "secret": "$1",
      "serviceAccountsEnabled": true, "standardFlowEnabled": false,
      "directAccessGrantsEnabled": false,
      "attributes": { "access.token.lifespan": "$short_token_seconds" },
      "defaultClientScopes": ["basic"], "optionalClientScopes": ["catalog"] }
  ]
}
EOF
}

start_keycloak() {
  local java="$1"
  if instance_running oauth-catalog-keycloak "$kc_pid" "$ICEPACK_OAUTH_ISSUER_PORT"; then return 0; fi
  require_free_ports ICEPACK_OAUTH_ISSUER_PORT ICEPACK_OAUTH_ISSUER_MGMT_PORT
  # The realm is in memory: imported at every start from the state directory's secret.
  mkdir -p "$kc_home/data/import"
  (umask 077 && realm_json "$(cat "$secret_file")" >"$kc_home/data/import/$realm-realm.json")
  record_port "$kc_pid" "$ICEPACK_OAUTH_ISSUER_PORT"
  log "oauth-catalog: starting Keycloak $ICEPACK_KEYCLOAK_VERSION (token issuer) on $issuer_uri (log: $kc_log)"
  JAVA_HOME="$(dirname "$(dirname "$java")")" \
    JAVA_OPTS_KC_HEAP="-Xms64m -Xmx512m" \
    daemonize "$kc_pid" "$kc_log" "$kc_home/bin/kc.sh" start --optimized \
    --http-enabled=true --http-host=127.0.0.1 --http-port="$ICEPACK_OAUTH_ISSUER_PORT" \
    --http-management-port="$ICEPACK_OAUTH_ISSUER_MGMT_PORT" --hostname-strict=false \
    --spi-events-listener--jboss-logging--success-level=info \
    --import-realm
}

start_nessie() {
  local java="$1"
  if instance_running oauth-catalog-nessie "$nessie_pid" "$ICEPACK_OAUTH_CATALOG_PORT"; then return 0; fi
  require_free_ports ICEPACK_OAUTH_CATALOG_PORT ICEPACK_OAUTH_CATALOG_MGMT_PORT
  mkdir -p "$state/nessie-db"
  record_port "$nessie_pid" "$ICEPACK_OAUTH_CATALOG_PORT"
  log "oauth-catalog: starting Nessie $ICEPACK_NESSIE_VERSION on $catalog_uri, tokens from $issuer_uri (log: $nessie_log)"
  # Every request needs a bearer token that the issuer signed (OIDC discovery, JWKS); there is
  # no authorization on top (one client, full access). Two seconds of grace past a token's
  # expiry, as for clock skew: Iceberg refreshes at 90% of the lifetime it was told, which a
  # whole-second `exp` can undercut by a second. moto accepts any S3 key: the pair is
  # passed as a Nessie secret reference, as Nessie requires.
  daemonize "$nessie_pid" "$nessie_log" "$java" -Xms64m -Xmx512m -XX:+UseSerialGC \
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$ICEPACK_OAUTH_CATALOG_PORT" \
    -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="$ICEPACK_OAUTH_CATALOG_MGMT_PORT" \
    -Dquarkus.http.access-log.enabled=false \
    -Dquarkus.otel.sdk.disabled=true \
    -Dnessie.version.store.type=ROCKSDB \
    -Dnessie.version.store.persist.rocks.database-path="$state/nessie-db" \
    -Dnessie.catalog.default-warehouse=warehouse \
    -Dnessie.catalog.warehouses.warehouse.location="s3://$ICEPACK_S3_BUCKET/oauth-warehouse" \
    -Dnessie.catalog.service.s3.default-options.endpoint="http://127.0.0.1:$ICEPACK_S3_PORT" \
    -Dnessie.catalog.service.s3.default-options.path-style-access=true \
    -Dnessie.catalog.service.s3.default-options.region=us-east-1 \
    -Dnessie.catalog.service.s3.default-options.access-key=urn:nessie-secret:quarkus:icepack-s3 \
    -Dicepack-s3.name=icepack -Dicepack-s3.secret=icepack \
    -Dnessie.server.authentication.enabled=true \
    -Dquarkus.oidc.tenant-enabled=true \
    -Dquarkus.oidc.auth-server-url="$issuer_uri" \
    -Dquarkus.oidc.client-id=nessie \
    -Dquarkus.oidc.token.lifespan-grace=2 \
    -jar "$nessie_jar"
}

cmd_start() {
  command -v curl >/dev/null || die "curl is required"
  cmd_install
  # Unlocked: the S3 server it may start must not inherit our install lock.
  unlocked bash "$here/s3.sh" up >/dev/null
  lock "$ICEPACK_RUN/.oauth-catalog.lock"
  local java
  java="$(java21)"
  mkdir -p "$state"
  [[ -s "$secret_file" ]] || (umask 077 && head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$secret_file")
  start_keycloak "$java"
  # Nessie's OIDC tenant reads the issuer's discovery document when it starts.
  wait_until "Keycloak on $issuer_uri" "$kc_pid" "$kc_log" issuer_up
  start_nessie "$java"
}

# wait_until WHAT PIDFILE LOG CHECK: polls CHECK for up to 180 s (Keycloak's first start on a
# busy 2-core machine takes ~60 s); fails at once when the process exits.
wait_until() {
  local what="$1" pidfile="$2" logfile="$3" check="$4" i
  for ((i = 0; i < 180; i++)); do
    if "$check" 2>/dev/null; then return 0; fi
    if [[ -f "$pidfile" ]] && ! pid_alive "$pidfile"; then
      die "$what exited during start-up (log: $logfile)"
    fi
    sleep 1
  done
  die "$what not healthy after 180s (log: $logfile)"
}

cmd_wait() {
  wait_until "Keycloak on $issuer_uri" "$kc_pid" "$kc_log" issuer_up
  wait_until "Nessie on $catalog_uri" "$nessie_pid" "$nessie_log" catalog_refuses_anonymous
}

cmd_stop() {
  stop_pidfile oauth-catalog-nessie "$nessie_pid" 30
  stop_pidfile oauth-catalog-keycloak "$kc_pid" 30
}

cmd_status() {
  if issuer_up && catalog_refuses_anonymous; then
    echo "oauth-catalog healthy  $catalog_uri  tokens: $issuer_uri/protocol/openid-connect/token  client: $client_id (secret: $secret_file)  logs: $nessie_log $kc_log"
  else
    echo "oauth-catalog down     $catalog_uri  logs: $nessie_log $kc_log"
    return 1
  fi
}

cmd_up() {
  cmd_start
  cmd_wait
  cmd_status
}

run_subcommand "oauth-catalog.sh install|start|stop|status|wait|up" "$@"
