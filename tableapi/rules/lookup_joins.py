"""Lookup joins: an inner join's probe-only terms filter the probe input before the lookup
(Flink pushes them below the join), a hash lookup join (SHUFFLE_HASH, LOOKUP
'shuffle'='true', FLIP-204/462) hash-partitions its probe input on the lookup keys, so each
key is looked up and cached by one task, and the lookup table's computed columns that the
join condition does not read are computed after the join, as any table's are (FLIP-70).

Example::

    orders.temporal_join(customers, (col("c_id") == col("id")) & (col("amount") > 10),
                         as_of=col("pt")).with_hint("SHUFFLE_HASH", "Customers")
    -> LookupJoin(lookup=[id=c_id]) <- Exchange(hash[c_id]) <- Filter(amount > 10) <- Orders
"""

from __future__ import annotations

import attrs

from tableapi.expressions import (
    Cast,
    Column,
    Expression,
    Literal,
    and_,
    conjuncts,
    if_then_else,
)
from tableapi.plan import Exchange, Filter, JoinKind, LookupJoin, PlanNode, Project
from tableapi.schema import ComputedColumn


def plan_lookup_joins(plan: PlanNode) -> PlanNode:
    """Push inner lookup joins' pre-filters down, place the hash distributions and compute
    output-only computed columns after the join."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, LookupJoin):
            return None
        join = node
        pre = join.lookup.pre_terms
        if join.kind is JoinKind.INNER and pre:
            ids = {id(t) for t in pre}
            kept = [t for t in conjuncts(join.condition) if id(t) not in ids]
            join = attrs.evolve(join, input=Filter(join.input, and_(*pre)), condition=and_(*kept))
        probe_keys = tuple(k.probe for k in join.lookup.probe_keys if k.probe is not None)
        if join.shuffle and probe_keys and not isinstance(join.input, Exchange):
            join = attrs.evolve(join, input=Exchange(join.input, probe_keys))
        out = _computed_after(join)
        return None if out is node else out

    return plan.transform_up(rewrite)


def _computed_after(join: LookupJoin) -> PlanNode:
    """``join`` with the lookup table's computed columns that its condition does not read
    computed in a projection above it, like every other table's (so CAST, CONCAT or a UDF
    work there); the operator computes only those the condition reads, on the fetched rows.

    A padded row of a left join has NULL in every lookup table column, computed ones too
    (``COALESCE(name, '-')`` must not be ``'-'`` there), so under a left join the value is
    computed only for matched rows: those whose first lookup key column is not NULL (a NULL
    key never matches).
    """
    schema = join.table.schema
    assert schema is not None  # a LookupJoin checks that its table is a jdbc table
    read = join.condition.column_names()
    after = {c.name for c in schema.computed_columns if c.name not in read}
    if not after:
        return join
    kept = tuple(c for c in schema.columns if c.name not in after)
    table = attrs.evolve(join.table, declared=attrs.evolve(schema, columns=kept))
    inner = attrs.evolve(join, table=table)
    matched = Column(join.lookup.keys[0].column).is_not_null

    def value(c: ComputedColumn) -> Expression:
        e = c.expr
        if join.kind is JoinKind.LEFT:
            e = if_then_else(matched, e, Literal(None, c.type.with_nullable(True)))
        # the join's output type: no time attribute (a PROCTIME() column is a plain value)
        out = join.row_type.field(c.name).type
        return e if e.type_in(inner.row_type) == out else Cast(e, out)

    exprs = [Column(n) for n in join.input.row_type.names] + [
        value(c) if isinstance(c, ComputedColumn) and c.name in after else Column(c.name)
        for c in schema.columns
    ]
    return Project(inner, tuple(exprs), join.row_type.names)
