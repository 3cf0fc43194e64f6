"""The demo behind ``python -m tableapi``: three joins and computed columns, on one
embedded Spark Connect server.

1. Regular join: Orders x Product from JSON files (inner, left outer, BROADCAST hint).
2. Interval join: Orders x Shipments, shipped within 4 hours of the order.
3. Computed columns (FLIP-70): read them, and insert into a table that has them.

The same programs, one per file and with more comments, are in ``examples/``.

Example::

    python -m tableapi                      # starts an embedded server (about 10 s)
    python -m tableapi sc://localhost:15002
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tableapi.descriptor import TableDescriptor
from tableapi.environment import TableEnvironment
from tableapi.expressions import col, lit
from tableapi.schema import Schema


def _header(title: str) -> None:
    print(f"\n{'=' * 78}\n{title}\n{'=' * 78}")


def _json_table(
    env: TableEnvironment,
    name: str,
    directory: Path,
    schema: Schema,
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
) -> None:
    """Write rows as JSON lines under ``directory`` and register them as table ``name``."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "part-0.json", "w") as f:
        for r in rows:
            f.write(json.dumps(dict(zip(names, r, strict=True))) + "\n")
    env.create_temporary_table(
        name,
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", str(directory))
        .option("format", "json")
        .build(),
    )


def regular_join(env: TableEnvironment, root: Path) -> None:
    _header("1. Regular join: Orders x Product (JSON files)")
    _json_table(
        env,
        "Orders",
        root / "orders",
        Schema.new_builder()
        .column("order_id", "BIGINT")
        .column("product_id", "BIGINT")
        .column("amount", "INT")
        .build(),
        ["order_id", "product_id", "amount"],
        [(1, 10, 3), (2, 11, 1), (3, 10, 2), (4, 12, 5), (5, 99, 1)],
    )
    _json_table(
        env,
        "Product",
        root / "product",
        Schema.new_builder()
        .column("id", "BIGINT")
        .column("name", "STRING")
        .column("price", "DECIMAL(10, 2)")
        .primary_key("id")
        .build(),
        ["id", "name", "price"],
        [(10, "Apple", "0.50"), (11, "Pear", "0.75"), (12, "Fig", "1.20"), (13, "Kiwi", "0.30")],
    )
    orders, product = env.from_path("Orders"), env.from_path("Product")
    on_product = col("product_id") == col("id")

    print("-- INNER JOIN: order 5 (product 99) has no product and is dropped")
    orders.join(product, on_product).select(
        col("order_id"), col("name"), (col("amount") * col("price")).alias("total")
    ).order_by(col("order_id")).execute().print()

    print("\n-- LEFT OUTER JOIN: order 5 is kept, its product columns are NULL")
    orders.left_outer_join(product, on_product).select(
        col("order_id"), col("product_id"), col("name"), col("price")
    ).order_by(col("order_id")).execute().print()

    print("\n-- with_hint('BROADCAST', 'Product')")
    hinted = (
        orders.join(product, on_product)
        .select(col("order_id"), col("name"))
        .with_hint("BROADCAST", "Product")
    )
    print(hinted.explain(physical=True).rstrip())


def interval_join(env: TableEnvironment) -> None:
    _header("2. Interval join: Orders x Shipments within 4 hours")
    t = dt.datetime
    orders = env.from_elements(
        [
            (1, t(2024, 1, 1, 10)),
            (2, t(2024, 1, 1, 10, 30)),
            (3, t(2024, 1, 1, 11)),
            (4, t(2024, 1, 1, 12)),
        ],
        "order_id BIGINT, o_rowtime TIMESTAMP(3)",
    )
    shipments = env.from_elements(
        [
            (1, t(2024, 1, 1, 11)),  # 1 h after the order: joined
            (2, t(2024, 1, 1, 15)),  # 4 h 30 after: too late
            (3, t(2024, 1, 1, 15)),  # exactly 4 h after: joined (bounds are inclusive)
            (4, t(2024, 1, 1, 11, 30)),
        ],  # before the order: not joined
        "s_order_id BIGINT, s_rowtime TIMESTAMP(3)",
    )
    joined = orders.join(shipments).where(
        (col("order_id") == col("s_order_id"))
        & col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime"))
    )
    print("-- Expect orders 1 and 3")
    joined.order_by(col("order_id")).execute().print()
    print()
    print(joined.explain())


def computed_columns(env: TableEnvironment, root: Path) -> None:
    _header("3. Computed columns: b AS a + 1, e_upper AS UPPER(e), pt AS PROCTIME()")
    schema = (
        Schema.new_builder()
        .column("a", "INT")
        .column_by_expression("b", "a + 1")
        .column("e", "STRING")
        .column_by_expression("e_upper", col("e").upper_case)
        .column_by_expression("pt", "PROCTIME()")
        .build()
    )
    _json_table(env, "T2", root / "t2", schema, ["a", "e"], [(1, "apple"), (2, "pear")])
    sink = root / "t2_sink"
    env.create_temporary_table(
        "T2_sink",
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", str(sink))
        .option("format", "json")
        .build(),
    )
    t2 = env.from_path("T2")
    t2.print_schema()
    print(t2.explain())
    print()
    t2.order_by(col("a")).execute().print()

    print("\n-- execute_insert('T2_sink') writes the physical columns a, e only")
    t2.select((col("a") * 10).alias("a"), col("e_upper").alias("e")).execute_insert(
        "T2_sink"
    ).wait()
    keys = sorted(
        {
            k
            for p in sink.glob("part-*.json")
            for line in p.read_text().splitlines()
            for k in json.loads(line)
        }
    )
    print(f"JSON keys in the written files: {keys}")
    env.from_path("T2_sink").select(col("a"), col("b"), col("e"), col("e_upper")).order_by(
        col("a")
    ).execute().print()


def main(env: TableEnvironment | None = None) -> None:
    """Run the three demos; without ``env``, on an embedded server started once."""
    own_env = env is None
    env = env or TableEnvironment.create()
    try:
        with tempfile.TemporaryDirectory(prefix="tableapi_demo_") as tmp:
            tables = ["Orders", "Product", "T2", "T2_sink"]
            try:
                regular_join(env, Path(tmp))
                interval_join(env)
                computed_columns(env, Path(tmp))
            finally:
                for name in tables:
                    env.drop_temporary_table(name)
    finally:
        if own_env:
            env.close()


def cli(argv: Sequence[str] | None = None) -> None:
    """``python -m tableapi [sc://host:port]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(__doc__)
        return
    main(TableEnvironment.create(remote=args[0]) if args else None)


__all__ = ["cli", "computed_columns", "interval_join", "main", "regular_join"]
