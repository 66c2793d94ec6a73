# Sourced (after lib.sh) by ./dev, services.sh and the demo scripts: where the demo's tables
# live. ICEPACK_DEMO_STORAGE=local (default): the local REST catalog, warehouse on this disk.
# ICEPACK_DEMO_STORAGE=s3: the REST catalog whose warehouse is on the S3 store (s3-catalog.sh,
# moto), read and written through Iceberg's S3FileIO by the scanner, the dispatcher and Spark.
# Either way the catalog is `lake`.
# shellcheck shell=bash
ICEPACK_DEMO_STORAGE="${ICEPACK_DEMO_STORAGE:-local}"
case "$ICEPACK_DEMO_STORAGE" in
  local) demo_catalog_port="$ICEPACK_CATALOG_PORT" ;;
  s3) demo_catalog_port="$ICEPACK_S3_CATALOG_PORT" ;;
  *) die "ICEPACK_DEMO_STORAGE: expected local or s3, got '$ICEPACK_DEMO_STORAGE'" ;;
esac
# shellcheck disable=SC2034 # used by the scripts that source this file
demo_catalog_uri="http://127.0.0.1:$demo_catalog_port"
# The catalog client properties of tables on S3 (KEY=VALUE), none for local ones.
demo_catalog_properties=()
if [[ $ICEPACK_DEMO_STORAGE == s3 ]]; then
  # shellcheck disable=SC2034
  demo_catalog_properties=("s3.endpoint=http://127.0.0.1:$ICEPACK_S3_PORT" s3.path-style-access=true client.region=us-east-1)
  # moto accepts any key, but the AWS SDK's default chain (scanner, dispatcher, Spark) needs
  # one: placeholders, unless the environment has keys already.
  export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-icepack-demo}"
  export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-icepack-demo}"
  export AWS_REGION="${AWS_REGION:-us-east-1}"
fi
