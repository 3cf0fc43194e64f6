"""Load: eight clients submit queries at once to one server, batch and streaming mixed, and
every result is right (each compared with the same query computed in plain Python).

Each client has its own TableEnvironment (its own Spark Connect session) on the test server,
in its own thread; they start together and run a join each.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from tableapi import TableEnvironment, col
from tableapi.result import apply_changelog
from tests.integration.files import register_json
from tests.reference import as_bag, eq, nested_loop_join

CLIENTS = 8


def _data(i: int) -> tuple[list[tuple], list[tuple]]:
    """Client ``i``'s own rows: orders (o_id, o_pid) and products (p_id, name)."""
    orders = [(n, (n * 7 + i) % 13 if n % 5 else None) for n in range(40 + i)]
    products = [(p, f"p{p}-{i}") for p in range(0, 13, 1 + i % 3)]
    return orders, products


def _client(i: int, url: str, root: Path, results: dict[int, Any]) -> None:
    mode = "batch" if i % 2 == 0 else "streaming"
    env = TableEnvironment.create(mode=mode, remote=url)
    try:
        orders, products = _data(i)
        register_json(env, root / f"c{i}", "Orders", "o_id BIGINT, o_pid BIGINT", orders)
        register_json(env, root / f"c{i}", "Products", "p_id BIGINT, name STRING", products)
        method = ["join", "left_outer_join", "join", "semi_join"][i % 4]
        query = getattr(env.from_path("Orders"), method)(
            env.from_path("Products"), col("o_pid") == col("p_id")
        )
        rows = query.execute().collect()
        results[i] = (mode, method, apply_changelog(rows), {r.kind.short_string for r in rows})
    except Exception as e:  # reported by the test, with the client's number
        results[i] = e
    finally:
        env.close()


def test_eight_clients_at_once(server_url: str, shared_dir: Path) -> None:
    results: dict[int, Any] = {}
    threads = [
        threading.Thread(target=_client, args=(i, server_url, shared_dir, results))
        for i in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
    assert sorted(results) == list(range(CLIENTS))
    for i, got in sorted(results.items()):
        assert not isinstance(got, Exception), f"client {i}: {got!r}"
        mode, method, table, kinds = got
        orders, products = _data(i)
        kind = {"join": "inner", "left_outer_join": "left", "semi_join": "semi"}[method]
        want = nested_loop_join(orders, products, kind, lambda o, p: eq(o[1], p[0]))
        assert as_bag(table) == as_bag(want), f"client {i} ({mode} {method})"
        if mode == "batch" or method != "left_outer_join":
            assert kinds == {"+I"}, f"client {i}: an insert-only result has +I rows only"
        else:  # a padded row may come first and be retracted: the changelog applies cleanly
            assert kinds <= {"+I", "-D"}
