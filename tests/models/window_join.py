"""Flink's window join (``WindowJoinOperator``) in plain Python: the model the JVM
``window_join`` operator (``WindowJoin.java``) is compared with, batch by batch.

Semantics (Flink 2.3, checked on PyFlink: ``tests/conformance/windows.py``):

- Rows arrive with their join key and their window's end (both inputs run the same window
  TVF, so the end names the window). A row whose window has fired (``end - 1 <=`` the
  watermark, Flink's ``isWindowFired``) is late and dropped; else it is buffered in its
  window, per side, in arrival order.
- A micro-batch's rows are seen with its watermark, then the windows that watermark fires
  are joined, per key in window-end order:

  - INNER / LEFT / FULL: for each left row, each right row whose pair holds the residual
    (a ``+I`` row); an unmatched left row is padded (LEFT, FULL); then the unmatched right
    rows are padded (FULL);
  - RIGHT: for each right row, each left row that matches, then the right row padded if none;
  - SEMI / ANTI: the left rows with a match / without one.

- A NULL in a key that is not null-safe matches nothing (Flink's
  ``JoinConditionWithNullFilters``); an outer row of such a key is still padded.
- Output rows are ``("+I", *left, *right)`` (SEMI / ANTI: the left fields only); nothing is
  ever retracted, and a fired window leaves no state.

Example::

    >>> from server_ext.joins.spec import SideSpec
    >>> from server_ext.window_join_spec import WindowJoinSpec
    >>> spec = WindowJoinSpec("left", SideSpec((("k", "BIGINT"),)), SideSpec((("k0", "BIGINT"),)))
    >>> m = WindowJoinModel(spec)
    >>> m.batch(0, [("L", 1, (1,), 5000), ("L", 2, (2,), 5000), ("R", 1, (1,), 5000)])
    []
    >>> m.batch(4999, [("R", 1, (1,), 3000)])  # late: its window fired before
    [('+I', 1, 1), ('+I', 2, None)]
    >>> m.state_keys()
    0
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from server_ext.joins.condition import compile_condition
from server_ext.window_join_spec import WindowJoinSpec


class WindowJoinModel:
    """One operator's keys: per key, per window end, both sides' buffered rows.
    ``batch(watermark, rows)``: the rows ``(side "L"/"R", key, row, window end)`` of a
    micro-batch seen with ``watermark`` (None: none yet), then the windows it fires."""

    def __init__(self, spec: WindowJoinSpec) -> None:
        self.spec = spec
        self.condition = compile_condition(spec.residual)
        self.windows: dict[Any, dict[int, tuple[list, list]]] = defaultdict(dict)
        self.lw, self.rw = len(spec.left.fields), len(spec.right.fields)

    def _null_key(self, key: Any) -> bool:
        parts = key if isinstance(key, tuple) else (key,)
        safe = self.spec.null_safe
        return any(v is None and not (i < len(safe) and safe[i]) for i, v in enumerate(parts))

    def _matches(self, key: Any, left: tuple, right: tuple) -> bool:
        if self._null_key(key):
            return False
        return self.condition is None or self.condition(left, right)

    def batch(self, watermark: int | None, rows: list[tuple[str, Any, tuple, int]]) -> list:
        def fired(end: int) -> bool:
            return watermark is not None and end - 1 <= watermark

        for side, key, row, end in rows:
            if fired(end):
                continue  # late
            buffers = self.windows[key].setdefault(end, ([], []))
            buffers[0 if side == "L" else 1].append(tuple(row))
        out: list[tuple] = []
        for key in list(self.windows):
            for end in sorted(self.windows[key]):
                if fired(end):
                    left, right = self.windows[key].pop(end)
                    out += self._join(key, left, right)
            if not self.windows[key]:
                del self.windows[key]
        return out

    def _join(self, key: Any, left: list[tuple], right: list[tuple]) -> list[tuple]:
        kind, out = self.spec.kind, []
        lnull, rnull = (None,) * self.lw, (None,) * self.rw
        if kind in ("semi", "anti"):
            for lrow in left:
                if any(self._matches(key, lrow, r) for r in right) == (kind == "semi"):
                    out.append(("+I", *lrow))
            return out
        if kind == "right":
            for rrow in right:
                pairs = [("+I", *lrow, *rrow) for lrow in left if self._matches(key, lrow, rrow)]
                out += pairs or [("+I", *lnull, *rrow)]
            return out
        matched = [False] * len(right)
        for lrow in left:
            hit = False
            for i, rrow in enumerate(right):
                if self._matches(key, lrow, rrow):
                    out.append(("+I", *lrow, *rrow))
                    hit = matched[i] = True
            if not hit and kind in ("left", "full"):
                out.append(("+I", *lrow, *rnull))
        if kind == "full":
            out += [("+I", *lnull, *r) for r, m in zip(right, matched, strict=True) if not m]
        return out

    def state_keys(self) -> int:
        """How many keys hold state (windows not fired yet)."""
        return len(self.windows)


__all__ = ["WindowJoinModel"]
