"""Flink's window Top-N and window deduplication (``WindowRankOperatorBuilder``,
``RowTimeWindowDeduplicateOperatorBuilder``) in plain Python: the model the JVM
``window_rank`` operator (``WindowRank.java``) is compared with, batch by batch.

Semantics (Flink 2.3, checked on PyFlink: ``tests/conformance/windows.py``'s rank cases):

- Rows arrive with their partition key and their window's end (the window TVF assigned it
  upstream; the end names the window). Over a window TVF a row whose window has fired
  (``end - 1 <=`` the watermark, Flink's ``isWindowFired``) is late and dropped; else it is
  kept in its window, per key.
- A micro-batch's rows are seen with its watermark, then the windows that watermark fires
  are ranked, per key in window-end order: the rows sorted by the sort keys (NULL the
  smallest: first ascending, last descending), equal rows in arrival order (a keep-last
  deduplication: the later first, Flink keeps the last row of the latest time), numbered
  from 1; the rows numbered ``rank_start..rank_end`` are emitted ``("+I", *row[, number])``.
- Over a window aggregation's rows (``fired_input``) a window's rows all come in the batch
  that fires it upstream: they are ranked and emitted in that batch, nothing kept.
- Nothing is ever retracted; a fired window leaves no state.

This model sorts every row of a window at fire; the operator keeps only the best
``rank_end`` rows as they come. Both must give the same rows.

Example::

    >>> from server_ext.window_rank_spec import WindowRankSpec
    >>> spec = WindowRankSpec(input=(("k", "BIGINT"), ("v", "BIGINT")), order=((1, False),),
    ...                       rank_end=2)
    >>> m = WindowRankModel(spec)
    >>> m.batch(0, [(1, (1, 5), 5000), (1, (1, 7), 5000), (1, (1, 6), 5000)])
    []
    >>> m.batch(4999, [(1, (1, 9), 5000)])  # late: its window fired before
    [('+I', 1, 7, 1), ('+I', 1, 6, 2)]
    >>> m.state_keys()
    0
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Any

from server_ext.window_rank_spec import WindowRankSpec


class WindowRankModel:
    """One operator's keys: per key, per window end, the window's rows in arrival order.
    ``batch(watermark, rows)``: the rows ``(key, row, window end)`` of a micro-batch seen
    with ``watermark`` (None: none yet), then the windows it fires."""

    def __init__(self, spec: WindowRankSpec) -> None:
        self.spec = spec
        self.windows: dict[Any, dict[int, list[tuple]]] = defaultdict(dict)

    def _compare(self, a: tuple, b: tuple) -> int:
        for field, ascending in self.spec.order:
            x, y = a[field], b[field]
            if x == y:
                continue
            c = -1 if x is None else 1 if y is None else (-1 if x < y else 1)
            return c if ascending else -c
        return 0

    def _ranked(self, rows: list[tuple]) -> list[tuple]:
        numbered = list(enumerate(rows))  # arrival order breaks ties
        tie = -1 if self.spec.keep_last else 1

        def order(a: tuple[int, tuple], b: tuple[int, tuple]) -> int:
            return self._compare(a[1], b[1]) or tie * (a[0] - b[0])

        ranked = [r for _, r in sorted(numbered, key=functools.cmp_to_key(order))]
        out = []
        for n, r in enumerate(ranked[: self.spec.rank_end], start=1):
            if n >= self.spec.rank_start:
                out.append(("+I", *r, n) if self.spec.output_rank else ("+I", *r))
        return out

    def batch(self, watermark: int | None, rows: list[tuple[Any, tuple, int]]) -> list:
        if self.spec.fired_input:
            by_key: dict[Any, dict[int, list[tuple]]] = defaultdict(lambda: defaultdict(list))
            for key, row, end in rows:
                by_key[key][end].append(tuple(row))
            return [
                r
                for key in by_key
                for end in sorted(by_key[key])
                for r in self._ranked(by_key[key][end])
            ]

        def fired(end: int) -> bool:
            return watermark is not None and end - 1 <= watermark

        for key, row, end in rows:
            if not fired(end):  # else late: dropped
                self.windows[key].setdefault(end, []).append(tuple(row))
        out: list[tuple] = []
        for key in list(self.windows):
            for end in sorted(self.windows[key]):
                if fired(end):
                    out += self._ranked(self.windows[key].pop(end))
            if not self.windows[key]:
                del self.windows[key]
        return out

    def state_keys(self) -> int:
        """The keys that still hold a window."""
        return len(self.windows)


__all__ = ["WindowRankModel"]
