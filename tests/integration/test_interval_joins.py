"""Interval joins (Orders x Shipments, shipped within 4 hours) in streaming and batch mode."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tableapi import TableEnvironment, col, lit
from tests.integration.changelog_files import ChangelogTable
from tests.reference import as_bag, eq, nested_loop_join

T0 = dt.datetime(2026, 11, 23, 10, 0)
H = dt.timedelta(hours=1)
ORDERS = [("order_id", "BIGINT"), ("o_rowtime", "TIMESTAMP(3)")]
SHIPMENTS = [("s_order_id", "BIGINT"), ("s_rowtime", "TIMESTAMP(3)")]


def within_4h(o, s) -> bool:
    return eq(o[0], s[0]) and s[1] - 4 * H <= o[1] <= s[1]


def tables(
    env: TableEnvironment, root: Path, bounded: bool = False
) -> tuple[ChangelogTable, ChangelogTable]:
    orders = ChangelogTable(
        env,
        root,
        "Orders",
        ORDERS,
        op_column=None,
        watermark=("o_rowtime", "o_rowtime - INTERVAL '1' SECOND"),
        bounded=bounded,
    )
    ships = ChangelogTable(
        env,
        root,
        "Shipments",
        SHIPMENTS,
        op_column=None,
        watermark=("s_rowtime", "s_rowtime - INTERVAL '1' SECOND"),
        bounded=bounded,
    )
    return orders, ships


def interval_join(env: TableEnvironment, how: str):
    o, s = env.from_path("Orders"), env.from_path("Shipments")
    bound = col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime"))
    if how == "inner":  # PyFlink's way: join, then where (the filter merges into the join)
        return o.join(s).where((col("order_id") == col("s_order_id")) & bound)
    return o.left_outer_join(s, (col("order_id") == col("s_order_id")) & bound)


def _rows(result) -> list[tuple]:
    return [tuple(r) for r in result.collect()]


def test_streaming_inner_interval_join_after_every_batch(senv, shared_dir: Path) -> None:
    orders, ships = tables(senv, shared_dir)
    query = interval_join(senv, "inner")
    assert (
        "IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, "
        "leftLowerBound=-14400000, leftUpperBound=0" in query.explain()
    )
    result = query.execute()
    try:
        steps = [
            ([(1, T0), (2, T0 + H)], [(1, T0 + 2 * H)]),
            ([(3, T0 + 2 * H)], [(2, T0 + 6 * H), (3, T0 + 3 * H)]),  # order 2: too late
            ([], [(1, T0 + 3 * H)]),
        ]
        for new_orders, new_ships in steps:
            orders.append([("+I", r) for r in new_orders])
            ships.append([("+I", r) for r in new_ships])
            result.process_all_available()
            want = nested_loop_join(orders.current(), ships.current(), "inner", within_4h, (2, 2))
            assert as_bag(_rows(result)) == as_bag(want)
    finally:
        result.cancel()


def test_streaming_left_interval_join_pads_once_the_watermark_passes(
    senv, shared_dir: Path
) -> None:
    orders, ships = tables(senv, shared_dir)
    result = interval_join(senv, "left").execute()
    try:
        orders.append([("+I", (1, T0)), ("+I", (2, T0 + H))])
        ships.append([("+I", (1, T0 + 2 * H))])
        result.process_all_available()
        # Order 2 may still be shipped: no null-padded row yet (Flink waits for the watermark).
        assert _rows(result) == [(1, T0, 1, T0 + 2 * H)]
        # Time moves on far past 4 hours on both sides: order 2 can no longer match.
        orders.append([("+I", (9, T0 + 10 * H))])
        ships.append([("+I", (9, T0 + 10 * H))])
        result.process_all_available()
        want = nested_loop_join(orders.current(), ships.current(), "left", within_4h, (2, 2))
        assert as_bag(_rows(result)) == as_bag(want)
        assert (2, T0 + H, None, None) in _rows(result)
        assert all(r.kind.short_string == "+I" for r in result.collect())
    finally:
        result.cancel()


@pytest.mark.parametrize("how", ["inner", "left"])
def test_batch_interval_join_is_a_plain_join_with_the_bound(
    env: TableEnvironment, shared_dir: Path, how: str
) -> None:
    orders, ships = tables(env, shared_dir)
    orders.append([("+I", (1, T0)), ("+I", (2, T0 + H)), ("+I", (3, T0))])
    ships.append([("+I", (1, T0 + 2 * H)), ("+I", (2, T0 + 6 * H)), ("+I", (3, T0 - H))])
    rows = [tuple(r) for r in interval_join(env, how).execute().collect()]
    want = nested_loop_join(orders.current(), ships.current(), how, within_4h, (2, 2))
    assert as_bag(rows) == as_bag(want)


# -- outer interval joins: Flink's answer where Spark's own stream-stream join has none ------
# Issue 11. Run on Spark's own stream-stream join (the routing before), these cases gave:
# left and right: residual-other-key, residual-false, null-keys: no null-padded row; full:
# null-keys and mixed: a NULL key joined a NULL key. (left/right mixed and full residual-*
# happened to be right.) The server_ext interval join operator runs outer interval joins.

D0 = dt.datetime(2026, 11, 23)
S = dt.timedelta(seconds=1)
L_COLS = [("l_k", "BIGINT"), ("l_v", "BIGINT"), ("l_rt", "TIMESTAMP(3)")]
R_COLS = [("r_k", "BIGINT"), ("r_v", "BIGINT"), ("r_rt", "TIMESTAMP(3)")]

# name -> (left rows, right rows, (seconds before, seconds after), residual l_v < r_v)
OUTER_CASES = {
    # (a) the residual: another key; the same key and time with the residual false
    "residual-other-key": ([(1, 5, D0 + S)], [(2, 0, D0 + S)], (1, 1), True),
    "residual-false": ([(1, 5, D0 + S)], [(1, 0, D0 + S)], (1, 1), True),
    # (b) NULL keys on both sides
    "null-keys": (
        [(None, 4, D0 + S), (1, 5, D0 + 2 * S)],
        [(1, 0, D0 + S), (None, 7, D0 + S)],
        (1, 3),
        False,
    ),
    # both, with duplicates, rows at the bounds and rows outside them
    "mixed": (
        [
            (1, 5, D0 + S),
            (1, 5, D0 + S),
            (1, 9, D0 + 3 * S),
            (None, 1, D0 + 2 * S),
            (2, 3, D0 + 5 * S),
            (2, 3, D0 + 9 * S),
        ],
        [(1, 6, D0), (1, 0, D0 + 2 * S), (2, 4, D0 + 9 * S), (None, 9, D0 + 2 * S)],
        (1, 3),
        True,
    ),
}


def outer_tables(env: TableEnvironment, root: Path, left: list, right: list) -> None:
    for name, columns, rows in (("L", L_COLS, left), ("R", R_COLS, right)):
        rowtime = columns[2][0]
        table = ChangelogTable(
            env,
            root,
            name,
            columns,
            op_column=None,
            watermark=(rowtime, f"{rowtime} - INTERVAL '1' SECOND"),
            bounded=True,
        )
        table.append([("+I", r) for r in rows])


def outer_query(env: TableEnvironment, kind: str, bounds: tuple[int, int], residual: bool):
    before, after = bounds
    cond = (col("l_k") == col("r_k")) & col("l_rt").between(
        col("r_rt") - lit(before).seconds, col("r_rt") + lit(after).seconds
    )
    if residual:
        cond = cond & (col("l_v") < col("r_v"))
    left, right = env.from_path("L"), env.from_path("R")
    if kind == "inner":
        return left.join(right).where(cond)
    return getattr(left, f"{kind}_outer_join")(right, cond)


def outer_reference(kind: str, case: str) -> list[tuple]:
    left, right, (before, after), residual = OUTER_CASES[case]

    def pred(lrow: tuple, rrow: tuple) -> bool:
        if not eq(lrow[0], rrow[0]) or not rrow[2] - before * S <= lrow[2] <= rrow[2] + after * S:
            return False
        return not residual or (lrow[1] is not None and rrow[1] is not None and lrow[1] < rrow[1])

    return nested_loop_join(left, right, kind, pred, (3, 3))


def run_outer_case(env: TableEnvironment, root: Path, kind: str, case: str):
    left, right, bounds, residual = OUTER_CASES[case]
    outer_tables(env, root, left, right)
    query = outer_query(env, kind, bounds, residual)
    result = query.execute()
    assert result.finished  # bounded: the end moved the watermark to +infinity
    rows = result.collect()
    assert all(r.kind.short_string == "+I" for r in rows)  # insert-only, nothing retracted
    assert as_bag([tuple(r) for r in rows]) == as_bag(outer_reference(kind, case))
    return query


@pytest.mark.parametrize("case", sorted(OUTER_CASES))
@pytest.mark.parametrize("kind", ["left", "right", "full"])
def test_streaming_outer_interval_joins_give_flinks_answer(
    senv: TableEnvironment, shared_dir: Path, kind: str, case: str
) -> None:
    """The answer of Flink's interval join (a plain-Python reference), insert-only."""
    query = run_outer_case(senv, shared_dir, kind, case)
    assert "operator=[server_ext interval join processor]" in query.explain()


@pytest.mark.parametrize("case", sorted(OUTER_CASES))
def test_streaming_inner_interval_join_on_sparks_join_gives_flinks_answer(
    senv: TableEnvironment, shared_dir: Path, case: str
) -> None:
    run_outer_case(senv, shared_dir, "inner", case)
