"""The rule pipeline: logical plan in, optimized plan plus planner notes out."""

from __future__ import annotations

import attrs

from tableapi.plan import PlanNode
from tableapi.rules.computed_columns import expand_computed_columns
from tableapi.rules.hints import propagate_hints
from tableapi.rules.interval_joins import classify_interval_joins
from tableapi.rules.joins import (
    in_subquery_to_semi_join,
    merge_filters_into_inner_joins,
    push_single_side_predicates,
    split_join_conditions,
)
from tableapi.rules.lookup_joins import plan_lookup_joins
from tableapi.rules.multi_joins import merge_multi_joins
from tableapi.rules.window_joins import window_joins
from tableapi.rules.window_ranks import window_ranks
from tableapi.rules.windows import push_filters_below_window_tvfs, window_aggregates


@attrs.frozen(eq=False)
class OptimizedPlan:
    plan: PlanNode
    notes: tuple[str, ...] = ()


def optimize(plan: PlanNode, multi_join_max_tables: int | None = None) -> OptimizedPlan:
    """Apply the rules in order. Each rule is a pure function ``plan -> plan``. With
    ``multi_join_max_tables`` (streaming, ``table.optimizer.multi-join.enabled``), chains of
    joins on a common key become MultiJoin nodes of at most that many inputs."""
    plan = expand_computed_columns(plan)
    plan = in_subquery_to_semi_join(plan)
    plan, notes = propagate_hints(plan)
    plan = merge_filters_into_inner_joins(plan)
    plan = split_join_conditions(plan)
    plan = push_single_side_predicates(plan)
    plan = classify_interval_joins(plan)
    plan = plan_lookup_joins(plan)
    plan = push_filters_below_window_tvfs(plan)
    plan = window_aggregates(plan)
    plan = window_joins(plan)
    plan = window_ranks(plan)
    if multi_join_max_tables is not None:
        plan = merge_multi_joins(plan, multi_join_max_tables)
    return OptimizedPlan(plan, tuple(notes))
