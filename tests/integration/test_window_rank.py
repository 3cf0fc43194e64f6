"""Window Top-N and window deduplication on a Spark Connect server (the JVM ``window_rank``
operator): each window's best rows per partition are emitted once the watermark passes the
window's end (the changelog is +I rows only, nothing before), late rows dropped; over a
window TVF and over a window aggregation, keep-first and keep-last deduplication, the row
number left out, and batch mode giving the same rows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tableapi import TableEnvironment
from tableapi.errors import ValidationError
from tableapi.result import RowKind
from tests.integration.changelog_files import ChangelogTable
from tests.reference import as_bag

T0 = dt.datetime(2026, 11, 23, 10, 0)
S = dt.timedelta(seconds=1)
W0, W1, W2 = T0, T0 + 5 * S, T0 + 10 * S
COLUMNS = [("k", "STRING"), ("v", "INT"), ("ts", "TIMESTAMP(3)")]
TUMBLE = "TABLE(TUMBLE(TABLE E, DESCRIPTOR(ts), INTERVAL '5' SECOND))"


def table(env: TableEnvironment, root: Path, bounded: bool = False) -> ChangelogTable:
    return ChangelogTable(
        env,
        root,
        "E",
        COLUMNS,
        op_column=None,
        watermark=("ts", "ts - INTERVAL '1' SECOND"),
        bounded=bounded,
    )


def ranked(select: str, partition: str, order: str, where: str, source: str = TUMBLE) -> str:
    return (
        f"SELECT {select} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, "
        f"window_end{partition} ORDER BY {order}) AS rn FROM {source}) WHERE {where}"
    )


def test_top_n_is_emitted_once_the_watermark_passes_the_window_end_and_late_rows_are_dropped(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    events = table(senv, shared_dir)
    query = senv.sql_query(ranked("k, v, window_start, rn", ", k", "v DESC", "rn <= 2"))
    plan = query.explain()
    assert "WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], " in plan
    assert "rankRange=[rankStart=1, rankEnd=2], partitionBy=[k], orderBy=[v DESC]" in plan
    result = query.execute()
    try:
        events.append([("+I", ("a", 1, T0 + S)), ("+I", ("a", 5, T0 + 2 * S)),
                       ("+I", ("a", 3, T0 + 3 * S)), ("+I", ("b", 2, T0 + 3 * S))])  # fmt: skip
        result.process_all_available()
        assert result.collect() == []  # the watermark (2 s) is before the window's end
        events.append([("+I", ("a", 4, T0 + 4 * S)), ("+I", ("a", 9, T0 + 7 * S))])
        result.process_all_available()  # the watermark moves to 6 s: [0, 5) fires
        first = [("a", 5, W0, 1), ("a", 4, W0, 2), ("b", 2, W0, 1)]
        rows = result.collect()
        assert {r.kind for r in rows} == {RowKind.INSERT}
        assert as_bag([tuple(r) for r in rows]) == as_bag(first)
        # a late row of the fired window (dropped), one behind the watermark of an open one
        events.append([("+I", ("a", 100, T0 + 2 * S)), ("+I", ("a", 7, T0 + 5.5 * S))])
        events.append([("+I", ("z", 0, T0 + 20 * S))])
        result.process_all_available()
        second = [("a", 9, W1, 1), ("a", 7, W1, 2)]
        rows = result.collect()
        assert {r.kind for r in rows} == {RowKind.INSERT}
        assert as_bag([tuple(r) for r in rows]) == as_bag(first + second)
    finally:
        result.cancel()


ROWS = [("a", 3, T0 + S), ("a", 1, T0 + 2 * S), ("b", 2, T0 + 2 * S), ("a", 4, T0 + 4 * S),
        ("b", 8, T0 + 6 * S), ("a", 6, T0 + 7 * S), ("b", 4, T0 + 9 * S),
        ("a", 5, T0 + 12 * S)]  # fmt: skip
#: query -> its rows (bounded: the end of the input fires every window)
CASES = {
    "keep-first": (
        ranked("k, v, window_start, window_end", ", k", "ts ASC", "rn = 1"),
        "WindowDeduplicate(window=[TUMBLE(win_start=[window_start], win_end=[window_end], "
        "size=[5 s])], keep=[FirstRow], partitionKeys=[k], orderKey=[ts], order=[ROWTIME]",
        [("a", 3, W0, W1), ("b", 2, W0, W1), ("a", 6, W1, W2), ("b", 8, W1, W2),
         ("a", 5, W2, W2 + 5 * S)],
    ),
    "keep-last": (
        ranked("k, v, window_start, window_end", ", k", "ts DESC", "rn <= 1"),
        "keep=[LastRow]",
        [("a", 4, W0, W1), ("b", 2, W0, W1), ("a", 6, W1, W2), ("b", 4, W1, W2),
         ("a", 5, W2, W2 + 5 * S)],
    ),
    "rank-range-without-the-number": (  # the 2nd and 3rd smallest per window, no rn column
        ranked("k, v, window_end", "", "v", "rn > 1 AND rn < 4"),
        "rankRange=[rankStart=2, rankEnd=3], partitionBy=[], orderBy=[v ASC]",
        [("b", 2, W1), ("a", 3, W1), ("a", 6, W2), ("b", 8, W2)],
    ),
    "over-a-window-aggregation": (
        ranked(
            "window_start, k, s, rn",
            "",
            "s DESC",
            "rn <= 1",
            "(SELECT window_start, window_end, k, SUM(v) AS s FROM " + TUMBLE
            + " GROUP BY window_start, window_end, k)",
        ),
        "WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 s])]",
        [(W0, "a", 8, 1), (W1, "b", 12, 1), (W2, "a", 5, 1)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_window_ranks_in_bounded_streaming_and_batch(
    case: str, env: TableEnvironment, senv: TableEnvironment, shared_dir: Path
) -> None:
    sql, plan, expected = CASES[case]
    for e, root in ((senv, shared_dir / "s"), (env, shared_dir / "b")):
        root.mkdir()
        root.chmod(0o777)
        table(e, root, bounded=True).append([("+I", r) for r in ROWS])
        query = e.sql_query(sql)
        assert plan in query.explain()
        rows = query.execute().collect()
        assert {r.kind for r in rows} == {RowKind.INSERT}
        assert as_bag([tuple(r) for r in rows]) == as_bag(expected), e.config


def test_shapes_that_are_not_window_ranks_are_refused_saying_why(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    table(senv, shared_dir)
    not_windowed = (
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, k ORDER BY v) "
        f"AS rn FROM {TUMBLE}) WHERE rn <= 2"
    )
    with pytest.raises(ValidationError, match=r"OVER aggregation .* is not supported"):
        senv.sql_query(not_windowed)
    unfiltered = senv.sql_query(
        f"SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v) AS rn "
        f"FROM {TUMBLE}"
    )
    with pytest.raises(ValidationError, match=r"keep its first rows with WHERE rn <= N"):
        unfiltered.explain()
