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


# Join kinds and the sides whose rows a single-side predicate of the join condition may
# filter before the join (Flink's FlinkFilterJoinRule): not a side whose unmatched rows are
# kept (an outer side, an anti join's left), whose rows the predicate decides matches for.
_PUSHABLE_SIDES = {
    JoinKind.INNER: ("left", "right"),
    JoinKind.LEFT: ("right",),
    JoinKind.RIGHT: ("left",),
    JoinKind.SEMI: ("left", "right"),
    JoinKind.ANTI: ("right",),
}


def push_single_side_predicates(plan: PlanNode) -> PlanNode:
    """Residual terms of a join that read one side only become a filter on that side where
    the join kind allows: rows that can never match are dropped before the join keeps them
    in state. Temporal joins keep theirs: filtering the versioned table changes which version
    is valid when."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Join) or node.residual is None:
            return None
        sides = _PUSHABLE_SIDES.get(node.kind, ())
        names = {"left": set(node.left.row_type.names), "right": set(node.right.row_type.names)}
        pushed: dict[str, list[Expression]] = {"left": [], "right": []}
        rest: list[Expression] = []
        for term in conjuncts(node.residual):
            used = term.column_names()
            side = next((s for s in sides if used and used <= names[s]), None)
            (pushed[side] if side else rest).append(term)
        if not pushed["left"] and not pushed["right"]:
            return None
        left = Filter(node.left, and_(*pushed["left"])) if pushed["left"] else node.left
        right = Filter(node.right, and_(*pushed["right"])) if pushed["right"] else node.right
        return attrs.evolve(
            node,
            left=left,
            right=right,
            condition=_without(node.condition, pushed["left"] + pushed["right"]),
            residual=and_(*rest) if rest else None,
        )

    return plan.transform_up(rewrite)


def _without(condition: Expression | None, terms: list[Expression]) -> Expression | None:
    """``condition`` without the given conjuncts (compared by identity)."""
    ids = {id(t) for t in terms}
    kept = [t for t in ([] if condition is None else conjuncts(condition)) if id(t) not in ids]
    return and_(*kept) if kept else None


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
