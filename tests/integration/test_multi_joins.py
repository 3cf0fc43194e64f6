"""Multi-way joins (FLIP-516) on a real server: a chain of INNER/LEFT joins on a common key
runs as one operator; after every micro-batch the result equals the chain of binary joins
computed in plain Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from tableapi import TableEnvironment, col
from tests.integration.changelog_files import ChangelogTable
from tests.integration.test_streaming_joins import check_three_way
from tests.reference import eq

ORDERS = [("order_id", "BIGINT"), ("amount", "INT")]
SHIPS = [("s_id", "BIGINT"), ("carrier", "STRING")]
PAYS = [("p_id", "BIGINT"), ("paid", "INT")]
METHODS = {"inner": "join", "left": "left_outer_join"}

# Orders, shipments, payments over four micro-batches: inserts, updates, deletes, a key that
# comes back, a payment that arrives before its order, and rows whose key is null.
SCRIPT = [
    (
        [("+I", (1, 10)), ("+I", (2, 20)), ("+I", (None, 5))],
        [("+I", (1, "DHL")), ("+I", (None, "UPS"))],
        [("+I", (3, 30))],
    ),
    (
        [("+I", (3, 30)), ("-U", (2, 20)), ("+U", (2, 25))],
        [("+I", (2, "UPS")), ("+I", (3, "DHL"))],
        [("+I", (1, 10)), ("+I", (2, 20))],
    ),
    (
        [("-D", (1, 10))],
        [("-U", (3, "DHL")), ("+U", (3, "UPS")), ("-D", (2, "UPS"))],
        [("-U", (2, 20)), ("+U", (2, 25)), ("-D", (3, 30))],
    ),
    ([("+I", (1, 11))], [("+I", (2, "DHL"))], [("-D", (1, 10)), ("+I", (1, 11))]),
]


@pytest.mark.parametrize(
    ("kinds", "keys"),
    [
        (kinds, keys)
        for kinds in [("inner", "inner"), ("inner", "left"), ("left", "left")]
        for keys in ["primary keys", "no keys"]
    ]
    # With a state TTL the operator runs on processing time (rows do not expire here).
    + [(("inner", "left"), "primary keys, state TTL")],
)
def test_three_way_chain_matches_the_binary_joins_after_every_batch(
    senv: TableEnvironment, shared_dir: Path, kinds: tuple[str, str], keys: str
) -> None:
    senv.config.set("table.optimizer.multi-join.enabled", "true")
    if keys.endswith("state TTL"):
        senv.config.set("table.exec.state.ttl", "1 h")
    pk = keys.startswith("primary keys")
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDERS, ("order_id",) if pk else ())
    ships = ChangelogTable(senv, shared_dir, "Ships", SHIPS, ("s_id",) if pk else ())
    pays = ChangelogTable(senv, shared_dir, "Pays", PAYS, ("p_id",) if pk else ())
    first = getattr(senv.from_path("Orders"), METHODS[kinds[0]])(
        senv.from_path("Ships"), col("order_id") == col("s_id")
    )
    # The second join links through the shipment's key: a null-padded shipment never matches.
    query = getattr(first, METHODS[kinds[1]])(
        senv.from_path("Pays"), (col("s_id") == col("p_id")) & (col("paid") >= col("amount"))
    )
    plan = query.explain()
    assert "MultiJoin(joinTypes=[" + ", ".join(k.upper() for k in kinds) + "]" in plan
    assert "commonJoinKey=[(order_id), (s_id), (p_id)]" in plan
    assert ("stateTtl=[3600000 ms]" in plan) is keys.endswith("state TTL")
    assert "Join(joinType=" not in plan.split("== Optimized Physical Plan ==")[1]
    result = query.execute()
    try:
        check_three_way(
            result,
            (orders, ships, pays),
            SCRIPT,
            (kinds[0], lambda a, b: eq(a[0], b[0])),
            (kinds[1], lambda ab, c: eq(ab[2], c[0]) and ab[1] is not None and c[1] >= ab[1]),
        )
    finally:
        result.cancel()
