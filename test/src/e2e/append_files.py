"""Appends a few small files to existing tables, as a streaming writer would, in one Spark session.

    python append_files.py --catalog-uri URI --catalog-name NAME --files 4 \
        --table demo.snapshot_heavy [--table demo.sales.customers_mor ...] [--catalog-property K=V ...]

Each table gets one commit that re-inserts some of its own rows (any schema works), split
into --files files. Prints one JSON line: {"<table>": "<new snapshot id>", ...}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures"))

from session import (  # noqa: E402
    CatalogOptions,
    add_catalog_property_argument,
    build_session,
    catalog_properties,
    table_sql_name,
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog-name", required=True)
    add_catalog_property_argument(parser)
    parser.add_argument("--table", action="append", required=True, help="namespace levels and name, dot-joined")
    parser.add_argument("--files", type=int, default=4)
    args = parser.parse_args()

    properties = catalog_properties(args.catalog_property)
    spark = build_session(
        CatalogOptions(args.catalog_uri, args.catalog_name, properties=properties), app_name="icepack-e2e-append"
    )
    committed = {}
    try:
        for dotted in args.table:
            *namespace, name = dotted.split(".")
            table = table_sql_name(args.catalog_name, namespace, name)
            rows = spark.table(table).limit(args.files * 2).repartition(args.files)
            # Without this a table with a sort order range-distributes the rows into fewer
            # files than asked for; a streaming writer leaves one file per task.
            rows.writeTo(table).option("distribution-mode", "none").append()
            committed[dotted] = str(
                spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1").first()[0]
            )
    finally:
        spark.stop()
    print(json.dumps(committed), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
