"""Window aggregation, window joins and window Top-N on Apache Flink 2.3, kept as a generated
file: a few fixed cases (TUMBLE with an offset, HOP, CUMULATE, SESSION, late rows; the legacy
group windows, ``GROUP BY TUMBLE(ts, ..)``; window joins of each window kind; window Top-N
and deduplication) whose answers Flink gave are in ``windows_flink.json``; the product
(``test_windows.py``, ``test_window_join.py``, ``test_window_rank.py``) and the Python models
of the JVM operators (``tests/models/window_aggregate.py``, the TVF cases, ``window_join.py``,
``window_rank.py``) must give them.

Regenerate (PyFlink in ``.flink-venv``, about 30 s)::

    .flink-venv/bin/python -m tests.conformance.windows > tests/conformance/windows_flink.json

Flink reads each case's table as one JSON file, in order, with parallelism 1 (the watermark
after a row is the largest time so far minus the delay: our times move in whole seconds, so
Flink's watermark assigner emits it at each row), and the bounded source ends with a
watermark of +infinity. Standard library and PyFlink only on Flink's side.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

#: (name, window TVF over the table E, rows (k, v, ts) in file order, watermark delay s)
CASES: list[tuple[str, str, list[tuple[str, int, str]], int]] = [
    (
        "tumble-offset",
        "TUMBLE(TABLE E, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '3' SECOND)",
        [("a", 1, "00:00:01"), ("a", 2, "00:00:04"), ("b", 5, "00:00:12"),
         ("a", 4, "00:00:13"), ("b", 7, "00:00:25")],
        1,
    ),
    (
        "hop",
        "HOP(TABLE E, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)",
        [("a", 1, "00:00:01"), ("b", 3, "00:00:06"), ("a", 2, "00:00:09"),
         ("a", 4, "00:00:16"), ("b", 1, "00:00:21")],
        1,
    ),
    (
        "cumulate",
        "CUMULATE(TABLE E, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)",
        [("a", 1, "00:00:01"), ("a", 2, "00:00:07"), ("b", 3, "00:00:11"),
         ("a", 4, "00:00:17"), ("b", 5, "00:00:29")],
        0,
    ),
    (
        "late-rows",  # 00:00:03 after 00:00:12: late for TUMBLE [0, 10) (dropped); HOP: one
        "HOP(TABLE E, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
        [("a", 1, "00:00:01"), ("a", 2, "00:00:08"), ("a", 4, "00:00:12"),
         ("a", 8, "00:00:03"), ("a", 16, "00:00:07"), ("a", 32, "00:00:30")],
        0,
    ),
    (
        "late-rows-tumble",
        "TUMBLE(TABLE E, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
        [("a", 1, "00:00:01"), ("b", 2, "00:00:08"), ("a", 4, "00:00:12"),
         ("a", 8, "00:00:03"), ("b", 16, "00:00:15")],
        0,
    ),
    (
        "session",  # 00:00:12 after 00:00:20: its own session has ended (dropped)
        "SESSION(TABLE E PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)",
        [("a", 1, "00:00:01"), ("a", 2, "00:00:04"), ("b", 5, "00:00:05"),
         ("a", 4, "00:00:09"), ("a", 3, "00:00:20"), ("a", 9, "00:00:12"),
         ("b", 7, "00:00:25"), ("a", 6, "00:00:30")],
        1,
    ),
    (
        "session-late-merge",  # 00:00:07 is behind the watermark but joins an open session
        "SESSION(DATA => TABLE E PARTITION BY (k), TIMECOL => DESCRIPTOR(ts), "
        "GAP => INTERVAL '5' SECOND)",
        [("a", 1, "00:00:10"), ("a", 2, "00:00:14"), ("b", 4, "00:00:16"),
         ("a", 8, "00:00:07"), ("b", 16, "00:00:40")],
        0,
    ),
]  # fmt: skip
#: The legacy group windows (Flink's GroupWindowAggregate): (name, the window in GROUP BY,
#: its auxiliary functions' prefix, rows, watermark delay s). Their queries select the
#: window's start and end first, as the TVF cases' do.
LEGACY: list[tuple[str, str, str, list[tuple[str, int, str]], int]] = [
    (
        "legacy-tumble",
        "TUMBLE(ts, INTERVAL '10' SECOND)",
        "TUMBLE",
        [("a", 1, "00:00:01"), ("a", 2, "00:00:04"), ("b", 5, "00:00:12"),
         ("a", 4, "00:00:13"), ("b", 7, "00:00:25")],
        1,
    ),
    (
        "legacy-hop",
        "HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
        "HOP",
        [("a", 1, "00:00:01"), ("b", 3, "00:00:06"), ("a", 2, "00:00:09"),
         ("a", 4, "00:00:16")],
        1,
    ),
    (
        "legacy-session",
        "SESSION(ts, INTERVAL '5' SECOND)",
        "SESSION",
        [("a", 1, "00:00:01"), ("a", 2, "00:00:04"), ("b", 5, "00:00:05"),
         ("a", 4, "00:00:09"), ("a", 3, "00:00:20"), ("a", 9, "00:00:12"),
         ("b", 7, "00:00:25")],
        1,
    ),
]  # fmt: skip
#: Window joins: (name, join kind, window TVF over {t}, rows of L, rows of R). Each side's
#: rows are in time order and the watermark trails by 1 s, so no row is late however Flink
#: interleaves the two sources (late rows: tests/integration/test_window_join.py).
JOIN_CASES: list[tuple[str, str, str, list[tuple[str | None, int, str]], list[tuple]]] = [
    (
        "join-tumble-full",
        "FULL",
        "TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '5' SECOND)",
        [("a", 1, "00:00:01"), ("b", 2, "00:00:03"), (None, 3, "00:00:04"),
         ("a", 4, "00:00:07")],
        [("a", 10, "00:00:02"), ("c", 20, "00:00:03"), (None, 30, "00:00:04"),
         ("a", 40, "00:00:12")],
    ),
    (
        "join-hop-left",
        "LEFT",
        "HOP(TABLE {t}, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
        [("a", 1, "00:00:01"), ("b", 2, "00:00:06"), ("a", 3, "00:00:08")],
        [("a", 10, "00:00:04"), ("b", 20, "00:00:11"), ("a", 30, "00:00:13")],
    ),
    (
        "join-cumulate-inner",
        "",
        "CUMULATE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
        [("a", 1, "00:00:01"), ("a", 2, "00:00:06"), ("b", 3, "00:00:09")],
        [("a", 10, "00:00:03"), ("b", 20, "00:00:04"), ("a", 30, "00:00:08")],
    ),
]  # fmt: skip
#: Window Top-N and window deduplication (Flink's WindowRank, WindowDeduplicate): (name,
#: window TVF over E, the PARTITION BY keys besides the window's, ORDER BY, WHERE on rn, its
#: rank range, rows, watermark delay s). Their sort keys have no ties (Flink orders equal
#: rows by arrival, Spark's batch mode by nothing fixed). "rank-tumble-top2" has a late row
#: (00:00:02 after 00:00:12: its window has fired, dropped) and ends with a row whose window
#: the end of input fires.
RANK_CASES: list[tuple[str, str, str, str, str, tuple[int, int], list, int]] = [
    (
        "rank-tumble-top2",
        "TUMBLE(TABLE E, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
        ", k", "v DESC", "rn <= 2", (1, 2),
        [("a", 1, "00:00:01"), ("a", 5, "00:00:03"), ("b", 2, "00:00:04"), ("a", 3, "00:00:06"),
         ("a", 9, "00:00:12"), ("a", 7, "00:00:02"), ("b", 4, "00:00:15"), ("a", 2, "00:00:18"),
         ("c", 0, "00:00:31")],
        0,
    ),
    (
        "rank-hop-second",
        "HOP(TABLE E, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
        "", "v", "rn > 1 AND rn < 3", (2, 2),
        [("a", 4, "00:00:01"), ("b", 2, "00:00:03"), ("a", 7, "00:00:06"), ("b", 1, "00:00:08"),
         ("a", 3, "00:00:11")],
        1,
    ),
    (
        "dedup-first-tumble",  # 00:00:01 after 00:00:02 is not late, and is the first
        "TUMBLE(TABLE E, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
        ", k", "ts ASC", "rn = 1", (1, 1),
        [("a", 1, "00:00:02"), ("b", 2, "00:00:03"), ("a", 3, "00:00:01"), ("b", 5, "00:00:11"),
         ("a", 6, "00:00:13"), ("a", 7, "00:00:12")],
        1,
    ),
    (
        "dedup-last-cumulate",
        "CUMULATE(TABLE E, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
        ", k", "ts DESC", "rn < 2", (1, 1),
        [("a", 1, "00:00:01"), ("a", 2, "00:00:03"), ("b", 3, "00:00:04"), ("a", 4, "00:00:07"),
         ("b", 5, "00:00:06"), ("a", 6, "00:00:12")],
        1,
    ),
]  # fmt: skip
#: Window Top-N over a window aggregation: (name, query over E, rows, watermark delay s).
AGG_RANK_CASES: list[tuple[str, str, list[tuple[str, int, str]], int]] = [
    (
        "rank-over-window-aggregation",
        "SELECT window_start, window_end, k, s, rn FROM (SELECT *, ROW_NUMBER() OVER ("
        "PARTITION BY window_start, window_end ORDER BY s DESC) AS rn FROM (SELECT "
        "window_start, window_end, k, SUM(v) AS s FROM TABLE(TUMBLE(TABLE E, DESCRIPTOR(ts), "
        "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k)) WHERE rn <= 1",
        [("a", 1, "00:00:01"), ("b", 5, "00:00:02"), ("a", 3, "00:00:04"), ("c", 2, "00:00:11"),
         ("b", 1, "00:00:12"), ("c", 4, "00:00:15")],
        0,
    ),
]  # fmt: skip
DAY = "2024-01-01 "


def query(tvf: str) -> str:
    """The case's query: counts, sums and maxima per window and key."""
    return (
        "SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m "
        f"FROM TABLE({tvf}) GROUP BY window_start, window_end, k"
    )


def legacy_query(window: str, prefix: str) -> str:
    """A legacy group window case's query: the window's bounds, then what ``query`` selects."""
    args = window[window.index("(") :]
    return (
        f"SELECT {prefix}_START{args} AS ws, {prefix}_END{args} AS we, k, COUNT(*) AS n, "
        f"SUM(v) AS s, MAX(v) AS m FROM E GROUP BY {window}, k"
    )


def all_cases() -> list[tuple[str, str, list[tuple[str, int, str]], int]]:
    """Every case as (name, query, rows, watermark delay s)."""
    out = [(name, query(tvf), rows, delay) for name, tvf, rows, delay in CASES]
    out += [(n, legacy_query(w, p), rows, d) for n, w, p, rows, d in LEGACY]
    return out


def rank_query(tvf: str, partition: str, order: str, where: str) -> str:
    """A window rank case's query: the window, the row and its number."""
    return (
        "SELECT window_start, window_end, k, v, rn FROM (SELECT *, ROW_NUMBER() OVER ("
        f"PARTITION BY window_start, window_end{partition} ORDER BY {order}) AS rn FROM "
        f"TABLE({tvf})) WHERE {where}"
    )


def rank_cases() -> list[tuple[str, str, list[tuple[str, int, str]], int]]:
    """Every window rank case as (name, query, rows, watermark delay s)."""
    out = [(n, rank_query(t, p, o, w), rows, d) for n, t, p, o, w, _, rows, d in RANK_CASES]
    return out + AGG_RANK_CASES


def join_query(kind: str, tvf: str) -> str:
    """A window join case's query: both sides' rows and windows (NULLs where padded)."""
    side = "(SELECT * FROM TABLE(" + tvf + "))"
    return (
        "SELECT L.k, L.v, R.k AS rk, R.v AS rv, L.window_start, L.window_end, "
        f"R.window_start AS rws, R.window_end AS rwe FROM {side.format(t='L')} L {kind} JOIN "
        f"{side.format(t='R')} R ON L.window_start = R.window_start AND "
        "L.window_end = R.window_end AND L.k = R.k"
    )


def ddl(path: str, delay: int, options: str, name: str = "E") -> str:
    """Table E (or ``name``) as Flink's (and the product's) DDL."""
    return (
        f"CREATE TABLE {name} (k STRING, v INT, ts TIMESTAMP(3), "
        f"WATERMARK FOR ts AS ts - INTERVAL '{delay}' SECOND) WITH ({options}"
        f"'path' = '{path}', 'format' = 'json')"
    )


def write_rows(path: Path, rows: list[tuple[str | None, int, str]]) -> None:
    lines = [json.dumps({"k": k, "v": v, "ts": DAY + t + ".000"}) for k, v, t in rows]
    path.write_text("\n".join(lines) + "\n")


def flink_answers() -> dict[str, Any]:
    """Every case on PyFlink: its rows (window bounds as ISO text) and row kinds."""
    from pyflink.table import EnvironmentSettings, TableEnvironment

    out: dict[str, Any] = {}
    for name, sql, rows, delay in all_cases():
        env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        env.get_config().set("parallelism.default", "1")
        with tempfile.TemporaryDirectory() as tmp:
            write_rows(Path(tmp) / "e.json", rows)
            env.execute_sql(ddl(tmp, delay, "'connector' = 'filesystem', "))
            result = env.execute_sql(sql)
            got = []
            with result.collect() as it:
                for r in it:
                    values = [str(x) if i < 2 else x for i, x in enumerate(r)]
                    got.append([str(r.get_row_kind()), *values])
        out[name] = sorted(got)
    for name, sql, rows, delay in rank_cases():
        env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        env.get_config().set("parallelism.default", "1")
        with tempfile.TemporaryDirectory() as tmp:
            write_rows(Path(tmp) / "e.json", rows)
            env.execute_sql(ddl(tmp, delay, "'connector' = 'filesystem', "))
            got = []
            with env.execute_sql(sql).collect() as it:
                for r in it:
                    values = [str(x) if i < 2 else x for i, x in enumerate(r)]
                    got.append([str(r.get_row_kind()), *values])
        out[name] = sorted(got, key=json.dumps)
    for name, kind, tvf, left, right in JOIN_CASES:
        env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        env.get_config().set("parallelism.default", "1")
        with tempfile.TemporaryDirectory() as tmp:
            for table, rows in (("L", left), ("R", right)):
                (Path(tmp) / table).mkdir()
                write_rows(Path(tmp) / table / "e.json", rows)
                env.execute_sql(ddl(f"{tmp}/{table}", 1, "'connector' = 'filesystem', ", table))
            got = []
            with env.execute_sql(join_query(kind, tvf)).collect() as it:
                for r in it:
                    values = [x if x is None or i < 4 else str(x) for i, x in enumerate(r)]
                    got.append([str(r.get_row_kind()), *values])
        out[name] = sorted(got, key=json.dumps)
    return out


if __name__ == "__main__":
    answers = flink_answers()
    lines = [
        f"  {json.dumps(name)}: [\n" + ",\n".join(f"    {json.dumps(r)}" for r in rows) + "\n  ]"
        for name, rows in sorted(answers.items())
    ]
    sys.stdout.write("{\n" + ",\n".join(lines) + "\n}\n")
