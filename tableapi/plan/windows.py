"""Window table functions (Flink's TUMBLE, HOP, CUMULATE and SESSION TVFs) and the window
aggregate they become under ``GROUP BY window_start, window_end, ...``.

A window TVF keeps its input's columns (the time column stays ``*ROWTIME*`` in the result's
schema, as Flink's does, but is no event time downstream: ``window_time`` is) and
adds ``window_start`` and ``window_end`` (``TIMESTAMP(3) NOT NULL``) and ``window_time``
(``window_end`` - 1 ms, the new rowtime). A row belongs to one window (TUMBLE) or several
(HOP, CUMULATE); :meth:`Window.assign` gives them as Flink's assigners do. A SESSION
window holds a run of rows of its partition (``PARTITION BY`` keys) each within ``gap`` of
the previous: from the first row's time to the last's plus the gap.

Example::

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 10_000))
    >>> [str(f.type) for f in tvf.row_type]
    ['BIGINT', 'TIMESTAMP(3) *ROWTIME*', 'TIMESTAMP(3) NOT NULL', 'TIMESTAMP(3) NOT NULL', \
'TIMESTAMP(3) *ROWTIME* NOT NULL']
    >>> str(tvf.window)
    'TUMBLE(time_col=[ts], size=[10 s])'
"""

from __future__ import annotations

from enum import Enum

import attrs

from tableapi.durations import format_duration
from tableapi.errors import ValidationError
from tableapi.expressions import Expression
from tableapi.plan.base import UnaryNode
from tableapi.plan.relational import Aggregate, Hint
from tableapi.types import TIMESTAMP_3, Field, RowType, TimeKind

#: The columns a window TVF adds, in order.
WINDOW_START, WINDOW_END, WINDOW_TIME = "window_start", "window_end", "window_time"
WINDOW_COLUMNS = (WINDOW_START, WINDOW_END, WINDOW_TIME)


class WindowKind(str, Enum):
    """The window TVFs the product runs."""

    TUMBLE = "TUMBLE"
    HOP = "HOP"
    CUMULATE = "CUMULATE"
    SESSION = "SESSION"


@attrs.frozen
class Window:
    """A window TVF's parameters, in milliseconds: ``size`` (CUMULATE's max size, SESSION's
    gap), ``step`` (HOP's slide, CUMULATE's step; TUMBLE, SESSION: none) and ``offset``,
    over ``time_col``; ``partition``: SESSION's PARTITION BY keys.

    >>> Window(WindowKind.HOP, "ts", 10_000, 5_000).assign(12_000)
    [(10000, 20000), (5000, 15000)]
    >>> Window(WindowKind.CUMULATE, "ts", 10_000, 2_000).assign(13_500)
    [(10000, 14000), (10000, 16000), (10000, 18000), (10000, 20000)]
    >>> Window(WindowKind.TUMBLE, "ts", 10_000, offset_ms=1_000).assign(500)
    [(-9000, 1000)]
    >>> str(Window(WindowKind.SESSION, "ts", 5_000, partition=("k",)))
    'SESSION(time_col=[ts], gap=[5 s], partition keys=[k])'
    """

    kind: WindowKind
    time_col: str
    size_ms: int
    step_ms: int | None = None
    offset_ms: int = 0
    partition: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        what = {WindowKind.HOP: "slide", WindowKind.CUMULATE: "step"}.get(self.kind)
        session = self.kind is WindowKind.SESSION
        if self.size_ms <= 0:
            size = "gap" if session else "size"
            raise ValidationError(
                f"{self.kind.value} window {size} must be positive, got {self.size_ms} ms."
            )
        if session and self.offset_ms:
            raise ValidationError("internal: a SESSION window has no offset")
        if self.partition and not session:
            raise ValidationError(
                f"internal: only SESSION windows have PARTITION BY keys, not {self.kind.value}"
            )
        if (what is None) != (self.step_ms is None):
            raise ValidationError(f"internal: a {self.kind.value} window's step is {what}")
        if self.step_ms is not None and self.step_ms <= 0:
            raise ValidationError(
                f"{self.kind.value} window {what} must be positive, got {self.step_ms} ms."
            )
        if self.kind is WindowKind.CUMULATE and self.size_ms % (self.step_ms or 1):
            raise ValidationError(
                "Cumulative Window requires maxSize must be an integral multiple of step, but "
                f"got maxSize {self.size_ms} ms and step {self.step_ms} ms."
            )

    def start(self, ts: int, size: int) -> int:
        """Flink's ``TimeWindow.getWindowStartWithOffset``: the start of the window of
        ``size`` (with this offset) that holds ``ts`` (a floor modulo: Python's ``%``)."""
        return ts - (ts - self.offset_ms) % size

    def assign(self, ts: int) -> list[tuple[int, int]]:
        """The windows (start, end) that hold an event at ``ts``, in Flink's assigners' order
        (HOP: the latest start first; CUMULATE: the smallest end first; SESSION: the row's
        own window, before it merges with its partition's sessions)."""
        if self.kind is WindowKind.SESSION:
            return [(ts, ts + self.size_ms)]
        if self.kind is WindowKind.TUMBLE:
            start = self.start(ts, self.size_ms)
            return [(start, start + self.size_ms)]
        step = self.step_ms or 0
        if self.kind is WindowKind.HOP:
            out, start = [], self.start(ts, step)
            while start > ts - self.size_ms:
                out.append((start, start + self.size_ms))
                start -= step
            return out
        start = self.start(ts, self.size_ms)
        first = start + ((ts - start) // step + 1) * step
        return [(start, end) for end in range(first, start + self.size_ms + 1, step)]

    def __str__(self) -> str:
        """Flink's window summary: ``HOP(time_col=[ts], size=[10 s], slide=[5 s])``."""
        if self.kind is WindowKind.SESSION:
            keys = f", partition keys=[{', '.join(self.partition)}]" if self.partition else ""
            gap = format_duration(self.size_ms)
            return f"SESSION(time_col=[{self.time_col}], gap=[{gap}]{keys})"
        size = "max_size" if self.kind is WindowKind.CUMULATE else "size"
        parts = [f"time_col=[{self.time_col}]", f"{size}=[{format_duration(self.size_ms)}]"]
        if self.step_ms is not None:
            step = "slide" if self.kind is WindowKind.HOP else "step"
            parts.append(f"{step}=[{format_duration(self.step_ms)}]")
        if self.offset_ms:
            sign = "-" if self.offset_ms < 0 else ""
            parts.append(f"offset=[{sign}{format_duration(abs(self.offset_ms))}]")
        return f"{self.kind.value}({', '.join(parts)})"


@attrs.frozen(eq=False)
class WindowTableFunction(UnaryNode):
    """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`` and HOP, CUMULATE, SESSION: the
    input's rows, each once per window that holds its time, with the window's columns.
    ``under_window_operator``: the input of a window join or a window Top-N
    (``tableapi/rules/window_joins.py``, ``window_ranks.py``), which holds its rows per window:
    the TVF then runs stateless in streaming mode."""

    window: Window
    under_window_operator: bool = False

    def derive_row_type(self) -> RowType:
        return window_row_type(self.input.row_type, self.window)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return ()  # HOP and CUMULATE repeat a row


def window_row_type(row: RowType, window: Window) -> RowType:
    """A window TVF's output row over ``row``, checked: the time column must be an event-time
    attribute (a rowtime) of type TIMESTAMP(3), or a processing-time attribute (not for
    SESSION), and no input column may be named as a window column.

    >>> from tableapi.types import BIGINT
    >>> window_row_type(RowType.of(("k", BIGINT)), Window(WindowKind.TUMBLE, "ts", 1000))
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: The window TVF's DESCRIPTOR(ts) names no column; \
the input has [k].
    """
    name = window.time_col
    if name not in row:
        raise ValidationError(
            f"The window TVF's DESCRIPTOR({name}) names no column; the input has "
            f"[{', '.join(row.names)}]."
        )
    t = row.field(name).type
    proctime = t.time_kind is TimeKind.PROCTIME
    if proctime and window.kind is WindowKind.SESSION:
        raise ValidationError(
            f"A SESSION window over the processing-time attribute {name} is not supported "
            "yet; use an event-time attribute (a column with a WATERMARK), or TUMBLE, HOP, "
            "CUMULATE."
        )
    if not t.is_timestamp:
        raise ValidationError(
            f"The window TVF's time column {name} must be a TIMESTAMP(3) rowtime attribute, "
            f"but it is {t}."
        )
    if t.name == "TIMESTAMP_LTZ" and not proctime:
        raise ValidationError(
            f"A window over the TIMESTAMP_LTZ column {name} is not supported yet (its windows "
            "follow table.local-time-zone); use a TIMESTAMP(3) rowtime."
        )
    unknown = [k for k in window.partition if k not in row]
    if unknown:
        raise ValidationError(
            f"The SESSION window's PARTITION BY names no column {unknown}; the input has "
            f"[{', '.join(row.names)}]."
        )
    clash = [c for c in WINDOW_COLUMNS if c in row]
    if clash:
        raise ValidationError(
            f"The window TVF adds {list(WINDOW_COLUMNS)}, but its input already has "
            f"{clash}; its columns are [{', '.join(row.names)}]. Rename them first."
        )
    # Flink's schema keeps the time column's *ROWTIME* mark (a window join's output shows it);
    # the product's event time downstream is window_time alone, so the mark is materialized
    kept = t.materialized() if t.time_kind is TimeKind.ROWTIME else t.plain()
    fields = [Field(f.name, kept) if f.name == name else f for f in row]
    bound = TIMESTAMP_3.with_nullable(False)
    # window_time inherits the time attribute: a proctime window's is TIMESTAMP_LTZ(3) *PROCTIME*
    time = t.with_nullable(False) if proctime else bound.with_time_kind(TimeKind.ROWTIME)
    fields += [Field(WINDOW_START, bound), Field(WINDOW_END, bound), Field(WINDOW_TIME, time)]
    return RowType(tuple(fields))


def sliceable(window: Window) -> bool:
    """Can a window aggregation run over ``window`` (Flink's slicing assigners: a HOP's size
    must be a multiple of its slide)?

    >>> sliceable(Window(WindowKind.HOP, "ts", 10_000, 3_000))
    False
    """
    return window.kind is not WindowKind.HOP or window.size_ms % (window.step_ms or 1) == 0


def unsliceable_message(window: Window) -> str:
    """Flink's error for a HOP window a window aggregation cannot run over.

    >>> unsliceable_message(Window(WindowKind.HOP, "ts", 10_000, 3_000))[:46]
    'Slicing Hopping Window requires size must be a'
    """
    return (
        "Slicing Hopping Window requires size must be an integral multiple of slide, but got "
        f"size {window.size_ms} ms and slide {window.step_ms} ms."
    )


def partitioned_by_keys(window: Window, keys: tuple[str, ...]) -> bool:
    """Does a window aggregation grouped by ``keys`` (besides the window's columns) run over
    ``window``? A SESSION window's only when they are its PARTITION BY keys (Flink plans any
    other grouping of sessions as an updating aggregation of the TVF's rows).

    >>> partitioned_by_keys(Window(WindowKind.SESSION, "ts", 1, partition=("k",)), ())
    False
    """
    return window.kind is not WindowKind.SESSION or set(keys) == set(window.partition)


def session_keys_message(window: Window, keys: tuple[str, ...]) -> str:
    """The error for a SESSION window aggregation not grouped by the partition keys.

    >>> session_keys_message(Window(WindowKind.SESSION, "ts", 1), ("k",))[:52]
    'A SESSION window aggregation groups by its PARTITION'
    """
    return (
        "A SESSION window aggregation groups by its PARTITION BY keys: the TVF partitions by "
        f"[{', '.join(window.partition)}] but the GROUP BY has [{', '.join(keys)}] besides "
        "window_start and window_end; other groupings of sessions are not supported yet. "
        "Write SESSION(TABLE t PARTITION BY (k, ..), ...) with the GROUP BY's keys."
    )


@attrs.frozen(eq=False)
class WindowAggregate(UnaryNode):
    """An aggregation grouped by a window TVF's ``window_start`` and ``window_end`` (Flink's
    WindowAggregate): its input is the TVF's input, and it emits one row per window and key
    once the window ends. ``group_keys`` are the aggregation's keys as written (the window
    columns among them); its row type is the ``Aggregate`` over the TVF's.

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> from tableapi.expressions import col
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> agg = WindowAggregate(t, Window(WindowKind.TUMBLE, "ts", 1000),
    ...                       ("window_start", "window_end", "k"), (("n", col("k").count),))
    >>> agg.row_type.names, agg.keys
    (('window_start', 'window_end', 'k', 'n'), ('k',))
    """

    window: Window
    group_keys: tuple[str, ...]
    aggs: tuple[tuple[str, Expression], ...]
    hints: tuple[Hint, ...] = ()

    def derive_row_type(self) -> RowType:
        missing = [c for c in (WINDOW_START, WINDOW_END) if c not in self.group_keys]
        if missing:
            raise ValidationError(
                f"A window aggregation groups by window_start and window_end; "
                f"GROUP BY [{', '.join(self.group_keys)}] lacks {missing}."
            )
        if not sliceable(self.window):
            raise ValidationError(unsliceable_message(self.window))
        if not partitioned_by_keys(self.window, self.keys):
            raise ValidationError(session_keys_message(self.window, self.keys))
        for name, agg in self.aggs:
            used = sorted(agg.column_names() & set(WINDOW_COLUMNS))
            if used:
                raise ValidationError(
                    f"The window aggregate {name} = {agg} reads {used}; a window aggregation's "
                    "calls read the input's columns only."
                )
        return self.as_aggregate().row_type

    def as_aggregate(self) -> Aggregate:
        """The same aggregation over the window TVF (what batch mode runs with Spark)."""
        tvf = WindowTableFunction(self.input, self.window)
        return Aggregate(tvf, self.group_keys, self.aggs, self.hints)

    @property
    def keys(self) -> tuple[str, ...]:
        """The group keys that are input columns (the operator's grouping key)."""
        return tuple(k for k in self.group_keys if k not in WINDOW_COLUMNS)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return (self.group_keys,)


__all__ = [
    "WINDOW_COLUMNS",
    "Window",
    "WindowAggregate",
    "WindowKind",
    "WindowTableFunction",
    "partitioned_by_keys",
    "session_keys_message",
    "sliceable",
    "unsliceable_message",
    "window_row_type",
]
