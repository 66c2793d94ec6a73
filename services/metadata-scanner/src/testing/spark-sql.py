"""Runs Spark SQL statements in one local Spark session bound to a REST catalog.

The scanner's Spark test commits to a table of its own with it (the shared fixture tables
stay untouched):

    python spark-sql.py --catalog-uri http://127.0.0.1:18181 --catalog-name local "INSERT ..."
"""

from __future__ import annotations

import argparse
import os
import sys

# The fixture generator's session settings: jar lookup, local[2], UTC, quiet logs.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "test", "fixtures"))

from session import CatalogOptions, build_session  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog-name", required=True)
    parser.add_argument("statements", nargs="+")
    args = parser.parse_args()
    spark = build_session(CatalogOptions(args.catalog_uri, args.catalog_name), "icepack-scanner-test")
    try:
        for statement in args.statements:
            spark.sql(statement).collect()
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
