"""The catalog the docstring examples run in (see the root ``conftest.py``)."""

from __future__ import annotations

from typing import Any

import tableapi
from tableapi import Schema, TableDescriptor, TableEnvironment


def doc_catalog(mode: str, root: str = "/data", remote: str | None = None) -> TableEnvironment:
    """The environment the docstring examples run in: the tables Orders, Products,
    Shipments and Rates as JSON files under ``root`` (written by the integration test)."""
    env = TableEnvironment.create(mode=mode, remote=remote)

    def table(name: str, schema: Schema) -> None:
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema)
            .option("path", f"{root}/{name.lower()}")
            .option("format", "json")
            .build(),
        )

    table(
        "Orders",
        Schema.new_builder()
        .column("order_id", "BIGINT")
        .column("product_id", "BIGINT")
        .column("amount", "INT")
        .column("currency", "STRING")
        .column("o_rowtime", "TIMESTAMP(3)")
        .column_by_expression("o_proctime", "PROCTIME()")
        .watermark("o_rowtime", "o_rowtime - INTERVAL '5' SECOND")
        .primary_key("order_id")
        .build(),
    )
    table(
        "Products",
        Schema.new_builder()
        .column("id", "BIGINT")
        .column("name", "STRING")
        .column("price", "DOUBLE")
        .primary_key("id")
        .build(),
    )
    table(
        "Shipments",
        Schema.new_builder()
        .column("s_order_id", "BIGINT")
        .column("s_rowtime", "TIMESTAMP(3)")
        .watermark("s_rowtime", "s_rowtime - INTERVAL '5' SECOND")
        .build(),
    )
    table(
        "Rates",
        Schema.new_builder()
        .column("r_currency", "STRING")
        .column("rate", "DOUBLE")
        .column("r_rowtime", "TIMESTAMP(3)")
        .watermark("r_rowtime", "r_rowtime - INTERVAL '5' SECOND")
        .primary_key("r_currency")
        .build(),
    )
    env.create_temporary_table(  # a lookup table (its SQLite file is not needed to plan)
        "Customers",
        TableDescriptor.for_connector("jdbc")
        .schema(
            Schema.new_builder()
            .column("c_id", "BIGINT")
            .column("c_name", "STRING")
            .column("c_age", "INT")
            .primary_key("c_id")
            .build()
        )
        .option("url", f"jdbc:sqlite:{root}/shop.db")
        .option("table-name", "customers")
        .option("lookup.cache", "PARTIAL")
        .option("lookup.partial-cache.max-rows", "10000")
        .build(),
    )
    table("Expensive", Schema.new_builder().column("id", "BIGINT").column("name", "STRING")
          .column("price", "DOUBLE").build())  # fmt: skip
    for name, connector, options in (
        ("Printed", "print", {"print-identifier": "items"}),
        ("Discarded", "blackhole", {}),
    ):  # sink-only tables: the client prints, or nothing is kept
        sink = TableDescriptor.for_connector(connector).schema(
            Schema.new_builder().column("id", "BIGINT").column("name", "STRING")
            .column("price", "DOUBLE").build()
        )  # fmt: skip
        for key, value in options.items():
            sink.option(key, value)
        env.create_temporary_table(name, sink.build())
    return env


def doc_namespace(env: TableEnvironment, senv: TableEnvironment) -> dict[str, Any]:
    """The names the docstring examples use."""
    return {
        "env": env,
        "senv": senv,
        "orders": env.from_path("Orders"),
        "products": env.from_path("Products"),
        "shipments": env.from_path("Shipments"),
        "rates": env.from_path("Rates"),
        "customers": env.from_path("Customers"),
        "col": tableapi.col,
        "lit": tableapi.lit,
        "call": tableapi.call,
        "Schema": Schema,
        "TableDescriptor": TableDescriptor,
        "TableEnvironment": TableEnvironment,
    }
