"""Window aggregation over window TVFs (TUMBLE, HOP, CUMULATE) on a Spark Connect server:
streaming emits one final +I row per window and key once the watermark passes the window's
end, drops late rows, and never updates; batch mode gives the same rows."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from tableapi import TableEnvironment
from tableapi.result import RowKind
from tests.integration.changelog_files import ChangelogTable
from tests.reference import as_bag

T0 = dt.datetime(2026, 11, 23, 10, 0)
S = dt.timedelta(seconds=1)
EVENTS = [("k", "STRING"), ("v", "INT"), ("ts", "TIMESTAMP(3)")]


def events(env: TableEnvironment, root: Path, bounded: bool = False) -> ChangelogTable:
    return ChangelogTable(
        env,
        root,
        "Events",
        EVENTS,
        op_column=None,
        watermark=("ts", "ts - INTERVAL '1' SECOND"),
        bounded=bounded,
    )


def window_query(tvf: str) -> str:
    return (
        "SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m "
        f"FROM TABLE({tvf}) GROUP BY window_start, window_end, k"
    )


TUMBLE = window_query("TUMBLE(TABLE Events, DESCRIPTOR(ts), INTERVAL '10' SECOND)")


def test_streaming_windows_emit_once_the_watermark_passes_their_end(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    table = events(senv, shared_dir)
    query = senv.sql_query(TUMBLE)
    assert "WindowAggregate(groupBy=[k], window=[TUMBLE(time_col=[ts], size=[10 s])]" in (
        query.explain()
    )
    result = query.execute()
    try:
        table.append([("+I", ("a", 1, T0 + S)), ("+I", ("a", 2, T0 + 3 * S)),
                      ("+I", ("b", 5, T0 + 5 * S))])  # fmt: skip
        result.process_all_available()
        assert result.collect() == []  # the watermark (4 s) is before the window's end
        table.append([("+I", ("a", 7, T0 + 12 * S))])  # the watermark moves to 11 s
        result.process_all_available()
        first = [(T0, T0 + 10 * S, "a", 2, 3, 2), (T0, T0 + 10 * S, "b", 1, 5, 5)]
        assert as_bag([tuple(r) for r in result.collect()]) == as_bag(first)
        # a late row of the first window (dropped) and one that ends the second
        table.append([("+I", ("a", 100, T0 + 2 * S)), ("+I", ("b", 1, T0 + 25 * S))])
        result.process_all_available()
        rows = result.collect()
        assert {r.kind for r in rows} == {RowKind.INSERT}
        second = [(T0 + 10 * S, T0 + 20 * S, "a", 1, 7, 7)]
        assert as_bag([tuple(r) for r in rows]) == as_bag(first + second)
    finally:
        result.cancel()


def test_streaming_sessions_merge_and_emit_once_the_watermark_passes_their_end(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """A session grows while rows come within the gap (across micro-batches, a row behind
    the watermark included when it joins an open session), and is emitted once, +I, when
    the watermark passes its end; a row whose own session would have ended is dropped."""
    table = events(senv, shared_dir)
    result = senv.sql_query(
        "SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM "
        "TABLE(SESSION(TABLE Events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "GROUP BY window_start, window_end, k"
    ).execute()
    try:
        table.append([("+I", ("a", 1, T0 + 10 * S)), ("+I", ("b", 2, T0 + 11 * S))])
        result.process_all_available()
        assert result.collect() == []
        # the watermark is 10 s: 7 s joins a's open session [10, 15); b's grows to 18 s
        table.append([("+I", ("a", 4, T0 + 7 * S)), ("+I", ("b", 8, T0 + 13 * S))])
        result.process_all_available()
        assert result.collect() == []
        table.append([("+I", ("c", 16, T0 + 30 * S))])  # the watermark moves to 29 s
        result.process_all_available()
        first = [(T0 + 7 * S, T0 + 15 * S, "a", 2, 5, 4), (T0 + 11 * S, T0 + 18 * S, "b", 2, 10, 8)]
        assert as_bag([tuple(r) for r in result.collect()]) == as_bag(first)
        # late: a's own session [2, 7) has ended and touches none open: dropped
        table.append([("+I", ("a", 32, T0 + 2 * S)), ("+I", ("c", 64, T0 + 50 * S))])
        result.process_all_available()
        rows = result.collect()
        assert {r.kind for r in rows} == {RowKind.INSERT}
        second = [(T0 + 30 * S, T0 + 35 * S, "c", 1, 16, 16)]
        assert as_bag([tuple(r) for r in rows]) == as_bag(first + second)
    finally:
        result.cancel()


def test_batch_and_bounded_streaming_give_the_same_windows(
    env: TableEnvironment, senv: TableEnvironment, shared_dir: Path
) -> None:
    rows = [("a", 1, T0 + S), ("a", 2, T0 + 6 * S), ("b", 5, T0 + 12 * S), ("a", 4, T0 + 14 * S)]
    hop = window_query(
        "HOP(TABLE Events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"
    )
    cumulate = window_query(
        "CUMULATE(TABLE Events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"
    )
    offset = window_query(
        "TUMBLE(TABLE Events, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '2' SECOND)"
    )

    def w(a: int, b: int, k: str, n: int, s: int, m: int) -> tuple:
        return (T0 + a * S, T0 + b * S, k, n, s, m)

    overall = (  # no key: one group per window; window_time grouped and selected
        "SELECT window_start, window_end, window_time, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m "
        "FROM TABLE(TUMBLE(TABLE Events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, window_time"
    )
    session = window_query(
        "SESSION(TABLE Events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)"
    )
    unpartitioned = (  # one session sequence over every row
        "SELECT window_start, window_end, COUNT(*), SUM(v), MAX(v) FROM TABLE(SESSION(TABLE "
        "Events, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end"
    )
    ms = dt.timedelta(milliseconds=1)
    want = {  # worked out by hand from Flink's window definitions
        overall: [(T0, T0 + 10 * S, T0 + 10 * S - ms, 2, 3, 2),
                  (T0 + 10 * S, T0 + 20 * S, T0 + 20 * S - ms, 2, 9, 5)],
        TUMBLE: [w(0, 10, "a", 2, 3, 2), w(10, 20, "b", 1, 5, 5), w(10, 20, "a", 1, 4, 4)],
        hop: [w(-5, 5, "a", 1, 1, 1), w(0, 10, "a", 2, 3, 2), w(5, 15, "a", 2, 6, 4),
              w(5, 15, "b", 1, 5, 5), w(10, 20, "b", 1, 5, 5), w(10, 20, "a", 1, 4, 4)],
        cumulate: [w(0, 5, "a", 1, 1, 1), w(0, 10, "a", 2, 3, 2), w(10, 15, "b", 1, 5, 5),
                   w(10, 15, "a", 1, 4, 4), w(10, 20, "b", 1, 5, 5), w(10, 20, "a", 1, 4, 4)],
        offset: [w(-8, 2, "a", 1, 1, 1), w(2, 12, "a", 1, 2, 2), w(12, 22, "b", 1, 5, 5),
                 w(12, 22, "a", 1, 4, 4)],
        # 1 s and 6 s are 5 s apart: one session (touching windows merge, as Flink's)
        session: [w(1, 11, "a", 2, 3, 2), w(12, 17, "b", 1, 5, 5), w(14, 19, "a", 1, 4, 4)],
        unpartitioned: [(T0 + S, T0 + 11 * S, 2, 3, 2), (T0 + 12 * S, T0 + 19 * S, 2, 9, 5)],
    }  # fmt: skip
    table = None
    for mode_env in (env, senv):
        root = shared_dir / f"bounded-{id(mode_env)}"
        root.mkdir()
        root.chmod(0o777)
        mode_env.drop_temporary_table("Events")
        table = events(mode_env, root, bounded=True)
        table.append([("+I", r) for r in rows])
        for query, expected in want.items():
            got = [tuple(r) for r in mode_env.sql_query(query).execute().collect()]
            assert as_bag(got) == as_bag(expected), query
    assert table is not None


def test_processing_time_windows_fire_by_the_servers_clock(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """TUMBLE over PROCTIME() (Nexmark q12's form): the rows of a micro-batch fall in the
    window of the server's clock then (their event times do not matter) and the window is
    emitted, once, when a later micro-batch runs after the clock has passed its end."""
    table = events(senv, shared_dir)
    senv.execute_sql("CREATE TEMPORARY VIEW P AS SELECT *, PROCTIME() AS p_time FROM Events")
    result = senv.sql_query(
        "SELECT k, COUNT(*) AS n, SUM(v) AS s, window_start, window_end FROM TABLE(TUMBLE("
        "TABLE P, DESCRIPTOR(p_time), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end"
    ).execute()
    try:
        table.append([("+I", ("a", 1, T0)), ("+I", ("a", 2, T0 + 100 * S)),
                      ("+I", ("b", 4, T0 - 100 * S))])  # fmt: skip
        result.process_all_available()
        time.sleep(1.2)  # the clock passes the window's end
        table.append([("+I", ("c", 8, T0))])  # a micro-batch: the first window fires
        result.process_all_available()
        rows = result.collect()
        assert {r.kind for r in rows} == {RowKind.INSERT}
        got = sorted((r[0], r[1], r[2]) for r in rows)
        assert got == [("a", 2, 3), ("b", 1, 4)]
        ((start, end),) = {(r[3], r[4]) for r in rows}  # one window, one second long
        assert end - start == S and start.microsecond == 0
    finally:
        result.cancel()


def test_two_phases_give_the_one_phase_rows(senv: TableEnvironment, shared_dir: Path) -> None:
    """A global HOP aggregation (no keys: Nexmark q7's shape) with a DISTINCT call, run in two
    phases (AUTO: LocalWindowAggregate per task and slice, GlobalWindowAggregate merging) and
    in one (ONE_PHASE) over the same micro-batches: the same +I rows, late rows included (one
    dropped, one counted in the window of its slice that has not fired)."""
    table = events(senv, shared_dir)
    query = (
        "SELECT window_start, window_end, COUNT(*) AS n, MAX(v) AS m, COUNT(DISTINCT k) AS dk "
        "FROM TABLE(HOP(TABLE Events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
        " GROUP BY window_start, window_end"
    )
    results, plans = {}, {}
    for strategy in ("AUTO", "ONE_PHASE"):
        senv.config.set("table.optimizer.agg-phase-strategy", strategy)
        plans[strategy] = senv.sql_query(query).explain()
        results[strategy] = senv.sql_query(query).execute()
    assert (
        "LocalWindowAggregate(window=[HOP(time_col=[ts], size=[10 s], slide=[5 s])]"
        in (plans["AUTO"])
    )
    assert "GlobalWindowAggregate(window=[HOP(slice_end=[$slice_end]" in plans["AUTO"]
    assert "LocalWindowAggregate" not in plans["ONE_PHASE"]
    assert "+- WindowAggregate(window=[HOP(time_col=[ts]" in plans["ONE_PHASE"]

    def w(a: int, b: int, n: int, m: int, dk: int) -> tuple:
        return (T0 + a * S, T0 + b * S, n, m, dk)

    try:
        table.append([("+I", ("a", 1, T0 + S)), ("+I", ("a", 2, T0 + 3 * S)),
                      ("+I", ("b", 5, T0 + 5 * S)), ("+I", ("b", 5, T0 + 7 * S))])  # fmt: skip
        table.append([("+I", ("a", 7, T0 + 12 * S))])  # the watermark moves to 11 s
        for r in results.values():
            r.process_all_available()
        # 2 s is late for both its windows (dropped); 6 s for [0, 10) only: in [5, 15)
        table.append([("+I", ("a", 100, T0 + 2 * S)), ("+I", ("c", 3, T0 + 6 * S)),
                      ("+I", ("d", 1, T0 + 26 * S))])  # fmt: skip
        want = [w(-5, 5, 2, 2, 1), w(0, 10, 4, 5, 2), w(5, 15, 4, 7, 3), w(10, 20, 1, 7, 1)]
        for strategy, r in results.items():
            r.process_all_available()
            rows = r.collect()
            assert {x.kind for x in rows} == {RowKind.INSERT}, strategy
            assert as_bag([tuple(x) for x in rows]) == as_bag(want), strategy
    finally:
        for r in results.values():
            r.cancel()


def test_a_window_aggregation_over_a_changelog(senv: TableEnvironment, shared_dir: Path) -> None:
    """Flink 1.19+'s window aggregation over updates (the rows PyFlink 2.3 gave for this
    input): -D and -U retract from their window, a window whose rows all retracted (b's)
    emits nothing, the output stays insert-only; in two phases (TUMBLE) and in one (HOP)."""
    table = ChangelogTable(
        senv, shared_dir, "Changes", EVENTS, watermark=("ts", "ts - INTERVAL '1' SECOND"),
        bounded=True,
    )  # fmt: skip
    table.append([
        ("+I", ("a", 1, T0 + S)), ("+I", ("a", 2, T0 + 2 * S)), ("-D", ("a", 2, T0 + 2 * S)),
        ("+I", ("b", 5, T0 + 3 * S)), ("-D", ("b", 5, T0 + 3 * S)),
        ("+I", ("c", 7, T0 + 12 * S)), ("-U", ("c", 7, T0 + 12 * S)),
        ("+U", ("c", 9, T0 + 13 * S)), ("+I", ("a", 4, T0 + 25 * S)),
    ])  # fmt: skip
    tumble = (
        "SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM "
        "TABLE(TUMBLE(TABLE Changes, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, k"
    )
    hop = (
        "SELECT window_start, window_end, COUNT(DISTINCT k) AS dk, MIN(v) AS mi FROM "
        "TABLE(HOP(TABLE Changes, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end"
    )
    plan = senv.sql_query(tumble).explain()
    assert "LocalWindowAggregate(groupBy=[k]" in plan and "COUNT_RETRACT(*)" in plan
    assert "changelogMode=[I,UB,UA,D]" in plan
    tumbled = senv.sql_query(tumble).execute().collect()
    senv.config.set("table.optimizer.agg-phase-strategy", "ONE_PHASE")
    hopped = senv.sql_query(hop).execute().collect()
    assert {r.kind for r in tumbled + hopped} == {RowKind.INSERT}

    def w(a: int, b: int, *values: object) -> tuple:
        return (T0 + a * S, T0 + b * S, *values)

    assert as_bag([tuple(r) for r in tumbled]) == as_bag(
        [w(0, 10, "a", 1, 1, 1), w(10, 20, "c", 1, 9, 9), w(20, 30, "a", 1, 4, 4)]
    )
    assert as_bag([tuple(r) for r in hopped]) == as_bag(
        [w(-5, 5, 1, 1), w(0, 10, 1, 1), w(5, 15, 1, 9), w(10, 20, 1, 9), w(20, 30, 1, 4),
         w(25, 35, 1, 4)]
    )  # fmt: skip
