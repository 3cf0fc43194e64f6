"""The contract between the client's compiler and the JVM window rank operator
(``WindowRank.java``, Flink's window Top-N and window deduplication): the ``window_rank``
operator of ``server_ext.operators``.

The client groups one insert-only input (a window TVF's or a window aggregation's rows) by
the partition keys other than the window bounds (none: one constant key) and runs the
operator::

    union.groupBy(__k0, ...) -> OperatorPlugin "window_rank" -> __kind, the input's fields[, rank]

Input rows: ``__k0..`` (the keys), ``__side`` (0), ``__in0`` (the row) and ``__t`` (the
row's ``window_end``, epoch ms: a window's end names it). Per key, each window keeps its
best ``rank_end`` rows in order (``order``: field index, ascending; NULL first ascending,
last descending; ties in arrival order, the later row first when ``keep_last``: Flink's
keep-last deduplication); an event-time timer at ``window_end - 1`` emits the rows ranked
``rank_start..rank_end`` (``+I``, then the row number when ``output_rank``) once the
watermark reaches it, and drops the window; a row whose window has fired is late and
dropped. ``fired_input`` (over a window aggregation's rows): a window's rows all arrive in
the one micro-batch that fires the window upstream, so they are ranked and emitted at once,
nothing kept.

Like ``joins/spec.py``, this module must not import ``tableapi``.

Example::

    >>> spec = WindowRankSpec(input=(("k", "STRING"), ("v", "INT")), order=((1, False),),
    ...                       rank_end=2, output_names=("k", "v", "rn"))
    >>> spec.output_fields()
    (('k', 'STRING'), ('v', 'INT'), ('rn', 'BIGINT'))
    >>> spec.wire_section()["order"], spec.time_mode
    ([{'field': 1, 'ascending': False}], 'EventTime')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from server_ext.aggregate_spec import named


@dataclass(frozen=True)
class WindowRankSpec:
    """Everything the window rank operator needs, decided at plan time (an ``OperatorSpec``
    of ``server_ext.operators``).

    >>> WindowRankSpec(input=(("v", "INT"),), order=((3, True),), rank_end=1)
    Traceback (most recent call last):
    ...
    ValueError: sort key field 3 is out of range for 1 input fields
    """

    operator: ClassVar[str] = "window_rank"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    input: tuple[tuple[str, str], ...]  # the input row's fields (name, Spark DDL)
    order: tuple[tuple[int, bool], ...]  # (field index, ascending)
    rank_end: int
    rank_start: int = 1
    output_rank: bool = True
    keep_last: bool = False
    fired_input: bool = False
    output_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        width = len(self.input)
        for i, _ in self.order:
            if not 0 <= i < width:
                raise ValueError(f"sort key field {i} is out of range for {width} input fields")
        if not self.order:
            raise ValueError("a window rank needs sort keys")
        if not 1 <= self.rank_start <= self.rank_end:
            raise ValueError(
                f"the rank range must be 1 <= start <= end, got {self.rank_start}..{self.rank_end}"
            )

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        """The input's fields, then the row number (BIGINT) when ``output_rank``; named by
        ``output_names``."""
        fields = self.input + ((("rank", "BIGINT"),) if self.output_rank else ())
        return named(fields, self.output_names)

    def wire_section(self) -> dict[str, Any]:
        """The spec's section of the wire JSON (``server_ext/jvm/wire.py``)."""
        return {
            "input": [list(f) for f in self.input],
            "order": [{"field": i, "ascending": a} for i, a in self.order],
            "rank_start": self.rank_start,
            "rank_end": self.rank_end,
            "output_rank": self.output_rank,
            "keep_last": self.keep_last,
            "fired_input": self.fired_input,
        }

    def check(self) -> None:
        """Plan-time checks before the spec is sent: the output names are unique."""
        names = [n for n, _ in self.output_fields()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"window rank output names must be unique: {dupes}")

    @property
    def time_mode(self) -> str:
        """``EventTime``: windows are ranked as the watermark passes their ends."""
        return "EventTime"


__all__ = ["WindowRankSpec"]
