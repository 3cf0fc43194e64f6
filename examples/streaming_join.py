"""A streaming left outer join over changelog inputs, with Flink's retractions.

Orders and Product are JSON files whose ``op`` field holds each row's kind (+I, -U, +U, -D:
``changelog.op-column``). Files are appended between micro-batches; after each one the
example prints the changes the join emitted and the materialized result:

- an order without a product is emitted null-padded (+I[..., <NULL>, ...]);
- when its product arrives, the padded row is retracted (-D) and the joined row inserted;
- when the product is deleted, the joined row is retracted and the padded row comes back.

Run it with ``python examples/streaming_join.py`` (starts an embedded Spark Connect server) or
``python examples/streaming_join.py sc://host:port``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from tableapi import Schema, TableDescriptor, TableEnvironment, col

# The changes, one file per step: (title, table, rows with their kind in "op").
STEPS = [
    (
        "two orders, no products yet",
        "Orders",
        [
            {"op": "+I", "order_id": 1, "product_id": 10, "amount": 3},
            {"op": "+I", "order_id": 2, "product_id": 11, "amount": 5},
        ],
    ),
    ("product 10 arrives", "Product", [{"op": "+I", "id": 10, "name": "Apple", "price": 2}]),
    (
        "product 10 changes its price",
        "Product",
        [
            {"op": "-U", "id": 10, "name": "Apple", "price": 2},
            {"op": "+U", "id": 10, "name": "Apple", "price": 3},
        ],
    ),
    ("product 10 is deleted", "Product", [{"op": "-D", "id": 10, "name": "Apple", "price": 3}]),
]


def changelog_table(env: TableEnvironment, name: str, root: Path, schema: Schema) -> Path:
    path = root / name
    path.mkdir()
    env.create_temporary_table(
        name,
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", str(path))
        .option("format", "json")
        .option("changelog.op-column", "op")
        # Watch the directory for new files: an unbounded table (without this option the
        # table is bounded, and execute() would read the files present and stop).
        .option("source.monitor-interval", "200 ms")
        .build(),
    )
    return path


def append(path: Path, records: list[dict]) -> None:
    """One new file per micro-batch, renamed into place so Spark never sees half of it."""
    n = len(list(path.glob("part-*.json")))
    tmp = path / f".part-{n:04d}.tmp"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.replace(tmp, path / f"part-{n:04d}.json")


def main(remote: str | None = None) -> None:
    env = TableEnvironment.create(mode="streaming", remote=remote)
    with tempfile.TemporaryDirectory(prefix="streaming_join_") as tmp:
        root = Path(tmp)
        orders = changelog_table(
            env,
            "Orders",
            root,
            Schema.new_builder()
            .column("order_id", "BIGINT")
            .column("product_id", "BIGINT")
            .column("amount", "INT")
            .primary_key("order_id")
            .build(),
        )
        product = changelog_table(
            env,
            "Product",
            root,
            Schema.new_builder()
            .column("id", "BIGINT")
            .column("name", "STRING")
            .column("price", "INT")
            .primary_key("id")
            .build(),
        )
        joined = env.from_path("Orders").left_outer_join(
            env.from_path("Product"), col("product_id") == col("id")
        )
        print(joined.explain())
        result = joined.execute()
        seen = 0
        try:
            for title, table, records in STEPS:
                append(orders if table == "Orders" else product, records)
                result.process_all_available()
                changes = result.collect()
                print(f"\n-- {title}: the join emitted")
                for change in changes[seen:]:
                    print(f"   {change!r}")
                seen = len(changes)
                print("   result now:")
                print("   " + result.materialize().to_string(index=False).replace("\n", "\n   "))
        finally:
            result.cancel()
            env.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
