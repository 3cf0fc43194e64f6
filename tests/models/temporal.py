"""Flink's temporal joins (``FOR SYSTEM_TIME AS OF``) as a row-based StatefulProcessor: the
model the JVM ``temporal`` operator is compared with.

Driven as ``transformWithState(temporal_join_processor(spec), spec.output_struct_ddl(),
"Append", temporal_time_mode(spec))`` would drive it, on TwsTester;
``server_ext/joins/temporal_spec.py`` has the wire format. Each probe (left) row joins the build
(right) row valid at the probe row's time.

Event time (Flink's ``TemporalRowTimeJoinOperator``)
----------------------------------------------------
State, per grouping key: ONE pickled BINARY ``ValueState`` named ``versions`` holding
``(versions, probes, timer)``, read at most once and written at most once per call
(``regular.py`` explains why: each state call is a JVM round trip):

- ``versions``: ``[(time, row | None), ...]`` sorted by time, at most one entry per time (a
  later arrival at the same time replaces the entry, as Flink's ``MapState<time, row>``
  does). ``row`` is the build row of a +I/+U, ``None`` a deletion (-U/-D): the key does not
  exist from that time on, until a later version.
- ``probes``: ``[(time, row), ...]`` the probe rows waiting for the watermark, sorted by
  time (ties in arrival order).
- ``timer``: the one event-time timer registered for the key (the smallest held probe
  time), or None.

A probe row whose time is behind the watermark (``__t < watermark``) is late: it is emitted
once with ``__kind`` = LATE and null build fields, and not kept. Any other probe row is held.
Held probe rows with ``time <= watermark`` are due: each joins the latest version with
``version time <= probe time`` (inner: nothing when there is none or it is a deletion, or
when the residual condition is not True; left: padded with nulls instead), in time order.
Due rows are emitted by the timer, and also at the end of an input call: a probe row at
exactly the watermark joins there (Spark would fire a timer at the watermark after the
batch's input, with the same result; TwsTester refuses such timers), and so do rows held
from earlier batches that the batch's new watermark has passed (their timer, which Spark
fires after the batch's input, is moved first).

Timers: Flink's ``registerSmallestTimer``. A key has at most one timer, at its smallest held
probe time; it is moved (delete + register) only when that time changes. One firing emits
every due probe row of the key and registers the next timer. So a key costs at most one
timer firing per watermark advance, however many probe rows it holds.

Version cleanup (whenever the key's state is written, right after the due rows went):
every version older than the latest version with ``time <= watermark`` is dropped. The
held probe rows have times > watermark and future probe rows are late unless their time is
>= watermark, so the latest version with ``time <= watermark`` answers for all of them.
A deletion stays as that version (a late build row older than it must not resurface), so
a deleted key keeps one small entry, as in Flink. The state is cleared when no version and
no probe row is left. A key holding no probe row runs nothing when the watermark moves: its
old versions go at its next input (Flink also sets a timer per build row for this; here
the excess is bounded by the versions newer than the watermark at the key's last input).

Processing time (Flink's ``TemporalProcessTimeJoinOperator``)
-------------------------------------------------------------
State, per grouping key: one pickled BINARY ``ValueState`` named ``current``: the key's
latest build row. +I/+U replace it, -U/-D remove it; a probe row joins it at once (inner:
nothing when there is none; left: padded). No timers (``timeMode="None"``). The state is
read only when a probe row comes before every build row of the call, and written once
when the call has build rows.

Both modes: rows of one key in a call are processed in ``__seq`` order; a probe row whose
join key has a null never matches (build rows with a null key are ignored); probe rows
must be insert-only (+I, or +U treated as +I): a -U/-D probe row raises. Output rows are
``__kind`` then the left fields then the right fields, always +I (or LATE). ``ttl_ms`` of
the sides is not applied (Flink's temporal joins keep versions by time, not by TTL).
Input columns are found by name (``__side, __kind, __seq, __l, __r, __t``), so the union
may carry more.

Wiring (measured on Spark 4.3, classic local; the Connect integration test agrees)
-------------------------------------------------------------------------------
- The watermark must come from the inputs' own ``withWatermark`` (upstream of the union):
  Spark then gives transformWithState the minimum over both inputs, as Flink does, and
  fires the event-time timers, in no-data micro-batches too.
- The union handed to transformWithState must NOT carry a column with watermark metadata
  (such as an alias of a rowtime column, ``__t_ts``): Spark then drops every row, of both
  sides, at or behind the previous batch's watermark before the processor sees it, so late
  probe rows are never reported (``numRowsDroppedByWatermark`` counts them instead) and
  late build rows are lost. Without such a column no row is dropped and the processor
  reports late probe rows as LATE.
- ``getCurrentWatermarkInMs()`` is the batch's eviction watermark both in
  ``handleInputRows`` and in ``handleExpiredTimer``; timers fire after the batch's input.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
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
from server_ext.joins.spec import (
    DELETE,
    INSERT,
    KIND,
    LEFT_OUTER,
    LEFT_ROW,
    RIGHT,
    RIGHT_ROW,
    SEQ,
    SIDE,
    UPDATE_BEFORE,
    InputSpec,
)
from server_ext.joins.temporal_spec import LATE, TIME, TemporalSpec
from tests.models.state import (
    PICKLED_STATE,
    ColumnPositions,
    Record,
    check_two_sided_spec,
    load_pickled,
    record_converter,
    save_pickled,
)

__all__ = ["TemporalJoinProcessor"]

_time = itemgetter(0)
_MISSING = object()
_RETRACT = (UPDATE_BEFORE, DELETE)
_COLUMNS = (SIDE, KIND, SEQ, LEFT_ROW, RIGHT_ROW, TIME)


class TemporalJoinProcessor(StatefulProcessor):
    """INNER / LEFT temporal join, event time or processing time (``spec.time``)."""

    def __init__(self, spec: TemporalSpec) -> None:
        # Only the spec is pickled with the processor; everything else is built in init().
        self.spec = spec
        _validate(spec)

    def init(self, handle: StatefulProcessorHandle) -> None:
        spec = self.spec
        self._handle = handle
        self._event = spec.time == "event"
        self._outer = spec.kind == LEFT_OUTER
        self._cond = compile_condition(spec.residual)
        self._to_left = record_converter(spec.left.fields)
        self._to_right = record_converter(spec.right.fields)
        self._rnulls: Record = (None,) * len(spec.right.fields)
        self._make = Row(KIND, *(name for name, _ in spec.output_fields()))
        self._state = handle.getValueState("versions" if self._event else "current", PICKLED_STATE)
        self._columns = ColumnPositions(_COLUMNS if self._event else _COLUMNS[:5], "temporal join")
        self._at: tuple[int, ...] = ()

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ input rows

    def handleInputRows(
        self, key: Any, rows: Iterator[Any], timerValues: TimerValues
    ) -> Iterator[Row]:
        ordered = list(rows)
        if not ordered:
            return iter(())
        self._at = self._columns.of(ordered[0])
        ordered.sort(key=itemgetter(self._at[2]))
        null_key = any(value is None for value in key)
        if self._event:
            watermark = timerValues.getCurrentWatermarkInMs()
            if watermark < 0:
                raise RuntimeError(
                    "an event-time temporal join needs a watermark: run transformWithState "
                    "with timeMode='EventTime' (temporal_time_mode(spec)) over inputs that "
                    "have withWatermark on their rowtime"
                )
            out = self._event_rows(ordered, null_key, watermark)
        else:
            out = self._processing_rows(ordered, null_key)
        return iter(out)

    def _probe_kind_ok(self, kind: int) -> None:
        if kind in _RETRACT:
            raise ValueError(
                "temporal join: the probe (left) input must be insert-only, but a "
                f"{'-U' if kind == UPDATE_BEFORE else '-D'} row arrived; a temporal join "
                "cannot retract results it has emitted (plan a regular join instead)"
            )

    # ------------------------------------------------------------------ event time

    def _event_rows(self, ordered: list[Row], null_key: bool, watermark: int) -> list[Row]:
        side_at, kind_at, _, left_at, right_at, time_at = self._at
        out: list[Row] = []
        loaded: Any = _MISSING
        versions: list = []
        probes: list = []
        timer = None
        changed = False
        for row in ordered:
            t = row[time_at]
            if t is None:
                raise ValueError(
                    f"temporal join: a row without a time ({TIME} is null); event-time "
                    "temporal joins need the time attribute of both inputs to be NOT NULL"
                )
            if row[side_at] == RIGHT:
                if null_key:
                    continue  # a null key never matches: nothing to keep
                if loaded is _MISSING:
                    loaded = self._load()
                    versions, probes, timer = loaded or ([], [], None)
                kind = row[kind_at]
                value = None if kind in _RETRACT else self._to_right(row[right_at])
                i = bisect_left(versions, t, key=_time)
                if i < len(versions) and versions[i][0] == t:
                    versions[i] = (t, value)
                else:
                    versions.insert(i, (t, value))
                changed = True
                continue
            self._probe_kind_ok(row[kind_at])
            if t < watermark:
                out.append(self._make(LATE, *self._to_left(row[left_at]), *self._rnulls))
                continue
            if null_key and not self._outer:
                continue  # inner: never matches, nothing to emit
            if loaded is _MISSING:
                loaded = self._load()
                versions, probes, timer = loaded or ([], [], None)
            i = bisect_right(probes, t, key=_time)
            probes.insert(i, (t, self._to_left(row[left_at])))
            changed = True
        if changed:
            timer, _ = self._advance(versions, probes, timer, watermark, out)
            self._save(versions, probes, timer, loaded is not None)
        return out

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Row]:
        if not self._event:
            return iter(())
        loaded = self._load()
        if loaded is None:
            return iter(())
        versions, probes, stored = loaded
        # The timer that fired is gone (Spark deletes it after this call).
        timer = None if stored == expiredTimerInfo.getExpiryTimeInMs() else stored
        out: list[Row] = []
        timer, changed = self._advance(
            versions, probes, timer, timerValues.getCurrentWatermarkInMs(), out
        )
        if changed or timer != stored:
            self._save(versions, probes, timer, True)
        return iter(out)

    def _advance(
        self, versions: list, probes: list, timer: int | None, watermark: int, out: list
    ) -> tuple[int | None, bool]:
        """Emit the due probe rows, drop the versions no probe row can need and move the
        key's timer to its smallest held probe time. Returns the timer and whether
        anything changed."""
        emitted = self._emit_due(versions, probes, watermark, out)
        pruned = _prune(versions, watermark)
        want = probes[0][0] if probes else None
        if want == timer:
            return timer, emitted or pruned
        if timer is not None:
            self._handle.deleteTimer(timer)
        if want is not None:
            self._handle.registerTimer(want)  # > watermark: the due rows are gone
        return want, True

    def _save(self, versions: list, probes: list, timer: int | None, existed: bool) -> None:
        save_pickled(self._state, (versions, probes, timer), bool(versions or probes), existed)

    def _emit_due(self, versions: list, probes: list, watermark: int, out: list) -> bool:
        """Join every held probe row with ``time <= watermark`` and remove it."""
        n = bisect_right(probes, watermark, key=_time)
        if not n:
            return False
        make, cond, outer, rnulls = self._make, self._cond, self._outer, self._rnulls
        for t, lrow in probes[:n]:
            i = bisect_right(versions, t, key=_time) - 1
            rrow = versions[i][1] if i >= 0 else None
            if rrow is not None and (cond is None or cond(lrow, rrow)):
                out.append(make(INSERT, *lrow, *rrow))
            elif outer:
                out.append(make(INSERT, *lrow, *rnulls))
        del probes[:n]
        return True

    def _load(self) -> Any:
        return load_pickled(self._state)

    # ------------------------------------------------------------------ processing time

    def _processing_rows(self, ordered: list[Row], null_key: bool) -> list[Row]:
        side_at, kind_at, _, left_at, right_at = self._at[:5]
        make, cond, outer, rnulls = self._make, self._cond, self._outer, self._rnulls
        out: list[Row] = []
        current: Any = _MISSING  # the key's build row (None: there is none)
        wrote = False
        for row in ordered:
            if row[side_at] == RIGHT:
                if null_key:
                    continue
                current = None if row[kind_at] in _RETRACT else self._to_right(row[right_at])
                wrote = True
                continue
            self._probe_kind_ok(row[kind_at])
            lrow = self._to_left(row[left_at])
            if null_key:
                rrow = None
            else:
                if current is _MISSING:
                    current = self._load()
                rrow = current
            if rrow is not None and (cond is None or cond(lrow, rrow)):
                out.append(make(INSERT, *lrow, *rrow))
            elif outer:
                out.append(make(INSERT, *lrow, *rnulls))
        if wrote:  # clear() of a key with no state is harmless
            save_pickled(self._state, current, current is not None, existed=True)
        return out


def _prune(versions: list, watermark: int) -> bool:
    """Drop the versions older than the latest one with ``time <= watermark``. Only after
    ``_emit_due``: every held probe row is later than the watermark then, and a future one
    is late unless its time is >= watermark."""
    keep = bisect_right(versions, watermark, key=_time) - 1
    if keep <= 0:
        return False
    del versions[:keep]
    return True


def _validate(spec: TemporalSpec) -> None:
    """Fail at plan time, on the client, rather than in the server's workers."""
    if spec.right.input_spec is not InputSpec.JOIN_KEY_CONTAINS_UNIQUE_KEY:
        raise ValueError(
            "temporal join: the build (right) side must be a versioned table whose primary "
            "key is in the join key (SideSpec input_spec JOIN_KEY_CONTAINS_UNIQUE_KEY), got "
            f"{spec.right.input_spec.value}"
        )
    check_two_sided_spec(spec, "temporal join")
