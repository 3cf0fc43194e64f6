"""Flink-style join operators that run inside Spark as transformWithState processors."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    from server_ext.joins.multi_spec import MultiJoinSpec
    from server_ext.joins.spec import JoinSpec
    from server_ext.joins.temporal_spec import TemporalSpec


def join_processor(spec: JoinSpec) -> StatefulProcessor:
    """The processor for ``spec``: Flink's StreamingJoinOperator for inner/left/right/full,
    StreamingSemiAntiJoinOperator for semi/anti.

    Imported lazily so that ``server_ext.joins.spec`` stays light for the client."""
    if spec.kind in ("semi", "anti"):
        from server_ext.joins.semi_anti import SemiAntiJoinProcessor

        return SemiAntiJoinProcessor(spec)
    from server_ext.joins.regular import RegularJoinProcessor

    return RegularJoinProcessor(spec)


def temporal_join_processor(spec: TemporalSpec) -> StatefulProcessor:
    """The processor for ``spec``: Flink's TemporalRowTimeJoinOperator (event time) or
    TemporalProcessTimeJoinOperator (processing time). Imported lazily, as above."""
    from server_ext.joins.temporal import TemporalJoinProcessor

    return TemporalJoinProcessor(spec)


def multi_join_processor(spec: MultiJoinSpec) -> StatefulProcessor:
    """The processor for ``spec``: FLIP-516's StreamingMultiJoinOperator (imported lazily)."""
    from server_ext.joins.multi import MultiJoinProcessor

    return MultiJoinProcessor(spec)
