"""Regular join: Orders x Product, from Flink's "Joins in Continuous Queries".

    SELECT * FROM Orders INNER JOIN Product ON Orders.product_id = Product.id

Both tables are JSON files in a temporary directory, registered with the filesystem
connector. Shows an inner join, a left outer join (orders without a product are kept and
padded with NULLs) and a BROADCAST hint.

Run it with ``python examples/regular_join.py`` (starts an embedded Spark Connect server) or
``python examples/regular_join.py sc://host:port``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tableapi import Schema, TableDescriptor, TableEnvironment, col

ORDERS = [  # order_id, product_id, amount
    (1, 10, 3),
    (2, 11, 1),
    (3, 10, 2),
    (4, 12, 5),
    (5, 99, 1),  # no product 99: dropped by the inner join, NULL-padded by the left join
]
PRODUCTS = [  # id, name, price
    (10, "Apple", "0.50"),
    (11, "Pear", "0.75"),
    (12, "Fig", "1.20"),
    (13, "Kiwi", "0.30"),  # never ordered: in neither result
]


def write_json(directory: Path, names: list[str], rows: list[tuple]) -> str:
    """Write rows as JSON lines (one object per row), the layout Spark's JSON reader reads."""
    directory.mkdir(parents=True)
    with open(directory / "part-0.json", "w") as f:
        for row in rows:
            f.write(json.dumps(dict(zip(names, row, strict=True))) + "\n")
    return str(directory)


def register_tables(env: TableEnvironment, root: Path) -> None:
    """Write Orders and Product as JSON files and register them as catalog tables."""
    orders_path = write_json(root / "orders", ["order_id", "product_id", "amount"], ORDERS)
    product_path = write_json(root / "product", ["id", "name", "price"], PRODUCTS)

    env.create_temporary_table(
        "Orders",
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("order_id", "BIGINT")
            .column("product_id", "BIGINT")
            .column("amount", "INT")
            .build()
        )
        .option("path", orders_path)
        .option("format", "json")
        .build(),
    )
    env.create_temporary_table(
        "Product",
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("id", "BIGINT")
            .column("name", "STRING")
            .column("price", "DECIMAL(10, 2)")
            .primary_key("id")  # lets the plan say: the join key contains a unique key
            .build()
        )
        .option("path", product_path)
        .option("format", "json")
        .build(),
    )


def main(env: TableEnvironment | None = None) -> None:
    own_env = env is None
    env = env or TableEnvironment.create()
    with tempfile.TemporaryDirectory(prefix="regular_join_") as tmp:
        register_tables(env, Path(tmp))
        try:
            run_queries(env)
        finally:  # the files go away with the directory: so do the tables
            env.drop_temporary_table("Orders")
            env.drop_temporary_table("Product")
    if own_env:
        env.close()


def run_queries(env: TableEnvironment) -> None:
    orders = env.from_path("Orders")
    product = env.from_path("Product")

    # Inner join: orders 1-4 find their product; order 5 (product 99) has none.
    inner = (
        orders.join(product, col("product_id") == col("id"))
        .select(
            col("order_id"),
            col("name"),
            col("amount"),
            (col("amount") * col("price")).alias("total"),
        )
        .order_by(col("order_id"))
    )
    print("-- Orders INNER JOIN Product")
    inner.execute().print()
    print(inner.explain())

    # Left outer join: every order once; order 5 gets NULL product columns.
    left = (
        orders.left_outer_join(product, col("product_id") == col("id"))
        .select(col("order_id"), col("product_id"), col("name"), col("price"))
        .order_by(col("order_id"))
    )
    print("\n-- Orders LEFT OUTER JOIN Product")
    left.execute().print()

    # A join hint names the table to broadcast. Product is tiny, so Spark would broadcast
    # it anyway (spark.sql.autoBroadcastJoinThreshold, 10 MB by default): switch that off
    # for a moment so the plans show what the hint does.
    plain = orders.join(product, col("product_id") == col("id")).select(
        col("order_id"), col("name")
    )
    hinted = plain.with_hint("BROADCAST", "Product")
    conf = env.spark.conf
    threshold = conf.get("spark.sql.autoBroadcastJoinThreshold")
    conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        print("\n-- No hint, auto-broadcast off: Spark picks a sort-merge join")
        print(_join_line(plain.spark_physical_plan()))
        print("\n-- with_hint('BROADCAST', 'Product'): a broadcast hash join")
        print(hinted.explain(physical=True).rstrip() + "\n")
        hinted.order_by(col("order_id")).execute().print()
    finally:
        conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)


def _join_line(physical_plan: str) -> str:
    """The line of a Spark physical plan that names the join strategy."""
    return next(
        (line.strip() for line in physical_plan.splitlines() if "Join" in line), physical_plan
    )


if __name__ == "__main__":  # an optional sc://host:port: else an embedded server
    main(TableEnvironment.create(remote=sys.argv[1]) if len(sys.argv) > 1 else None)
