"""Builds fixture tables for the dispatcher's tests in a namespace of their own.

The shared fixtures (test/fixtures/generate.py) live in fixed namespaces that other suites
read; maintenance rewrites tables, so these tests build the same fixtures (same builders,
same seeded rows) under `<prefix>.<fixture namespace…>` and print their ground truth.

One Spark session builds the tables of every `--target CATALOG PREFIX` (the same REST catalog
under each Spark catalog name); the output is a list of {fixture key: truth}, one per target.

    python build_tables.py --catalog-uri URI --target disp disp_ab12 --only sorted odd-name --out t.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

FIXTURES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "test", "fixtures")
sys.path.insert(0, os.path.abspath(FIXTURES_DIR))

from session import CatalogOptions, build_session, quote_ident, table_sql_name  # noqa: E402
from tables import FIXTURES, SCALES, Ctx  # noqa: E402
from truth import table_truth  # noqa: E402


def file_rows(spark, name: str) -> list[list[list]]:
    """Rows of each live data file in the order they are stored (to check a sort)."""
    import pyarrow.parquet as pq
    from urllib.parse import urlparse

    paths = [r[0] for r in spark.sql(f"SELECT file_path FROM {name}.files WHERE content = 0").collect()]
    files = []
    for path in paths:
        table = pq.read_table(urlparse(path).path if path.startswith("file:") else path)
        files.append([[str(v) if v is not None else None for v in row.values()] for row in table.to_pylist()])
    return files


def alias_catalog(spark, source: str, name: str) -> None:
    """Makes the Spark catalog `name` a second name of the catalog `source` (same settings)."""
    key = f"spark.sql.catalog.{source}"
    for conf, value in spark.sparkContext.getConf().getAll():
        if conf == key or conf.startswith(key + "."):
            spark.conf.set(f"spark.sql.catalog.{name}{conf[len(key):]}", value)


def ensure_namespaces(spark, catalog: str, prefix: str, args) -> None:
    """Creates the namespaces of one target's fixtures, before any table is built: two builds
    running at once must not both create one (Spark's IF NOT EXISTS is check-then-create)."""
    for fixture in (f for f in FIXTURES if f.key in args.only):
        namespace = [prefix, *fixture.namespace]
        for i in range(len(namespace)):
            level = ".".join(quote_ident(p) for p in [catalog, *namespace[: i + 1]])
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {level}")


def build_one(spark, ctx: Ctx, prefix: str, fixture, args) -> dict:
    """Builds one fixture table of one target (unless --truth-only) and reports its truth."""
    namespace = [prefix, *fixture.namespace]
    name = table_sql_name(ctx.catalog, namespace, fixture.name)
    if not args.truth_only:
        spark.sql(f"DROP TABLE IF EXISTS {name} PURGE")
        fixture.build(ctx, name)
    truth = table_truth(spark, ctx.catalog, namespace, fixture.name)
    if fixture.key in args.file_rows:
        truth["fileRows"] = file_rows(spark, name)
    return truth


def build_all(spark, args, workers: int) -> list[dict]:
    """Every fixture of every target, `workers` tables at a time in the one session.

    A table's build is a series of small commits whose time is mostly the driver's and the
    catalog's round trips, not the two cores': a few threads (Spark runs the jobs of several
    threads at once) build many tables in a fraction of the serial time. Each table is built
    by one thread, in order; tables are independent (each target has its own namespace).
    """
    jobs = []
    for target, (catalog, prefix) in enumerate(args.target):
        ensure_namespaces(spark, catalog, prefix, args)
        ctx = Ctx(spark=spark, catalog=catalog, scale=SCALES["small"])
        jobs.extend((target, ctx, prefix, f) for f in FIXTURES if f.key in args.only)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        done = [pool.submit(build_one, spark, ctx, prefix, fixture, args) for _, ctx, prefix, fixture in jobs]
        results = [d.result() for d in done]
    out: list[dict] = [{} for _ in args.target]
    for (target, _, _, fixture), truth in zip(jobs, results):
        out[target][fixture.key] = truth
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument(
        "--target",
        nargs=2,
        action="append",
        required=True,
        metavar=("CATALOG", "PREFIX"),
        help="Spark catalog name (the tasks' table.catalog) and first namespace level; repeatable",
    )
    parser.add_argument("--only", nargs="+", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--truth-only", action="store_true", help="do not build: only report the tables' truth")
    parser.add_argument("--file-rows", nargs="*", default=[], help="also dump each live data file's rows, in file order")
    parser.add_argument(
        "--catalog-property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a catalog client property (s3.endpoint=…); repeatable",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=int(os.environ.get("ICEPACK_FIXTURE_THREADS", "3")),
        help="tables built at once in the one Spark session (default 3, ICEPACK_FIXTURE_THREADS)",
    )
    args = parser.parse_args()
    first = args.target[0][0]
    properties = dict(p.split("=", 1) for p in args.catalog_property)
    # A catalog that requires OAuth2: its credential comes from the environment, as the job's
    # does (ICEPACK_CATALOG_CREDENTIAL), never the argv.
    credential = os.environ.get("ICEPACK_CATALOG_CREDENTIAL")
    if credential:
        properties["credential"] = credential
    spark = build_session(
        CatalogOptions(args.catalog_uri, first, properties=properties), "icepack-dispatcher-tables"
    )
    for catalog in {c for c, _ in args.target} - {first}:
        alias_catalog(spark, first, catalog)
    try:
        out = build_all(spark, args, args.threads)
    finally:
        spark.stop()
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
