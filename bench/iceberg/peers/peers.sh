#!/usr/bin/env bash
# Side-by-side manifest benchmark: Icepack vs Iceberg Java vs pyiceberg on the same
# Java-written manifests (README.md beside this file).
# Usage: bash bench/iceberg/peers/peers.sh setup|run|long|summary [args]
#   setup                      Iceberg jar (Maven Central), classes, pyiceberg venv, the table
#   run ROUNDS PASSES          decode + health, all contenders alternately per round
#                              (pyiceberg, ~30x slower: PY_ROUNDS rounds of PY_PASSES passes)
#   long ROUNDS PASSES         JIT steady state: Icepack (both readers) vs Java, many passes
#   summary FILE.jsonl         the tables for bench/results/
# Everything downloaded or generated lives under $ICEPACK_CACHE/peers; results (JSON lines,
# one per process) under $ICEPACK_RUN/peers.
# shellcheck source-path=SCRIPTDIR source=../../../deploy/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../deploy/local/lib.sh"

here="$ICEPACK_ROOT/bench/iceberg/peers"
work="$ICEPACK_CACHE/peers"
out="$ICEPACK_RUN/peers"
classes="$work/classes"
pyvenv="$work/pyiceberg-venv"
table="$work/table"
PYICEBERG_VERSION="${PYICEBERG_VERSION:-0.12.0}"
# The last commit with the avsc-based manifest reader: the "old reader" contender.
OLD_READER_COMMIT="${OLD_READER_COMMIT:-5b3e309}"
old_reader="$work/old-reader-$OLD_READER_COMMIT"
mkdir -p "$work" "$out"

# Iceberg core + API + its shaded Avro are in the Spark runtime jar; the Hadoop client
# (HadoopFileIO, HadoopTables) and logging come from the Spark venv's jars.
classpath() {
  local runtime pyjars
  runtime="$(maven_jar "org.apache.iceberg:iceberg-spark-runtime-${ICEPACK_SPARK_LINE}_2.13:$ICEPACK_ICEBERG_VERSION")"
  pyjars="$(echo "$ICEPACK_CACHE"/venv/lib/python3*/site-packages/pyspark/jars)"
  [[ -d "$pyjars" ]] || die "no Spark venv: run bash deploy/local/spark.sh install"
  local cp="$runtime" j
  for j in hadoop-client-api hadoop-client-runtime slf4j-api log4j-slf4j2-impl log4j-api log4j-core; do
    cp="$cp:$(ls "$pyjars"/"$j"-[0-9]*.jar | head -1)"
  done
  echo "$cp"
}

metadata() {
  local m
  m="$(ls "$table"/metadata/v*.metadata.json 2>/dev/null | sort -V | tail -1)"
  [[ -n "$m" ]] || die "no table: run peers.sh setup"
  echo "file:$m"
}

cmd_setup() {
  require_java
  local cp
  cp="$(classpath)"
  mkdir -p "$classes"
  javac -nowarn -cp "$cp" -d "$classes" "$here/GenTable.java" "$here/JavaHarness.java"
  if [[ ! -x "$pyvenv/bin/python" ]] || ! "$pyvenv/bin/python" -c "import pyiceberg, pyarrow" 2>/dev/null; then
    log "peers: pyiceberg $PYICEBERG_VERSION venv in $pyvenv"
    python3 -m venv --clear "$pyvenv"
    timeout "$ICEPACK_DOWNLOAD_TIMEOUT" "$pyvenv/bin/pip" install -q --disable-pip-version-check \
      "pyiceberg==$PYICEBERG_VERSION" pyarrow
  fi
  if [[ ! -f "$old_reader/src/index.ts" ]]; then
    # Its own sources, this checkout's dependencies (avsc, @icepack/types).
    mkdir -p "$old_reader"
    git -C "$ICEPACK_ROOT" archive "$OLD_READER_COMMIT" packages/iceberg/src \
      | tar -x -C "$old_reader" --strip-components=2
    ln -sfn "$ICEPACK_ROOT/packages/iceberg/node_modules" "$old_reader/node_modules"
    cp "$ICEPACK_ROOT/packages/iceberg/package.json" "$old_reader/package.json"
  fi
  if [[ ! -d "$table/metadata" ]]; then
    log "peers: writing the table with Iceberg Java into $table"
    java -cp "$cp:$classes" GenTable "file:$table"
  fi
  log "peers: ready; table $(metadata)"
}

# run LABEL COMMAND...: one process; appends {round,label,load,procCpu,maxRssKb,result} to $OUT.
run() {
  local label=$1 t line pw pu ps prss load
  shift
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  t="$(mktemp)"
  line="$(/usr/bin/time -f '%e %U %S %M' -o "$t" "$@" 2>>"$out/stderr.log" | tail -1)"
  read -r pw pu ps prss < <(tail -1 "$t")
  rm -f "$t"
  [[ "$line" == "{"* ]] || die "$label printed no result (see $out/stderr.log)"
  echo "{\"round\":$round,\"label\":\"$label\",\"load\":\"$load\",\"procWall\":$pw,\"procCpu\":$(awk "BEGIN{printf \"%.2f\", $pu + $ps}"),\"maxRssKb\":$prss,\"result\":$line}" >>"$OUT"
  log "round $round $label (load $load, process wall ${pw}s)"
}

contenders() {
  export PATH="$(bash "$ICEPACK_ROOT/deploy/local/node.sh"):$PATH"
  M="$(metadata)"
  cp="$(classpath)"
  JAVA=(java -cp "$cp:$classes" org.apache.iceberg.JavaHarness)
  PY=("$pyvenv/bin/python" "$here/pyiceberg_harness.py")
  ICE=(node "$here/icepack-harness.ts")
  export OLD_READER_SRC="$old_reader/src"
}

cmd_run() {
  local rounds=${1:-5} passes=${2:-8}
  contenders
  OUT="$out/run-$(date -u +%Y%m%dT%H%M%S).jsonl"
  log "peers: $rounds rounds of $passes passes -> $OUT"
  for round in $(seq 1 "$rounds"); do
    for mode in decode health; do
      run "$mode/icepack" "${ICE[@]}" "$mode" "$M" "$passes" new
      run "$mode/icepack-avsc" "${ICE[@]}" "$mode" "$M" "$passes" avsc
      [[ $mode == decode ]] && run decode/icepack-scan "${ICE[@]}" scan "$M" "$passes" new
      if ((round <= ${PY_ROUNDS:-rounds})); then
        run "$mode/pyiceberg-full" "${PY[@]}" "$mode-full" "$M" "${PY_PASSES:-$passes}"
        run "$mode/pyiceberg-proj" "${PY[@]}" "$mode-proj" "$M" "${PY_PASSES:-$passes}"
      fi
      run "$mode/java-full" "${JAVA[@]}" "$mode-full" "$M" "$passes"
      run "$mode/java-proj" "${JAVA[@]}" "$mode-proj" "$M" "$passes"
    done
    run oneshot/icepack "${ICE[@]}" health "$M" 1 new
    ((round <= ${PY_ROUNDS:-rounds})) && run oneshot/pyiceberg-full "${PY[@]}" health-full "$M" 1
    run oneshot/java-proj "${JAVA[@]}" health-proj "$M" 1
  done
  echo "$OUT"
}

cmd_long() {
  local rounds=${1:-3} passes=${2:-30}
  contenders
  OUT="$out/long-$(date -u +%Y%m%dT%H%M%S).jsonl"
  log "peers: $rounds long rounds of $passes passes -> $OUT"
  for round in $(seq 1 "$rounds"); do
    run decode/icepack "${ICE[@]}" decode "$M" "$passes" new
    run decode/icepack-scan "${ICE[@]}" scan "$M" "$passes" new
    run decode/icepack-avsc "${ICE[@]}" decode "$M" "$passes" avsc
    run decode/java-proj "${JAVA[@]}" decode-proj "$M" "$passes"
    run health/icepack "${ICE[@]}" health "$M" "$passes" new
    run health/icepack-avsc "${ICE[@]}" health "$M" "$passes" avsc
    run health/java-proj "${JAVA[@]}" health-proj "$M" "$passes"
  done
  echo "$OUT"
}

cmd_summary() {
  python3 "$here/summarize.py" "$@"
}

cmd_metadata() { metadata; }

run_subcommand "peers.sh setup|run|long|summary|metadata" "$@"
