"""Flink's regular streaming join (``StreamingJoinOperator``) as a row-based StatefulProcessor.

Run as ``union.groupBy(__k0, ...).transformWithState(join_processor(spec),
spec.output_struct_ddl(), "Append", time_mode(spec))``; ``spec.py`` has the wire format.

State layout
------------
Flink keeps one state view per side (``JoinRecordStateView``, ``OuterJoinRecordStateView``)
shaped by the side's ``InputSpec``. Here each side is a Python dict of the same shape and the
two dicts of a grouping key travel together as ONE pickled BINARY ``ValueState``: read once
when the key's rows arrive, written once after them, cleared when both sides are empty.
Each Python state call is a 30-60 us round trip to the JVM (DESIGN.md) and 1 get + 1 update
per key per micro-batch was the fastest layout measured; a MapState would cost a call per
entry written plus an iterator round trip for every scan of the other side. Only when the
two sides have different TTLs does each side get its own ValueState, so that Spark's TTL can
bound each one.

A side dict maps to entries ``[row, count, associations, written_at_ms]``:

- ``JOIN_KEY_CONTAINS_UNIQUE_KEY``: ``{(): entry}``, at most one row per join key;
- ``HAS_UNIQUE_KEY``: ``{unique key: entry}``; an accumulate whose unique key is present
  replaces the row (a retract removes by unique key);
- ``NO_UNIQUE_KEY``: ``{row: entry}``; ``count`` is the number of copies of the row.

``associations`` is Flink's ``numOfAssociations``, kept on outer sides (and on the left side
of semi/anti joins): how many rows of the other side (copies counted) match this row; 0
means its null-padded row is out. Inner sides keep -1. The counts are trusted, never
recomputed, exactly as in Flink.

State TTL
---------
Flink's state TTL (``OnCreateAndWrite``, ``NeverReturnExpired``) per entry: ``written_at_ms``
is the micro-batch's processing time when the entry was last written (added, or its count or
associations changed) and the entry is gone once ``written_at_ms + ttl_ms <= now``: it is
dropped when its key is next loaded, so it neither joins nor counts. The ValueState's own
TTL (``ttlDurationMs``) is only a GC bound for keys that never see another row: the blob is
written after each of its entries, so it expires no earlier than they do.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import (
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)
from pyspark.sql.types import BinaryType, StructField, StructType

from server_ext.joins.condition import Predicate, column_refs, compile_condition
from server_ext.joins.spec import (
    DELETE,
    INSERT,
    KIND,
    LEFT,
    UPDATE_AFTER,
    InputSpec,
    JoinSpec,
    SideSpec,
)

__all__ = ["FrozenDict", "JoinProcessorBase", "RegularJoinProcessor", "SideView", "StateStore"]

# Input columns counted from the end: the key columns come first and their number varies.
SIDE_AT, KIND_AT, SEQ_AT, LEFT_AT, RIGHT_AT = -5, -4, -3, -2, -1
_by_seq = itemgetter(SEQ_AT)

# Slots of a state entry.
ROW, COUNT, ASSOC, WRITTEN = 0, 1, 2, 3

Record = tuple  # a stored row: a plain tuple of (hashable) field values
Entry = list  # [row, count, associations, written_at_ms]
Emit = Callable[[list, int, Record, Record], None]

# Every join processor keeps pickled Python objects in BINARY ValueStates of this schema.
PICKLED_STATE = StructType([StructField("v", BinaryType())])
_PICKLE = pickle.HIGHEST_PROTOCOL
_NESTED_TYPE = re.compile(r"\b(ARRAY|MAP|STRUCT|BINARY|VARBINARY)\b", re.IGNORECASE)


class FrozenDict(dict):
    """A hashable dict, for MAP values (and structs that arrive as dicts) inside state keys."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))  # equal dicts hash equal whatever their order


def freeze(value: Any) -> Any:
    """``value`` made hashable: lists and Rows become tuples, dicts FrozenDicts, bytearray bytes.

    Arrow accepts tuples for ARRAY and STRUCT and dicts for MAP, so frozen values can be
    emitted as they are."""
    if isinstance(value, dict):
        return FrozenDict((k, freeze(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def record_converter(fields: tuple[tuple[str, str], ...]) -> Callable[[Any], Record]:
    """Turns a side's struct value into a stored tuple.

    Spark's row-mode worker hands STRUCT values over as dicts (pyarrow ``as_py``); tests and
    other callers may pass Rows. Only fields of nested or binary types pay for freezing."""
    nested = [i for i, (_, t) in enumerate(fields) if _NESTED_TYPE.search(t)]
    if not nested:

        def convert(value: Any) -> Record:
            return tuple(value.values()) if type(value) is dict else tuple(value)

        return convert

    def convert_nested(value: Any) -> Record:
        values = list(value.values()) if type(value) is dict else list(value)
        for i in nested:
            values[i] = freeze(values[i])
        return tuple(values)

    return convert_nested


def _no_key(row: Record) -> tuple:
    return ()


class SideView:
    """One input's state view (Flink's JoinRecordStateView) as functions over its dict."""

    __slots__ = ("key_of", "nulls", "outer", "to_record", "ttl", "unique_in_join_key")

    def __init__(self, side: SideSpec, outer: bool) -> None:
        self.outer = outer  # keeps associations (outer side, or semi/anti's left side)
        self.ttl = side.ttl_ms
        self.nulls: Record = (None,) * len(side.fields)
        self.to_record = record_converter(side.fields)
        self.unique_in_join_key = side.input_spec is InputSpec.JOIN_KEY_CONTAINS_UNIQUE_KEY
        self.key_of: Callable[[Record], Any] | None
        if self.unique_in_join_key:
            self.key_of = _no_key
        elif side.input_spec is InputSpec.HAS_UNIQUE_KEY:
            self.key_of = itemgetter(*side.unique_key)
        else:
            self.key_of = None  # NO_UNIQUE_KEY: the row is its own key

    def add(self, rows: dict, row: Record, assoc: int, now: int) -> None:
        """Flink's ``addRecord(record, numOfAssociations)``."""
        if self.key_of is None:
            entry = rows.get(row)
            if entry is not None:
                entry[COUNT] += 1
                entry[ASSOC] = assoc
                entry[WRITTEN] = now
                return
            rows[row] = [row, 1, assoc, now]
        else:
            rows[self.key_of(row)] = [row, 1, assoc, now]

    def retract(self, rows: dict, row: Record, now: int) -> None:
        """Flink's ``retractRecord``: by unique key, or one copy of the row; absent is a no-op."""
        key = row if self.key_of is None else self.key_of(row)
        entry = rows.get(key)
        if entry is None:
            return
        if entry[COUNT] > 1:
            entry[COUNT] -= 1
            entry[WRITTEN] = now
        else:
            del rows[key]

    def adds_match(self, rows: dict, row: Record) -> bool:
        """Flink's ``isAdditionalMatch``: does accumulating ``row`` add matches for the other
        side, or replace a stored row (same unique key) whose matches are already counted?"""
        if self.unique_in_join_key:
            return False
        return self.key_of is None or self.key_of(row) not in rows

    def prune(self, rows: dict, now: int) -> bool:
        """Drop the entries whose TTL has passed; True when some were dropped."""
        ttl = self.ttl
        if ttl is None or not rows:
            return False
        dead = [k for k, e in rows.items() if e[WRITTEN] + ttl <= now]
        for k in dead:
            del rows[k]
        return bool(dead)


class StateStore:
    """The two side dicts of the current grouping key, pickled into BINARY ValueStates."""

    def __init__(self, handle: StatefulProcessorHandle, spec: JoinSpec) -> None:
        lttl, rttl = spec.left.ttl_ms, spec.right.ttl_ms
        if lttl == rttl:
            self._both = handle.getValueState("rows", PICKLED_STATE, lttl)
            self._sides = None
        else:  # Spark's TTL is per state variable: one per side
            self._both = None
            self._sides = (
                handle.getValueState("left_rows", PICKLED_STATE, lttl),
                handle.getValueState("right_rows", PICKLED_STATE, rttl),
            )
        self._stored = [False, False]

    def load(self) -> tuple[dict, dict]:
        if self._sides is None:
            value = self._both.get()  # type: ignore[union-attr]
            self._stored[0] = value is not None
            return pickle.loads(value[0]) if value is not None else ({}, {})
        loaded = []
        for i, state in enumerate(self._sides):
            value = state.get()
            self._stored[i] = value is not None
            loaded.append(pickle.loads(value[0]) if value is not None else {})
        return loaded[0], loaded[1]

    def save(self, left: dict, right: dict, left_dirty: bool, right_dirty: bool) -> None:
        if self._sides is None:
            if not (left_dirty or right_dirty):
                return
            if left or right:
                self._both.update((pickle.dumps((left, right), _PICKLE),))  # type: ignore[union-attr]
            elif self._stored[0]:
                self._both.clear()  # type: ignore[union-attr]
            return
        for i, (rows, dirty) in enumerate(((left, left_dirty), (right, right_dirty))):
            if not dirty:
                continue
            if rows:
                self._sides[i].update((pickle.dumps(rows, _PICKLE),))
            elif self._stored[i]:
                self._sides[i].clear()


class JoinProcessorBase(StatefulProcessor):
    """What the regular and the semi/anti join share: rows in ``__seq`` order, null keys,
    state loading and TTL pruning. Subclasses process one left or right row."""

    def __init__(self, spec: JoinSpec) -> None:
        # Only the spec is pickled with the processor; everything else is built in init().
        self.spec = spec
        _validate(spec)

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
        self, key: Any, rows: Iterator[Row], timerValues: TimerValues
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


class RegularJoinProcessor(JoinProcessorBase):
    """INNER / LEFT / RIGHT / FULL join, as Flink's ``StreamingJoinOperator.processElement``.

    Row kinds follow Flink: when neither side is outer the input's kind is forwarded (+I/+U
    on accumulate, -U/-D on retract); otherwise joined rows are +I / -D. Null-padded rows
    are always +I / -D."""

    def __init__(self, spec: JoinSpec) -> None:
        if spec.kind not in ("inner", "left", "right", "full"):
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

        self._joined_lr, self._joined_rl = joined_lr, joined_rl
        self._pad_left, self._pad_right = pad_left, pad_right

    def process_left(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        self._process(
            row, kind, left, right, self._left, self._right, True,
            self._joined_lr, self._pad_left, self._pad_right, now, out,
        )  # fmt: skip

    def process_right(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        self._process(
            row, kind, right, left, self._right, self._left, False,
            self._joined_rl, self._pad_right, self._pad_left, now, out,
        )  # fmt: skip

    def unmatched_left(self, row: Record, kind: int, out: list) -> None:
        if self._left.outer:
            self._pad_left(out, INSERT if kind in (INSERT, UPDATE_AFTER) else DELETE, row)

    def unmatched_right(self, row: Record, kind: int, out: list) -> None:
        if self._right.outer:
            self._pad_right(out, INSERT if kind in (INSERT, UPDATE_AFTER) else DELETE, row)

    def _process(
        self,
        row: Record,
        kind: int,
        mine: dict,
        theirs: dict,
        sv: SideView,
        ov: SideView,
        input_is_left: bool,
        joined: Emit,
        pad_mine: Callable[[list, int, Record], None],
        pad_other: Callable[[list, int, Record], None],
        now: int,
        out: list,
    ) -> None:
        """One input row against the other side: the pseudo code of Flink's processElement."""
        matches = self.matches(theirs, row, input_is_left)
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
    pad_other: Callable[[list, int, Record], None],
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


def _validate(spec: JoinSpec) -> None:
    """Fail at plan time, on the client, rather than in the server's workers."""
    names = [name for name, _ in spec.output_fields()]
    dupes = sorted({n for n in names if names.count(n) > 1 or n == KIND})
    if dupes:
        # The worker turns output Rows into dicts by field name: duplicates would collide.
        raise ValueError(f"join output names must be unique and not {KIND!r}: {dupes}")
    widths = {"l": len(spec.left.fields), "r": len(spec.right.fields)}
    for side, index in column_refs(spec.residual):
        if not 0 <= index < widths[side]:
            raise ValueError(
                f"residual refers to field {index} of the {side} row, which has {widths[side]}"
            )
    compile_condition(spec.residual)  # unknown functions and bad arities fail here
