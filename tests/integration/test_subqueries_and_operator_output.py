"""Regression tests found by running the same queries on Apache Flink (issue 11).

- Insert-only output of a server_ext join operator carries the table's columns only (it
  carried two internal columns: ``+I[1, 0, ]``, and ``materialize()`` failed).
- ``NOT IN`` with a table is Flink's null-aware anti join (a NULL in the table keeps no row;
  a NULL value is kept only when the table is empty), in batch and streaming mode.
- ``row(a, b).in_(t)``: multi-column IN, a semi join on every column.

Every table is a bounded filesystem JSON table; streaming queries run to the end of input.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tableapi import RowKind, TableEnvironment, col, row
from tableapi.config import MULTI_JOIN_ENABLED, NATIVE_JOINS
from tableapi.result import apply_changelog
from tests.integration.files import register_json
from tests.reference import as_bag


def _tables(env: TableEnvironment, root: Path, a: Sequence[Any], b: Sequence[Any]) -> Any:
    register_json(env, root, "A", "a_k BIGINT", [(x,) for x in a])
    register_json(env, root, "B", "b_k BIGINT", [(x,) for x in b])
    return env.from_path("A"), env.from_path("B")


def _insert_only(result: Any, expected: list[tuple]) -> None:
    rows = result.collect()
    assert [r.kind for r in rows] == [RowKind.INSERT] * len(rows)
    assert as_bag(rows) == as_bag(expected)  # exactly the table's columns, nothing internal
    assert as_bag(result.materialize().itertuples(index=False)) == as_bag(expected)


@pytest.mark.parametrize("query", ["semi_join", "in_", "ttl_inner", "operator_inner"])
def test_insert_only_operator_output_has_only_the_tables_columns(
    senv: TableEnvironment, shared_dir: Path, query: str
) -> None:
    a, b = _tables(senv, shared_dir, [1, 2], [1, 3])
    if query == "semi_join":
        t = a.semi_join(b, col("a_k") == col("b_k"))
        expected = [(1,)]
    elif query == "in_":
        t = a.where(col("a_k").in_(b.select(col("b_k"))))
        expected = [(1,)]
    elif query == "ttl_inner":
        t = a.join(b, col("a_k") == col("b_k")).with_hint("STATE_TTL", A="1 h")
        expected = [(1, 1)]
    else:
        senv.config.set(NATIVE_JOINS, "false")
        t = a.join(b, col("a_k") == col("b_k"))
        expected = [(1, 1)]
    assert "server_ext join processor" in t.explain()
    _insert_only(t.execute(), expected)


def test_insert_only_multi_way_join_output(senv: TableEnvironment, shared_dir: Path) -> None:
    senv.config.set(MULTI_JOIN_ENABLED, "true")
    a, b = _tables(senv, shared_dir, [1, 2], [1, 2])
    register_json(senv, shared_dir, "C", "c_k BIGINT", [(2,), (4,)])
    t = a.join(b, col("a_k") == col("b_k")).join(senv.from_path("C"), col("b_k") == col("c_k"))
    assert "MultiJoin" in t.explain()
    _insert_only(t.execute(), [(2, 2, 2)])


def _not_in(values: Sequence[Any], table: Sequence[Any]) -> list[tuple]:
    """Flink's NOT IN over one column, by the SQL definition."""
    kept = []
    for v in values:
        if not table:
            kept.append((v,))
        elif v is not None and None not in table and v not in table:
            kept.append((v,))
    return kept


NOT_IN_CASES = {
    "no_nulls_in_the_table": ([1, 2, None, 3, 3], [2, 5]),
    "a_null_in_the_table": ([1, 2, None, 3], [2, None]),
    "an_empty_table": ([1, None, 3], []),
}


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("case", NOT_IN_CASES)
def test_not_in_is_a_null_aware_anti_join(
    server_url: str, shared_dir: Path, mode: str, case: str
) -> None:
    values, table = NOT_IN_CASES[case]
    env = TableEnvironment.create(mode=mode, remote=server_url)
    try:
        a, b = _tables(env, shared_dir, values, table)
        result = a.where(~col("a_k").in_(b.select(col("b_k")))).execute()
        expected = _not_in(values, table)
        rows = result.collect()
        assert as_bag(apply_changelog(rows)) == as_bag(expected)
        assert len(result.materialize()) == len(expected)
        if mode == "streaming":
            # An anti join retracts a row when a match arrives: the changelog must apply
            # cleanly (no retraction of a row never emitted) to the expected table.
            assert {r.kind for r in rows} <= {RowKind.INSERT, RowKind.DELETE}
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_multi_column_in(server_url: str, shared_dir: Path, mode: str) -> None:
    env = TableEnvironment.create(mode=mode, remote=server_url)
    try:
        left = [(1, "a"), (1, "b"), (2, "a"), (None, "a"), (3, None)]
        right = [(1, "a"), (2, "a"), (2, "a"), (None, "a"), (3, None)]
        register_json(env, shared_dir, "L", "k BIGINT, s STRING", left)
        register_json(env, shared_dir, "R", "rk BIGINT, rs STRING", right)
        lt, rt = env.from_path("L"), env.from_path("R")
        result = lt.where(row(col("k"), col("s")).in_(rt.select(col("rk"), col("rs")))).execute()
        # SQL: a row qualifies when some right row equals it on every column (NULLs never do).
        expected = [lr for lr in left if any(None not in lr and lr == rr for rr in right)]
        assert as_bag(result.collect()) == as_bag(expected) == as_bag([(1, "a"), (2, "a")])
    finally:
        env.close()
