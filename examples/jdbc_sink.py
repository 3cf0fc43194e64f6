"""Revenue per country, kept current in a database table: changelog files joined with a
lookup table, aggregated, and upserted through the ``jdbc`` sink (Flink's JDBC connector).

Order changes arrive as JSON files whose ``op`` column holds each row's kind (``+I``,
``-U``, ``+U``, ``-D``). Each order looks its customer's country up in the ``customers``
table (a lookup join, ``FOR SYSTEM_TIME AS OF o_proctime``); the revenue per country is a
streaming aggregation, and ``execute_insert("Revenue")`` upserts it into the ``revenue``
table by its primary key: an order's update moves the country's total, a delete takes it
back, a country without orders is deleted. With a checkpoint, each micro-batch is written
in one transaction with its id, so a crash neither loses nor repeats a change.

Run it on an embedded server with a SQLite file it creates::

    python examples/jdbc_sink.py

or against a server and PostgreSQL (the compose file's ``example`` service runs this)::

    python examples/jdbc_sink.py sc://localhost:15002/;token=... --postgres localhost:5432 \\
        --data /shared/dir    # a directory the server reads at the same path

PostgreSQL: user and database ``tableapi``, password ``$POSTGRES_PASSWORD`` (default
``tableapi``), as in docker/compose.yaml; ``--server-postgres postgres:5432`` when the server
reaches it under another address than this program does (a compose network).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tableapi import Schema, TableDescriptor, TableEnvironment, col, lit

CUSTOMERS = [(1, "Alice", "NL"), (2, "Bob", "DE"), (3, "Carol", "NL"), (4, "Dan", "FR")]
STEPS = [
    ("three orders", [("+I", 100, 1, 25), ("+I", 101, 2, 10), ("+I", 102, 3, 99)]),
    (
        "order 100 changes, order 101 is cancelled, a French order",
        [("-U", 100, 1, 25), ("+U", 100, 1, 30), ("-D", 101, 2, 10), ("+I", 103, 4, 5)],
    ),
    ("Carol's order grows", [("-U", 102, 3, 99), ("+U", 102, 3, 120)]),
]


class Database:
    """Where the customers and the revenue live: PostgreSQL, or a SQLite file."""

    def __init__(self, args: argparse.Namespace, data: Path) -> None:
        self.postgres = args.postgres
        self.server_postgres = args.server_postgres or args.postgres
        self.password = os.environ.get("POSTGRES_PASSWORD", "tableapi")
        self.file = data / "shop.db"

    @contextlib.contextmanager
    def connect(self) -> Iterator[Any]:
        if self.postgres:
            import psycopg

            host, _, port = self.postgres.partition(":")
            with psycopg.connect(host=host, port=int(port or 5432), user="tableapi",
                                 dbname="tableapi", password=self.password) as conn:  # fmt: skip
                yield conn
        else:
            with contextlib.closing(sqlite3.connect(self.file)) as conn, conn:
                yield conn

    def setup(self) -> None:
        with self.connect() as conn:
            for table in ("customers", "revenue"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute("CREATE TABLE customers (id BIGINT PRIMARY KEY, name TEXT, country TEXT)")
            conn.execute(
                "CREATE TABLE revenue (country TEXT PRIMARY KEY, revenue BIGINT, orders BIGINT)"
            )
            mark = "%s" if self.postgres else "?"
            for row in CUSTOMERS:
                conn.execute(f"INSERT INTO customers VALUES ({mark}, {mark}, {mark})", row)
        if not self.postgres:
            self.file.chmod(0o666)

    def options(self, table: str) -> dict[str, str]:
        """A jdbc table's options, as the server reaches the database."""
        if not self.postgres:
            return {"url": f"jdbc:sqlite:{self.file}", "table-name": table}
        return {
            "url": f"jdbc:postgresql://{self.server_postgres}/tableapi",
            "table-name": table,
            "username": "tableapi",
            "password": self.password,
        }

    def revenue(self) -> list[tuple]:
        with self.connect() as conn:
            return sorted(conn.execute("SELECT * FROM revenue").fetchall())


def jdbc_table(env: TableEnvironment, name: str, schema: Schema, options: dict[str, str]) -> None:
    descriptor = TableDescriptor.for_connector("jdbc").schema(schema)
    for key, value in options.items():
        descriptor.option(key, value)
    env.create_temporary_table(name, descriptor.build())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("remote", nargs="?", help="sc://host:port (default: an embedded server)")
    p.add_argument("--postgres", help="host:port of PostgreSQL (default: a SQLite file)")
    p.add_argument("--server-postgres", help="host:port as the server reaches PostgreSQL")
    p.add_argument("--data", help="a directory the server reads at the same path")
    args = p.parse_args()
    data = Path(args.data or tempfile.mkdtemp(prefix="jdbc_sink_example_"))
    data.mkdir(parents=True, exist_ok=True)
    db = Database(args, data)
    db.setup()
    orders = data / "orders"
    orders.mkdir(exist_ok=True)
    for old in orders.glob("*.json"):
        old.unlink()
    orders.chmod(0o777)

    env = TableEnvironment.create(mode="streaming", remote=args.remote)
    env.config.set("execution.checkpointing.dir", str(data / "checkpoints"))
    env.config.set("pipeline.name", f"revenue-per-country-{os.getpid()}")
    env.create_temporary_table(
        "Orders",
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("order_id", "BIGINT")
            .column("customer_id", "BIGINT")
            .column("amount", "BIGINT")
            .column_by_expression("o_proctime", "PROCTIME()")  # the lookup's time
            .primary_key("order_id")
            .build()
        )
        .option("path", str(orders))
        .option("format", "json")
        .option("changelog.op-column", "op")
        .option("source.monitor-interval", "200 ms")  # unbounded: new files are read
        .build(),
    )
    customers = Schema.new_builder().column("id", "BIGINT").column("name", "STRING")
    jdbc_table(env, "Customers", customers.column("country", "STRING").primary_key("id").build(),
               db.options("customers") | {"lookup.cache": "PARTIAL",
                                          "lookup.partial-cache.max-rows": "1000"})  # fmt: skip
    revenue = (
        Schema.new_builder()
        .column("country", "STRING")
        .column("revenue", "BIGINT")
        .column("orders", "BIGINT")
        .primary_key("country")  # upsert mode
        .build()
    )
    jdbc_table(env, "Revenue", revenue, db.options("revenue"))

    per_country = (
        env.from_path("Orders")
        .temporal_join(
            env.from_path("Customers"), col("customer_id") == col("id"), as_of=col("o_proctime")
        )
        .group_by(col("country"))
        .select(col("country"), col("amount").sum.alias("revenue"), lit(1).count.alias("orders"))
    )
    print(per_country.explain().split("== Optimized Physical Plan ==")[1].strip())
    insert = per_country.execute_insert("Revenue")
    try:
        for i, (title, changes) in enumerate(STEPS):
            rows = [{"op": op, "order_id": o, "customer_id": c, "amount": a}
                    for op, o, c, a in changes]  # fmt: skip
            tmp = orders / f".part-{i}.tmp"  # written whole, then renamed: never read half
            tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
            os.replace(tmp, orders / f"part-{i}.json")
            insert.process_all_available()
            print(f"-- {title}: {' '.join(f'{op}{o}' for op, o, *_ in changes)}")
            print(f"   revenue table: {db.revenue()}")
    finally:
        insert.cancel()
        env.close()


if __name__ == "__main__":
    main()
