"""FLIP-516: chains of INNER/LEFT joins on a common key become one :class:`MultiJoin`.

Runs in streaming mode when ``table.optimizer.multi-join.enabled`` is true, after the join
conditions are split. A chain qualifies, as in Flink, when it is left-deep, every join is
INNER or LEFT with equi keys (no interval join, no hints), and every join's equi keys reach
the common key: the first join's key columns, and each later join equates a column already
in that key (on any earlier input) with one of its new input.

Example::

    orders.join(ships, order_id = s_id).left_outer_join(pays, s_id = p_id)
    -> MultiJoin([Orders, Ships, Pays], commonJoinKey=[order_id, s_id, p_id])
"""

from __future__ import annotations

import attrs

from tableapi.plan import Join, JoinKind, MultiJoin, PlanNode


def merge_multi_joins(plan: PlanNode, max_tables: int) -> PlanNode:
    """Replace qualifying chains of 3 to ``max_tables`` inputs by MultiJoin nodes."""

    def rewrite(node: PlanNode) -> PlanNode | None:
        if not _joinable(node):
            return None
        assert isinstance(node, Join)
        below = node.left
        if isinstance(below, MultiJoin):
            if len(below.relations) >= max_tables:
                return None
            relations, joins, key = below.relations, below.joins, below.common_key
            node = attrs.evolve(node, left=joins[-1])
        elif _joinable(below) and max_tables >= 3:
            assert isinstance(below, Join)
            relations, joins = (below.left, below.right), (below,)
            assert below.equi_keys is not None
            key = (tuple(k.left for k in below.equi_keys), tuple(k.right for k in below.equi_keys))
        else:
            return None
        linked = _link(node, key)
        if linked is None:
            return None
        return MultiJoin((*relations, node.right), (*joins, node), (*key, linked))

    return plan.transform_up(rewrite)


def _joinable(node: PlanNode) -> bool:
    return (
        isinstance(node, Join)
        and node.kind in (JoinKind.INNER, JoinKind.LEFT)
        and bool(node.equi_keys)
        and node.interval is None
        and node.window is None
        and not node.hints
    )


def _link(join: Join, key: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    """The common key's columns in ``join``'s right input: for every key position, an equi
    key whose left column is that position's column on some earlier input; None if any is
    missing (the chain ends below this join)."""
    assert join.equi_keys is not None
    columns = []
    for position in range(len(key[0])):
        known = {cols[position] for cols in key}
        match = next((k.right for k in join.equi_keys if k.left in known), None)
        if match is None:
            return None
        columns.append(match)
    return tuple(columns)
