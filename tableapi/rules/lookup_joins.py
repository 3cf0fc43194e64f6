"""Lookup joins: an inner join's probe-only terms filter the probe input before the lookup
(Flink pushes them below the join), and a hash lookup join (SHUFFLE_HASH, LOOKUP
'shuffle'='true', FLIP-204/462) hash-partitions its probe input on the lookup keys, so each
key is looked up and cached by one task.

Example::

    orders.temporal_join(customers, (col("c_id") == col("id")) & (col("amount") > 10),
                         as_of=col("pt")).with_hint("SHUFFLE_HASH", "Customers")
    -> LookupJoin(lookup=[id=c_id]) <- Exchange(hash[c_id]) <- Filter(amount > 10) <- Orders
"""

from __future__ import annotations

import attrs

from tableapi.expressions import and_, conjuncts
from tableapi.plan import Exchange, Filter, JoinKind, LookupJoin, PlanNode


def plan_lookup_joins(plan: PlanNode) -> PlanNode:
    """Push inner lookup joins' pre-filters down and place the hash distributions."""

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
        return None if join is node else join

    return plan.transform_up(rewrite)
