"""What a sink's database table is, asked on the server at plan time.

The client checks a ``jdbc`` sink table against its database table before the insert starts
(``tableapi/connectors/jdbc_sink.py``), and the database is where the server is: the client
may not reach it (a compose network), so it asks through a one-row Spark job::

    spark.range(1, numPartitions=1).mapInArrow(DescribeTable(spec), DESCRIPTION_DDL)

:class:`DescribeTable` returns the table's columns (name, the database's type, nullable,
whether it has a default) and its keys (primary key, unique keys usable by ``ON CONFLICT``)
as JSON, with the server's directory for scratch files. A database that cannot be reached
raises :class:`JdbcSinkError` (the client makes it a ``DatabaseError``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from server_ext.databases import DRIVERS
from server_ext.lookup.spec import SourceSpec
from server_ext.lookup.sql import quote_ident
from server_ext.sink.spec import SinkSpec
from server_ext.sink.writer import with_retries

#: The schema of the describing job's one row.
DESCRIPTION_DDL = "description STRING"
#: The description's entry for the server's directory of scratch files.
SCRATCH_DIR = "scratch_dir"

_PG_COLUMNS = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
       a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> ''
FROM pg_attribute a WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum"""
_PG_KEYS = """
SELECT i.indisprimary, ARRAY(
    SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.ord)
FROM pg_index i
WHERE i.indrelid = %s AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL"""


def describe(conn: Any, source: SourceSpec) -> dict[str, Any]:
    """The database table's columns and keys (``{"exists": False}`` when there is none),
    read on ``conn``.

    Example::

        describe(conn, SourceSpec("sqlite", "totals", "/data/shop.db"))
        # {"exists": True, "columns": [{"name": "country", "type": "TEXT", "nullable": False,
        #   "default": False}, ...], "primary_key": ["country"], "unique_keys": [["country"]]}
    """
    driver = DRIVERS[source.dialect]
    if source.dialect == "postgresql":
        return _describe_postgres(driver, conn, source)
    return _describe_sqlite(driver, conn, source)


def _describe_postgres(driver: Any, conn: Any, source: SourceSpec) -> dict[str, Any]:
    name = quote_ident("postgresql", source.table_name)
    (oid,) = driver.execute(conn, "SELECT to_regclass(%s)::oid", [name])[0]
    if oid is None:
        return {"exists": False}
    columns = [
        {"name": n, "type": t, "nullable": bool(null), "default": bool(d)}
        for n, t, null, d in driver.execute(conn, _PG_COLUMNS, [oid])
    ]
    keys = driver.execute(conn, _PG_KEYS, [oid])
    primary = next((list(cols) for is_pk, cols in keys if is_pk), [])
    return {
        "exists": True,
        "columns": columns,
        "primary_key": primary,
        "unique_keys": [list(cols) for _, cols in keys],
    }


def _describe_sqlite(driver: Any, conn: Any, source: SourceSpec) -> dict[str, Any]:
    table = quote_ident("sqlite", source.table_name)
    info = driver.execute(conn, f"PRAGMA table_info({table})")
    if not info:
        return {"exists": False}
    columns = [
        {"name": n, "type": t or "", "nullable": not notnull, "default": d is not None or pk > 0}
        for _, n, t, notnull, d, pk in info
    ]
    primary = [n for _, n, *_rest, pk in sorted(info, key=lambda r: r[5]) if pk > 0]
    unique = [primary] if primary else []
    for _, index, is_unique, _origin, partial in driver.execute(
        conn, f"PRAGMA index_list({table})"
    ):
        if is_unique and not partial:
            cols = [
                r[2]
                for r in driver.execute(conn, f"PRAGMA index_info({quote_ident('sqlite', index)})")
            ]
            if cols and None not in cols and cols not in unique:
                unique.append(cols)
    return {"exists": True, "columns": columns, "primary_key": primary, "unique_keys": unique}


class DescribeTable:
    """``mapInArrow`` function: one row, the description of the sink's database table as
    JSON (read with the sink's retries)."""

    def __init__(self, spec: SinkSpec) -> None:
        self.spec = spec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _ in batches:
            pass
        source = self.spec.source
        description = with_retries(
            self.spec, "reading the table's columns", lambda conn: describe(conn, source)
        )
        description[SCRATCH_DIR] = tempfile.gettempdir()
        yield pa.RecordBatch.from_pydict({"description": [json.dumps(description)]})


__all__ = ["DESCRIPTION_DDL", "SCRATCH_DIR", "DescribeTable", "describe"]
