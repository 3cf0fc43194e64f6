"""Enrich orders with customers looked up in a database: a lookup join (Flink's
``JOIN Customers FOR SYSTEM_TIME AS OF o.o_proctime``).

The customers live in a SQLite file this example creates (PostgreSQL works the same way:
``url`` = ``jdbc:postgresql://host:5432/shop`` plus ``username`` and ``password``). Each
order looks its customer up when it is processed; the lookups of one Arrow batch are
deduplicated and fetched in one query per chunk of keys, through a PARTIAL cache.

1. Streaming, left join, with a dimension filter (pushed into the SQL), SHUFFLE_HASH (each
   customer is looked up and cached by one task) and the cache metrics.
2. Batch, inner join, with a LOOKUP hint that retries a missing customer.

Run ``python examples/lookup_join.py`` (embedded server) or pass ``sc://host:port``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from tableapi import Schema, TableDescriptor, TableEnvironment, col

CUSTOMERS = [(1, "Alice", 34, "NL"), (2, "Bob", 17, "DE"), (3, "Carol", 52, "NL"),
             (4, "Dan", 41, "FR")]  # fmt: skip
ORDERS = [(100, 1, 25), (101, 2, 10), (102, 3, 99), (103, 9, 5), (104, 1, 70), (105, None, 3)]


def setup(env: TableEnvironment, root: Path) -> None:
    db = root / "shop.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE customers (id INTEGER, name TEXT, age INTEGER, country TEXT)")
        c.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", CUSTOMERS)
    orders = root / "orders"
    orders.mkdir()
    with open(orders / "part-0.json", "w") as f:
        for o, c_id, amount in ORDERS:
            f.write(json.dumps({"order_id": o, "customer_id": c_id, "amount": amount}) + "\n")
    env.create_temporary_table(
        "Orders",
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("order_id", "BIGINT")
            .column("customer_id", "BIGINT")
            .column("amount", "INT")
            .column_by_expression("o_proctime", "PROCTIME()")  # the lookup's time
            .build()
        )
        .option("path", str(orders))
        .option("format", "json")
        .build(),
    )
    env.create_temporary_table(
        "Customers",
        TableDescriptor.for_connector("jdbc")
        .schema(
            Schema.new_builder()
            .column("id", "BIGINT")
            .column("name", "STRING")
            .column("age", "INT")
            .column("country", "STRING")
            .column_by_expression("adult", "age >= 18")  # computed after the fetch
            .primary_key("id")
            .build()
        )
        .option("url", f"jdbc:sqlite:{db}")
        .option("table-name", "customers")
        .option("lookup.cache", "PARTIAL")
        .option("lookup.partial-cache.max-rows", "10000")
        .option("lookup.partial-cache.expire-after-write", "10 min")
        .build(),
    )


def main(remote: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("\n1. Streaming: orders LEFT JOIN Customers FOR SYSTEM_TIME AS OF o_proctime")
        env = TableEnvironment.create(mode="streaming", remote=remote)
        setup(env, root)
        enriched = (
            env.from_path("Orders")
            .temporal_join(
                env.from_path("Customers"),
                (col("customer_id") == col("id")) & (col("country") != "FR"),
                as_of=col("o_proctime"),
                how="left",
            )
            .select(col("order_id"), col("amount"), col("name"), col("adult"))
            .with_hint("SHUFFLE_HASH", "Customers")
        )
        print(enriched.explain().split("== Optimized Physical Plan ==")[1].strip())
        result = enriched.execute()  # bounded input: runs to its end
        result.print()
        print("cache metrics:", result.lookup_metrics()["Customers"])

        print("\n2. Batch: inner join, retrying a customer that is not there yet")
        batch = TableEnvironment.create(mode="batch", remote=remote)
        (root / "batch").mkdir()
        setup(batch, root / "batch")
        retried = (
            batch.from_path("Orders")
            .temporal_join(
                batch.from_path("Customers"),
                col("customer_id") == col("id"),
                as_of=col("o_proctime"),
            )
            .select(col("order_id"), col("name"))
            .with_hint(
                "LOOKUP",
                **{
                    "table": "Customers",
                    "retry-predicate": "lookup_miss",
                    "retry-strategy": "fixed_delay",
                    "fixed-delay": "10 ms",
                    "max-attempts": "2",
                },
            )
        )
        batch_result = retried.execute()
        batch_result.print()  # order 103 (customer 9) stays missing after 2 retries
        print("cache metrics:", batch_result.lookup_metrics()["Customers"])
        env.close()
        batch.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
