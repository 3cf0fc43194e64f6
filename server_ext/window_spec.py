"""The contract between the client's compiler and the JVM window aggregate operator
(``WindowAggregate.java``, Flink's SlicingWindowOperator with a window AggsHandle): the
``window_aggregate`` operator of ``server_ext.operators``.

The client groups the union of one insert-only input by the group keys that are input
columns (none: one constant key) and runs the operator::

    union.groupBy(__k0, ...) -> OperatorPlugin "window_aggregate" -> __kind, columns...

Input rows: ``__k0..`` (the keys), ``__side`` (0), [``__kind``, ``__seq``: a changelog
input], ``__in0`` (the row: the keys' fields NULL, then each call's argument, as
``aggregate_spec``'s) and ``__t`` (the rowtime, epoch ms). Event-time TUMBLE, HOP and CUMULATE
windows are sliced as Flink's: a row is accumulated once, into its slice (TUMBLE: its window;
HOP: its slide; CUMULATE: its step), and an event-time timer at ``window_end - 1`` emits the
window's one ``+I`` row (its slices' accumulators merged) once the watermark reaches it (as
Flink's ``isWindowFired``); a slice is freed when the last window holding it fires. A row whose
slice has fired is late: dropped when the last window of its slice has fired too, else
counted in its windows that have not. SESSION: ``[ts, ts + gap)``, merged with the key's
sessions it touches (the key being the session's partition). A changelog input
(``retractions``): ``-U``/``-D`` rows retract from their slice; a window whose rows all
retracted emits nothing.

Two phases (``two_phase``): the ``local_window_aggregate`` relation (``LocalGroupAggregate``)
folds each task's rows of a micro-batch into one partial accumulator per key and slice before
the shuffle; its input is the union with ``__t`` right after the keys, holding the slice's
last millisecond (:meth:`WindowAggregateSpec.slice_ms`), and the operator's input is its
partials (``__k0..``, ``__t``, ``__side``, ``__in0`` NULL, ``__acc`` BINARY), each merged into
its slice.

Output columns (``columns``): per output field, ``key<i>`` (the i-th key), ``agg<i>`` (the
i-th call's result), or ``window_start`` / ``window_end`` / ``window_time`` (end - 1 ms).

Like ``joins/spec.py``, this module must not import ``tableapi``.

Example::

    >>> spec = WindowAggregateSpec(
    ...     input=(("k", "STRING"), ("v", "INT")), key_count=1,
    ...     aggs=(AggCall("sum", 1, result_type="INT"),), window="hop", size_ms=10_000,
    ...     step_ms=5_000, columns=("window_start", "window_end", "key0", "agg0"),
    ...     output_names=("window_start", "window_end", "k", "s"))
    >>> spec.output_fields()
    (('window_start', 'TIMESTAMP'), ('window_end', 'TIMESTAMP'), ('k', 'STRING'), ('s', 'INT'))
    >>> spec.wire_section()["window"]
    {'kind': 'hop', 'size_ms': 10000, 'step_ms': 5000, 'offset_ms': 0, 'proctime': False}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from server_ext.aggregate_spec import AggCall, named

#: The window kinds the operator assigns (SESSION: ``size_ms`` is the gap).
WINDOW_KINDS = ("tumble", "hop", "cumulate", "session")
#: The window properties an output column may be.
WINDOW_PROPERTIES = ("window_start", "window_end", "window_time")


@dataclass(frozen=True)
class WindowAggregateSpec:
    """Everything the window aggregate operator needs, decided at plan time (an
    ``OperatorSpec`` of ``server_ext.operators``)."""

    operator: ClassVar[str] = "window_aggregate"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 3  # 2: SESSION windows; 3: slices, two phases, changelog input

    input: tuple[tuple[str, str], ...]  # the input row's fields (name, Spark DDL), keys first
    key_count: int
    aggs: tuple[AggCall, ...]
    window: str  # tumble, hop, cumulate, session
    size_ms: int  # CUMULATE: the max size; SESSION: the gap
    step_ms: int | None = None  # HOP: the slide; CUMULATE: the step
    offset_ms: int = 0
    columns: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    #: Windows by the server's clock (a PROCTIME time column): rows are assigned by the
    #: micro-batch's processing time and windows fire by processing-time timers.
    proctime: bool = False
    #: The input is the local phase's partial accumulators, per key and slice.
    two_phase: bool = False
    #: The input is a changelog (MIN/MAX keep value counts, -U/-D rows retract).
    retractions: bool = False

    def __post_init__(self) -> None:
        if (self.two_phase or self.retractions) and (self.proctime or self.window == "session"):
            raise ValueError(
                "two phases and changelog input are for event-time TUMBLE, HOP and CUMULATE"
            )
        if self.proctime and self.window == "session":
            raise ValueError("processing-time SESSION windows are not supported")
        if self.window not in WINDOW_KINDS:
            raise ValueError(f"window must be one of {WINDOW_KINDS}, got {self.window!r}")
        if self.size_ms <= 0 or (self.step_ms is not None and self.step_ms <= 0):
            raise ValueError("window sizes must be positive")
        if (self.window in ("tumble", "session")) != (self.step_ms is None):
            raise ValueError("HOP and CUMULATE windows have a step; TUMBLE and SESSION none")
        if self.window == "session" and self.offset_ms:
            raise ValueError("SESSION windows have no offset")
        if self.step_ms is not None and self.size_ms % self.step_ms:
            raise ValueError("the window size must be a multiple of its slide or step")
        width = len(self.input)
        bad = [a.arg for a in self.aggs if a.arg is not None and not 0 <= a.arg < width]
        if bad or not 0 <= self.key_count <= width:
            raise ValueError(f"field indexes {bad} are out of range for {width} input fields")
        for c in self.columns:
            self._field(c)

    def _field(self, column: str) -> tuple[str, str]:
        """An output column's (default name, type)."""
        if column in WINDOW_PROPERTIES:
            return (column, "TIMESTAMP")
        for prefix, count in (("key", self.key_count), ("agg", len(self.aggs))):
            index = column.removeprefix(prefix)
            if column.startswith(prefix) and index.isdigit() and int(index) < count:
                i = int(index)
                return self.input[i] if prefix == "key" else (column, self.aggs[i].result_type)
        raise ValueError(f"unknown output column {column!r}")

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        """One field per output column, named by ``output_names``."""
        fields = tuple(self._field(c) for c in self.columns)
        return named(fields, self.output_names)

    def wire_section(self) -> dict[str, Any]:
        """The spec's section of the wire JSON (``server_ext/jvm/wire.py``)."""
        return {
            "input": [list(f) for f in self.input],
            "key_count": self.key_count,
            "aggs": [
                {"function": a.function, "arg": a.arg, "distinct": a.distinct} for a in self.aggs
            ],
            "window": {
                "kind": self.window,
                "size_ms": self.size_ms,
                "step_ms": self.step_ms,
                "offset_ms": self.offset_ms,
                "proctime": self.proctime,
            },
            "columns": list(self.columns),
            "two_phase": self.two_phase,
            "retractions": self.retractions,
        }

    def check(self) -> None:
        """Plan-time checks before the spec is sent: the output names are unique."""
        names = [n for n, _ in self.output_fields()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"window aggregate output names must be unique: {dupes}")

    @property
    def slice_ms(self) -> int:
        """A slice's length: TUMBLE its size, HOP its slide (the size is a multiple of it, so
        the slide is their gcd), CUMULATE its step.

        >>> WindowAggregateSpec((("v", "INT"),), 0, (), "hop", 10_000, 2_000).slice_ms
        2000
        """
        return self.step_ms or self.size_ms

    @property
    def time_mode(self) -> str:
        """``EventTime``: windows fire as the watermark passes their ends; ``ProcessingTime``
        (``proctime``) as the server's clock does."""
        return "ProcessingTime" if self.proctime else "EventTime"


__all__ = ["WINDOW_KINDS", "WINDOW_PROPERTIES", "WindowAggregateSpec"]
