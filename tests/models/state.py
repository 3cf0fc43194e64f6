"""The state machinery of the join models (``tests/models``): stored records, one input's state view
(Flink's JoinRecordStateView), and the pickled BINARY ValueStates they live in.

State layout
------------
Flink keeps one state view per side (``JoinRecordStateView``, ``OuterJoinRecordStateView``)
shaped by the side's ``InputSpec``. Here each side is a Python dict of the same shape and the
two dicts of a grouping key travel together as ONE pickled BINARY ``ValueState``: read once
when the key's rows arrive, written once after them, cleared when both sides are empty.
Each Python state call is a 30-60 us round trip to the JVM (docs/architecture.md, "Facts
measured") and 1 get + 1 update per key per micro-batch was the fastest layout measured; a
MapState would cost a call per entry written plus an iterator round trip for every scan of the
other side. Only when the
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

Example::

    >>> from server_ext.joins.spec import SideSpec
    >>> view = SideView(SideSpec((("id", "BIGINT"), ("v", "STRING"))), outer=False)
    >>> rows: dict = {}
    >>> view.add(rows, (1, "a"), -1, now=0); view.add(rows, (1, "a"), -1, now=5)
    >>> rows[(1, "a")][COUNT]
    2
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from pyspark.sql.streaming.stateful_processor import StatefulProcessorHandle, ValueState
from pyspark.sql.types import BinaryType, StructField, StructType

from server_ext.joins.condition import column_refs, compile_condition
from server_ext.joins.spec import KIND, InputSpec, JoinSpec, SideSpec

__all__ = [
    "ASSOC",
    "COUNT",
    "PICKLED_STATE",
    "ROW",
    "WRITTEN",
    "ColumnPositions",
    "Entry",
    "FrozenDict",
    "Record",
    "SideView",
    "StateStore",
    "freeze",
    "load_pickled",
    "record_converter",
    "save_pickled",
]

# Slots of a state entry.
ROW, COUNT, ASSOC, WRITTEN = 0, 1, 2, 3

Record = tuple  # a stored row: a plain tuple of (hashable) field values
Entry = list  # [row, count, associations, written_at_ms]

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


def load_pickled(state: ValueState) -> Any:
    """The object a key's pickled ValueState holds, or None."""
    value = state.get()
    return None if value is None else pickle.loads(value[0])


def save_pickled(state: ValueState, value: Any, keep: bool, existed: bool) -> None:
    """Write ``value`` while the key ``keep``s anything; else clear the state if it existed."""
    if keep:
        state.update((pickle.dumps(value, _PICKLE),))
    elif existed:
        state.clear()


class ColumnPositions:
    """Where named columns sit in a processor's input rows, found by name once per row layout
    (the union may carry more columns than a processor reads, e.g. a watermark's ``__t_ts``).

    Example::

        >>> from pyspark.sql import Row
        >>> ColumnPositions(("b", "a"), "interval join").of(Row(a=1, b=2, c=3))
        (1, 0)
    """

    def __init__(self, names: tuple[str, ...], operator: str) -> None:
        self.names, self.operator = names, operator
        self._layout: Any = None  # the field names the positions below were found in
        self._at: tuple[int, ...] = ()

    def of(self, row: Any) -> tuple[int, ...]:
        fields = getattr(row, "__fields__", None)
        if fields is None:
            raise TypeError(f"{self.operator} input rows must be Rows with field names")
        if fields is not self._layout:
            missing = [n for n in self.names if n not in fields]
            if missing:
                raise ValueError(
                    f"{self.operator} input lacks the columns {missing}; it has {list(fields)}"
                )
            self._layout, self._at = fields, tuple(fields.index(n) for n in self.names)
        return self._at


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
        self._both: ValueState | None = None
        self._sides: tuple[ValueState, ValueState] | None = None
        if lttl == rttl:
            self._both = handle.getValueState("rows", PICKLED_STATE, lttl)
        else:  # Spark's TTL is per state variable: one per side
            self._sides = (
                handle.getValueState("left_rows", PICKLED_STATE, lttl),
                handle.getValueState("right_rows", PICKLED_STATE, rttl),
            )
        self._stored = [False, False]

    def load(self) -> tuple[dict, dict]:
        if self._both is not None:
            both = load_pickled(self._both)
            self._stored[0] = both is not None
            return both if both is not None else ({}, {})
        loaded = []
        assert self._sides is not None
        for i, state in enumerate(self._sides):
            rows = load_pickled(state)
            self._stored[i] = rows is not None
            loaded.append(rows if rows is not None else {})
        return loaded[0], loaded[1]

    def save(self, left: dict, right: dict, left_dirty: bool, right_dirty: bool) -> None:
        if self._both is not None:
            if not (left_dirty or right_dirty):
                return
            save_pickled(self._both, (left, right), bool(left or right), self._stored[0])
            return
        assert self._sides is not None
        for i, (rows, dirty) in enumerate(((left, left_dirty), (right, right_dirty))):
            if not dirty:
                continue
            save_pickled(self._sides[i], rows, bool(rows), self._stored[i])


def check_two_sided_spec(spec: Any, what: str) -> None:
    """Fail at plan time, on the client, rather than in the server's workers: ``spec`` (a
    regular, interval or temporal join spec: ``output_fields()``, ``left``/``right`` sides,
    ``residual``) has unique output names other than ``__kind`` (the worker turns output Rows
    into dicts by field name: duplicates would collide), and its residual reads fields that
    exist and compiles. ``what`` names the join in the messages."""
    names = [name for name, _ in spec.output_fields()]
    dupes = sorted({n for n in names if names.count(n) > 1 or n == KIND})
    if dupes:
        raise ValueError(f"{what} output names must be unique and not {KIND!r}: {dupes}")
    widths = {"l": len(spec.left.fields), "r": len(spec.right.fields)}
    for side, index in column_refs(spec.residual):
        if not 0 <= index < widths[side]:
            raise ValueError(
                f"residual refers to field {index} of the {side} row, which has {widths[side]}"
            )
    compile_condition(spec.residual)  # unknown functions and bad arities fail here
