"""A ``jdbc`` sink table against its database table: names, types and the key, at plan time.

Before an insert into a ``jdbc`` table starts, the server reads the database table's columns
and keys (``server_ext/sink/describe.py``) and :func:`check_sink_table` compares them with
the sink table's schema. Refused, with a message listing both tables and what to change:

- a sink column the database table does not have (PostgreSQL folds a plain name to lower
  case, as Flink's dialect writes it unquoted; SQLite's names are case-insensitive);
- a type whose values the database column cannot hold as they are: another type family, a
  narrower integer or DECIMAL, a coarser timestamp, TIMESTAMP into ``timestamptz`` (that is
  TIMESTAMP_LTZ, as in Flink's type mapping); SQLite columns by their type affinity;
- a primary key (upsert mode) that is not the database table's primary key or one of its
  unique keys: ``INSERT ... ON CONFLICT`` needs one on exactly those columns;
- a database column left out of the sink that is NOT NULL without a default;
- no such database table (the message gives a ``CREATE TABLE`` that fits).

Example::

    >>> from tableapi.types import DataType, RowType
    >>> row = RowType.of(("country", DataType.parse("STRING NOT NULL")),
    ...                  ("total", DataType.parse("BIGINT")))
    >>> db = {"exists": True, "primary_key": ["country"], "unique_keys": [["country"]],
    ...       "columns": [{"name": "country", "type": "text", "nullable": False, "default": False},
    ...                   {"name": "total", "type": "integer", "nullable": True, "default": False}]}
    >>> check_sink_table("Totals", row, ("country",), "postgresql", "totals", "db", db)
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Cannot write into table 'Totals': its schema does not fit \
table totals in db.
      - column 'total': BIGINT values do not fit into integer (a narrower integer type)
    Sink table 'Totals': (country STRING NOT NULL, total BIGINT, PRIMARY KEY (country))
    Database table totals: (country text NOT NULL, total integer, PRIMARY KEY (country))
    Declare each column with a type the database column holds (or change the database table).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tableapi.errors import ValidationError
from tableapi.types import DataType, RowType

_SIMPLE_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
_INT_BYTES = {"TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8}
_INT_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}
_PG_INT_BYTES = {"smallint": 2, "integer": 4, "bigint": 8}
# Flink type -> the PostgreSQL / SQLite column type a CREATE TABLE suggestion uses.
_PG_TYPES = {
    "BOOLEAN": "boolean",
    "TINYINT": "smallint",
    "SMALLINT": "smallint",
    "INT": "integer",
    "BIGINT": "bigint",
    "FLOAT": "real",
    "DOUBLE": "double precision",
    "STRING": "text",
    "BYTES": "bytea",
    "DATE": "date",
}
_SQLITE_AFFINITY = {
    "BOOLEAN": ("INTEGER", "NUMERIC"),
    "TINYINT": ("INTEGER", "NUMERIC"),
    "SMALLINT": ("INTEGER", "NUMERIC"),
    "INT": ("INTEGER", "NUMERIC"),
    "BIGINT": ("INTEGER", "NUMERIC"),
    "FLOAT": ("REAL", "NUMERIC"),
    "DOUBLE": ("REAL", "NUMERIC"),
    "DECIMAL": ("NUMERIC", "TEXT"),
    "STRING": ("TEXT",),
    "BYTES": ("BLOB",),
    "DATE": ("TEXT", "NUMERIC"),
    "TIMESTAMP": ("TEXT", "NUMERIC"),
    "TIMESTAMP_LTZ": ("TEXT", "NUMERIC"),
}


def database_name(dialect: str, name: str) -> str:
    """The name a sink column has in the database, as the sink's SQL refers to it:
    PostgreSQL folds a plain name to lower case; SQLite compares names case-insensitively.

    >>> database_name("postgresql", "orderId"), database_name("postgresql", "my col")
    ('orderid', 'my col')
    >>> database_name("sqlite", "OrderId")
    'orderid'
    """
    if dialect == "sqlite" or _SIMPLE_IDENT.match(name):
        return name.lower()
    return name


def check_sink_table(
    table: str,
    row_type: RowType,
    key: tuple[str, ...],
    dialect: str,
    db_table: str,
    where: str,
    description: dict[str, Any],
) -> None:
    """Raise :class:`ValidationError` when the sink ``table`` (its physical ``row_type`` and
    primary ``key``) cannot be written into the database table ``description`` describes
    (``server_ext.sink.describe``); ``where`` names the database in messages."""
    sink_text = _sink_text(row_type, key)
    if not description.get("exists"):
        raise ValidationError(
            f"Cannot write into table {table!r}: table {db_table} does not exist in {where}. "
            f"Create it first (Flink's JDBC sink does not create tables), e.g.:\n"
            f"  {create_table_sql(dialect, db_table, row_type, key)}\n"
            f"Sink table {table!r}: {sink_text}"
        )
    fold = (lambda n: n.lower()) if dialect == "sqlite" else (lambda n: n)
    columns = {fold(c["name"]): c for c in description["columns"]}
    problems: list[str] = []
    for field in row_type:
        column = columns.get(database_name(dialect, field.name))
        if column is None:
            problems.append(f"column {field.name!r} is not a column of {db_table}")
            continue
        why = (
            _fits_postgres(field.type, column["type"])
            if dialect == "postgresql"
            else (_fits_sqlite(field.type, column["type"]))
        )
        if why:
            problems.append(f"column {field.name!r}: {field.type.plain()} values {why}")
    written = {database_name(dialect, f.name) for f in row_type}
    for name, column in columns.items():
        if name not in written and not column["nullable"] and not column["default"]:
            problems.append(
                f"database column {column['name']!r} is NOT NULL without a default, and the "
                "sink does not write it"
            )
    if key:
        wanted = {database_name(dialect, k) for k in key}
        keys = [{fold(c) for c in k} for k in description.get("unique_keys", [])]
        if wanted not in keys:
            problems.append(
                f"the primary key ({', '.join(key)}) is neither the primary key nor a unique "
                f"key of {db_table} (upsert mode writes INSERT ... ON CONFLICT on it)"
            )
    if not problems:
        return
    listed = "\n".join(f"  - {p}" for p in problems)
    raise ValidationError(
        f"Cannot write into table {table!r}: its schema does not fit table {db_table} in "
        f"{where}.\n{listed}\nSink table {table!r}: {sink_text}\nDatabase table {db_table}: "
        f"{_database_text(description)}\nDeclare each column with a type the database column "
        "holds (or change the database table)."
    )


def create_table_sql(dialect: str, name: str, row_type: RowType, key: Sequence[str]) -> str:
    """A ``CREATE TABLE`` for the database that fits the sink's columns and key.

    >>> from tableapi.types import DataType, RowType
    >>> row = RowType.of(("id", DataType.parse("BIGINT")),
    ...                  ("amount", DataType.parse("DECIMAL(10, 2)")))
    >>> create_table_sql("postgresql", "totals", row, ("id",))
    'CREATE TABLE totals (id bigint NOT NULL, amount numeric(10, 2), PRIMARY KEY (id));'
    """
    columns = []
    for f in row_type:
        t = f.type
        if dialect == "sqlite":
            sql_type = _SQLITE_AFFINITY.get(t.name, ("TEXT",))[0]
        elif t.name == "DECIMAL":
            sql_type = f"numeric({t.params[0]}, {t.params[1]})"
        elif t.name == "TIMESTAMP":
            sql_type = f"timestamp({t.params[0]})"
        elif t.name == "TIMESTAMP_LTZ":
            sql_type = f"timestamptz({t.params[0]})"
        else:
            sql_type = _PG_TYPES.get(t.name, "text")
        null = " NOT NULL" if f.name in key or not t.nullable else ""
        columns.append(f"{f.name} {sql_type}{null}")
    if key:
        columns.append(f"PRIMARY KEY ({', '.join(key)})")
    return f"CREATE TABLE {name} ({', '.join(columns)});"


def _fits_postgres(t: DataType, db_type: str) -> str | None:
    """Why values of ``t`` do not fit a PostgreSQL column of ``db_type`` (None: they do)."""
    db = db_type.lower().strip()
    base = re.sub(r"\(.*?\)", "", db).strip()
    params = [int(p) for p in re.findall(r"\d+", db.split(")")[0])] if "(" in db else []
    name = t.name
    other = f"do not fit into {db_type}"
    if name == "BOOLEAN":
        return None if base == "boolean" else other
    if t.is_integral:
        if base in _PG_INT_BYTES:
            if _PG_INT_BYTES[base] < _INT_BYTES[name]:
                return f"{other} (a narrower integer type)"
            return None
        if base == "numeric":
            return (
                None
                if not params or _int_digits(params) >= _INT_DIGITS[name]
                else (f"{other} (too few integer digits)")
            )
        return other
    if name in ("FLOAT", "DOUBLE"):
        ok = {"FLOAT": ("real", "double precision"), "DOUBLE": ("double precision",)}[name]
        return None if base in ok else other
    if name == "DECIMAL":
        if base != "numeric":
            return other
        if not params:
            return None
        p, s = t.params
        db_p, db_s = params[0], params[1] if len(params) > 1 else 0
        if db_s < s:
            return f"{other} (a smaller scale rounds them)"
        if db_p - db_s < p - s:
            return f"{other} (too few integer digits)"
        return None
    if name == "STRING":
        return None if base in ("text", "character varying", "character", "bpchar") else other
    if name == "BYTES":
        return None if base == "bytea" else other
    if name == "DATE":
        return None if base == "date" else other
    if name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        with_zone = base == "timestamp with time zone"
        if base not in ("timestamp without time zone", "timestamp with time zone"):
            return other
        if with_zone != (name == "TIMESTAMP_LTZ"):
            want = "TIMESTAMP_LTZ" if with_zone else "TIMESTAMP"
            return f"{other} (declare the column {want}, as Flink maps {db_type})"
        if (params[0] if params else 6) < t.params[0]:
            return f"{other} (a coarser precision rounds them)"
        return None
    return other


def _int_digits(params: list[int]) -> int:
    return params[0] - (params[1] if len(params) > 1 else 0)


def _fits_sqlite(t: DataType, db_type: str) -> str | None:
    """Why values of ``t`` do not fit a SQLite column declared ``db_type`` (its affinity)."""
    affinity = sqlite_affinity(db_type)
    if affinity == "BLOB" and not db_type.strip():
        return None  # a column without a type keeps any value as it is
    allowed = _SQLITE_AFFINITY.get(t.name, ())
    if affinity in allowed:
        return None
    return f"do not fit into {db_type or 'a column without a type'} ({affinity} affinity)"


def sqlite_affinity(declared: str) -> str:
    """SQLite's type affinity of a declared column type (its documented rules, in order).

    >>> [sqlite_affinity(t) for t in ("BIGINT", "VARCHAR(10)", "DOUBLE", "DATE", "")]
    ['INTEGER', 'TEXT', 'REAL', 'NUMERIC', 'BLOB']
    """
    d = declared.upper()
    if "INT" in d:
        return "INTEGER"
    if any(s in d for s in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in d or not d.strip():
        return "BLOB"
    if any(s in d for s in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def _sink_text(row_type: RowType, key: Sequence[str]) -> str:
    cols = [f"{f.name} {f.type.plain()}" for f in row_type]
    if key:
        cols.append(f"PRIMARY KEY ({', '.join(key)})")
    return f"({', '.join(cols)})"


def _database_text(description: dict[str, Any]) -> str:
    cols = [
        f"{c['name']} {c['type'] or '(no type)'}" + ("" if c["nullable"] else " NOT NULL")
        for c in description["columns"]
    ]
    if description.get("primary_key"):
        cols.append(f"PRIMARY KEY ({', '.join(description['primary_key'])})")
    others = [k for k in description.get("unique_keys", []) if k != description.get("primary_key")]
    cols += [f"UNIQUE ({', '.join(k)})" for k in others]
    return f"({', '.join(cols)})"


__all__ = ["check_sink_table", "create_table_sql", "database_name", "sqlite_affinity"]
