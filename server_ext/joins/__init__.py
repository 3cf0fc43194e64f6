"""Flink-style join operators that run inside Spark as transformWithState processors.

The client builds a spec (``spec.py``, ``temporal_spec.py``, ``interval_spec.py``,
``multi_spec.py``: the wire contracts) and asks :func:`python_operator` for the processor that
runs it. Processors are imported lazily so that the specs stay light for the client.

Example::

    >>> from server_ext.joins.spec import JoinSpec, SideSpec
    >>> side = SideSpec((("id", "BIGINT"),))
    >>> spec = JoinSpec("left", side, side, output_names=("a", "b"))
    >>> processor, time_mode = python_operator(spec)
    >>> type(processor).__name__, time_mode
    ('RegularJoinProcessor', 'None')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server_ext.joins.interval_spec import IntervalSpec
from server_ext.joins.multi_spec import MultiJoinSpec
from server_ext.joins.spec import SEMI_ANTI_KINDS, JoinSpec
from server_ext.joins.temporal_spec import TemporalSpec

if TYPE_CHECKING:
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

#: The join specs an operator runs from (every operator's: ``server_ext.operators.SPECS``).
OperatorSpec = JoinSpec | TemporalSpec | IntervalSpec | MultiJoinSpec


def python_operator(spec: OperatorSpec) -> tuple[StatefulProcessor, str]:
    """The processor that runs ``spec`` and its ``transformWithState`` time mode."""
    return spec.python_processor(), spec.time_mode


def join_processor(spec: JoinSpec) -> StatefulProcessor:
    """The processor for ``spec``: Flink's StreamingJoinOperator for inner/left/right/full,
    StreamingSemiAntiJoinOperator for semi/anti."""
    if spec.kind in SEMI_ANTI_KINDS:
        from server_ext.joins.semi_anti import SemiAntiJoinProcessor

        return SemiAntiJoinProcessor(spec)
    from server_ext.joins.regular import RegularJoinProcessor

    return RegularJoinProcessor(spec)


def temporal_join_processor(spec: TemporalSpec) -> StatefulProcessor:
    """The processor for ``spec``: Flink's TemporalRowTimeJoinOperator (event time) or
    TemporalProcessTimeJoinOperator (processing time)."""
    from server_ext.joins.temporal import TemporalJoinProcessor

    return TemporalJoinProcessor(spec)


def interval_join_processor(spec: IntervalSpec) -> StatefulProcessor:
    """The processor for ``spec``: Flink's RowTimeIntervalJoin (event time)."""
    from server_ext.joins.interval import IntervalJoinProcessor

    return IntervalJoinProcessor(spec)


def multi_join_processor(spec: MultiJoinSpec) -> StatefulProcessor:
    """The processor for ``spec``: FLIP-516's StreamingMultiJoinOperator."""
    from server_ext.joins.multi import MultiJoinProcessor

    return MultiJoinProcessor(spec)
