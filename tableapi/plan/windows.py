"""Window table functions (Flink's TUMBLE, HOP and CUMULATE TVFs) and the window aggregate
they become under ``GROUP BY window_start, window_end, ...``.

A window TVF keeps its input's columns (the time column stops being a time attribute) and
adds ``window_start`` and ``window_end`` (``TIMESTAMP(3) NOT NULL``) and ``window_time``
(``window_end`` - 1 ms, the new rowtime). A row belongs to one window (TUMBLE) or several
(HOP, CUMULATE); :meth:`Window.assign` gives them as Flink's assigners do.

Example::

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> t = Scan("T", ElementsSource(()), RowType.of(("k", BIGINT), ("ts", rowtime)))
    >>> tvf = WindowTableFunction(t, Window(WindowKind.TUMBLE, "ts", 10_000))
    >>> [str(f.type) for f in tvf.row_type]
    ['BIGINT', 'TIMESTAMP(3)', 'TIMESTAMP(3) NOT NULL', 'TIMESTAMP(3) NOT NULL', \
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
    """The window TVFs the product runs (SESSION is refused by the SQL planner)."""

    TUMBLE = "TUMBLE"
    HOP = "HOP"
    CUMULATE = "CUMULATE"


@attrs.frozen
class Window:
    """A window TVF's parameters, in milliseconds: ``size`` (CUMULATE's max size), ``step``
    (HOP's slide, CUMULATE's step; TUMBLE: none) and ``offset``, over ``time_col``.

    >>> Window(WindowKind.HOP, "ts", 10_000, 5_000).assign(12_000)
    [(10000, 20000), (5000, 15000)]
    >>> Window(WindowKind.CUMULATE, "ts", 10_000, 2_000).assign(13_500)
    [(10000, 14000), (10000, 16000), (10000, 18000), (10000, 20000)]
    >>> Window(WindowKind.TUMBLE, "ts", 10_000, offset_ms=1_000).assign(500)
    [(-9000, 1000)]
    """

    kind: WindowKind
    time_col: str
    size_ms: int
    step_ms: int | None = None
    offset_ms: int = 0

    def __attrs_post_init__(self) -> None:
        what = {WindowKind.HOP: "slide", WindowKind.CUMULATE: "step"}.get(self.kind)
        if self.size_ms <= 0:
            raise ValidationError(
                f"{self.kind.value} window size must be positive, got {self.size_ms} ms."
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
        (HOP: the latest start first; CUMULATE: the smallest end first)."""
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
    """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`` and HOP, CUMULATE: the input's
    rows, each once per window that holds its time, with the window's columns. ``joined``:
    an input of a window join (``tableapi/rules/window_joins.py``), which runs it in
    streaming mode."""

    window: Window
    joined: bool = False

    def derive_row_type(self) -> RowType:
        return window_row_type(self.input.row_type, self.window)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return ()  # HOP and CUMULATE repeat a row


def window_row_type(row: RowType, window: Window) -> RowType:
    """A window TVF's output row over ``row``, checked: the time column must be an event-time
    attribute (a rowtime) of type TIMESTAMP(3), and no input column may be named as a window
    column.

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
    if t.time_kind is TimeKind.PROCTIME:
        raise ValidationError(
            f"A window over the processing-time attribute {name} is not supported yet; use an "
            "event-time attribute (a column with a WATERMARK)."
        )
    if not t.is_timestamp:
        raise ValidationError(
            f"The window TVF's time column {name} must be a TIMESTAMP(3) rowtime attribute, "
            f"but it is {t}."
        )
    if t.name == "TIMESTAMP_LTZ":
        raise ValidationError(
            f"A window over the TIMESTAMP_LTZ column {name} is not supported yet (its windows "
            "follow table.local-time-zone); use a TIMESTAMP(3) rowtime."
        )
    clash = [c for c in WINDOW_COLUMNS if c in row]
    if clash:
        raise ValidationError(
            f"The window TVF adds {list(WINDOW_COLUMNS)}, but its input already has "
            f"{clash}; its columns are [{', '.join(row.names)}]. Rename them first."
        )
    fields = [Field(f.name, f.type.plain()) if f.name == name else f for f in row]
    bound = TIMESTAMP_3.with_nullable(False)
    fields += [
        Field(WINDOW_START, bound),
        Field(WINDOW_END, bound),
        Field(WINDOW_TIME, bound.with_time_kind(TimeKind.ROWTIME)),
    ]
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
    "sliceable",
    "unsliceable_message",
    "window_row_type",
]
