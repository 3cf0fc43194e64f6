"""The contract between the client's compiler and the temporal join operator.

Flink's temporal joins: each probe (left) row joins the version of the build (right) row
that is valid at the probe row's time, ``FOR SYSTEM_TIME AS OF``:

- ``event`` time (``TemporalRowTimeJoinOperator``): the build side is a versioned table
  (primary key + rowtime; +I/+U open a version at their rowtime, -U/-D close it at theirs).
  Probe rows wait in state until the watermark passes their time, then join the version
  valid at that time; versions no longer needed by any future probe row are dropped. Probe
  rows that arrive behind the watermark are late: dropped, and reported (see LATE).
- ``processing`` time (``TemporalProcessTimeJoinOperator``): the build side is a map from key
  to its latest row; a probe row joins whatever is there when it arrives, at once.

The client runs the JVM ``temporal`` operator over::

    union.groupBy(*key_columns) -> OperatorPlugin "temporal" -> spec.output_struct_ddl()

with ``union`` = both inputs tagged as in ``spec.py`` (``__k0..``, ``__side``, ``__kind``,
``__seq``, ``__l``, ``__r``) plus one more column:

=============  ==========  ==================================================================
``__t``        BIGINT      the row's time in epoch milliseconds: the probe row's as-of time,
                           the build row's version time (event mode; null in processing mode)
=============  ==========  ==================================================================

In event mode the query carries a watermark, and the operator uses event-time timers at
the probe rows' times. Measured on Spark 4.3 (with transformWithState, and the operator's
input is kept the same): put ``withWatermark`` on each input's rowtime (upstream of the
union; Spark takes the minimum, as Flink does) and do NOT hand the operator a column with
watermark metadata (e.g. ``__t_ts`` aliasing a rowtime column): with one, Spark silently
drops every row of both sides at or behind the previous batch's watermark before the
operator sees it (no LATE rows, late versions lost).

Output rows: ``__kind`` (TINYINT) then the left fields then the right fields (null-padded for
``left`` joins without a version). Inner and left temporal joins of an insert-only probe
side emit +I only. A late probe row is emitted once with ``__kind`` = LATE and null build
fields; the client counts and drops these rows (they are not part of the result).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from server_ext.joins.condition import compile_condition
from server_ext.joins.spec import INNER, LEFT_OUTER, InputSpec, SideSpec, output_struct_ddl
from server_ext.jvm.wire import encode_tree

TIME = "__t"
TIME_TS = "__t_ts"  # the same instant as a TIMESTAMP; keep it out of the operator's input
LATE = 9  # __kind of a late probe row: not a RowKind; counted and dropped by the client
# The client counts LATE rows in this observed metric (field ``late_rows``) before dropping them.
LATE_ROWS_METRIC = "tableapi_late_rows"

TEMPORAL_KINDS = (INNER, LEFT_OUTER)
TIME_MODES = ("event", "processing")


@dataclass(frozen=True)
class TemporalSpec:
    """Everything a temporal join operator needs, decided at plan time (an
    ``OperatorSpec`` of ``server_ext.operators``: the ``temporal`` operator)."""

    operator: ClassVar[str] = "temporal"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    kind: str  # inner | left
    time: str  # event | processing
    left: SideSpec  # the probe side
    right: SideSpec  # the build side (its primary key is in the join key)
    residual: tuple | None = None  # condition tree over (left, right), as in spec.py
    output_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.kind not in TEMPORAL_KINDS:
            raise ValueError(f"temporal join kind must be one of {TEMPORAL_KINDS}")
        if self.time not in TIME_MODES:
            raise ValueError(f"time must be one of {TIME_MODES}")

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
            "time": self.time,
        }

    def check(self) -> None:
        """Plan-time checks before the spec is sent: the residual compiles."""
        compile_condition(self.residual)

    @property
    def time_mode(self) -> str:
        """The operator's time mode (see :func:`temporal_time_mode`)."""
        return temporal_time_mode(self)


def temporal_time_mode(spec: TemporalSpec) -> str:
    """``EventTime`` for versioned tables (timers at the probe times), else ``None``."""
    return "EventTime" if spec.time == "event" else "None"


__all__ = [
    "LATE",
    "LATE_ROWS_METRIC",
    "TEMPORAL_KINDS",
    "TIME",
    "TIME_TS",
    "InputSpec",
    "SideSpec",
    "TemporalSpec",
    "temporal_time_mode",
]
