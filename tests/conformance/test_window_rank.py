"""Window Top-N and window deduplication against Apache Flink 2.3's answers (``windows.py``'s
``RANK_CASES`` and ``AGG_RANK_CASES``, generated into ``windows_flink.json``): a Top-2 per
key over TUMBLE with a late row, the second row of HOP windows, keep-first deduplication
over TUMBLE (a row earlier in time that comes later wins) and keep-last over CUMULATE, a
Top-1 over a window aggregation. The Python model of the JVM operator
(``tests/models/window_rank.py``) gives the TVF cases' with Flink's row-by-row watermark,
and the product gives every case on a Spark Connect server in streaming mode (batch mode's
rows are checked in ``tests/integration/test_window_rank.py``); the late-row case runs on a
watched table whose files are each processed before the next, as ``test_windows.py`` does."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest

from server_ext.window_rank_spec import WindowRankSpec
from tableapi import TableEnvironment
from tableapi.plan.windows import Window, WindowKind
from tests.conformance.windows import DAY, RANK_CASES, ddl, rank_cases, write_rows
from tests.models.window_rank import WindowRankModel

FLINK: dict[str, list[list[Any]]] = json.loads(
    (Path(__file__).parent / "windows_flink.json").read_text()
)
#: The late-row case, as the files the product reads one micro-batch each (the late row
#: opens the second, whose watermark is the first's largest time, Flink's at that row).
LATE = {"rank-tumble-top2": (5, 4)}
_EPOCH = dt.datetime(1970, 1, 1)
_SECOND = dt.timedelta(seconds=1)
_FIELDS = {"v": 1, "ts": 2}  # the model's row: k, v, ts, window_start, window_end


def _ms(text: str) -> int:
    return (dt.datetime.fromisoformat(text) - _EPOCH) // dt.timedelta(milliseconds=1)


def _text(ms: int) -> str:
    return str(_EPOCH + dt.timedelta(milliseconds=ms))


def _window(tvf: str) -> Window:
    """The case's window (its sizes in seconds in ``tvf``)."""
    kind = WindowKind(tvf.split("(")[0])
    sizes = [int(p.split("'")[1]) * 1000 for p in tvf.split("INTERVAL")[1:]]
    if kind is WindowKind.TUMBLE:
        return Window(kind, "ts", sizes[0])
    return Window(kind, "ts", sizes[1], sizes[0])


@pytest.mark.parametrize("case", RANK_CASES, ids=[c[0] for c in RANK_CASES])
def test_the_model_gives_flinks_answer(case: tuple) -> None:
    name, tvf, partition, order, _, (start, end), rows, delay = case
    keys = []
    for item in order.split(","):
        column, *direction = item.split()
        keys.append((_FIELDS[column], direction != ["DESC"]))
    fields = (("k", "STRING"), ("v", "INT"), ("ts", "BIGINT"), ("ws", "BIGINT"), ("we", "BIGINT"))
    dedup = order.startswith("ts") and (start, end) == (1, 1)
    spec = WindowRankSpec(
        fields, tuple(keys), end, start, keep_last=dedup and not keys[0][1]
    )  # fmt: skip
    model = WindowRankModel(spec)
    out: list[tuple] = []
    top: int | None = None
    for k, v, t in rows:  # Flink's watermark moves at every row
        ts = _ms(DAY + t)
        watermark = None if top is None else top - delay * 1000
        key = k if partition else None
        out += model.batch(
            watermark, [(key, (k, v, ts, s, e), e) for s, e in _window(tvf).assign(ts)]
        )
        top = ts if top is None else max(top, ts)
    out += model.batch(2**62, [])
    got = sorted((["+I", _text(r[4]), _text(r[5]), r[1], r[2], r[6]] for r in out), key=json.dumps)
    assert got == FLINK[name]


@pytest.mark.parametrize("case", rank_cases(), ids=[c[0] for c in rank_cases()])
def test_the_product_gives_flinks_answer(
    case: tuple, senv: TableEnvironment, shared_dir: Path
) -> None:
    name, sql, rows, delay = case
    root = shared_dir / f"ranks-{name}"
    root.mkdir()
    root.chmod(0o777)

    def answers(result: Any) -> list[list[Any]]:
        got = [[r.kind.short_string, str(r[0]), str(r[1]), *r[2:]] for r in result.collect()]
        return sorted(got, key=json.dumps)

    if name not in LATE:
        write_rows(root / "e.json", rows)
        senv.execute_sql(ddl(str(root), delay, "'connector' = 'filesystem', "))
        assert answers(senv.sql_query(sql).execute()) == FLINK[name]
        return
    watched = "'connector' = 'filesystem', 'source.monitor-interval' = '100 ms', "
    senv.execute_sql(ddl(str(root), delay, watched))
    result = senv.sql_query(sql).execute()
    try:
        start = 0
        for i, size in enumerate(LATE[name]):
            part, start = rows[start : start + size], start + size
            write_rows(root / f".{i:03d}.json", part)  # hidden until whole: Spark skips it
            os.replace(root / f".{i:03d}.json", root / f"{i:03d}.json")
            result.process_all_available()
        got = answers(result)
    finally:
        result.cancel()
    # the windows the last file's watermark fires (window_end <= watermark, whole seconds);
    # Flink's later ones come from its end of input
    last = str(dt.datetime.fromisoformat(DAY + max(t for _, _, t in rows)) - delay * _SECOND)
    assert got == [r for r in FLINK[name] if r[2] <= last]
