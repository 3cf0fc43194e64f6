"""Models of server_ext's stateful operators: the oracles the JVM operators are compared with.

The product runs its stateful operators on the JVM only (``server_ext/jvm``). These are
independent Python implementations of the same Flink operators (until issue 31 the join models
were the product's Python operator tier): the join models are ``transformWithState`` processors
(driven in memory by pyspark's TwsTester, no Spark: ``tests/unit/server_ext/harness.py`` and its
siblings), the group aggregation a plain class (``aggregate.py``). The tier-agreement tests
(``tests/unit/server_ext/test_tier_agreement*.py``) run random changelogs through both and want
the same changelog, row for row. Nothing in ``tableapi`` or ``server_ext`` imports this package.

Example::

    >>> from server_ext.joins.spec import JoinSpec, SideSpec
    >>> side = SideSpec((("id", "BIGINT"),))
    >>> processor, time_mode = model_of(JoinSpec("left", side, side, output_names=("a", "b")))
    >>> type(processor).__name__, time_mode
    ('RegularJoinProcessor', 'None')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server_ext.joins.interval_spec import IntervalSpec
from server_ext.joins.multi_spec import MultiJoinSpec
from server_ext.joins.spec import SEMI_ANTI_KINDS, JoinSpec
from server_ext.joins.temporal_spec import TemporalSpec
from tests.models.interval import IntervalJoinProcessor
from tests.models.multi import MultiJoinProcessor
from tests.models.regular import RegularJoinProcessor
from tests.models.semi_anti import SemiAntiJoinProcessor
from tests.models.temporal import TemporalJoinProcessor

if TYPE_CHECKING:
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

#: The join specs a model runs from (every operator's: ``server_ext.operators.SPECS``).
JoinOperatorSpec = JoinSpec | TemporalSpec | IntervalSpec | MultiJoinSpec


def model_of(spec: JoinOperatorSpec) -> tuple[StatefulProcessor, str]:
    """The model processor of ``spec``'s operator and its ``transformWithState`` time mode."""
    if isinstance(spec, JoinSpec):
        return join_processor(spec), spec.time_mode
    if isinstance(spec, TemporalSpec):
        return temporal_join_processor(spec), spec.time_mode
    if isinstance(spec, IntervalSpec):
        return interval_join_processor(spec), spec.time_mode
    return multi_join_processor(spec), spec.time_mode


def join_processor(spec: JoinSpec) -> StatefulProcessor:
    """Flink's StreamingJoinOperator for inner/left/right/full, StreamingSemiAntiJoinOperator
    for semi/anti."""
    if spec.kind in SEMI_ANTI_KINDS:
        return SemiAntiJoinProcessor(spec)
    return RegularJoinProcessor(spec)


def temporal_join_processor(spec: TemporalSpec) -> StatefulProcessor:
    """Flink's TemporalRowTimeJoinOperator (event time) or TemporalProcessTimeJoinOperator
    (processing time)."""
    return TemporalJoinProcessor(spec)


def interval_join_processor(spec: IntervalSpec) -> StatefulProcessor:
    """Flink's RowTimeIntervalJoin (event time)."""
    return IntervalJoinProcessor(spec)


def multi_join_processor(spec: MultiJoinSpec) -> StatefulProcessor:
    """FLIP-516's StreamingMultiJoinOperator."""
    return MultiJoinProcessor(spec)
