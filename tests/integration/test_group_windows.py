"""The Table API's group windows (``Tumble``, ``Slide``, ``Session`` with ``t.window(w)``) on a
Spark Connect server: the same final rows as Flink's legacy SQL group windows (whose answers
``tests/conformance/test_windows.py`` checks against Flink 2.3), emitted once per window and
key, insert-only, once the watermark passes the window's end."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tableapi import TableEnvironment, col, lit
from tableapi.result import RowKind
from tableapi.window import Session, Slide, Tumble
from tests.integration.changelog_files import ChangelogTable
from tests.reference import as_bag

T0 = dt.datetime(2026, 11, 23, 10, 0)
S = dt.timedelta(seconds=1)
MS = dt.timedelta(milliseconds=1)
ROWS = [("a", 1, T0 + S), ("a", 2, T0 + 6 * S), ("b", 5, T0 + 12 * S), ("a", 4, T0 + 14 * S)]


def _events(env: TableEnvironment, root: Path, bounded: bool) -> ChangelogTable:
    root.mkdir()
    root.chmod(0o777)
    env.drop_temporary_table("Events")
    return ChangelogTable(
        env,
        root,
        "Events",
        [("k", "STRING"), ("v", "INT"), ("ts", "TIMESTAMP(3)")],
        op_column=None,
        watermark=("ts", "ts - INTERVAL '1' SECOND"),
        bounded=bounded,
    )


def test_group_windows_give_the_sql_group_windows_rows(
    env: TableEnvironment, senv: TableEnvironment, shared_dir: Path
) -> None:
    """Tumble, Slide and Session in streaming (bounded) and batch mode: the rows of the same
    legacy SQL group window, the window's start, end and rowtime included."""
    windows = {
        "TUMBLE(ts, INTERVAL '10' SECOND)": Tumble.over(lit(10).seconds),
        "HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)": Slide.over(lit(10).seconds).every(
            lit(5).seconds
        ),
        "SESSION(ts, INTERVAL '5' SECOND)": Session.with_gap(lit(5).seconds),
    }
    tables = {}
    for mode_env in (senv, env):
        _events(mode_env, shared_dir / f"events-{mode_env.mode}", bounded=True).append(
            [("+I", r) for r in ROWS]
        )
        t = mode_env.from_path("Events")
        api = sql = None
        for sql_window, window in windows.items():
            name, params = sql_window.split("(", 1)
            one = (
                t.window(window.on(col("ts")).alias("w"))
                .group_by(col("k"), col("w"))
                .select(
                    lit(name).alias("kind"),
                    col("k"),
                    col("w").start.alias("s"),
                    col("w").end.alias("e"),
                    col("w").rowtime.alias("r"),
                    col("v").sum.alias("total"),
                    col("v").count.alias("n"),
                )
            )
            api = one if api is None else api.union_all(one)
            query = (
                f"SELECT '{name}' AS kind, k, {name}_START({params} AS s, {name}_END({params} "
                f"AS e, {name}_ROWTIME({params} AS r, SUM(v) AS total, COUNT(v) AS n FROM "
                f"Events GROUP BY k, {sql_window}"
            )
            sql = query if sql is None else f"{sql} UNION ALL {query}"
        assert api is not None and sql is not None
        assert api.row_type == mode_env.sql_query(sql).row_type
        tables[mode_env.mode] = (api, sql)
    # the three windows in one streaming query (bounded) and in batch, against batch SQL
    want = [tuple(r) for r in env.sql_query(tables["batch"][1]).execute().collect()]
    assert {r[0] for r in want} == {"TUMBLE", "HOP", "SESSION"}
    for api, _ in tables.values():
        got = api.execute().collect()
        assert {r.kind for r in got} == {RowKind.INSERT}
        assert as_bag([tuple(r) for r in got]) == as_bag(want)
    # one answer worked out by hand, so the two sides cannot agree on a wrong one
    tumble = senv.from_path("Events").window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
    rows = tumble.group_by(col("w")).select(col("w").end, col("v").max).execute().collect()
    assert as_bag([tuple(r) for r in rows]) == as_bag([(T0 + 10 * S, 2), (T0 + 20 * S, 5)])


def test_a_group_window_emits_once_the_watermark_passes_its_end(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    """Unbounded: nothing before the watermark passes the window's end, then one +I row per
    window and key; a late row is dropped."""
    table = _events(senv, shared_dir / "unbounded", bounded=False)
    w = Tumble.over(lit(10).seconds).on(col("ts")).alias("w")
    result = (
        senv.from_path("Events")
        .window(w)
        .group_by(col("w"), col("k"))
        .select(col("k"), col("w").start.alias("s"), col("v").sum.alias("total"))
        .execute()
    )
    try:
        table.append([("+I", ("a", 1, T0 + S)), ("+I", ("a", 2, T0 + 3 * S))])
        result.process_all_available()
        assert result.collect() == []
        table.append([("+I", ("b", 4, T0 + 12 * S))])  # the watermark moves to 11 s
        result.process_all_available()
        assert [(r.kind, tuple(r)) for r in result.collect()] == [(RowKind.INSERT, ("a", T0, 3))]
        table.append([("+I", ("a", 100, T0 + 2 * S)), ("+I", ("b", 8, T0 + 25 * S))])
        result.process_all_available()
        changes = [(r.kind, tuple(r)) for r in result.collect()]
        assert changes == [(RowKind.INSERT, ("a", T0, 3)), (RowKind.INSERT, ("b", T0 + 10 * S, 4))]
    finally:
        result.cancel()
