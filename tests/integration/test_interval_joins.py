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
