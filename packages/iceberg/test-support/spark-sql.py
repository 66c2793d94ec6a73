"""Runs Spark SQL statements against the local REST catalog, one session for all of them.

Used by @icepack/iceberg's integration tests to commit to a table of their own (so the shared
fixture tables stay untouched):

    python spark-sql.py --catalog-uri http://127.0.0.1:18181 "CREATE NAMESPACE ..." "INSERT ..."
"""

from __future__ import annotations

import argparse
import os
import sys

# Reuse the fixture generator's session settings (jar lookup, local[2], UTC, quiet logs).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "test", "fixtures"))

from session import CatalogOptions, build_session  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog-uri", required=True)
    parser.add_argument("--catalog-name", default="fixtures")
    parser.add_argument("statements", nargs="+")
    args = parser.parse_args()
    spark = build_session(CatalogOptions(args.catalog_uri, args.catalog_name), "icepack-iceberg-test")
    try:
        for statement in args.statements:
            spark.sql(statement).collect()
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
