"""Window joins against Apache Flink 2.3's answers (``windows.py``'s ``JOIN_CASES``, generated
into ``windows_flink.json``): a full outer TUMBLE join with NULL keys, a left HOP join and an
inner CUMULATE join. The Python model of the JVM operator (``tests/models/window_join.py``)
gives them with Flink's row-by-row watermark, and the product gives them on a Spark Connect
server in streaming mode (each side one bounded file; batch mode's rows are checked in
``tests/integration/test_window_join.py``). A few seconds of product time."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from server_ext.joins.spec import SideSpec
from server_ext.window_join_spec import WindowJoinSpec
from tableapi import TableEnvironment
from tableapi.plan.windows import Window, WindowKind
from tests.conformance.windows import DAY, JOIN_CASES, ddl, join_query, write_rows
from tests.models.window_join import WindowJoinModel

FLINK: dict[str, list[list[Any]]] = json.loads(
    (Path(__file__).parent / "windows_flink.json").read_text()
)
_EPOCH = dt.datetime(1970, 1, 1)
_KINDS = {"": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "full"}


def _ms(text: str) -> int:
    return (dt.datetime.fromisoformat(text) - _EPOCH) // dt.timedelta(milliseconds=1)


def _text(ms: int | None) -> str | None:
    return None if ms is None else str(_EPOCH + dt.timedelta(milliseconds=ms))


def _window(tvf: str) -> Window:
    """The case's window (its sizes in seconds in ``tvf``)."""
    kind = WindowKind(tvf.split("(")[0])
    sizes = [int(p.split("'")[1]) * 1000 for p in tvf.split("INTERVAL")[1:]]
    if kind is WindowKind.TUMBLE:
        return Window(kind, "ts", sizes[0])
    return Window(kind, "ts", sizes[1], sizes[0])


def _answer(rows: list[tuple]) -> list[list[Any]]:
    return sorted(([*r[:5], *(_text(x) for x in r[5:])] for r in rows), key=json.dumps)


@pytest.mark.parametrize("case", JOIN_CASES, ids=[c[0] for c in JOIN_CASES])
def test_the_model_gives_flinks_answer(case: tuple) -> None:
    name, kind, tvf, left, right = case
    window = _window(tvf)
    fields = (("k", "STRING"), ("v", "INT"), ("ws", "BIGINT"), ("we", "BIGINT"))
    model = WindowJoinModel(WindowJoinSpec(_KINDS[kind], SideSpec(fields), SideSpec(fields)))
    out: list[tuple] = []
    arrivals = sorted([("L", r) for r in left] + [("R", r) for r in right], key=lambda x: x[1][2])
    top: int | None = None
    for side, (k, v, t) in arrivals:  # one watermark for both (no row is late either way)
        ts = _ms(DAY + t)
        watermark = None if top is None else top - 1000
        rows = [(side, k, (k, v, s, e), e) for s, e in window.assign(ts)]
        out += model.batch(watermark, rows)
        top = ts if top is None else max(top, ts)
    out += model.batch(2**62, [])
    # (+I, L.k, L.v, L.ws, L.we, R.k, R.v, R.ws, R.we) -> the query's columns
    got = [(r[0], r[1], r[2], r[5], r[6], r[3], r[4], r[7], r[8]) for r in out]
    assert _answer(got) == FLINK[name]


@pytest.mark.parametrize("case", JOIN_CASES, ids=[c[0] for c in JOIN_CASES])
def test_the_product_gives_flinks_answer(
    case: tuple, senv: TableEnvironment, shared_dir: Path
) -> None:
    name, kind, tvf, left, right = case
    for table, rows in (("L", left), ("R", right)):
        root = shared_dir / table
        root.mkdir()
        root.chmod(0o777)
        write_rows(root / "e.json", rows)
        senv.execute_sql(ddl(str(root), 1, "'connector' = 'filesystem', ", table))
    result = senv.sql_query(join_query(kind, tvf)).execute().collect()
    got = [
        [r.kind.short_string, *r[:4], *(None if x is None else str(x) for x in r[4:])]
        for r in result
    ]
    assert sorted(got, key=json.dumps) == FLINK[name]
