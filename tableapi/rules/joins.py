"""Join rules: IN-subqueries to semi joins, filters into inner joins, condition splitting."""

from __future__ import annotations

import itertools

import attrs

from tableapi.expressions import (
    Call,
    Column,
    Expression,
    InTable,
    and_,
    conjuncts,
    in_table_term,
)
from tableapi.plan import EquiKey, Filter, Join, JoinKind, PlanNode, Project, TemporalJoin


def in_subquery_to_semi_join(plan: PlanNode) -> PlanNode:
    """``where(col("x").in_(t))`` -> ``Join(LeftSemiJoin, x = t.c)``, as Flink does; with
    ``row(a, b).in_(t)`` one equality per column. ``~col("x").in_(t)`` (NOT IN) is Flink's
    null-aware anti join: a row is kept when no row of ``t`` equals it or makes the
    comparison NULL, so a NULL in ``t`` keeps no row, and a NULL ``x`` is kept only when
    ``t`` is empty. Where neither side can be NULL that is a plain anti join (NOT EXISTS)."""
    # Fresh names numbered per plan, so that one program always explains alike.
    fresh = itertools.count()

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, Filter):
            return None
        terms = conjuncts(node.condition)
        found = [(t, in_table_term(t)) for t in terms]
        if all(sub is None for _, sub in found):
            return None
        current = node.input
        rest = []
        for term, sub in found:
            if sub is None:
                rest.append(term)
            else:
                current = _subquery_join(current, *sub, next(fresh))
        return Filter(current, and_(*rest)) if rest else current

    return plan.transform_up(rewrite)


def _subquery_join(outer: PlanNode, sub: InTable, negated: bool, n: int) -> Join:
    query = sub.query
    # Fresh names keep the subquery's columns from clashing with the outer row.
    inner = tuple(f"__in_{n}_{i}" for i in range(len(query.row_type)))
    renamed = Project(query, tuple(Column(c) for c in query.row_type.names), inner)
    equal = and_(*(Call("equals", (v, Column(c))) for v, c in zip(sub.values, inner, strict=True)))
    if not negated:
        return Join(outer, renamed, JoinKind.SEMI, equal)
    nullable = any(v.type_in(outer.row_type).nullable for v in sub.values) or any(
        f.type.nullable for f in query.row_type
    )
    condition = Call("or", (equal, Call("is_null", (equal,)))) if nullable else equal
    return Join(outer, renamed, JoinKind.ANTI, condition)


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
