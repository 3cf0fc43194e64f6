"""FLIP-70: computed columns become a projection right above a physical-only scan."""

from __future__ import annotations

from tableapi.expressions import Column, Expression
from tableapi.plan import PlanNode, Project, Scan
from tableapi.schema import ComputedColumn


def expand_computed_columns(plan: PlanNode) -> PlanNode:
    """``Scan(T: a, b AS a + 1)`` -> ``Project(a, a + 1 AS b) <- Scan(T: a)``."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Scan) or node.physical_only:
            return None
        physical = Scan(node.table_name, node.source, node.declared, physical_only=True)
        schema = node.schema
        if schema is None or not schema.computed_columns:
            return physical
        exprs: list[Expression] = [
            c.expr if isinstance(c, ComputedColumn) else Column(c.name) for c in schema.columns
        ]
        return Project(physical, tuple(exprs), tuple(c.name for c in schema.columns))

    return plan.transform_up(rewrite)
