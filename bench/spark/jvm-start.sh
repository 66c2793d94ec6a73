#!/usr/bin/env bash
# The local Spark JVM settings (deploy/local/spark.sh: class-data archive + C1 only) against
# the JVM's defaults, on one small maintenance-shaped run (small-job.py), alternating per
# round on one machine. Prints a Markdown section with machine, load and per-round figures.
#   bash bench/spark/jvm-start.sh [rounds]      (installs the local Spark first)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/deploy/local/lib.sh"
rounds="${1:-3}"
bash "$root/deploy/local/spark.sh" install >&2
eval "$(bash "$root/deploy/local/spark.sh" env)"
venv="$(dirname "$(dirname "$ICEPACK_PYTHON")")"
home="$("$ICEPACK_PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
plain="$(mktemp -d)" # an empty SPARK_CONF_DIR: the JVM's defaults

err="$(mktemp)"
trap 'rm -rf "$plain" "$err"' EXIT

one() { # label conf-dir: one run; /usr/bin/time's line is the last of its stderr
  SPARK_CONF_DIR="$2" SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$ICEPACK_PYTHON" \
    /usr/bin/time -f '%e %U %S' "$venv/bin/spark-submit" --master 'local[2]' \
    --jars "$ICEPACK_SPARK_JARS" "$here/small-job.py" >/dev/null 2>"$err" \
    || die "the $1 run failed: $(tail -5 "$err")"
  read -r wall user sys <<<"$(tail -1 "$err")"
  printf '| %s | %s | %s | %s | %s |\n' "$round" "$1" "$wall" "$user" "$sys"
}

echo "## local Spark JVM settings — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo
echo '```'
echo "nproc: $(nproc)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "java: $(java -version 2>&1 | head -1)"
echo "settings: $(cat "$home/conf/spark-defaults.conf")"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo '```'
echo
echo '| round | JVM | wall s | user CPU s | system CPU s |'
echo '|---|---|---|---|---|'
for round in $(seq 1 "$rounds"); do
  if (( round % 2 )); then one defaults "$plain"; one icepack "$home/conf"
  else one icepack "$home/conf"; one defaults "$plain"; fi
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
