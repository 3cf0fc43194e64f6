"""Join rules: IN-subqueries to semi joins, filters into inner joins, condition splitting."""

from __future__ import annotations

import itertools

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, Expression, InTable, and_, conjuncts
from tableapi.plan.nodes import EquiKey, Filter, Join, JoinKind, PlanNode, Project, TemporalJoin

_fresh = itertools.count()


def in_subquery_to_semi_join(plan: PlanNode) -> PlanNode:
    """``where(col("x").in_(t))`` -> ``Join(LeftSemiJoin, x = t.c)`` (Flink does the same)."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Filter):
            return None
        terms = conjuncts(node.condition)
        subqueries = [t for t in terms if isinstance(t, InTable)]
        for t in terms:
            if not isinstance(t, InTable) and any(isinstance(e, InTable) for e in t.walk()):
                raise ValidationError(
                    f"IN with a table is supported only as a top-level AND term of where(); "
                    f"found it inside {t}."
                )
        if not subqueries:
            return None
        current = node.input
        for sub in subqueries:
            query = sub.query
            if len(query.row_type) != 1:
                raise ValidationError(
                    f"in_(table) needs a table with exactly one column; it has "
                    f"[{', '.join(query.row_type.names)}]. select() the column first."
                )
            # A fresh name keeps the subquery's column from clashing with the outer row.
            inner = f"__in_{next(_fresh)}"
            renamed = Project(query, (Column(query.row_type.names[0]),), (inner,))
            current = Join(
                current, renamed, JoinKind.SEMI, Call("equals", (sub.expr, Column(inner)))
            )
        rest = [t for t in terms if not isinstance(t, InTable)]
        return Filter(current, and_(*rest)) if rest else current

    return plan.transform_up(rewrite)


def merge_filters_into_inner_joins(plan: PlanNode) -> PlanNode:
    """``left.join(right).where(p)`` -> ``Join(inner, p)``: keys hidden in a where() count."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not (
            isinstance(node, Filter)
            and isinstance(node.input, Join)
            and node.input.kind is JoinKind.INNER
        ):
            return None
        join = node.input
        terms = ([] if join.condition is None else conjuncts(join.condition)) + conjuncts(
            node.condition
        )
        return attrs.evolve(join, condition=and_(*terms))

    return plan.transform_up(rewrite)


def split_join_conditions(plan: PlanNode) -> PlanNode:
    """Fill ``equi_keys`` (``l = r`` across the sides) and the ``residual`` of each join."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Join | TemporalJoin) or node.equi_keys is not None:
            return None
        left, right = set(node.left.row_type.names), set(node.right.row_type.names)
        keys: list[EquiKey] = []
        rest: list[Expression] = []
        for term in [] if node.condition is None else conjuncts(node.condition):
            key = _equi_key(term, left, right)
            if key is None:
                rest.append(term)
            else:
                keys.append(key)
        return attrs.evolve(node, equi_keys=tuple(keys), residual=and_(*rest) if rest else None)

    return plan.transform_up(rewrite)


def _equi_key(term: Expression, left: set[str], right: set[str]) -> EquiKey | None:
    if not (isinstance(term, Call) and term.name in ("equals", "is_not_distinct_from")):
        return None
    a, b = term.args
    if not (isinstance(a, Column) and isinstance(b, Column)):
        return None
    null_safe = term.name == "is_not_distinct_from"
    if a.name in left and b.name in right:
        return EquiKey(a.name, b.name, null_safe)
    if b.name in left and a.name in right:
        return EquiKey(b.name, a.name, null_safe)
    return None
