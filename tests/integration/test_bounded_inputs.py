"""Bounded inputs in streaming mode: the end of the input moves event time to +infinity.

A filesystem table without ``source.monitor-interval`` is bounded (as in Flink): a streaming
query reads the files present at its start, and when every input is bounded ``execute()``
runs it to the end, so no row held for the watermark is left unemitted.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tableapi import TableEnvironment, col
from tests.integration.changelog_files import ChangelogTable
from tests.integration.test_interval_joins import interval_join, tables, within_4h
from tests.integration.test_temporal_joins import (
    ORDERS,
    RATES,
    _without_proctime,
    at,
    converted,
    eventually,
    probes,
    reference,
    register,
    register_drawn,
    versions,
)
from tests.reference import as_bag, nested_loop_join

T0 = dt.datetime(2026, 11, 23, 10, 0)
H = dt.timedelta(hours=1)


def end_of_input_tables(env: TableEnvironment) -> list[str]:
    """The end-of-input tables left on the server (each query drops its own)."""
    return [
        r.tableName
        for r in env.spark.sql("SHOW TABLES").collect()
        if r.tableName.startswith("tableapi_end_of_input_")
    ]


def test_bounded_temporal_join_emits_every_held_order(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    register(senv, shared_dir, bounded_orders=True, bounded_rates=True)
    result = converted(senv, "left").execute()
    # execute() ran the query to the end of its input: it has stopped, and the 11:04 order
    # (ahead of every watermark the data alone gives, 11:03:59) was emitted at the end.
    assert result.finished
    rows = [_without_proctime(r) for r in result.collect()]
    assert as_bag(rows) == as_bag(reference(ORDERS, RATES, "left"))
    assert (5, "US Dollar", at("11:04"), "US Dollar", 102, at("09:00")) in rows
    assert result.late_rows() == 0
    assert end_of_input_tables(senv) == []


def test_bounded_build_side_stops_holding_back_an_unbounded_probe_side(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    # Rates end at 11:15; orders go on. While the rates table is read, the join's watermark
    # is min(orders, rates) and stops at 11:14:59; the rates' end lifts that bound, as a
    # finished source does in Flink, and the orders' watermark alone drives the join.
    rates = RATES[:5]
    orders, _ = register(senv, shared_dir, orders=ORDERS, rates=rates, bounded_rates=True)
    result = converted(senv, "left").execute()
    try:
        assert not result.finished
        later = [(4, "Euro", at("11:20")), (6, "Yen", at("11:40"))]
        orders.append([("+I", r) for r in later])
        # Orders' watermark: 11:39:59. The 11:20 order is emitted; the 11:40 one waits.
        want = reference(ORDERS + later[:1], rates, "left")
        rows = eventually(result, len(want))
        assert as_bag(rows) == as_bag(want)
        assert (4, "Euro", at("11:20"), "Euro", 119, at("11:15")) in rows
        assert len(end_of_input_tables(senv)) == 1
    finally:
        result.cancel()
    assert end_of_input_tables(senv) == []


def test_bounded_left_interval_join_pads_the_unmatched_rows_at_the_end(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    orders, ships = tables(senv, shared_dir, bounded=True)
    orders.append([("+I", (1, T0)), ("+I", (2, T0 + H)), ("+I", (3, T0 + 2 * H))])
    ships.append([("+I", (1, T0 + 2 * H)), ("+I", (3, T0 + 7 * H))])
    result = interval_join(senv, "left").execute()
    assert result.finished
    rows = [tuple(r) for r in result.collect()]
    want = nested_loop_join(orders.current(), ships.current(), "left", within_4h, (2, 2))
    assert as_bag(rows) == as_bag(want)
    # The data alone moves the watermark to 11:59:59: orders 2 (11:00) and 3 (12:00) could
    # still meet a shipment within 4 hours, so only the end of the input pads them.
    assert (2, T0 + H, None, None) in rows and (3, T0 + 2 * H, None, None) in rows


def test_bounded_regular_join_and_insert_run_to_the_end(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    columns = [("id", "BIGINT"), ("name", "STRING")]
    left = ChangelogTable(senv, shared_dir, "L", columns, op_column=None, bounded=True)
    right = ChangelogTable(
        senv, shared_dir, "R", [("rid", "BIGINT"), ("v", "INT")], op_column=None, bounded=True
    )
    left.append([("+I", (1, "a")), ("+I", (2, "b"))])
    right.append([("+I", (1, 10)), ("+I", (1, 11)), ("+I", (3, 30))])
    sink = ChangelogTable(
        senv, shared_dir, "Sink", [("id", "BIGINT"), ("v", "INT")], op_column=None
    )
    joined = senv.from_path("L").join(senv.from_path("R"), col("id") == col("rid"))
    result = joined.execute()
    assert result.finished  # no watermark anywhere: the end of the files is the end
    assert as_bag(tuple(r) for r in result.collect()) == as_bag([(1, "a", 1, 10), (1, "a", 1, 11)])
    insert = joined.select(col("id"), col("v")).execute_insert("Sink")
    insert.wait()  # returns: the insert has finished
    batch = senv.spark.read.schema("id BIGINT, v INT").json(str(sink.path))
    assert as_bag(tuple(r) for r in batch.collect()) == as_bag([(1, 10), (1, 11)])


def test_bounded_processing_time_query_finishes(senv: TableEnvironment, shared_dir: Path) -> None:
    # A processing-time temporal join runs without no-data micro-batches; with a watermarked
    # bounded table it still reaches the end and stops.
    register(senv, shared_dir, bounded_orders=True, bounded_rates=True)
    result = converted(senv, "left", as_of="o_proctime").execute()
    assert result.finished
    assert sorted(r.amount for r in result.collect()) == sorted(o[0] for o in ORDERS)
    assert end_of_input_tables(senv) == []


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rates=versions, orders=probes, how=st.sampled_from(["inner", "left"]))
def test_random_bounded_event_time_temporal_joins_match_the_reference(
    senv: TableEnvironment, shared_dir: Path, rates, orders, how
) -> None:
    o_rows, r_rows = register_drawn(senv, shared_dir, orders, rates, bounded=True)
    result = converted(senv, how).execute()
    assert result.finished
    got = as_bag(_without_proctime(r) for r in result.collect())
    assert got == as_bag(reference(o_rows, r_rows, how))


def test_a_failing_bounded_query_fails_execute_and_leaves_nothing_behind(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    events = ChangelogTable(
        senv,
        shared_dir,
        "Events",
        [("id", "BIGINT"), ("t", "TIMESTAMP(3)")],
        watermark=("t", "t - INTERVAL '1' SECOND"),
        bounded=True,
    )
    events.append([("+I", (1, T0)), ("upsert", (2, T0))])
    with pytest.raises(Exception, match=r"holds the unknown value 'upsert'"):
        senv.from_path("Events").execute()
    assert end_of_input_tables(senv) == []
    assert not [q for q in senv.spark.streams.active]


@pytest.mark.parametrize("sink", ["memory", "checkpointed"])
def test_a_changelog_read_in_one_micro_batch_keeps_its_order_through_stateless_operators(
    senv: TableEnvironment, shared_dir: Path, sink: str
) -> None:
    # Found by the conformance suite: several files of a changelog in one micro-batch are
    # written by Spark partition by partition, largest file first; with no operator to sort
    # them, a -U came before its +I and materialize() kept the retracted row.
    table = ChangelogTable(senv, shared_dir, "C", [("k", "BIGINT"), ("v", "STRING")], bounded=True)
    first = [("+I", (1, "a")), ("+I", (2, "b"))]  # the smaller, older file
    later = [("-U", (1, "a")), ("+U", (1, "c")), ("-D", (2, "b"))]
    later += [("+I", (k, "filler")) for k in range(10, 60)]
    table.append(first)
    table.append(later)
    if sink == "checkpointed":  # the result's changelog goes to Parquet files
        senv.config.set("execution.checkpointing.dir", str(shared_dir / "checkpoints"))
        senv.config.set("pipeline.name", "ordered-changelog")
    result = senv.from_path("C").where(col("k") < 50).select(col("k"), col("v")).execute()
    changes = [(r.kind.short_string, tuple(r)) for r in result.collect()]
    assert changes == [(op, row) for op, row in first + later if row[0] < 50]  # in file order
    materialized = [tuple(r) for r in result.materialize().itertuples(index=False)]
    assert sorted(materialized) == sorted(r for r in table.current() if r[0] < 50)
