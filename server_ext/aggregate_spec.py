"""The contract between the client's compiler and the JVM group aggregate operator
(``GroupAggregate.java``, Flink's GroupAggFunction): the ``aggregate`` operator of
``server_ext.operators``.

The client groups the tagged union of one input by the group key and runs the operator::

    union.groupBy(__k0, ...) -> OperatorPlugin "aggregate" -> __kind, keys..., results...

Input rows, columns in this order (names as in ``joins/spec.py``):

=============  ==========  ==================================================================
``__k0..``     key types   the group key's values (a global aggregate: one constant key)
``__side``     TINYINT     always 0
``__kind``     TINYINT     Flink RowKind: 0 = +I, 1 = -U, 2 = +U, 3 = -D (left out, with
                           ``__seq``, when the input is insert-only)
``__seq``      STRING      the change's order (rows of one key sort by it)
``__in0``      STRUCT      the input row (the operator reads only the calls' arguments: the
                           client's compiler sends the key fields NULL, their values being in
                           ``__k0..``)
=============  ==========  ==================================================================

Output rows: ``__kind``, the group key's values, then one value per aggregate call: ``+I``
for a key's first result, ``-U`` (when ``update_before``) and ``+U`` when it changes,
nothing when it does not (with a state TTL: always), ``-D`` when the key's last row is
retracted.

Mini-batch (``mini_batch``): a key's rows of a micro-batch are folded in bundles of at most
``bundle_size`` rows, one result per bundle. Two-phase (``two_phase``, mini-batch only): the
``local_aggregate`` relation (``LocalGroupAggregate.java``) folds each task's rows into one
partial accumulator per key and bundle before the shuffle, and the operator's input is those
partials (``__k0..``, ``__side``, ``__in0`` NULL, ``__acc`` BINARY), which it merges.

Like ``joins/spec.py``, this module must not import ``tableapi``.

Example::

    >>> spec = AggregateSpec(
    ...     input=(("k", "STRING"), ("v", "INT")), key=(0,),
    ...     aggs=(AggCall("sum", 1, result_type="INT"), AggCall("count_star")),
    ...     output_names=("k", "total", "n"))
    >>> spec.output_fields()
    (('k', 'STRING'), ('total', 'INT'), ('n', 'BIGINT'))
    >>> spec.wire_section()["aggs"][0]
    {'function': 'sum', 'arg': 1, 'distinct': False}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

#: A two-phase aggregation's partial accumulator column (BINARY; ``GroupAggregate.ACC``).
ACC = "__acc"

#: The aggregate functions the operator computes (``count_star`` is COUNT(*)).
AGG_FUNCTIONS = ("count_star", "count", "sum", "avg", "min", "max")


@dataclass(frozen=True)
class AggCall:
    """One aggregate call: its function, its argument (an input field index; None for
    COUNT(*)), DISTINCT, and its result type (Spark DDL)."""

    function: str
    arg: int | None = None
    distinct: bool = False
    result_type: str = "BIGINT"

    def __post_init__(self) -> None:
        if self.function not in AGG_FUNCTIONS:
            raise ValueError(f"aggregate function must be one of {AGG_FUNCTIONS}")
        if (self.function == "count_star") != (self.arg is None):
            raise ValueError("COUNT(*) takes no argument; the other functions take one")
        if self.function == "count_star" and self.distinct:
            raise ValueError("COUNT(*) has no DISTINCT form")


@dataclass(frozen=True)
class AggregateSpec:
    """Everything the group aggregate operator needs, decided at plan time (an
    ``OperatorSpec`` of ``server_ext.operators``)."""

    operator: ClassVar[str] = "aggregate"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    input: tuple[tuple[str, str], ...]  # the input row's fields (name, Spark DDL)
    key: tuple[int, ...]  # the group key's input fields, first in the output; () global
    aggs: tuple[AggCall, ...]
    output_names: tuple[str, ...] = field(default=())
    update_before: bool = True  # emit -U rows (a consumer needs them)
    mini_batch: bool = False  # fold a key's rows of a micro-batch, then emit once
    bundle_size: int | None = None  # mini-batch: the most rows a bundle folds (None: all)
    two_phase: bool = False  # the input is the local phase's partial accumulators
    retractions: bool = True  # the input may retract (MIN/MAX keep value counts)
    ttl_ms: int | None = None  # state retention; None keeps a key's accumulators forever

    def __post_init__(self) -> None:
        width = len(self.input)
        bad = [i for i in self.key if not 0 <= i < width]
        bad += [a.arg for a in self.aggs if a.arg is not None and not 0 <= a.arg < width]
        if bad:
            raise ValueError(f"field indexes {bad} are out of range for {width} input fields")
        if self.ttl_ms is not None and self.ttl_ms <= 0:
            raise ValueError(f"ttl_ms must be positive, got {self.ttl_ms}")
        if self.bundle_size is not None and self.bundle_size <= 0:
            raise ValueError(f"bundle_size must be positive, got {self.bundle_size}")
        if self.two_phase and not self.mini_batch:
            raise ValueError("a two-phase aggregation needs mini-batch (as Flink's)")

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        """The group key's fields, then one per aggregate call."""
        fields = tuple(self.input[i] for i in self.key)
        fields += tuple((f"agg{i}", a.result_type) for i, a in enumerate(self.aggs))
        return named(fields, self.output_names)

    def wire_section(self) -> dict[str, Any]:
        """The spec's section of the wire JSON (``server_ext/jvm/wire.py``)."""
        return {
            "input": [list(f) for f in self.input],
            "key_count": len(self.key),
            "aggs": [
                {"function": a.function, "arg": a.arg, "distinct": a.distinct} for a in self.aggs
            ],
            "update_before": self.update_before,
            "mini_batch": self.mini_batch,
            "bundle_size": self.bundle_size,
            "two_phase": self.two_phase,
            "retractions": self.retractions,
            "ttl_ms": self.ttl_ms,
        }

    def check(self) -> None:
        """Plan-time checks before the spec is sent: the output names are unique."""
        names = [n for n, _ in self.output_fields()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"aggregate output names must be unique: {dupes}")

    @property
    def time_mode(self) -> str:
        """``ProcessingTime`` with a state TTL (its expiry timeouts), else ``None``."""
        return "None" if self.ttl_ms is None else "ProcessingTime"


__all__ = ["ACC", "AGG_FUNCTIONS", "AggCall", "AggregateSpec", "named"]


def named(
    fields: tuple[tuple[str, str], ...], names: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """``fields`` renamed by ``names`` (none: as they are), what an aggregate's output is
    called (the group and the window aggregate both).

    >>> named((("agg0", "BIGINT"),), ("n",))
    (('n', 'BIGINT'),)
    """
    if not names:
        return fields
    if len(names) != len(fields):
        raise ValueError("output_names must name every output field")
    return tuple((n, t) for n, (_, t) in zip(names, fields, strict=True))
