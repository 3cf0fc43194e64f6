"""GROUPING SETS, ROLLUP and CUBE on a Spark Connect server: beside the window columns (one
window aggregation per set, insert-only rows at the window's end) and in a plain streaming
aggregation (its changelog applied) and in batch mode, against the same sets computed in
plain Python (a key outside a set is NULL in that set's rows)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path

from tableapi import TableEnvironment
from tableapi.result import RowKind
from tests.integration.changelog_files import ChangelogTable
from tests.reference import as_bag

T0 = dt.datetime(2026, 11, 23, 10, 0)
S = dt.timedelta(seconds=1)
ROWS = [
    ("a", "x", 1, T0 + S),
    ("a", "y", 2, T0 + 3 * S),
    ("b", "x", 4, T0 + 5 * S),
    ("a", "x", 8, T0 + 12 * S),
    ("b", "y", 16, T0 + 14 * S),
]


def expected(sets: list[tuple[str, ...]], windowed: bool) -> list[tuple]:
    """SUM(v) and COUNT(*) per set, window (10 s TUMBLE) and key, in plain Python."""
    out = []
    for keys in sets:
        groups: dict[tuple, list[int]] = defaultdict(list)
        for k, j, v, ts in ROWS:
            start = T0 + 10 * S * ((ts - T0) // (10 * S))
            values = {"k": k, "j": j}
            group = tuple(values[c] if c in keys else None for c in ("k", "j"))
            groups[((start, start + 10 * S) if windowed else ()) + group].append(v)
        out += [(*g, sum(vs), len(vs)) for g, vs in groups.items()]
    return out


def _events(env: TableEnvironment, root: Path) -> None:
    root.mkdir()
    root.chmod(0o777)
    env.drop_temporary_table("Events")
    ChangelogTable(
        env,
        root,
        "Events",
        [("k", "STRING"), ("j", "STRING"), ("v", "INT"), ("ts", "TIMESTAMP(3)")],
        op_column=None,
        watermark=("ts", "ts - INTERVAL '1' SECOND"),
        bounded=True,
    ).append([("+I", r) for r in ROWS])


def test_grouping_sets_rollup_and_cube(
    env: TableEnvironment, senv: TableEnvironment, shared_dir: Path
) -> None:
    windowed = (
        "SELECT window_start, window_end, k, j, SUM(v) AS s, COUNT(*) AS n FROM "
        "TABLE(TUMBLE(TABLE Events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, GROUPING SETS ((k, j), (j), ())"
    )
    rollup = "SELECT k, j, SUM(v) AS s, COUNT(*) AS n FROM Events GROUP BY ROLLUP (k, j)"
    cube = "SELECT k, j, SUM(v) AS s, COUNT(*) AS n FROM Events GROUP BY CUBE (k, j)"
    want = {
        windowed: expected([("k", "j"), ("j",), ()], windowed=True),
        rollup: expected([("k", "j"), ("k",), ()], windowed=False),
        cube: expected([("k", "j"), ("k",), ("j",), ()], windowed=False),
    }
    for mode_env in (senv, env):
        _events(mode_env, shared_dir / f"events-{mode_env.mode}")
        for query in (windowed, rollup) if mode_env is senv else want:
            result = mode_env.sql_query(query)
            assert str(result.row_type.field("k").type) == "STRING"  # NULL in some sets
            if mode_env is senv and query is windowed:  # one final +I per set, window, key
                rows = result.execute().collect()
                assert {r.kind for r in rows} == {RowKind.INSERT}
                got = [tuple(r) for r in rows]
            else:
                got = [tuple(r) for r in result.execute().materialize().itertuples(index=False)]
                got = [tuple(None if v != v else v for v in r) for r in got]  # NaN: NULL
            assert as_bag(got) == as_bag(want[query]), (mode_env.mode, query)
