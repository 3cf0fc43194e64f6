"""Join hints: ``with_hint`` on a query attaches to the joins that read the named tables (and a
STATE_TTL hint to the aggregations that read them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tableapi.plan import (
    Aggregate,
    Distinct,
    Filter,
    Hint,
    Join,
    LookupJoin,
    PlanNode,
    Project,
    QueryHints,
    Scan,
)
from tableapi.plan.lookup import LOOKUP_JOIN_HINTS

#: The nodes a hint sees through to the table below (they keep its rows' identity).
_SEE_THROUGH = frozenset({Project, Filter, QueryHints})


def direct_table(node: PlanNode) -> str | None:
    """The table a join input reads directly (through projections and filters only)."""
    while type(node) in _SEE_THROUGH:
        (node,) = node.inputs
    return node.table_name if isinstance(node, Scan) else None


_Used = set[tuple[Hint, str]]  # the (hint, table) pairs some node took


def _onto_lookup_join(n: LookupJoin, hints: tuple[Hint, ...], used: _Used) -> PlanNode | None:
    """SHUFFLE_HASH / LOOKUP hints that name the lookup table."""
    found = [h for h in hints if h.name in LOOKUP_JOIN_HINTS and n.table_name in h.tables]
    used.update((h, n.table_name) for h in found)
    hinted = tuple(Hint(h.name, (n.table_name,), h.options) for h in found)
    return attrs.evolve(n, hints=n.hints + hinted) if hinted else None


def _onto_aggregation(
    n: Aggregate | Distinct, hints: tuple[Hint, ...], used: _Used
) -> PlanNode | None:
    """STATE_TTL hints that name the table the aggregation reads."""
    table = direct_table(n.input)
    found = [h for h in hints if h.name == "STATE_TTL" and table in h.tables]
    used.update((h, str(table)) for h in found)
    hinted = tuple(Hint(h.name, (str(table),), h.options) for h in found)
    return attrs.evolve(n, hints=n.hints + hinted) if hinted else None


def _onto_join(n: Join, hints: tuple[Hint, ...], used: _Used) -> PlanNode | None:
    """Every hint but LOOKUP that names a table the join reads directly, with its side."""
    added = []
    for side, child in (("left", n.left), ("right", n.right)):
        table = direct_table(child)
        for h in hints:
            if h.name == "LOOKUP":
                continue  # lookup joins only
            if table is not None and table in h.tables:
                added.append((Hint(h.name, (table,), h.options), side))
                used.add((h, table))
    return attrs.evolve(n, hints=n.hints + tuple(added)) if added else None


#: Node type -> how it takes the hints of a QueryHints node above it (others take none).
_TAKES_HINTS: dict[type, Callable[[Any, tuple[Hint, ...], _Used], PlanNode | None]] = {
    LookupJoin: _onto_lookup_join,
    Aggregate: _onto_aggregation,
    Distinct: _onto_aggregation,
    Join: _onto_join,
}


def propagate_hints(plan: PlanNode) -> tuple[PlanNode, list[str]]:
    """Move each QueryHints node's hints onto the joins below it whose direct input is a
    hinted table, and SHUFFLE_HASH / LOOKUP hints onto the lookup joins of the tables they
    name; returns the plan and notes on hints that applied to no join."""
    notes: list[str] = []

    def attach(node: PlanNode, hints: tuple[Hint, ...], used: _Used) -> PlanNode:
        def rewrite(n: PlanNode) -> PlanNode | None:
            take = _TAKES_HINTS.get(type(n))
            return None if take is None else take(n, hints, used)

        return node.transform_up(rewrite)

    def rewrite_query_hints(node: PlanNode) -> PlanNode | None:
        if not isinstance(node, QueryHints):
            return None
        used: _Used = set()
        result = attach(node.input, node.hints, used)
        for h in node.hints:
            for t in h.tables:
                if (h, t) not in used:
                    what = "join or aggregation" if h.name == "STATE_TTL" else "join"
                    notes.append(f"hint {h.name}({t}) applies to no {what} of this query: ignored")
        return result

    return plan.transform_up(rewrite_query_hints), notes
