"""The window join on a Spark Connect server (the JVM ``window_join`` operator): each
window's rows of both sides are joined once the watermark passes the window's end (the
changelog is +I rows only, nothing before), outer rows padded with NULLs, late rows dropped;
every join kind, HOP windows, and batch mode giving the same rows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tableapi import TableEnvironment
from tableapi.result import RowKind
from tests.integration.changelog_files import ChangelogTable
from tests.reference import as_bag

T0 = dt.datetime(2026, 11, 23, 10, 0)
S = dt.timedelta(seconds=1)
W0, W1, W2 = T0, T0 + 5 * S, T0 + 10 * S
COLUMNS = [("k", "STRING"), ("v", "INT"), ("ts", "TIMESTAMP(3)")]
TUMBLE = "(SELECT * FROM TABLE(TUMBLE(TABLE {}, DESCRIPTOR(ts), INTERVAL '5' SECOND)))"
HOP = (
    "(SELECT * FROM TABLE(HOP(TABLE {}, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
    "INTERVAL '10' SECOND)))"
)
ON = "ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k"


def tables(env: TableEnvironment, root: Path, bounded: bool = False) -> list[ChangelogTable]:
    return [
        ChangelogTable(
            env,
            root,
            name,
            COLUMNS,
            op_column=None,
            watermark=("ts", "ts - INTERVAL '1' SECOND"),
            bounded=bounded,
        )
        for name in ("L", "R")
    ]


def join(kind: str, tvf: str = TUMBLE) -> str:
    return (
        "SELECT L.k, L.v, R.k AS rk, R.v AS rv, L.window_start AS ws, R.window_end AS re "
        f"FROM {tvf.format('L')} L {kind} JOIN {tvf.format('R')} R {ON}"
    )


def test_a_window_is_joined_once_the_watermark_passes_its_end_and_late_rows_are_dropped(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    left, right = tables(senv, shared_dir)
    query = senv.sql_query(join("LEFT"))
    assert "WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end]" in (
        query.explain()
    )
    result = query.execute()
    try:
        left.append([("+I", ("a", 1, T0 + S)), ("+I", ("b", 2, T0 + 2 * S))])
        right.append([("+I", ("a", 10, T0 + 3 * S))])
        result.process_all_available()
        assert result.collect() == []  # the watermark (2 s) is before the window's end
        left.append([("+I", ("a", 3, T0 + 7 * S))])
        right.append([("+I", ("a", 30, T0 + 8 * S))])  # the watermark moves to 6 s
        result.process_all_available()
        first = [
            ("a", 1, "a", 10, T0, T0 + 5 * S),
            ("b", 2, None, None, T0, None),  # padded
        ]
        rows = result.collect()
        assert {r.kind for r in rows} == {RowKind.INSERT}
        assert as_bag([tuple(r) for r in rows]) == as_bag(first)
        # late rows of the first window (dropped); a row behind the watermark (6 s) whose
        # window has not fired is not late (Flink judges a window join's rows by window_end)
        left.append([("+I", ("c", 100, T0 + 1 * S)), ("+I", ("a", 5, T0 + 5.5 * S))])
        right.append([("+I", ("b", 200, T0 + 4 * S))])
        left.append([("+I", ("z", 0, T0 + 20 * S))])  # each input's watermark moves:
        right.append([("+I", ("z", 0, T0 + 21 * S))])  # the operator's is the smaller one
        result.process_all_available()
        second = [("a", 3, "a", 30, W1, W2), ("a", 5, "a", 30, W1, W2)]
        assert as_bag([tuple(r) for r in result.collect()]) == as_bag(first + second)
    finally:
        result.cancel()


LEFT_ROWS = [("a", 1, T0 + S), ("b", 2, T0 + 2 * S), (None, 3, T0 + 3 * S), ("a", 4, T0 + 7 * S)]
RIGHT_ROWS = [("a", 10, T0 + 2 * S), ("c", 20, T0 + 3 * S), (None, 30, T0 + 4 * S),
              ("a", 40, T0 + 12 * S)]  # fmt: skip
A1 = ("a", 1, "a", 10, W0, W0 + 5 * S)
KINDS = {
    "": [A1],
    "LEFT": [A1, ("b", 2, None, None, W0, None), (None, 3, None, None, W0, None),
             ("a", 4, None, None, W1, None)],
    "RIGHT": [A1, (None, None, "c", 20, None, W1), (None, None, None, 30, None, W1),
              (None, None, "a", 40, None, W2 + 5 * S)],
    "FULL": [A1, ("b", 2, None, None, W0, None), (None, 3, None, None, W0, None),
             ("a", 4, None, None, W1, None), (None, None, "c", 20, None, W1),
             (None, None, None, 30, None, W1), (None, None, "a", 40, None, W2 + 5 * S)],
}  # fmt: skip


@pytest.mark.parametrize("kind", list(KINDS), ids=lambda k: k or "INNER")
def test_each_join_kind_in_bounded_streaming_and_batch(
    kind: str, env: TableEnvironment, senv: TableEnvironment, shared_dir: Path
) -> None:
    """NULL keys match nothing (Flink's null filter); outer rows are padded per window."""
    for e, root in ((senv, shared_dir / "s"), (env, shared_dir / "b")):
        root.mkdir()
        root.chmod(0o777)
        left, right = tables(e, root, bounded=True)
        left.append([("+I", r) for r in LEFT_ROWS])
        right.append([("+I", r) for r in RIGHT_ROWS])
        rows = e.sql_query(join(kind)).execute().collect()
        assert as_bag([tuple(r) for r in rows]) == as_bag(KINDS[kind]), e.config


def test_semi_and_anti_window_joins_and_hop_windows(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    left, right = tables(senv, shared_dir, bounded=True)
    left.append([("+I", r) for r in LEFT_ROWS])
    right.append([("+I", r) for r in RIGHT_ROWS])
    exists = (
        "SELECT L.k, L.v FROM {} L WHERE {} EXISTS (SELECT * FROM {} R WHERE "
        "L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k)"
    )
    semi = senv.sql_query(exists.format(TUMBLE.format("L"), "", TUMBLE.format("R")))
    assert "joinType=[LeftSemiJoin]" in semi.explain()
    assert [tuple(r) for r in semi.execute().collect()] == [("a", 1)]
    anti = senv.sql_query(exists.format(TUMBLE.format("L"), "NOT", TUMBLE.format("R")))
    assert as_bag([tuple(r) for r in anti.execute().collect()]) == as_bag(
        [("b", 2), (None, 3), ("a", 4)]
    )
    hop = [tuple(r) for r in senv.sql_query(join("", HOP)).execute().collect()]
    assert as_bag(hop) == as_bag([
        ("a", 1, "a", 10, W0 - 5 * S, W1), ("a", 1, "a", 10, W0, W2),
        ("a", 4, "a", 10, W0, W2), ("a", 4, "a", 40, W1, W2 + 5 * S),
    ])  # fmt: skip
