"""The lookup queries: many keys per query, values as parameters, pushed filters."""

from __future__ import annotations

from server_ext.lookup.sql import (
    key_query,
    pushable,
    quote_ident,
    split_pushable,
    sqlite_chunk,
    to_sql,
)


def test_postgres_single_and_multi_key_queries_use_arrays() -> None:
    q = key_query("postgresql", "public.customers", ["id", "name"], ["id"], ["BIGINT"], [], None)
    assert q.sql == "SELECT id, name FROM public.customers WHERE id = ANY(%s::int8[])"
    q = key_query("postgresql", "t", ["a", "b", "c"], ["b", "a"], ["STRING", "INT"], [], None)
    assert q.sql == (
        "SELECT a, b, c FROM t WHERE (b, a) IN (SELECT * FROM unnest(%s::text[], %s::int4[]))"
    )


def test_sqlite_queries_have_one_placeholder_per_value() -> None:
    q = key_query("sqlite", "t", ["id", "x"], ["id"], ["BIGINT"], [], None, n_keys=3)
    assert q.sql == 'SELECT "id", "x" FROM "t" WHERE "id" IN (?, ?, ?)'
    q = key_query("sqlite", "t", ["a", "b"], ["a", "b"], ["INT", "INT"], [], None, n_keys=2)
    assert q.sql.endswith('WHERE ("a", "b") IN (VALUES (?, ?), (?, ?))')
    assert sqlite_chunk(1000, 1) == 1000 and sqlite_chunk(100_000, 4) == 8000


def test_constant_keys_and_pushed_filters_are_parameters() -> None:
    flt = ("call", "and", ("call", ">", ("col", "r", 2), ("lit", 20)),
           ("call", "=", ("col", "r", 1), ("lit", "x'; DROP TABLE t; --")))  # fmt: skip
    q = key_query(
        "postgresql", "t", ["id", "name", "age"], ["id"], ["BIGINT"], [("country", "US")], flt,
        column_types=["BIGINT", "STRING", "INT"],
    )  # fmt: skip
    assert q.sql == (
        "SELECT id, name, age FROM t WHERE id = ANY(%s::int8[]) AND country = %s AND "
        '((age > %s) AND (name COLLATE "C" = %s))'
    )
    assert q.const_params == ("US",) and q.pushed == (20, "x'; DROP TABLE t; --")


def test_only_filters_with_the_same_meaning_are_pushed() -> None:
    age = ("col", "r", 2)
    computed = ("col", "r", 3)  # beyond the 3 fetched columns: a computed column
    ok = ("call", ">", age, ("lit", 1))
    assert pushable(ok, 3)
    assert not pushable(("call", ">", computed, ("lit", 1)), 3)
    assert not pushable(("call", "=", ("call", "upper", ("col", "r", 1)), ("lit", "A")), 3)
    assert not pushable(("call", "=", ("call", "mod", age, ("lit", 2)), ("lit", 0)), 3)
    assert not pushable(("call", "=", ("col", "l", 0), age), 3)  # reads the probe row
    tree = ("call", "and", ok, ("call", ">", computed, ("lit", 1)))
    pushed, kept = split_pushable(tree, 3)
    assert pushed == ok and kept == ("call", ">", computed, ("lit", 1))


def test_sql_of_null_logic_and_division() -> None:
    params: list = []
    tree = ("call", "or", ("call", "is_null", ("col", "r", 0)),
            ("call", ">", ("call", "/", ("col", "r", 0), ("lit", 0)), ("lit", True)))  # fmt: skip
    assert to_sql("postgresql", tree, ["a"], params) == (
        "((a IS NULL) OR ((a / NULLIF(%s, 0)) > TRUE))"
    )
    assert to_sql("sqlite", tree, ["a"], []) == '(("a" IS NULL) OR (("a" / NULLIF(?, 0)) > 1))'


def test_identifiers_are_quoted_when_not_plain() -> None:
    assert quote_ident("postgresql", "Customers") == "Customers"  # folds, as in Flink
    assert quote_ident("postgresql", 'we"ird') == '"we""ird"'
    assert quote_ident("sqlite", "id") == '"id"'
