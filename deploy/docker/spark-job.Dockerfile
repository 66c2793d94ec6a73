# syntax=docker/dockerfile:1.7
# The image a SparkApplication runs: Spark 4.0.1 with Python, the Iceberg Spark runtime and
# Icepack's maintenance job. Build context = repository root.
#
#   docker build -f deploy/docker/spark-job.Dockerfile -t icepack/spark-job .
#
# SparkApplication: image icepack/spark-job, mainApplicationFile
# local:///opt/icepack/jobs/spark/icepack_job.py (the dispatcher's default).
# The Spark image's entrypoint (/opt/entrypoint.sh) stays: the operator's driver and executor
# pods rely on it.

ARG SPARK_IMAGE=apache/spark:4.0.1-python3
FROM ${SPARK_IMAGE}
ARG ICEBERG_VERSION=1.10.1
USER 0
# On Spark's own classpath (/opt/spark/jars), so no spark.jars setting is needed: the Iceberg
# runtime, and the AWS bundle for S3FileIO (warehouses on S3-compatible stores). The checksums
# are Maven Central's artifacts for 1.10.1; change version and checksums together.
ADD --chmod=644 --checksum=sha256:2192a0881ed0f5773b5a83a8820d2b0b2069beec203028643a1c338551007f09 \
  https://repo1.maven.org/maven2/org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/${ICEBERG_VERSION}/iceberg-spark-runtime-4.0_2.13-${ICEBERG_VERSION}.jar \
  /opt/spark/jars/
ADD --chmod=644 --checksum=sha256:86bf20892ea5b4c17688f19b075399885f6aa5303f6b2dc9f491e76ceef9633b \
  https://repo1.maven.org/maven2/org/apache/iceberg/iceberg-aws-bundle/${ICEBERG_VERSION}/iceberg-aws-bundle-${ICEBERG_VERSION}.jar \
  /opt/spark/jars/
# The job's Python packages (OpenTelemetry, for the span of each run), pinned in one list
# shared with the local venv (deploy/local/spark.sh).
COPY --chmod=644 jobs/spark/requirements.txt /opt/icepack/jobs/spark/requirements.txt
RUN pip3 install --no-cache-dir --no-input --disable-pip-version-check \
    -r /opt/icepack/jobs/spark/requirements.txt
COPY --chmod=644 jobs/spark/icepack_job.py /opt/icepack/jobs/spark/icepack_job.py
# The Spark image's unprivileged user (uid 185).
USER 185
HEALTHCHECK NONE
