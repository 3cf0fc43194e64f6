"""Flink's event-time interval join (``RowTimeIntervalJoin``) as a row-based StatefulProcessor:
the model the JVM ``interval`` operator is compared with.

Driven as ``transformWithState(interval_join_processor(spec), spec.output_struct_ddl(),
"Append", interval_time_mode(spec))`` would drive it, on TwsTester;
``server_ext/joins/interval_spec.py`` has the wire format. A left row (time ``lt``) and a right
row (time ``rt``) of one join key match when ``lower <= lt - rt <= upper`` and the residual
condition is True.

Semantics (Flink's ``TimeIntervalJoin``, with ``allowedLateness`` 0 and
``table.exec.interval-join.min-cleanup-interval`` 0, its defaults)
--------------------------------------------------------------------------------------
``W`` is the watermark the rows of a call are processed with (Spark's batch watermark; Flink
uses 0 while its watermark is not positive, and so does Spark's first batch). Each side keeps
a cache of its rows, per key: ``[time, row, matched]``, sorted by time (ties in arrival
order; duplicates are separate entries, as Flink's list per time).

- A new left row joins every cached right row with ``lt - upper <= rt <= lt - lower`` (an
  output row per pair whose residual is True, marking the right row as matched); a new right
  row likewise joins the cached left rows with ``rt + lower <= lt <= rt + upper``.
- It is then cached if rows of the other side may still match it: a left row when
  ``W < lt - lower``, a right row when ``W < rt + upper`` (Flink's ``rightOperatorTime <
  rightQualifiedUpperBound``). Otherwise it is late: it joined what was cached, and an
  unmatched outer row is padded at once (Flink drops nothing; a late row of an inner side
  that matched nothing leaves no trace).
- A cached row expires when ``W`` passes its window: a left row once ``lt - lower < W``, a
  right row once ``rt + upper < W`` (Flink's ``calExpirationTime``: time <= W - size - 1).
  An unmatched row of an outer side is then emitted null-padded; every expired row is
  dropped. Expired rows go before the call's rows are joined (Flink's timers fire when the
  watermark arrives, before the rows behind it), and by the key's timer.
- A row whose join key has a NULL (at a position that is not null-safe) never matches: it is
  cached only on an outer side, to be padded when it expires, as in Flink (its keyed state
  holds the NULL key too). A row without a time (``__t`` NULL) never matches either (as in
  batch mode, where its time bound is unknown): padded at once on an outer side, else dropped.
- ``lower > upper`` (an empty window): nothing matches; outer rows are padded at once and no
  state is kept (Flink's ``createNegativeWindowSizeJoin``).
- Inputs are insert-only (+I, or +U taken as +I); a -U/-D row raises. Output rows are +I
  only: a row is emitted once, when it matches or when it is padded.

State and timers
----------------
One pickled BINARY ``ValueState`` named ``rows`` per grouping key: ``(left, right, timer)``,
read at most once and written at most once per call (each state call is a JVM round trip,
see ``state.py``); cleared when both caches are empty. ``timer`` is the key's one
event-time timer, at its earliest expiry: ``min(first lt - lower, first rt + upper) + 1``,
the first watermark that expires a cached row (Flink keeps a timer per side; one is enough).
It is moved (delete + register) only when that time changes, and is always later than
``W``: rows that expire at ``W`` are gone before it is set. So a key costs at most one timer
firing per watermark advance.

Wiring: as the temporal join (``temporal.py``): the watermark comes from the inputs' own
``withWatermark`` and the union carries the times as epoch millis only, so no row is dropped
by Spark before the processor sees it. Input columns are found by name (``__side, __kind,
__seq, __l, __r, __t``), so the union may carry more.

Example::

    >>> from server_ext.joins.interval_spec import IntervalSpec
    >>> from server_ext.joins.spec import SideSpec
    >>> spec = IntervalSpec("full", SideSpec((("a", "BIGINT"),)), SideSpec((("b", "BIGINT"),)),
    ...                     lower_ms=-1000, upper_ms=1000)
    >>> type(IntervalJoinProcessor(spec)).__name__
    'IntervalJoinProcessor'
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort_right
from collections.abc import Iterator
from operator import itemgetter
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from server_ext.joins.condition import compile_condition
from server_ext.joins.interval_spec import TIME, IntervalSpec
from server_ext.joins.spec import (
    DELETE,
    INSERT,
    KIND,
    LEFT,
    LEFT_ROW,
    RIGHT_ROW,
    SEQ,
    SIDE,
    UPDATE_BEFORE,
)
from tests.models.state import (
    PICKLED_STATE,
    ColumnPositions,
    Record,
    check_two_sided_spec,
    load_pickled,
    record_converter,
    save_pickled,
)

__all__ = ["IntervalJoinProcessor"]

_time = itemgetter(0)
_COLUMNS = (SIDE, KIND, SEQ, LEFT_ROW, RIGHT_ROW, TIME)
# Slots of a cache entry [time, row, matched].
_T, _ROW, _MATCHED = 0, 1, 2


class IntervalJoinProcessor(StatefulProcessor):
    """INNER / LEFT / RIGHT / FULL event-time interval join."""

    def __init__(self, spec: IntervalSpec) -> None:
        # Only the spec is pickled with the processor; everything else is built in init().
        self.spec = spec
        check_two_sided_spec(spec, "interval join")

    def init(self, handle: StatefulProcessorHandle) -> None:
        spec = self.spec
        self._handle = handle
        self._lower, self._upper = spec.lower_ms, spec.upper_ms
        self._empty_window = spec.lower_ms > spec.upper_ms
        self._lout, self._rout = spec.left_outer, spec.right_outer
        self._cond = compile_condition(spec.residual)
        self._to_left = record_converter(spec.left.fields)
        self._to_right = record_converter(spec.right.fields)
        self._lnulls: Record = (None,) * len(spec.left.fields)
        self._rnulls: Record = (None,) * len(spec.right.fields)
        self._make = Row(KIND, *(name for name, _ in spec.output_fields()))
        self._null_safe = spec.null_safe
        self._state = handle.getValueState("rows", PICKLED_STATE)
        self._columns = ColumnPositions(_COLUMNS, "interval join")

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ input rows

    def handleInputRows(
        self, key: Any, rows: Iterator[Any], timerValues: TimerValues
    ) -> Iterator[Row]:
        ordered = list(rows)
        if not ordered:
            return iter(())
        side_at, kind_at, seq_at, left_at, right_at, time_at = self._columns.of(ordered[0])
        ordered.sort(key=itemgetter(seq_at))
        watermark = timerValues.getCurrentWatermarkInMs()
        if watermark < 0:
            raise RuntimeError(
                "an interval join needs a watermark: run transformWithState with "
                "timeMode='EventTime' (interval_time_mode(spec)) over inputs that have "
                "withWatermark on their rowtime"
            )
        null_key = self._null_key(key)
        out: list[Row] = []
        loaded: Any = None
        left: list = []
        right: list = []
        timer = None
        if not self._empty_window:
            loaded = self._load()
            if loaded is not None:
                left, right, timer = loaded
        changed = self._expire(left, right, watermark, out)
        for row in ordered:
            kind = row[kind_at]
            if kind == UPDATE_BEFORE or kind == DELETE:
                raise ValueError(
                    "interval join: the inputs must be insert-only, but a "
                    f"{'-U' if kind == UPDATE_BEFORE else '-D'} row arrived; an interval join "
                    "cannot retract results it has emitted (plan a regular join instead)"
                )
            t = row[time_at]
            if row[side_at] == LEFT:
                lrow = self._to_left(row[left_at])
                if t is None or self._empty_window:
                    if self._lout:
                        out.append(self._make(INSERT, *lrow, *self._rnulls))
                    continue
                changed |= self._left_row(t, lrow, left, right, watermark, null_key, out)
            else:
                rrow = self._to_right(row[right_at])
                if t is None or self._empty_window:
                    if self._rout:
                        out.append(self._make(INSERT, *self._lnulls, *rrow))
                    continue
                changed |= self._right_row(t, rrow, left, right, watermark, null_key, out)
        if self._empty_window:
            return iter(out)
        timer, moved = self._move_timer(left, right, timer)
        if changed or moved:
            self._save(left, right, timer, loaded is not None)
        return iter(out)

    def _left_row(
        self,
        t: int,
        lrow: Record,
        left: list,
        right: list,
        watermark: int,
        null_key: bool,
        out: list,
    ) -> bool:
        """Join a new left row with the cached right rows, then cache or pad it. Returns
        whether the state changed."""
        matched = changed = False
        if not null_key and right:
            make, cond, rout = self._make, self._cond, self._rout
            lo = bisect_left(right, t - self._upper, key=_time)
            hi = bisect_right(right, t - self._lower, key=_time)
            for i in range(lo, hi):
                entry = right[i]
                rrow = entry[_ROW]
                if cond is None or cond(lrow, rrow):
                    out.append(make(INSERT, *lrow, *rrow))
                    matched = True
                    if rout and not entry[_MATCHED]:
                        entry[_MATCHED] = True
                        changed = True
        if watermark < t - self._lower and (self._lout or not null_key):
            insort_right(left, [t, lrow, matched], key=_time)
            return True
        if self._lout and not matched:
            out.append(self._make(INSERT, *lrow, *self._rnulls))
        return changed

    def _right_row(
        self,
        t: int,
        rrow: Record,
        left: list,
        right: list,
        watermark: int,
        null_key: bool,
        out: list,
    ) -> bool:
        """Join a new right row with the cached left rows, then cache or pad it."""
        matched = changed = False
        if not null_key and left:
            make, cond, lout = self._make, self._cond, self._lout
            lo = bisect_left(left, t + self._lower, key=_time)
            hi = bisect_right(left, t + self._upper, key=_time)
            for i in range(lo, hi):
                entry = left[i]
                lrow = entry[_ROW]
                if cond is None or cond(lrow, rrow):
                    out.append(make(INSERT, *lrow, *rrow))
                    matched = True
                    if lout and not entry[_MATCHED]:
                        entry[_MATCHED] = True
                        changed = True
        if watermark < t + self._upper and (self._rout or not null_key):
            insort_right(right, [t, rrow, matched], key=_time)
            return True
        if self._rout and not matched:
            out.append(self._make(INSERT, *self._lnulls, *rrow))
        return changed

    # ------------------------------------------------------------------ expiry and timers

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Row]:
        loaded = self._load()
        if loaded is None:
            return iter(())
        left, right, stored = loaded
        # The timer that fired is gone (Spark deletes it after this call).
        timer = None if stored == expiredTimerInfo.getExpiryTimeInMs() else stored
        out: list[Row] = []
        changed = self._expire(left, right, timerValues.getCurrentWatermarkInMs(), out)
        timer, moved = self._move_timer(left, right, timer)
        if changed or moved or timer != stored:
            self._save(left, right, timer, True)
        return iter(out)

    def _expire(self, left: list, right: list, watermark: int, out: list) -> bool:
        """Drop the cached rows whose window the watermark has passed, padding the unmatched
        rows of outer sides. Returns whether any row went."""
        n = bisect_left(left, watermark + self._lower, key=_time)  # lt - lower < W
        m = bisect_left(right, watermark - self._upper, key=_time)  # rt + upper < W
        make = self._make
        if n:
            if self._lout:
                rnulls = self._rnulls
                out.extend(make(INSERT, *e[_ROW], *rnulls) for e in left[:n] if not e[_MATCHED])
            del left[:n]
        if m:
            if self._rout:
                lnulls = self._lnulls
                out.extend(make(INSERT, *lnulls, *e[_ROW]) for e in right[:m] if not e[_MATCHED])
            del right[:m]
        return bool(n or m)

    def _move_timer(self, left: list, right: list, timer: int | None) -> tuple[int | None, bool]:
        """Keep the key's one timer at its earliest expiry; returns it and whether it moved."""
        want = None
        if left:
            want = left[0][_T] - self._lower + 1
        if right:
            at = right[0][_T] + self._upper + 1
            want = at if want is None else min(want, at)
        if want == timer:
            return timer, False
        if timer is not None:
            self._handle.deleteTimer(timer)
        if want is not None:
            self._handle.registerTimer(want)  # > watermark: the expired rows are gone
        return want, True

    # ------------------------------------------------------------------ helpers

    def _null_key(self, key: Any) -> bool:
        """Does the key have a NULL where NULL never matches (a key that is not null-safe)?"""
        values = key if isinstance(key, tuple) else (key,)
        safe = self._null_safe
        return any(v is None and not (i < len(safe) and safe[i]) for i, v in enumerate(values))

    def _load(self) -> Any:
        return load_pickled(self._state)

    def _save(self, left: list, right: list, timer: int | None, existed: bool) -> None:
        save_pickled(self._state, (left, right, timer), bool(left or right), existed)
