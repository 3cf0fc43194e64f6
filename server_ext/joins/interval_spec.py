"""The contract between the client's compiler and the interval join operator.

Flink's event-time interval join (``RowTimeIntervalJoin``): a left row at time ``lt`` and a
right row at time ``rt`` of the same join key match when

    lower_ms <= lt - rt <= upper_ms     (both bounds inclusive; Flink's ``windowBounds``)

and the residual condition is True. Outer sides emit their rows null-padded once they can no
longer match (the watermark has passed their window). The output is insert-only.

The client runs the JVM ``interval`` operator over::

    union.groupBy(*key_columns) -> OperatorPlugin "interval" -> spec.output_struct_ddl()

with ``union`` = both inputs tagged as in ``spec.py`` (``__k0..``, ``__side``, ``__kind``,
``__seq``, ``__l``, ``__r``) plus ``__t`` (BIGINT): the row's rowtime in epoch milliseconds
(the left rowtime on left rows, the right one on right rows), as in ``temporal_spec.py``.
The watermark comes from ``withWatermark`` on each input's rowtime, upstream of the union,
and the union must NOT carry a column with watermark metadata (``temporal_spec.py`` says
why: Spark would drop rows behind the watermark before the operator sees them).

Output rows: ``__kind`` (always +I) then the left fields then the right fields.

Like ``spec.py``, this module must not import ``tableapi``.

Example::

    >>> from server_ext.joins.spec import SideSpec
    >>> spec = IntervalSpec(
    ...     "left", SideSpec((("o_id", "BIGINT"),)), SideSpec((("s_id", "BIGINT"),)),
    ...     lower_ms=-4 * 3600_000, upper_ms=0)
    >>> spec.output_struct_ddl(), interval_time_mode(spec)
    ('__kind TINYINT, `o_id` BIGINT, `s_id` BIGINT', 'EventTime')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from server_ext.joins.condition import compile_condition
from server_ext.joins.spec import (
    FULL_OUTER,
    LEFT_OUTER,
    REGULAR_KINDS,
    RIGHT_OUTER,
    SideSpec,
    output_struct_ddl,
)
from server_ext.joins.temporal_spec import TIME
from server_ext.jvm.wire import encode_tree

INTERVAL_KINDS = REGULAR_KINDS  # inner | left | right | full


@dataclass(frozen=True)
class IntervalSpec:
    """Everything the interval join operator needs, decided at plan time (an
    ``OperatorSpec`` of ``server_ext.operators``: the ``interval`` operator)."""

    operator: ClassVar[str] = "interval"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    kind: str  # inner | left | right | full
    left: SideSpec
    right: SideSpec
    lower_ms: int  # the bounds of left.t - right.t, inclusive
    upper_ms: int
    # Per equi key: True when nulls are equal (IS NOT DISTINCT FROM), False when a null key
    # never matches (Flink's filterNulls). Empty: no key is null-safe.
    null_safe: tuple[bool, ...] = ()
    residual: tuple | None = None  # condition tree over (left, right), as in spec.py
    output_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.kind not in INTERVAL_KINDS:
            raise ValueError(f"interval join kind must be one of {INTERVAL_KINDS}")

    @property
    def left_outer(self) -> bool:
        """Unmatched left rows are emitted null-padded (left / full)."""
        return self.kind in (LEFT_OUTER, FULL_OUTER)

    @property
    def right_outer(self) -> bool:
        """Unmatched right rows are emitted null-padded (right / full)."""
        return self.kind in (RIGHT_OUTER, FULL_OUTER)

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        fields = self.left.fields + self.right.fields
        if self.output_names:
            fields = tuple((n, t) for n, (_, t) in zip(self.output_names, fields, strict=True))
        return fields

    def output_struct_ddl(self) -> str:
        return output_struct_ddl(self.output_fields())

    def wire_section(self) -> dict[str, Any]:
        """The spec's section of the wire JSON (``server_ext/jvm/wire.py``)."""
        return {
            "kind": self.kind,
            "left": self.left.wire_json(),
            "right": self.right.wire_json(),
            "residual": None if self.residual is None else encode_tree(self.residual),
            "output_names": list(self.output_names),
            "lower_ms": self.lower_ms,
            "upper_ms": self.upper_ms,
            "null_safe": list(self.null_safe),
        }

    def check(self) -> None:
        """Plan-time checks before the spec is sent: the residual compiles."""
        compile_condition(self.residual)

    @property
    def time_mode(self) -> str:
        """The operator's time mode (see :func:`interval_time_mode`)."""
        return interval_time_mode(self)


def interval_time_mode(spec: IntervalSpec) -> str:
    """Always ``EventTime``: rows expire, and outer rows are padded, by the watermark."""
    return "EventTime"


__all__ = ["INTERVAL_KINDS", "TIME", "IntervalSpec", "SideSpec", "interval_time_mode"]
