"""Window aggregation against Apache Flink 2.3's answers (``windows.py``, generated into
``windows_flink.json``; window TVFs, SESSION included, and legacy group windows): the Python
model of the JVM operator gives the TVF cases' with Flink's
row-by-row watermarks (late rows included), and the product gives them on a Spark Connect
server in streaming mode (``tests/integration/test_windows.py``: batch mode gives what bounded
streaming gives). The product reads a bounded table in one micro-batch (no row is late
there), so the late-row case runs on a watched table whose files are each processed before
the next, split where Flink's watermark at each row is the previous files' largest time: the
windows the last file's watermark closes are Flink's (Flink's end of input also fires the
last ones). About 10 to 20 s of product time (the first query warms the server)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest

from server_ext.aggregate_spec import AggCall
from server_ext.window_spec import WindowAggregateSpec
from tableapi import TableEnvironment
from tests.conformance.windows import CASES, DAY, all_cases, ddl, write_rows
from tests.models.window_aggregate import window_model

FLINK: dict[str, list[list[Any]]] = json.loads(
    (Path(__file__).parent / "windows_flink.json").read_text()
)
#: The late-row cases the product runs, as the files it reads one micro-batch each: each
#: row's watermark (the previous files' largest time) is Flink's at that row, row by row.
LATE = {
    "late-rows": (3, 2, 1),
    "session": (5, 3),
    "session-late-merge": (3, 2),
    "legacy-session": (5, 2),
}
#: The model alone runs it (the model and the operator agree in test_tier_agreement_window).
MODEL_ONLY = {"late-rows-tumble"}
_EPOCH = dt.datetime(1970, 1, 1)
_SECOND = dt.timedelta(seconds=1)
_KINDS = {"TUMBLE": "tumble", "HOP": "hop", "CUMULATE": "cumulate", "SESSION": "session"}


def _ms(text: str) -> int:
    return (dt.datetime.fromisoformat(text) - _EPOCH) // dt.timedelta(milliseconds=1)


def _text(ms: int) -> str:
    return str(_EPOCH + dt.timedelta(milliseconds=ms))


def _spec(tvf: str) -> WindowAggregateSpec:
    """The case's window as the operator's spec (sizes in seconds in ``tvf``)."""
    kind = _KINDS[tvf.split("(")[0]]
    seconds = [int(p.split("'")[1]) * 1000 for p in tvf.split("INTERVAL")[1:]]
    size, step, offset = (
        (seconds[0], None, seconds[1] if len(seconds) > 1 else 0)
        if kind in ("tumble", "session")
        else (seconds[1], seconds[0], seconds[2] if len(seconds) > 2 else 0)
    )
    aggs = (AggCall("count_star"), AggCall("sum", 1, result_type="INT"),
            AggCall("max", 1, result_type="INT"))  # fmt: skip
    return WindowAggregateSpec(
        (("k", "STRING"), ("v", "INT")), 1, aggs, kind, size, step, offset,
        ("window_start", "window_end", "key0", "agg0", "agg1", "agg2"),
    )  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_model_gives_flinks_answer(case: tuple) -> None:
    name, tvf, rows, delay = case
    model = window_model(_spec(tvf))
    out: list[tuple] = []
    top: int | None = None
    for k, v, t in rows:  # Flink's watermark moves at every row
        ts = _ms(DAY + t)
        watermark = None if top is None else top - delay * 1000
        out += model.batch(watermark, [(k, (k, v), ts)])
        top = ts if top is None else max(top, ts)
    out += model.batch(2**62, [])
    got = sorted([r[0], _text(r[1]), _text(r[2]), *r[3:]] for r in out)
    assert got == FLINK[name]


PRODUCT_CASES = [c for c in all_cases() if c[0] not in MODEL_ONLY]


@pytest.mark.parametrize("case", PRODUCT_CASES, ids=[c[0] for c in PRODUCT_CASES])
def test_the_product_gives_flinks_answer(
    case: tuple, senv: TableEnvironment, shared_dir: Path
) -> None:
    name, sql, rows, delay = case
    root = shared_dir / f"windows-{name}"
    root.mkdir()
    root.chmod(0o777)

    def answer(e: TableEnvironment) -> list[list[Any]]:
        return sorted([r.kind.short_string, str(r[0]), str(r[1]), *r[2:]]
                      for r in e.sql_query(sql).execute().collect())  # fmt: skip

    if name not in LATE:  # streaming (bounded) only: test_windows.py checks batch gives it too
        write_rows(root / "e.json", rows)
        senv.execute_sql(ddl(str(root), delay, "'connector' = 'filesystem', "))
        assert answer(senv) == FLINK[name]
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
        got = sorted([r.kind.short_string, str(r[0]), str(r[1]), *r[2:]]
                     for r in result.collect())  # fmt: skip
    finally:
        result.cancel()
    # the windows the last file's watermark (the largest time - delay) fires: window_end - 1 ms
    # <= watermark, so (whole seconds) window_end <= watermark; Flink's later ones come from
    # its end of input
    last = str(dt.datetime.fromisoformat(DAY + max(t for _, _, t in rows)) - delay * _SECOND)
    closed = [r for r in FLINK[name] if r[2] <= last]
    assert got == closed
