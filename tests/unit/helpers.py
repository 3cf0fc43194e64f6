"""Schemas and descriptors shared by the unit tests."""

from __future__ import annotations

from tableapi import Schema, TableDescriptor


def file_table(schema: Schema, name: str) -> TableDescriptor:
    """A filesystem descriptor whose files are never read by unit tests."""
    return (
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", f"/nonexistent/{name}")
        .format("json")
        .build()
    )


ORDERS = (
    Schema.new_builder()
    .column("order_id", "BIGINT")
    .column("product_id", "BIGINT")
    .column("amount", "INT")
    .column("currency", "STRING")
    .column("o_rowtime", "TIMESTAMP(3)")
    .column_by_expression("o_proctime", "PROCTIME()")
    .column_by_expression("amount_x2", "amount * 2")
    .watermark("o_rowtime", "o_rowtime - INTERVAL '5' SECOND")
    .primary_key("order_id")
    .build()
)
PRODUCT = (
    Schema.new_builder().column("id", "BIGINT").column("name", "STRING").primary_key("id").build()
)
SHIPMENTS = (
    Schema.new_builder().column("s_order_id", "BIGINT").column("s_rowtime", "TIMESTAMP(3)").build()
)
