"""Late rows: rows whose event time is behind their table's watermark when they arrive, and
which of them leave Flink's answer the same however its inputs interleave.

Flink reads each table as one file, in order (``model.write_flink_file``); a table's
watermark after a row is the largest event time read so far minus the table's delay (Flink's
``WatermarkAssignerOperator`` emits it at once: our times move in whole seconds, more than its
200 ms interval). A row is *late* when its time is at or behind the watermark of the rows
read before it in its file.

But a join sees the minimum of its inputs' watermarks, and Flink does not define how the two
sources' rows interleave at the join: a row behind its own table's watermark is behind the
join's only if the other input has moved far enough by then, which it may or may not have
(measured: one interval case with a late row gave two answers over 15 runs of the same JVM).
So the generator keeps a late row only where every interleaving gives the same answer, the
answer with no row late (also this product's, which reads every file of a bounded table in
one micro-batch, so its watermark never moves between them). W below is the join's watermark
when a row arrives: at most its own table's watermark before it (``watermark_before``).

- **Interval join** (Flink's ``TimeIntervalJoin``, allowed lateness 0; ``L <= a - b <= U``
  in milliseconds): a pair of rows that match (equal non-NULL keys, in the window) is joined
  whichever arrives second if the first is still cached then. A right row ``b`` is cached
  while ``W < b + U`` (then expires), a left row ``a`` while ``W < a - L``; so the pair is
  joined in every interleaving when ``W(a) < b + U`` and ``W(b) < a - L``, which holds for
  rows that are not late. A late row may join what is still cached and is padded at once on
  an outer side: kept only when each of its pairs passes that test (rows without a partner,
  NULL keys and pairs out of the window are always fine).
- **Event-time temporal join** (Flink's ``TemporalRowTimeJoinOperator``): a probe row ``p``
  is kept in state whatever its time (Flink drops no late probe row) and joined at the next
  watermark ``>= p`` with the latest version ``<= p`` left in state; at each firing the
  versions older than the latest version ``<= W`` are removed. So ``p`` gets the version
  valid at its time when (a) no version of its key lies in ``(p, W(p)]`` (else the valid one
  may be cleaned up before ``p`` arrives) and (b) every version ``v <= p`` of its key
  arrives while ``W(v) < p`` (else ``p`` may have been joined before ``v`` came).

Keys, residuals and filters are not evaluated beyond the first key equality: a pair that
might match counts (conservative).

Example:
    >>> from tests.conformance.model import table
    >>> rows = [["+I", [1, "2024-01-01 00:00:10.000"]], ["+I", [1, "2024-01-01 00:00:02.000"]]]
    >>> t = table("A", [("a_k", "INT"), ("a_rt", "TIMESTAMP(3)")], rows=rows, rowtime="a_rt",
    ...           watermark_delay_s=1)
    >>> watermark_before(t), late_positions(t)
    ([None, 9000], [1])
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from tests.conformance.model import Case, Query, table_of, walk_queries


def millis(text: str) -> int:
    """An event time (``2024-01-01 00:00:05.000``) in milliseconds since 2024-01-01.

    Example:
        >>> millis("2024-01-01 00:00:05.250")
        5250
    """
    t = dt.datetime.fromisoformat(text)
    return int((t - dt.datetime(2024, 1, 1)).total_seconds() * 1000)


def row_times(t: dict[str, Any]) -> list[int | None]:
    """The event time of each row of a TABLE with a rowtime (ms; None for a NULL time)."""
    at = [n for n, _ in t["columns"]].index(t["rowtime"])
    return [None if v[at] is None else millis(v[at]) for _, v in t["rows"]]


def watermark_before(t: dict[str, Any]) -> list[int | None]:
    """Per row, the table's watermark when the row is read (ms): the largest time of the rows
    before it minus the delay; None before any."""
    out: list[int | None] = []
    top: int | None = None
    for time in row_times(t):
        out.append(None if top is None else top - t["watermark_delay_s"] * 1000)
        if time is not None:
            top = time if top is None else max(top, time)
    return out


def late_positions(t: dict[str, Any]) -> list[int]:
    """The rows of a TABLE that are late: their time is at or behind the watermark before."""
    return [
        i
        for i, (time, w) in enumerate(zip(row_times(t), watermark_before(t), strict=True))
        if time is not None and w is not None and time <= w
    ]


def _behind(w: int | None, bound: int) -> bool:
    """W < bound, where None is a watermark not yet there."""
    return w is None or w < bound


def _scan_table(q: Query) -> str:
    while q["op"] != "scan":
        q = q["input"]
    return q["table"]


def _keyed(t: dict[str, Any], key: str) -> Iterator[tuple[Any, int | None, int | None]]:
    """(key value, time, watermark before) of each row of a TABLE with a non-NULL key."""
    at = [n for n, _ in t["columns"]].index(key)
    for (_, values), time, w in zip(t["rows"], row_times(t), watermark_before(t), strict=True):
        if values[at] is not None:
            yield values[at], time, w


def _window_ms(iv: dict[str, Any]) -> tuple[int, int]:
    """The interval bound as ``L <= a - b <= U`` in ms (a: the join's left table's time)."""
    lo, hi = iv["lower_s"] * 1000, iv["upper_s"] * 1000
    if iv.get("strict"):
        lo, hi = lo + 1, hi - 1
    return lo, hi


def interval_fragile(case: Case, q: Query) -> list[str]:
    """The pairs of an interval join QUERY whose joining depends on the interleaving."""
    iv = q.get("interval")
    if not iv:
        return []  # a regular join: watermarks do not matter
    left, right = table_of(case, _scan_table(q["left"])), table_of(case, _scan_table(q["right"]))
    lo, hi = _window_ms(iv)
    if iv["time"] != left["rowtime"]:  # b BETWEEN a + lo AND a + hi: a - b in [-hi, -lo]
        lo, hi = -hi, -lo
    lkey, rkey = q["keys"][0]
    out = []
    for ka, ta, wa in _keyed(left, lkey):
        for kb, tb, wb in _keyed(right, rkey):
            if ka != kb or ta is None or tb is None or not lo <= ta - tb <= hi:
                continue
            if not (_behind(wa, tb + hi) and _behind(wb, ta - lo)):
                out.append(f"{left['name']} at {ta} ms, {right['name']} at {tb} ms")
    return out


def temporal_fragile(case: Case, q: Query) -> list[str]:
    """The probe rows of an event-time temporal join QUERY whose version depends on the
    interleaving."""
    probe, build = table_of(case, _scan_table(q["input"])), table_of(case, q["table"])
    pkey, bkey = q["keys"][0]
    versions: dict[Any, list[tuple[int, int | None]]] = {}
    for k, v, w in _keyed(build, bkey):
        if v is not None:
            versions.setdefault(k, []).append((v, w))
    out = []
    for k, tp, wp in _keyed(probe, pkey):
        if tp is None:
            continue
        for v, wv in versions.get(k, []):
            if (wp is not None and tp < v <= wp) or (v <= tp and not _behind(wv, tp)):
                out.append(f"{probe['name']} at {tp} ms, version at {v} ms")
    return out


def fragile(case: Case) -> list[str]:
    """Why the case's Flink answer may depend on how its inputs interleave (empty: it does
    not), as far as late rows go."""
    out: list[str] = []
    for q in walk_queries(case["query"]):
        if q["op"] == "join":
            out += interval_fragile(case, q)
        elif q["op"] == "temporal":
            out += temporal_fragile(case, q)
    return out
