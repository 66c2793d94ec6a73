# syntax=docker/dockerfile:1.7
# One image per Icepack service, from one Dockerfile: `--build-arg SERVICE=<name>`
# (provisioner | metadata-scanner | planner | dispatcher), build context = repository root.
#
#   docker build -f deploy/docker/service.Dockerfile --build-arg SERVICE=planner -t icepack/planner .
#   docker build -f deploy/docker/service.Dockerfile --build-arg SERVICE=dispatcher \
#     --target dispatcher-local -t icepack/dispatcher-local .      # with Spark, for the local runner
#
# Node 24 runs the TypeScript sources directly (type stripping), so there is no build step.
# Node refuses to strip types under node_modules, which is why the workspace layout is kept
# (packages/* stay real directories that node_modules/@icepack/* link to) instead of
# `pnpm deploy`, which would copy them into node_modules.

ARG NODE_IMAGE=node:24-slim
ARG SPARK_IMAGE=apache/spark:4.0.1-python3

FROM ${NODE_IMAGE} AS pnpm
ARG PNPM_VERSION=10.34.8
RUN npm install --global --no-fund --no-audit "pnpm@${PNPM_VERSION}"

# Only what pnpm needs to resolve the workspace, so source edits do not invalidate the install layer
# (patches/: pnpm's patchedDependencies, applied at install).
FROM pnpm AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name pnpm-lock.yaml ! -name pnpm-workspace.yaml ! -name .npmrc ! -path './patches/*' -delete \
 && find . -type d -empty -delete

FROM pnpm AS deps
ARG SERVICE
RUN test -n "${SERVICE}" || { echo "--build-arg SERVICE=<provisioner|metadata-scanner|planner|dispatcher> is required" >&2; exit 1; }
WORKDIR /app
COPY --from=manifests /src/ ./
# Production dependencies of the service and of the workspace packages it uses (the `...`).
# --filter-prod, not --filter: the latter also follows devDependencies between workspace
# packages (@icepack/iceberg → @icepack/test) and installs their production dependencies.
RUN --mount=type=cache,id=icepack-pnpm-store,target=/pnpm-store \
    pnpm install --prod --frozen-lockfile --store-dir=/pnpm-store --filter-prod "@icepack/${SERVICE}..."

FROM ${NODE_IMAGE} AS service
ARG SERVICE
ENV NODE_ENV=production \
    ICEPACK_HTTP_PORT=8080
WORKDIR /app
COPY --from=deps /app/ ./
COPY packages/ ./packages/
COPY services/${SERVICE}/ ./services/${SERVICE}/
# The local runner's default job file (jobs/spark/icepack_job.py of this checkout).
COPY jobs/spark/icepack_job.py ./jobs/spark/icepack_job.py
WORKDIR /app/services/${SERVICE}
# Files stay root-owned and read-only for the service user; it writes nowhere but /tmp.
USER 10001:10001
EXPOSE 8080
# Liveness only (the process serves HTTP); readiness (/readyz) is for the orchestrator.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.ICEPACK_HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "src/main.ts"]

# The dispatcher with Spark inside, for bindings that name the local runner (a provisioner in
# local mode: docker-compose, one machine):
# Spark 4.0.1 + Python from the Spark image with the job's packages, the Iceberg runtime and AWS
# bundle jars on Spark's own classpath (as in spark-job.Dockerfile), Node 24 and the dispatcher.
FROM ${SPARK_IMAGE} AS dispatcher-local
ARG ICEBERG_VERSION=1.10.1
USER 0
# The local runner looks for spark-submit and python in $ICEPACK_CACHE/venv/bin: point that at
# the image's Spark and Python. The job's Python packages (OpenTelemetry, for the span of each
# run; the list spark-job.Dockerfile and deploy/local/spark.sh install) go into that same
# Python, which runs the job (PYSPARK_PYTHON), and the build fails if it cannot import them.
# Before the dispatcher's files, so editing those does not reinstall them.
COPY --chmod=644 jobs/spark/requirements.txt /opt/icepack/jobs/spark/requirements.txt
RUN mkdir -p /opt/icepack/venv/bin \
 && ln -s /opt/spark/bin/spark-submit /opt/icepack/venv/bin/spark-submit \
 && ln -s "$(command -v python3)" /opt/icepack/venv/bin/python \
 && /opt/icepack/venv/bin/python -m pip install --no-cache-dir --no-input --disable-pip-version-check \
    -r /opt/icepack/jobs/spark/requirements.txt \
 && /opt/icepack/venv/bin/python -c 'import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter'
COPY --from=service /usr/local/bin/node /usr/local/bin/node
COPY --from=service /app/ /app/
ADD --chmod=644 --checksum=sha256:2192a0881ed0f5773b5a83a8820d2b0b2069beec203028643a1c338551007f09 \
  https://repo1.maven.org/maven2/org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/${ICEBERG_VERSION}/iceberg-spark-runtime-4.0_2.13-${ICEBERG_VERSION}.jar \
  /opt/spark/jars/
ADD --chmod=644 --checksum=sha256:86bf20892ea5b4c17688f19b075399885f6aa5303f6b2dc9f491e76ceef9633b \
  https://repo1.maven.org/maven2/org/apache/iceberg/iceberg-aws-bundle/${ICEBERG_VERSION}/iceberg-aws-bundle-${ICEBERG_VERSION}.jar \
  /opt/spark/jars/
# The service user in /etc/passwd: without an entry Java has no user name (Hadoop's login
# fails with "invalid null input: name") and home ("?", which Spark's Ivy set-up rejects), so
# every spark-submit of the local runner would fail. Run state (markers, pids, results) must
# survive restarts: a volume at /var/lib/icepack.
RUN groupadd --system --gid 10001 icepack \
 && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin icepack \
 && mkdir -p /var/lib/icepack \
 && chown 10001:10001 /var/lib/icepack
ENV NODE_ENV=production \
    ICEPACK_HTTP_PORT=8080 \
    ICEPACK_DISPATCHER_STATE_DIR=/var/lib/icepack/runs \
    ICEPACK_CACHE=/opt/icepack \
    HOME=/tmp
WORKDIR /app/services/dispatcher
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.ICEPACK_HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "src/main.ts"]

# The service image is the last stage because a build without --target produces the last
# stage: `--build-arg SERVICE=planner` alone must give the planner, not dispatcher-local.
FROM service AS runtime
