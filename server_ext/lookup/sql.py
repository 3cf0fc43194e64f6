"""The lookup queries: many keys per query, pushed dimension filters, values as parameters.

Every value travels as a query parameter; only identifiers (from the table's schema and
options, never from data) are written into the SQL text.

- PostgreSQL, one key column: ``SELECT c1, c2 FROM t WHERE k = ANY(%s::int8[])``; several:
  ``WHERE (k1, k2) IN (SELECT * FROM unnest(%s::int8[], %s::text[]))``. One SQL text per
  table whatever the chunk size, so psycopg prepares it once per connection.
- SQLite: ``WHERE k IN (?, ?, ...)`` / ``WHERE (k1, k2) IN (VALUES (?, ?), ...)``.
- Constant keys (``D.country = 'US'``) become ``AND country = %s``.

A dimension filter is split into its AND-ed conjuncts; those that read fetched columns only
and use functions with the same meaning in the database as in ``server_ext/joins/condition.py``
are appended to the WHERE clause. The operator still applies the whole filter to the fetched
rows (so a conjunct the database cannot evaluate costs transfer, never correctness).

Example::

    >>> q = key_query("postgresql", "customers", ["id", "name"], ["id"], ["BIGINT"], [], None)
    >>> q.sql
    'SELECT id, name FROM customers WHERE id = ANY(%s::int8[])'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server_ext.lookup.spec import base_type

_SIMPLE_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
# Longest SQLite chunk: its default limit is 32766 parameters per statement.
SQLITE_MAX_PARAMS = 32000

_PG_ARRAY_TYPES = {
    "BIGINT": "int8",
    "INT": "int4",
    "SMALLINT": "int2",
    "TINYINT": "int2",
    "BOOLEAN": "bool",
    "FLOAT": "float4",
    "DOUBLE": "float8",
    "DECIMAL": "numeric",
    "STRING": "text",
    "DATE": "date",
    "TIMESTAMP": "timestamptz",
    "TIMESTAMP_LTZ": "timestamptz",
    "TIMESTAMP_NTZ": "timestamp",
    "BINARY": "bytea",
}


def quote_ident(dialect: str, name: str) -> str:
    """An identifier as Flink's JDBC dialect writes it: PostgreSQL leaves plain names
    unquoted (so they fold to lower case, as in Flink); anything else is double-quoted.

    Example::

        >>> quote_ident("postgresql", "public.customers"), quote_ident("sqlite", "my table")
        ('public.customers', '"my table"')
    """
    parts = name.split(".") if dialect == "postgresql" else [name]
    out = []
    for part in parts:
        if dialect == "postgresql" and _SIMPLE_IDENT.match(part):
            out.append(part)
        else:
            out.append('"' + part.replace('"', '""') + '"')
    return ".".join(out)


@dataclass(frozen=True)
class Query:
    """SQL text plus where its parameters go."""

    sql: str
    pushed: tuple  # the pushed filter's parameters (after the key parameters)
    const_params: tuple  # constant-key parameters (after the varying keys)


def key_query(
    dialect: str,
    table: str,
    columns: Sequence[str],
    key_columns: Sequence[str],
    key_types: Sequence[str],
    const_keys: Sequence[tuple[str, Any]],
    pushed_filter: tuple | None,
    n_keys: int | None = None,
    column_types: Sequence[str] = (),
) -> Query:
    """The lookup query for varying ``key_columns`` (plus constant keys and the filter).

    For SQLite ``n_keys`` is the chunk's number of key tuples (its placeholders)."""
    cols = ", ".join(quote_ident(dialect, c) for c in columns)
    conds: list[str] = []
    if key_columns:
        qk = [quote_ident(dialect, c) for c in key_columns]
        if dialect == "postgresql":
            arrays = [f"%s::{pg_array_type(t)}[]" for t in key_types]
            if len(qk) == 1:
                conds.append(f"{qk[0]} = ANY({arrays[0]})")
            else:
                conds.append(f"({', '.join(qk)}) IN (SELECT * FROM unnest({', '.join(arrays)}))")
        else:
            if n_keys is None or n_keys <= 0:
                raise ValueError("a SQLite key query needs the chunk's number of keys")
            if len(qk) == 1:
                conds.append(f"{qk[0]} IN ({', '.join(['?'] * n_keys)})")
            else:
                row = "(" + ", ".join(["?"] * len(qk)) + ")"
                conds.append(f"({', '.join(qk)}) IN (VALUES {', '.join([row] * n_keys)})")
    ph = "%s" if dialect == "postgresql" else "?"
    for name, _ in const_keys:
        conds.append(f"{quote_ident(dialect, name)} = {ph}")
    params: list[Any] = []
    if pushed_filter is not None:
        conds.append(to_sql(dialect, pushed_filter, columns, params, column_types))
    where = " WHERE " + " AND ".join(conds) if conds else ""
    return Query(
        f"SELECT {cols} FROM {quote_ident(dialect, table)}{where}",
        tuple(params),
        tuple(v for _, v in const_keys),
    )


def scan_query(
    dialect: str,
    table: str,
    columns: Sequence[str],
    pushed_filter: tuple | None,
    column_types: Sequence[str] = (),
) -> tuple[str, tuple]:
    """The whole table (for a FULL cache), projected and filtered."""
    q = key_query(dialect, table, columns, [], [], [], pushed_filter, None, column_types)
    return q.sql, q.pushed


def pg_array_type(ddl: str) -> str:
    """The PostgreSQL array element type for a Spark column type (``text`` if unknown).

    Example::

        >>> pg_array_type("DECIMAL(10, 2)"), pg_array_type("VARCHAR(20)")
        ('numeric', 'text')
    """
    return _PG_ARRAY_TYPES.get(base_type(ddl), "text")


def sqlite_chunk(chunk_size: int, n_key_columns: int) -> int:
    """Keys per SQLite query: ``chunk_size``, within SQLite's parameter limit.

    Example::

        >>> sqlite_chunk(1000, 2), sqlite_chunk(50_000, 1)
        (1000, 32000)
    """
    return max(1, min(chunk_size, SQLITE_MAX_PARAMS // max(1, n_key_columns)))


# --- predicate trees -> SQL -------------------------------------------------------------------

_COMPARE = {"=": "=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*"}


def split_conjuncts(tree: tuple | None) -> list[tuple]:
    """``a AND (b AND c)`` -> ``[a, b, c]``.

    Example::

        >>> split_conjuncts(("call", "and", ("lit", 1), ("call", "and", ("lit", 2), ("lit", 3))))
        [('lit', 1), ('lit', 2), ('lit', 3)]
    """
    if tree is None:
        return []
    if tree[0] == "call" and tree[1] == "and":
        return [c for arg in tree[2:] for c in split_conjuncts(arg)]
    return [tree]


def and_all(conjuncts: Sequence[tuple]) -> tuple | None:
    """The AND of ``conjuncts`` (None for none).

    Example::

        >>> and_all([("lit", True)]), and_all([])
        (('lit', True), None)
    """
    if not conjuncts:
        return None
    return conjuncts[0] if len(conjuncts) == 1 else ("call", "and", *conjuncts)


def pushable(tree: tuple, n_columns: int) -> bool:
    """Whether the database evaluates ``tree`` exactly as the operator would: it reads
    fetched dimension columns only (not computed ones) and its functions and literals
    mean the same in SQL.

    Example::

        >>> pushable(("call", ">", ("col", "r", 0), ("lit", 1)), 1)
        True
    """
    tag = tree[0]
    if tag == "col":
        return tree[1] == "r" and 0 <= tree[2] < n_columns
    if tag == "lit":
        v = tree[1]
        return v is None or isinstance(v, (bool, int, float, str))
    if tag == "call":
        name = tree[1]
        if name not in _PUSHABLE:
            return False
        return all(pushable(a, n_columns) for a in tree[2:])
    return False


def split_pushable(tree: tuple | None, n_columns: int) -> tuple[tuple | None, tuple | None]:
    """(the conjuncts the database can evaluate, the others).

    Example::

        >>> split_pushable(("call", "is_null", ("col", "r", 5)), 2)  # a computed column
        (None, ('call', 'is_null', ('col', 'r', 5)))
    """
    pushed: list[tuple] = []
    kept: list[tuple] = []
    for c in split_conjuncts(tree):
        (pushed if pushable(c, n_columns) else kept).append(c)
    return and_all(pushed), and_all(kept)


def to_sql(
    dialect: str,
    tree: tuple,
    columns: Sequence[str],
    params: list[Any],
    types: Sequence[str] = (),
) -> str:
    """SQL for a pushable tree; literals are appended to ``params``. ``types`` (Spark DDL
    of ``columns``) marks the text columns, compared by code point as Python does.

    Example::

        >>> p = []
        >>> to_sql("sqlite", ("call", ">", ("col", "r", 1), ("lit", 20)), ["id", "age"], p), p
        ('("age" > ?)', [20])
    """
    ph = "%s" if dialect == "postgresql" else "?"

    def go(t: tuple) -> str:
        tag = t[0]
        if tag == "col":
            return quote_ident(dialect, columns[t[2]])
        if tag == "lit":
            v = t[1]
            if v is None:
                return "NULL"
            if isinstance(v, bool):
                # SQLite has no boolean type: true/false are 1/0 there.
                return ("TRUE" if v else "FALSE") if dialect == "postgresql" else str(int(v))
            params.append(v)
            return ph
        name, args = t[1], t[2:]
        a = [go(x) for x in args]
        if name in _COMPARE:
            op = _COMPARE[name]
            if dialect == "postgresql" and _is_text(args, types):
                # Python compares strings by code point, as PostgreSQL's "C" collation does.
                return f'({a[0]} COLLATE "C" {op} {a[1]})'
            return f"({a[0]} {op} {a[1]})"
        if name in _ARITH:
            return f"({a[0]} {_ARITH[name]} {a[1]})"
        if name == "/":
            return f"({a[0]} / NULLIF({a[1]}, 0))"  # a zero divisor is NULL, not an error
        if name in ("and", "or"):
            return "(" + f" {name.upper()} ".join(a) + ")"
        if name == "not":
            return f"(NOT {a[0]})"
        if name == "is_null":
            return f"({a[0]} IS NULL)"
        if name == "is_not_null":
            return f"({a[0]} IS NOT NULL)"
        if name == "is_not_distinct_from":
            return (
                f"({a[0]} IS NOT DISTINCT FROM {a[1]})"
                if dialect == "postgresql"
                else (f"({a[0]} IS {a[1]})")
            )
        if name == "neg":
            return f"(- {a[0]})"
        if name in ("abs", "upper", "lower"):
            return f"{name.upper()}({a[0]})"
        if name == "coalesce":
            return f"COALESCE({', '.join(a)})"
        if name == "if":
            return f"(CASE WHEN {a[0]} THEN {a[1]} ELSE {a[2]} END)"
        raise ValueError(f"function {name!r} cannot be pushed into SQL")

    return go(tree)


def _is_text(args: Sequence[tuple], types: Sequence[str]) -> bool:
    for a in args:
        if a[0] == "lit" and isinstance(a[1], str):
            return True
        if a[0] == "col" and a[2] < len(types) and base_type(types[a[2]]) == "STRING":
            return True
    return False


# Functions whose SQL meaning equals condition.py's. upper/lower stay out (the database's
# case mapping of non-ASCII text can differ from Python's), and so does mod (SQLite's %
# truncates REAL operands to integers, PostgreSQL has no % on double precision).
_PUSHABLE = frozenset(
    {*_COMPARE, *_ARITH, "/", "and", "or", "not", "is_null", "is_not_null"}
    | {"is_not_distinct_from", "neg", "abs", "coalesce", "if"}
)
