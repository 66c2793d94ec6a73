#!/usr/bin/env bash
# Spark for the local runner and the table fixtures: PySpark and the job's packages
# (jobs/spark/requirements.txt) in a cached venv, plus the Iceberg Spark runtime jar. Nothing
# runs in the background; `check` proves the pair works end to end.
# Usage: spark.sh install|start|stop|status|wait|up|env|check
#   env    prints `export ICEPACK_SPARK_JARS=… ICEPACK_PYTHON=…` (eval it)
#   check  a tiny PySpark job against the local REST catalog (starts the catalog if needed)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

venv="$ICEPACK_CACHE/venv"
python="$venv/bin/python"
runtime="iceberg-spark-runtime-${ICEPACK_SPARK_LINE}_2.13"
coord="org.apache.iceberg:$runtime:$ICEPACK_ICEBERG_VERSION"
jar="$ICEPACK_CACHE/jars/$runtime-$ICEPACK_ICEBERG_VERSION.jar"
pip_log="$ICEPACK_CACHE/pip.log"
# The job's own packages (OpenTelemetry for its span), pinned; the stamp records which list
# the venv holds, so a changed list is installed again.
job_requirements="$ICEPACK_ROOT/jobs/spark/requirements.txt"
job_stamp="$venv/.icepack-job-requirements"

venv_ok() {
  [[ -x "$python" ]] && "$python" - "$ICEPACK_PYSPARK_VERSION" <<'PY' 2>/dev/null
import sys
import pyarrow  # noqa: F401
import pyspark
sys.exit(0 if pyspark.__version__ == sys.argv[1] else 1)
PY
}

# The newest Python 3.9+ on the machine (PySpark 4 needs 3.9 or newer).
base_python() {
  local candidate
  for candidate in python3.13 python3.12 python3.11 python3.10 python3.9 python3; do
    if command -v "$candidate" >/dev/null \
      && "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  die "Python 3.9+ with the venv module is required for PySpark"
}

job_packages_ok() {
  cmp -s "$job_requirements" "$job_stamp"
}

install_venv() {
  venv_ok && job_packages_ok && return 0
  lock "$ICEPACK_CACHE/.venv.lock"
  venv_ok || create_venv
  job_packages_ok || install_job_packages
}

create_venv() {
  local py
  py="$(base_python)"
  log "spark: creating $venv with pyspark==$ICEPACK_PYSPARK_VERSION and pyarrow ($("$py" -V); pip log: $pip_log)"
  # --clear: a half-installed venv from an interrupted run is rebuilt, not patched.
  "$py" -m venv --clear "$venv"
  timeout "$ICEPACK_DOWNLOAD_TIMEOUT" "$python" -m pip install --disable-pip-version-check \
    --no-input --progress-bar off "pyspark==$ICEPACK_PYSPARK_VERSION" pyarrow >"$pip_log" 2>&1 \
    || die "pip install of pyspark/pyarrow failed or timed out (log: $pip_log)"
  venv_ok || die "the venv at $venv still lacks pyspark $ICEPACK_PYSPARK_VERSION (log: $pip_log)"
}

install_job_packages() {
  log "spark: installing the job's packages from $job_requirements (pip log: $pip_log)"
  timeout "$ICEPACK_DOWNLOAD_TIMEOUT" "$python" -m pip install --disable-pip-version-check \
    --no-input --progress-bar off -r "$job_requirements" >>"$pip_log" 2>&1 \
    || die "pip install of $job_requirements failed or timed out (log: $pip_log)"
  "$python" -c 'import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter' \
    || die "the venv at $venv still lacks the job's packages (log: $pip_log)"
  cp "$job_requirements" "$job_stamp"
}

install_jar() {
  [[ -s "$jar" ]] && return 0
  local path
  path="$(maven_jar "$coord")"
  mkdir -p "$(dirname "$jar")"
  ln -sfn "$path" "$jar"
}

cmd_install() {
  require_java
  install_jar
  install_venv
}

cmd_env() {
  cmd_install
  printf 'export ICEPACK_SPARK_JARS=%q\n' "$jar"
  printf 'export ICEPACK_PYTHON=%q\n' "$python"
}

# Spark runs per job (local mode): there is no daemon to start, stop or wait for.
cmd_start() { cmd_install; }
cmd_wait() { venv_ok && job_packages_ok && [[ -s "$jar" ]]; }
cmd_stop() { :; }
cmd_up() {
  cmd_install
  cmd_status
}

cmd_status() {
  if [[ -s "$jar" ]] && venv_ok && job_packages_ok; then
    echo "spark    ready    pyspark $ICEPACK_PYSPARK_VERSION ($python)  jars: $jar"
  else
    echo "spark    missing  run: deploy/local/spark.sh install"
    return 1
  fi
}

cmd_check() {
  cmd_install
  bash "$ICEPACK_ROOT/deploy/local/catalog.sh" up
  ICEPACK_SPARK_JARS="$jar" ICEPACK_CATALOG_URI="http://127.0.0.1:$ICEPACK_CATALOG_PORT" \
    SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$python" \
    "$python" "$ICEPACK_ROOT/deploy/local/spark-check.py"
}

run_subcommand "spark.sh install|start|stop|status|wait|up|env|check" "$@"
