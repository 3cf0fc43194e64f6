"""The logical plan: immutable nodes by family (sources, relational nodes, joins), what they
mean on unbounded inputs (``changelog``), and their Flink-style text (``explain``)."""

from tableapi.plan.base import BinaryNode, PlanNode, UnaryNode
from tableapi.plan.joins import (
    EquiKey,
    IntervalBounds,
    Join,
    JoinKind,
    MultiJoin,
    TemporalJoin,
    join_unique_keys,
)
from tableapi.plan.lookup import LookupJoin
from tableapi.plan.relational import (
    Aggregate,
    Distinct,
    Exchange,
    Filter,
    Hint,
    Limit,
    Project,
    QueryHints,
    Sort,
    Union,
)
from tableapi.plan.sources import (
    ElementsSource,
    FileSource,
    JdbcSource,
    NexmarkSource,
    Scan,
    Source,
    SparkSource,
)

__all__ = [
    "Aggregate",
    "BinaryNode",
    "Distinct",
    "ElementsSource",
    "EquiKey",
    "Exchange",
    "FileSource",
    "Filter",
    "Hint",
    "IntervalBounds",
    "JdbcSource",
    "Join",
    "JoinKind",
    "Limit",
    "LookupJoin",
    "MultiJoin",
    "NexmarkSource",
    "PlanNode",
    "Project",
    "QueryHints",
    "Scan",
    "Sort",
    "Source",
    "SparkSource",
    "TemporalJoin",
    "UnaryNode",
    "Union",
    "join_unique_keys",
]
