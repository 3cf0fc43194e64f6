"""A jdbc sink table against its database table's description, at plan time."""

from __future__ import annotations

from typing import Any

import pytest

from tableapi.connectors.jdbc_sink import check_sink_table
from tableapi.errors import ValidationError
from tableapi.types import DataType, RowType


def row(*columns: tuple[str, str]) -> RowType:
    return RowType.of(*((n, DataType.parse(t)) for n, t in columns))


def db(*columns: tuple[str, str], pk: tuple[str, ...] = (), unique: Any = (), notnull=()) -> dict:
    return {
        "exists": True,
        "columns": [
            {"name": n, "type": t, "nullable": n not in notnull and n not in pk, "default": False}
            for n, t in columns
        ],
        "primary_key": list(pk),
        "unique_keys": ([list(pk)] if pk else []) + [list(u) for u in unique],
    }


def refused(sink: RowType, key: tuple[str, ...], description: dict, dialect: str = "postgresql"):
    with pytest.raises(ValidationError) as err:
        check_sink_table("Totals", sink, key, dialect, "totals", "the database", description)
    return str(err.value)


def fits(sink: RowType, key: tuple[str, ...], description: dict, dialect: str = "postgresql"):
    check_sink_table("Totals", sink, key, dialect, "totals", "the database", description)


PG_FITS = [
    ("BIGINT", "bigint"), ("INT", "bigint"), ("SMALLINT", "integer"), ("TINYINT", "smallint"),
    ("INT", "numeric(12,0)"), ("BIGINT", "numeric"), ("BOOLEAN", "boolean"),
    ("FLOAT", "real"), ("FLOAT", "double precision"), ("DOUBLE", "double precision"),
    ("DECIMAL(10, 2)", "numeric(12,3)"), ("DECIMAL(10, 2)", "numeric"), ("STRING", "text"),
    ("STRING", "character varying(20)"), ("BYTES", "bytea"), ("DATE", "date"),
    ("TIMESTAMP(3)", "timestamp without time zone"),
    ("TIMESTAMP(3)", "timestamp(3) without time zone"),
    ("TIMESTAMP_LTZ(3)", "timestamp with time zone"),
]  # fmt: skip
PG_REFUSED = [
    ("BIGINT", "integer", "a narrower integer type"),
    ("INT", "numeric(5,0)", "too few integer digits"),
    ("DOUBLE", "real", "do not fit into real"),
    ("DECIMAL(10, 2)", "numeric(10,1)", "a smaller scale rounds them"),
    ("DECIMAL(10, 2)", "numeric(9,2)", "too few integer digits"),
    ("STRING", "bigint", "do not fit into bigint"),
    ("BIGINT", "text", "do not fit into text"),
    ("TIMESTAMP(6)", "timestamp(3) without time zone", "a coarser precision"),
    ("TIMESTAMP(3)", "timestamp with time zone", "declare the column TIMESTAMP_LTZ"),
    ("TIMESTAMP_LTZ(3)", "timestamp without time zone", "declare the column TIMESTAMP"),
    ("DATE", "timestamp without time zone", "do not fit"),
]


@pytest.mark.parametrize(("flink", "pg"), PG_FITS)
def test_postgres_types_that_hold_the_values(flink: str, pg: str) -> None:
    fits(row(("id", "BIGINT"), ("v", flink)), ("id",), db(("id", "bigint"), ("v", pg), pk=("id",)))


@pytest.mark.parametrize(("flink", "pg", "why"), PG_REFUSED)
def test_postgres_type_mismatches_are_refused_listing_both_tables(
    flink: str, pg: str, why: str
) -> None:
    text = refused(row(("id", "BIGINT"), ("v", flink)), ("id",),
                   db(("id", "bigint"), ("v", pg), pk=("id",)))  # fmt: skip
    assert f"column 'v': {DataType.parse(flink)} values" in text and why in text, text
    assert f"Sink table 'Totals': (id BIGINT, v {DataType.parse(flink)}, PRIMARY KEY (id))" in text
    assert f"Database table totals: (id bigint NOT NULL, v {pg}, PRIMARY KEY (id))" in text


def test_a_key_that_is_no_key_of_the_database_table_is_refused() -> None:
    sink = row(("country", "STRING"), ("total", "BIGINT"))
    text = refused(sink, ("country",), db(("country", "text"), ("total", "bigint")))
    assert "the primary key (country) is neither the primary key nor a unique key" in text
    fits(sink, ("country",), db(("country", "text"), ("total", "bigint"), unique=[("country",)]))
    fits(sink, (), db(("country", "text"), ("total", "bigint")))  # append mode needs none
    text = refused(sink, ("country", "total"), db(("country", "text"), ("total", "bigint"),
                                                  pk=("country",)))  # fmt: skip
    assert "the primary key (country, total) is neither" in text


def test_names_fold_as_the_dialects_write_them() -> None:
    sink = row(("orderId", "BIGINT"), ("Total Amount", "BIGINT"))
    fits(sink, ("orderId",), db(("orderid", "bigint"), ("Total Amount", "bigint"), pk=("orderid",)))
    text = refused(sink, (), db(("orderId", "bigint"), ("total amount", "bigint")))
    assert "column 'orderId' is not a column of totals" in text
    assert "column 'Total Amount' is not a column of totals" in text
    fits(sink, ("orderId",), db(("ORDERID", "INTEGER"), ("total amount", "INT"),
                                pk=("ORDERID",)), dialect="sqlite")  # fmt: skip


def test_a_not_null_column_the_sink_leaves_out_is_refused() -> None:
    sink = row(("id", "BIGINT"))
    text = refused(sink, (), db(("id", "bigint"), ("created", "date"), notnull=("created",)))
    assert "database column 'created' is NOT NULL without a default" in text
    with_default = db(("id", "bigint"), ("created", "date"), notnull=("created",))
    with_default["columns"][1]["default"] = True
    fits(sink, (), with_default)


def test_sqlite_columns_by_their_affinity() -> None:
    sink = row(("id", "BIGINT"), ("name", "STRING"), ("price", "DOUBLE"), ("at", "TIMESTAMP(3)"),
               ("amount", "DECIMAL(10, 2)"), ("raw", "BYTES"), ("flag", "BOOLEAN"))  # fmt: skip
    good = db(("id", "INTEGER"), ("name", "VARCHAR(20)"), ("price", "DOUBLE"),
              ("at", "DATETIME"), ("amount", "NUMERIC"), ("raw", "BLOB"), ("flag", ""),
              pk=("id",))  # fmt: skip
    fits(sink, ("id",), good, "sqlite")
    bad = db(("id", "TEXT"), ("name", "INT"), ("price", "TEXT"), ("at", "REAL"),
             ("amount", "REAL"), ("raw", "TEXT"), ("flag", "TEXT"), pk=("id",))  # fmt: skip
    text = refused(sink, ("id",), bad, "sqlite")
    for name in ("id", "name", "price", "at", "amount", "raw", "flag"):
        assert f"column {name!r}:" in text, text
    assert "(TEXT affinity)" in text and "(INTEGER affinity)" in text


def test_a_missing_table_gets_a_create_table_that_fits() -> None:
    sink = row(("country", "STRING"), ("total", "DECIMAL(38, 2)"), ("at", "TIMESTAMP_LTZ(3)"))
    text = refused(sink, ("country",), {"exists": False})
    assert "table totals does not exist in the database" in text
    assert ("CREATE TABLE totals (country text NOT NULL, total numeric(38, 2), "
            "at timestamptz(3), PRIMARY KEY (country));") in text  # fmt: skip
    text = refused(sink, ("country",), {"exists": False}, "sqlite")
    assert "CREATE TABLE totals (country TEXT NOT NULL, total NUMERIC, at TEXT, " in text
