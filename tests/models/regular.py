"""Flink's regular streaming join (``StreamingJoinOperator``) as a row-based StatefulProcessor:
the model the JVM ``join`` operator is compared with (``tests/models/__init__.py``).

Driven as ``transformWithState(join_processor(spec), spec.output_struct_ddl(), "Append",
time_mode(spec))`` would drive it, on TwsTester; ``server_ext/joins/spec.py`` has the wire
format.

The state machinery (records, side views, the pickled ValueStates, state TTL) is in
``state.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import (
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from server_ext.joins.condition import Predicate, compile_condition
from server_ext.joins.spec import (
    DELETE,
    INSERT,
    KIND,
    LEFT,
    REGULAR_KINDS,
    UPDATE_AFTER,
    JoinSpec,
)
from tests.models.state import (
    ASSOC,
    COUNT,
    ROW,
    WRITTEN,
    Entry,
    Record,
    SideView,
    StateStore,
    check_two_sided_spec,
)

__all__ = ["JoinProcessorBase", "RegularJoinProcessor"]

# Input columns counted from the end: the key columns come first and their number varies.
SIDE_AT, KIND_AT, SEQ_AT, LEFT_AT, RIGHT_AT = -5, -4, -3, -2, -1
_by_seq = itemgetter(SEQ_AT)

Emit = Callable[[list, int, Record, Record], None]
Pad = Callable[[list, int, Record], None]


class JoinProcessorBase(StatefulProcessor):
    """What the regular and the semi/anti join share: rows in ``__seq`` order, null keys,
    state loading and TTL pruning. Subclasses process one left or right row."""

    def __init__(self, spec: JoinSpec) -> None:
        # Only the spec is pickled with the processor; everything else is built in init().
        self.spec = spec
        check_two_sided_spec(spec, "join")

    def left_outer(self) -> bool:
        """Does the left side keep association counts?"""
        return self.spec.left_outer

    def right_outer(self) -> bool:
        return self.spec.right_outer

    def init(self, handle: StatefulProcessorHandle) -> None:
        spec = self.spec
        self._cond: Predicate | None = compile_condition(spec.residual)
        self._left = SideView(spec.left, self.left_outer())
        self._right = SideView(spec.right, self.right_outer())
        self._store = StateStore(handle, spec)
        self._make = Row(KIND, *(name for name, _ in spec.output_fields()))
        self._filter_nulls = tuple(not safe for safe in spec.null_safe)
        self._needs_time = spec.left.ttl_ms is not None or spec.right.ttl_ms is not None

    def handleInputRows(
        self, key: Any, rows: Iterator[Any], timerValues: TimerValues
    ) -> Iterator[Row]:
        ordered = sorted(rows, key=_by_seq)
        out: list[Row] = []
        lv, rv = self._left, self._right
        if self._never_matches(key):
            for row in ordered:
                if row[SIDE_AT] == LEFT:
                    self.unmatched_left(lv.to_record(row[LEFT_AT]), row[KIND_AT], out)
                else:
                    self.unmatched_right(rv.to_record(row[RIGHT_AT]), row[KIND_AT], out)
            return iter(out)

        now = timerValues.getCurrentProcessingTimeInMs()
        if self._needs_time and now < 0:
            raise RuntimeError(
                "this join has a state TTL, which needs the processing time: run "
                "transformWithState with timeMode='ProcessingTime' (spec.time_mode(spec))"
            )
        left, right = self._store.load()
        left_dirty = lv.prune(left, now)
        right_dirty = rv.prune(right, now)
        seen_left = seen_right = False
        for row in ordered:
            if row[SIDE_AT] == LEFT:
                seen_left = True
                self.process_left(lv.to_record(row[LEFT_AT]), row[KIND_AT], left, right, now, out)
            else:
                seen_right = True
                self.process_right(rv.to_record(row[RIGHT_AT]), row[KIND_AT], left, right, now, out)
        # A side changes with its own rows, and with the other side's when it counts matches.
        left_dirty = left_dirty or seen_left or (lv.outer and seen_right)
        right_dirty = right_dirty or seen_right or (rv.outer and seen_left)
        self._store.save(left, right, left_dirty, right_dirty)
        return iter(out)

    def close(self) -> None:
        pass

    def _never_matches(self, key: Any) -> bool:
        """Flink's filterNulls: a null in a key that is not null-safe never equals anything."""
        filt = self._filter_nulls
        for i, value in enumerate(key):
            if value is None and (i >= len(filt) or filt[i]):
                return True
        return False

    def matches(self, rows: dict, row: Record, input_is_left: bool) -> list[Entry]:
        """The entries of the other side's dict that ``row`` joins with (residual applied)."""
        cond = self._cond
        if cond is None:
            return list(rows.values())
        if input_is_left:
            return [e for e in rows.values() if cond(row, e[ROW])]
        return [e for e in rows.values() if cond(e[ROW], row)]

    # Subclass hooks.
    def process_left(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        raise NotImplementedError

    def process_right(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        raise NotImplementedError

    def unmatched_left(self, row: Record, kind: int, out: list) -> None:
        raise NotImplementedError

    def unmatched_right(self, row: Record, kind: int, out: list) -> None:
        raise NotImplementedError


class _Direction:
    """What processing one side's row needs, built once per side in ``init``: its view and
    the other side's, and how to emit joined and null-padded rows in output column order."""

    __slots__ = ("input_is_left", "joined", "mine", "other", "pad_mine", "pad_other")

    def __init__(
        self, mine: SideView, other: SideView, input_is_left: bool, joined: Emit, pad_mine: Pad,
        pad_other: Pad,
    ) -> None:  # fmt: skip
        self.mine, self.other, self.input_is_left = mine, other, input_is_left
        self.joined, self.pad_mine, self.pad_other = joined, pad_mine, pad_other


class RegularJoinProcessor(JoinProcessorBase):
    """INNER / LEFT / RIGHT / FULL join, as Flink's ``StreamingJoinOperator.processElement``.

    Row kinds follow Flink: when neither side is outer the input's kind is forwarded (+I/+U
    on accumulate, -U/-D on retract); otherwise joined rows are +I / -D. Null-padded rows
    are always +I / -D."""

    def __init__(self, spec: JoinSpec) -> None:
        if spec.kind not in REGULAR_KINDS:
            raise ValueError(f"RegularJoinProcessor runs inner/left/right/full, not {spec.kind}")
        super().__init__(spec)

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        make, lnulls, rnulls = self._make, self._left.nulls, self._right.nulls

        def joined_lr(out: list, kind: int, mine: Record, other: Record) -> None:
            out.append(make(kind, *mine, *other))

        def joined_rl(out: list, kind: int, mine: Record, other: Record) -> None:
            out.append(make(kind, *other, *mine))

        def pad_left(out: list, kind: int, row: Record) -> None:
            out.append(make(kind, *row, *rnulls))

        def pad_right(out: list, kind: int, row: Record) -> None:
            out.append(make(kind, *lnulls, *row))

        self._pad_left, self._pad_right = pad_left, pad_right
        lv, rv = self._left, self._right
        self._from_left = _Direction(lv, rv, True, joined_lr, pad_left, pad_right)
        self._from_right = _Direction(rv, lv, False, joined_rl, pad_right, pad_left)

    def process_left(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        self._process(row, kind, left, right, self._from_left, now, out)

    def process_right(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        self._process(row, kind, right, left, self._from_right, now, out)

    def unmatched_left(self, row: Record, kind: int, out: list) -> None:
        if self._left.outer:
            self._pad_left(out, INSERT if kind in (INSERT, UPDATE_AFTER) else DELETE, row)

    def unmatched_right(self, row: Record, kind: int, out: list) -> None:
        if self._right.outer:
            self._pad_right(out, INSERT if kind in (INSERT, UPDATE_AFTER) else DELETE, row)

    def _process(
        self, row: Record, kind: int, mine: dict, theirs: dict, d: _Direction, now: int, out: list
    ) -> None:
        """One input row against the other side: the pseudo code of Flink's processElement."""
        sv, ov, joined, pad_mine, pad_other = d.mine, d.other, d.joined, d.pad_mine, d.pad_other
        matches = self.matches(theirs, row, d.input_is_left)
        if kind == INSERT or kind == UPDATE_AFTER:
            additional = ov.outer and sv.adds_match(mine, row)
            if sv.outer:
                if not matches:
                    pad_mine(out, INSERT, row)
                    sv.add(mine, row, 0, now)
                    return
                n = _accumulate_outer(
                    row, matches, ov.outer, additional, joined, pad_other, now, out
                )
                sv.add(mine, row, n, now)
                return
            sv.add(mine, row, -1, now)
            if not matches:
                return
            if ov.outer:
                _accumulate_outer(row, matches, True, additional, joined, pad_other, now, out)
            else:  # inner join: forward +I / +U
                for e in matches:
                    other = e[ROW]
                    for _ in range(e[COUNT]):
                        joined(out, kind, row, other)
            return

        sv.retract(mine, row, now)
        if not matches:
            if sv.outer:
                pad_mine(out, DELETE, row)
            return
        joined_kind = DELETE if sv.outer else kind  # inner side forwards -U / -D
        for e in matches:
            other, before = e[ROW], e[ASSOC]
            for _ in range(e[COUNT]):
                joined(out, joined_kind, row, other)
                if ov.outer:
                    if before == 1:  # its last match is going: the padded row comes back
                        pad_other(out, INSERT, other)
                    e[ASSOC] = before - 1
                    e[WRITTEN] = now


def _accumulate_outer(
    row: Record,
    matches: list[Entry],
    other_outer: bool,
    additional: bool,
    joined: Emit,
    pad_other: Pad,
    now: int,
    out: list,
) -> int:
    """Emit +I[row, other] per matching copy; a first match retracts the other's padded row.
    Returns the number of matching copies (the new row's associations)."""
    n = 0
    for e in matches:
        other, before = e[ROW], e[ASSOC]
        copies = e[COUNT]
        for _ in range(copies):
            if other_outer:
                if before == 0:
                    pad_other(out, DELETE, other)
                if before == 0 or additional:
                    e[ASSOC] = before + 1
                    e[WRITTEN] = now
            joined(out, INSERT, row, other)
        n += copies
    return n
