"""Currency conversion, the temporal join example of Flink's documentation.

Each order is converted with the rate that was valid when the order was placed
(``FOR SYSTEM_TIME AS OF o_rowtime``): 2 Euro at 10:15 use Euro's 114 from 09:00, 3 Euro at
10:52 use 116 from 10:45 (not 119, which only starts at 11:15).

1. Event time, temporal table function: ``join_lateral(call("Rates", col("o_rowtime")), ...)``.
2. Event time, ``temporal_join(rates, ..., as_of=col("o_rowtime"))`` (the same join).
3. Processing time: ``as_of=col("o_proctime")`` joins the latest rate of each currency.
4. Streaming mode, event time, over the same files: the server_ext operator holds each order
   until the watermark passes its time. The files are bounded tables, so ``execute()`` runs
   to their end, which moves event time to +infinity: the 11:04 order, ahead of every
   watermark the data gives, is emitted too.

Batch mode (1-3): Spark's as-of join does the work. Run ``python examples/temporal_join.py``
(embedded server) or pass ``sc://host:port``.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
from pathlib import Path

from tableapi import Schema, TableDescriptor, TableEnvironment, call, col

DAY = dt.date(2026, 11, 23)
ORDERS = [(2, "Euro", "10:15"), (1, "US Dollar", "10:30"), (50, "Yen", "10:32"),
          (3, "Euro", "10:52"), (5, "US Dollar", "11:04")]  # fmt: skip
RATES = [("US Dollar", 102, "09:00"), ("Euro", 114, "09:00"), ("Yen", 1, "09:00"),
         ("Euro", 116, "10:45"), ("Euro", 119, "11:15"), ("Pounds", 108, "11:49")]  # fmt: skip


def write(path: Path, names: list[str], rows: list[tuple]) -> None:
    path.mkdir()
    with open(path / "part-0.json", "w") as f:
        for r in rows:
            record = dict(zip(names, r, strict=True))
            record = {k: f"{DAY} {v}:00" if k.endswith("rowtime") else v for k, v in record.items()}
            f.write(json.dumps(record) + "\n")


def register(env: TableEnvironment, root: Path, write_files: bool = True) -> None:
    if write_files:
        write(root / "orders", ["amount", "currency", "o_rowtime"], ORDERS)
        write(root / "rates", ["r_currency", "rate", "r_rowtime"], RATES)
    orders = (
        Schema.new_builder()
        .column("amount", "BIGINT")
        .column("currency", "STRING")
        .column("o_rowtime", "TIMESTAMP(3)")
        .column_by_expression("o_proctime", "PROCTIME()")
        .watermark("o_rowtime", "o_rowtime - INTERVAL '5' SECOND")
        .build()
    )
    rates = (
        Schema.new_builder()
        .column("r_currency", "STRING")
        .column("rate", "BIGINT")
        .column("r_rowtime", "TIMESTAMP(3)")
        .watermark("r_rowtime", "r_rowtime")
        .primary_key("r_currency")
        .build()
    )
    for name, schema, path in (("Orders", orders, "orders"), ("RatesHistory", rates, "rates")):
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema)
            .option("path", str(root / path))
            .option("format", "json")
            .build(),
        )


def main(env: TableEnvironment | None = None) -> None:
    own = env is None
    env = env or TableEnvironment.create()
    with tempfile.TemporaryDirectory(prefix="temporal_join_") as tmp:
        register(env, Path(tmp))
        orders, rates = env.from_path("Orders"), env.from_path("RatesHistory")
        env.create_temporary_function(
            "Rates", rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
        )
        converted = (
            orders.join_lateral(
                call("Rates", col("o_rowtime")), col("currency") == col("r_currency")
            )
            .select(
                col("o_rowtime"),
                col("amount"),
                col("currency"),
                col("rate"),
                (col("amount") * col("rate")).alias("yen"),
            )
            .order_by(col("o_rowtime"))
        )
        print("-- 1. join_lateral(call('Rates', o_rowtime)): the rate valid at each order's time")
        print(converted.explain())
        converted.execute().print()

        print(
            "\n-- 2. temporal_join(..., as_of=o_rowtime, how='left'): the same, keeping all orders"
        )
        orders.temporal_join(
            rates, col("currency") == col("r_currency"), as_of=col("o_rowtime"), how="left"
        ).select(col("o_rowtime"), col("amount"), col("currency"), col("rate")).order_by(
            col("o_rowtime")
        ).execute().print()

        print("\n-- 3. as_of=o_proctime: processing time, the latest rate of each currency")
        orders.temporal_join(
            rates, col("currency") == col("r_currency"), as_of=col("o_proctime")
        ).select(col("amount"), col("currency"), col("rate")).order_by(
            col("currency"), col("amount")
        ).execute().print()
        for name in ("Orders", "RatesHistory"):
            env.drop_temporary_table(name)

        print("\n-- 4. streaming mode: the same join over the bounded files, run to their end")
        streaming = TableEnvironment.create(mode="streaming", remote=env.remote)
        register(streaming, Path(tmp), write_files=False)
        result = (
            streaming.from_path("Orders")
            .temporal_join(
                streaming.from_path("RatesHistory"),
                col("currency") == col("r_currency"),
                as_of=col("o_rowtime"),
            )
            .select(col("o_rowtime"), col("amount"), col("currency"), col("rate"))
            .execute()
        )
        result.print()
        print(f"(the query has finished: {result.finished})")
        streaming.close()
    if own:
        env.close()


if __name__ == "__main__":  # an optional sc://host:port: else an embedded server
    main(TableEnvironment.create(remote=sys.argv[1]) if len(sys.argv) > 1 else None)
