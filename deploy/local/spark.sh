#!/usr/bin/env bash
# Spark for the local runner and the table fixtures: PySpark and the job's packages
# (jobs/spark/requirements.txt) in a cached venv, plus the Iceberg Spark runtime jar and
# Iceberg's AWS bundle of the same version (S3FileIO and the AWS SDK, for tables on S3). Nothing
# runs in the background; `check` proves the pair works end to end.
# Usage: spark.sh install|start|stop|status|wait|up|env|check
#   env    prints `export ICEPACK_SPARK_JARS=… ICEPACK_PYTHON=…` (eval it); ICEPACK_SPARK_JARS is
#          the comma-separated `spark.jars` list: the runtime jar, then the AWS bundle
#   check  a tiny PySpark job against the local REST catalog (starts the catalog if needed)
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

venv="$ICEPACK_CACHE/venv"
python="$venv/bin/python"
runtime="iceberg-spark-runtime-${ICEPACK_SPARK_LINE}_2.13"
coord="org.apache.iceberg:$runtime:$ICEPACK_ICEBERG_VERSION"
jar="$ICEPACK_CACHE/jars/$runtime-$ICEPACK_ICEBERG_VERSION.jar"
# Iceberg's S3FileIO and the shaded AWS SDK v2 it needs; not in the runtime jar.
aws_coord="org.apache.iceberg:iceberg-aws-bundle:$ICEPACK_ICEBERG_VERSION"
aws_jar="$ICEPACK_CACHE/jars/iceberg-aws-bundle-$ICEPACK_ICEBERG_VERSION.jar"
jars="$jar,$aws_jar"
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

# install_jar COORD LINK: the jar from Maven Central (cached), linked at LINK.
install_jar() {
  local coord="$1" link="$2" path
  [[ -s "$link" ]] && return 0
  path="$(maven_jar "$coord")"
  mkdir -p "$(dirname "$link")"
  ln -sfn "$path" "$link"
}

# Local Spark runs are short jobs on small tables, where the JVM's start-up dominates: every
# local Spark JVM (Icepack's local runner, the fixtures, the lake simulator) maps its classes
# from a class-data archive built once by a training run, and compiles with C1 only (C2's
# compile threads cost more CPU than they win in a run of a minute). Measured in
# docs/decisions/0016-local-spark-jvm-start.md: a small maintenance run's CPU 74 s -> 25 s.
# The settings go in the venv Spark's spark-defaults.conf as spark.driver.defaultJavaOptions,
# so a job's own spark.driver.extraJavaOptions still adds to them; Spark on Kubernetes and any
# other Spark installation are untouched.
spark_home() { "$python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'; }

# The archive is valid for one JDK and one set of Spark jars (the JVM checks their sizes and
# times): its name carries both, so a new JDK or a rebuilt venv trains a new one.
cds_archive() {
  local home key
  home="$(spark_home)"
  key="$({ java -version 2>&1; readlink -f "$(command -v java)"; stat -c '%n %s %Y' "$home"/jars/*; } | sha1sum | cut -c1-12)"
  echo "$ICEPACK_CACHE/spark-cds/spark-$ICEPACK_PYSPARK_VERSION-$key.jsa"
}

install_jvm_defaults() {
  local home archive defaults options
  home="$(spark_home)"
  archive="$(cds_archive)"
  defaults="$home/conf/spark-defaults.conf"
  if [[ ! -s "$archive" ]]; then
    lock "$ICEPACK_CACHE/.spark-cds.lock"
    [[ -s "$archive" ]] || train_cds "$archive"
  fi
  # -Xlog:cds*=off: an archive the JVM refuses (it then loads classes as usual) prints nothing.
  options="-XX:TieredStopAtLevel=1 -Xlog:cds*=off"
  [[ -s "$archive" ]] && options="-XX:SharedArchiveFile=$archive $options"
  mkdir -p "$home/conf"
  if [[ "$(cat "$defaults" 2>/dev/null)" != "spark.driver.defaultJavaOptions $options" ]]; then
    echo "spark.driver.defaultJavaOptions $options" >"$defaults"
  fi
}

train_cds() {
  local archive="$1" empty_conf log="$ICEPACK_CACHE/spark-cds/training.log"
  mkdir -p "$(dirname "$archive")"
  empty_conf="$(mktemp -d)"
  log "spark: training the JVM class-data archive (about a minute, once; log: $log)"
  # An empty SPARK_CONF_DIR: no earlier defaults (an older archive) take part in the training.
  if SPARK_CONF_DIR="$empty_conf" SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$python" \
    timeout 900 "$venv/bin/spark-submit" --master 'local[2]' --jars "$jar" \
    --driver-java-options "-XX:ArchiveClassesAtExit=$archive.tmp -Xlog:cds*=off" \
    "$ICEPACK_ROOT/deploy/local/spark-cds-train.py" >"$log" 2>&1 && [[ -s "$archive.tmp" ]]; then
    mv "$archive.tmp" "$archive"
    # Archives of an older JDK or venv are never used again.
    find "$(dirname "$archive")" -name '*.jsa' ! -path "$archive" -delete
  else
    rm -f "$archive.tmp"
    log "spark: the class-data training run failed (log: $log); Spark runs without the archive"
  fi
  rm -rf "$empty_conf"
}

cmd_install() {
  require_java
  install_jar "$coord" "$jar"
  install_jar "$aws_coord" "$aws_jar"
  install_venv
  install_jvm_defaults
}

cmd_env() {
  cmd_install
  printf 'export ICEPACK_SPARK_JARS=%q\n' "$jars"
  printf 'export ICEPACK_PYTHON=%q\n' "$python"
}

# Spark runs per job (local mode): there is no daemon to start, stop or wait for.
cmd_start() { cmd_install; }
cmd_wait() { venv_ok && job_packages_ok && [[ -s "$jar" && -s "$aws_jar" ]]; }
cmd_stop() { :; }
cmd_up() {
  cmd_install
  cmd_status
}

cmd_status() {
  if [[ -s "$jar" && -s "$aws_jar" ]] && venv_ok && job_packages_ok; then
    echo "spark    ready    pyspark $ICEPACK_PYSPARK_VERSION ($python)  jars: $jars"
  else
    echo "spark    missing  run: deploy/local/spark.sh install"
    return 1
  fi
}

cmd_check() {
  cmd_install
  bash "$ICEPACK_ROOT/deploy/local/catalog.sh" up
  ICEPACK_SPARK_JARS="$jars" ICEPACK_CATALOG_URI="http://127.0.0.1:$ICEPACK_CATALOG_PORT" \
    SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$python" \
    "$python" "$ICEPACK_ROOT/deploy/local/spark-check.py"
}

run_subcommand "spark.sh install|start|stop|status|wait|up|env|check" "$@"
