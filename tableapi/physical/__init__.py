"""The physical plan (streaming): one immutable exec node per physical operator, made once
after the logical rules by :func:`plan_stream`, each holding the decisions its operator runs
by (Spark's own join or server_ext's operator, state layout and TTL per input, whether -U
rows are needed, changelog traits, one or two aggregation phases). ``explain()`` prints the
exec nodes; the streaming compiler visits them (``visit_<ExecNode>``). A new stateful
operator is one exec node class in a module here (every module is imported with the
package), a :class:`StreamExecOperator` (registered by :func:`exec_node`, which also makes
it the rule for its logical node) that gives its spec and
its inputs (the streaming compiler's one ``visit_StreamExecOperator`` runs every such node),
and on the server side its spec class, its Java class and their registry lines.

This package reads the logical plan (``tableapi.plan``) and never the compiler or the
executors, which read it.
"""

import importlib
import pkgutil

from tableapi.physical.aggregates import (
    AggregateState,
    StreamExecGlobalGroupAggregate,
    StreamExecGroupAggregate,
    StreamExecLocalGroupAggregate,
    aggregate_ttl_ms,
    two_phase,
)
from tableapi.physical.base import (
    EXEC_NODES,
    RULES,
    ExecNode,
    OperatorInput,
    StreamExecOperator,
    Translation,
    exec_node,
    translates,
)
from tableapi.physical.joins import (
    JoinInput,
    JoinStrategy,
    StreamExecIntervalJoin,
    StreamExecJoin,
    StreamExecMultiJoin,
    StreamExecTemporalJoin,
    state_ttl_ms,
)
from tableapi.physical.options import AggPhaseStrategy, StateBackend, StreamingOptions
from tableapi.physical.planner import StreamPhysicalPlan, check_streaming, plan_stream, trigger_ms
from tableapi.physical.relational import (
    StreamExecCalc,
    StreamExecDataStreamScan,
    StreamExecExchange,
    StreamExecLookupJoin,
    StreamExecTableSourceScan,
    StreamExecUnion,
    check_hash_lookup,
)

__all__ = [
    "EXEC_NODES",
    "RULES",
    "AggPhaseStrategy",
    "AggregateState",
    "ExecNode",
    "JoinInput",
    "JoinStrategy",
    "OperatorInput",
    "StateBackend",
    "StreamExecCalc",
    "StreamExecDataStreamScan",
    "StreamExecExchange",
    "StreamExecGlobalGroupAggregate",
    "StreamExecGroupAggregate",
    "StreamExecIntervalJoin",
    "StreamExecJoin",
    "StreamExecLocalGroupAggregate",
    "StreamExecLookupJoin",
    "StreamExecMultiJoin",
    "StreamExecOperator",
    "StreamExecTableSourceScan",
    "StreamExecTemporalJoin",
    "StreamExecUnion",
    "StreamPhysicalPlan",
    "StreamingOptions",
    "Translation",
    "aggregate_ttl_ms",
    "check_hash_lookup",
    "check_streaming",
    "exec_node",
    "plan_stream",
    "state_ttl_ms",
    "translates",
    "trigger_ms",
    "two_phase",
]

# Every module of this package registers its exec nodes and rules (``@exec_node``) when it is
# imported: import them all here, so that a new exec node's module needs no line anywhere.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
