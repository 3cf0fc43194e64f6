"""The demo behind ``python -m tableapi``: batch joins, computed columns and streaming
joins, on one embedded Spark Connect server (nothing to install; about a minute).

Batch mode:

1. Regular join: Orders x Product from JSON files (inner, left outer, BROADCAST hint).
2. Interval join: Orders x Shipments, shipped within 4 hours of the order.
3. Computed columns (FLIP-70): read them, and insert into a table that has them.

Streaming mode (each result printed as Flink prints a changelog: ``+I[...]``, ``-D[...]``):

4. Changelog join with retractions: Orders LEFT JOIN Product over files whose ``op`` column
   holds each row's kind, fed one file at a time.
5. Event-time temporal join: each order converted with the rate valid at its time.
6. Lookup join, in Flink SQL (``CREATE TABLE``, ``FOR SYSTEM_TIME AS OF``, a hint): orders
   enriched from a SQLite table the demo creates, through a PARTIAL cache; prints the cache
   metrics.
7. Results into a database: order changes joined with that SQLite table, aggregated per
   country and upserted into a SQLite table by the ``jdbc`` sink, one transaction per
   micro-batch; prints the table after each file.
8. Windows: clicks counted per user and 10-minute TUMBLE window (Flink SQL, and the Table
   API's ``Tumble``), and a window join of clicks with purchases in the same window.

The same programs, one per file and with more comments, are in ``examples/``.

Example::

    python -m tableapi                      # starts an embedded server (about 10 s)
    python -m tableapi sc://localhost:15002
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tableapi.descriptor import TableDescriptor
from tableapi.environment import TableEnvironment
from tableapi.expressions import col, lit
from tableapi.result import StreamingTableResult
from tableapi.schema import Schema
from tableapi.window import Tumble


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


# --- streaming part -------------------------------------------------------------------------

#: Part 4's changes, one file per step: (title, table, rows with their ``op``).
CHANGELOG_STEPS: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("two orders, no products yet: padded with NULLs", "Orders",
     [{"op": "+I", "order_id": 1, "product_id": 10, "amount": 3},
      {"op": "+I", "order_id": 2, "product_id": 11, "amount": 5}]),
    ("product 10 arrives: order 1's padded row is retracted, the joined row inserted",
     "Product", [{"op": "+I", "id": 10, "name": "Apple", "price": 2}]),
    ("product 10 changes its price", "Product",
     [{"op": "-U", "id": 10, "name": "Apple", "price": 2},
      {"op": "+U", "id": 10, "name": "Apple", "price": 3}]),
    ("product 10 is deleted: the padded row comes back", "Product",
     [{"op": "-D", "id": 10, "name": "Apple", "price": 3}]),
]  # fmt: skip

#: Part 5: Flink's currency example (amount, currency, order time; currency, rate, from).
TEMPORAL_ORDERS = [(2, "Euro", "10:15"), (1, "US Dollar", "10:30"), (50, "Yen", "10:32"),
                   (3, "Euro", "10:52"), (5, "US Dollar", "11:04")]  # fmt: skip
TEMPORAL_RATES = [("US Dollar", 102, "09:00"), ("Euro", 114, "09:00"), ("Yen", 1, "09:00"),
                  ("Euro", 116, "10:45"), ("Euro", 119, "11:15")]  # fmt: skip

#: Part 6: the SQLite table (id, name, country) and the orders (order_id, customer_id).
LOOKUP_CUSTOMERS = [(1, "Alice", "NL"), (2, "Bob", "DE"), (3, "Carol", "FR")]
LOOKUP_ORDERS = [(100, 1), (101, 2), (102, 1), (103, 9), (104, 3), (105, 1), (106, 9)]

#: Part 7: order changes (op, order_id, customer_id, amount), one file per step; customer 9
#: is not in the table (an inner lookup join drops its order).
SINK_STEPS: list[tuple[str, list[tuple[str, int, int, int]]]] = [
    ("three orders", [("+I", 200, 1, 25), ("+I", 201, 2, 10), ("+I", 202, 3, 99)]),
    ("order 200 grows, 201 is cancelled, another Dutch order",
     [("-U", 200, 1, 25), ("+U", 200, 1, 30), ("-D", 201, 2, 10), ("+I", 203, 1, 5),
      ("+I", 204, 9, 7)]),
]  # fmt: skip


#: Part 8: clicks (user, url, time) and purchases (user, amount, time), one day's morning.
WINDOW_CLICKS = [("alice", "/home", "10:01"), ("bob", "/shoes", "10:03"),
                 ("alice", "/shoes", "10:07"), ("alice", "/cart", "10:12"),
                 ("bob", "/home", "10:14"), ("carol", "/home", "10:26")]  # fmt: skip
WINDOW_PURCHASES = [("alice", 30, "10:09"), ("bob", 15, "10:18"), ("carol", 8, "10:21")]


def _changelog_file(directory: Path, rows: Sequence[dict[str, Any]]) -> None:
    """One new file, renamed into place so that the stream never reads half of it."""
    n = len(list(directory.glob("part-*.json")))
    tmp = directory / f".part-{n:04d}.tmp"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(tmp, directory / f"part-{n:04d}.json")


def changelog_join(env: TableEnvironment, root: Path) -> None:
    """Part 4: a streaming left join of two changelog tables, one file per step."""
    _header("4. Streaming: Orders LEFT JOIN Product over changelogs (+I, -U, +U, -D)")
    schemas = {
        "Orders": Schema.new_builder()
        .column("order_id", "BIGINT")
        .column("product_id", "BIGINT")
        .column("amount", "INT")
        .primary_key("order_id")
        .build(),
        "Product": Schema.new_builder()
        .column("id", "BIGINT")
        .column("name", "STRING")
        .column("price", "INT")
        .primary_key("id")
        .build(),
    }
    for name, schema in schemas.items():
        (root / name).mkdir(parents=True)
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema)
            .option("path", str(root / name))
            .option("format", "json")
            .option("changelog.op-column", "op")  # each row's kind
            .option("source.monitor-interval", "200 ms")  # unbounded: watch for new files
            .build(),
        )
    joined = env.from_path("Orders").left_outer_join(
        env.from_path("Product"), col("product_id") == col("id")
    )
    result = joined.execute()
    assert isinstance(result, StreamingTableResult)  # a streaming environment's result
    # The join's changelog aggregated: a group per product name (NULL: orders without one).
    per_name = joined.group_by(col("name")).select(
        col("name"), lit(1).count.alias("orders"), col("amount").sum.alias("amount")
    )
    aggregated = per_name.execute()
    assert isinstance(aggregated, StreamingTableResult)
    try:
        seen = 0
        for i, (title, table, rows) in enumerate(CHANGELOG_STEPS, 1):
            _changelog_file(root / table, rows)
            result.process_all_available()
            changes = result.collect()
            ops = " ".join(
                f"{r['op']}[{', '.join(str(v) for k, v in r.items() if k != 'op')}]" for r in rows
            )
            print(f"-- step {i}, {title}\n   {table} gets {ops}; the join emits:")
            for change in changes[seen:]:
                print(f"   {change!r}")
            seen = len(changes)
        print("-- the result now (the changelog applied):")
        print(result.materialize().to_string(index=False))
        aggregated.process_all_available()
        print("-- the join aggregated per product name (COUNT(*), SUM(amount)); its changelog:")
        for change in aggregated.collect():
            print(f"   {change!r}")
        print("-- the aggregate now:")
        print(aggregated.materialize().to_string(index=False))
    finally:
        result.cancel()
        aggregated.cancel()


def event_time_temporal_join(env: TableEnvironment, root: Path) -> None:
    """Part 5: Orders x RatesHistory FOR SYSTEM_TIME AS OF o_rowtime, in streaming mode."""
    _header("5. Streaming: event-time temporal join, the rate valid at each order's time")
    day = "2026-11-23"
    tables: dict[str, tuple[Schema, list[str], list[tuple[Any, ...]]]] = {
        "TOrders": (
            Schema.new_builder()
            .column("amount", "BIGINT")
            .column("currency", "STRING")
            .column("o_rowtime", "TIMESTAMP(3)")
            .watermark("o_rowtime", "o_rowtime - INTERVAL '5' SECOND")
            .build(),
            ["amount", "currency", "o_rowtime"],
            [(a, c, f"{day} {t}:00") for a, c, t in TEMPORAL_ORDERS],
        ),
        "RatesHistory": (
            Schema.new_builder()
            .column("r_currency", "STRING")
            .column("rate", "BIGINT")
            .column("r_rowtime", "TIMESTAMP(3)")
            .watermark("r_rowtime", "r_rowtime")
            .primary_key("r_currency")  # a versioned table: one version per key and time
            .build(),
            ["r_currency", "rate", "r_rowtime"],
            [(c, r, f"{day} {t}:00") for c, r, t in TEMPORAL_RATES],
        ),
    }
    for name, (schema, names, rows) in tables.items():
        _json_table(env, name, root / name, schema, names, rows)
    print("-- Euro: 114 from 09:00, 116 from 10:45, 119 from 11:15; the files are bounded,")
    print("   so the query runs to their end (event time then moves to +infinity)")
    result = (
        env.from_path("TOrders")
        .temporal_join(
            env.from_path("RatesHistory"),
            col("currency") == col("r_currency"),
            as_of=col("o_rowtime"),
        )
        .select(
            col("o_rowtime"),
            col("amount"),
            col("currency"),
            col("rate"),
            (col("amount") * col("rate")).alias("yen"),
        )
        .execute()
    )
    for change in sorted(result.collect(), key=lambda r: r[0]):  # by order time
        print(repr(change))


def _shop_db(root: Path, *ddl: str) -> Path:
    """``root`` made, and in it the SQLite database ``shop.db`` with the customers table (and
    the tables of ``ddl``): the lookup side of parts 6 and 7."""
    root.mkdir(parents=True)
    db = root / "shop.db"
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE customers (id INTEGER, name TEXT, country TEXT)")
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?)", LOOKUP_CUSTOMERS)
        for statement in ddl:
            conn.execute(statement)
    return db


def lookup_join(env: TableEnvironment, root: Path) -> None:
    """Part 6, in Flink SQL: orders LEFT JOIN Customers FOR SYSTEM_TIME AS OF o.o_proctime
    (a SQLite table), with the SHUFFLE_HASH hint."""
    _header("6. Streaming, in SQL: lookup join against a SQLite table, PARTIAL cache")
    db = _shop_db(root)
    orders = root / "orders"
    orders.mkdir()
    (orders / "part-0.json").write_text(
        "".join(json.dumps({"order_id": o, "customer_id": c}) + "\n" for o, c in LOOKUP_ORDERS)
    )
    ddl = [
        f"""CREATE TABLE LOrders (
          order_id BIGINT,
          customer_id BIGINT,
          o_proctime AS PROCTIME()          -- the lookup's time
        ) WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'json')""",
        f"""CREATE TABLE Customers (
          id BIGINT, name STRING, country STRING, PRIMARY KEY (id) NOT ENFORCED
        ) WITH ('connector' = 'jdbc', 'url' = 'jdbc:sqlite:{db}', 'table-name' = 'customers',
                'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '1000')""",
    ]
    for statement in ddl:
        env.execute_sql(statement)
    query = """
        SELECT /*+ SHUFFLE_HASH('Customers') */   -- each customer looked up by one task
               o.order_id, o.customer_id, c.name, c.country
        FROM LOrders AS o
        LEFT JOIN Customers FOR SYSTEM_TIME AS OF o.o_proctime AS c
          ON o.customer_id = c.id"""
    print(f"-- {len(LOOKUP_ORDERS)} orders of customers {[c for _, c in LOOKUP_ORDERS]};")
    print(f"   {db.name} has customers {[c[0] for c in LOOKUP_CUSTOMERS]} (9 is missing)")
    print(query.rstrip())
    plan = env.sql_query(query).explain().split("== Optimized Physical Plan ==")[1].strip()
    print(plan)
    result = env.execute_sql(query)  # bounded input: runs to its end
    for change in sorted(result.collect(), key=lambda r: r[0]):
        print(repr(change))
    metrics = result.lookup_metrics()["Customers"]
    print("-- cache metrics: the first order of a customer misses, the others hit")
    print("   " + ", ".join(f"{k}={v}" for k, v in metrics.items() if k != "latestLoadTime"))


def jdbc_sink(env: TableEnvironment, root: Path) -> None:
    """Part 7: order changes x Customers (lookup), per country, upserted into SQLite."""
    _header("7. Streaming: revenue per country upserted into a SQLite table (jdbc sink)")
    db = _shop_db(
        root, "CREATE TABLE revenue (country TEXT PRIMARY KEY, revenue INTEGER, n INTEGER)"
    )
    # A server in a container (another user) writes the file, and SQLite its journal beside it.
    db.chmod(0o666)
    root.chmod(0o777)
    (root / "orders").mkdir()
    env.create_temporary_table(
        "SOrders",
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("order_id", "BIGINT")
            .column("customer_id", "BIGINT")
            .column("amount", "BIGINT")
            .column_by_expression("o_proctime", "PROCTIME()")
            .primary_key("order_id")
            .build()
        )
        .option("path", str(root / "orders"))
        .option("format", "json")
        .option("changelog.op-column", "op")
        .option("source.monitor-interval", "200 ms")
        .build(),
    )
    for name, table, schema in (
        ("SCustomers", "customers", Schema.new_builder().column("id", "BIGINT")
         .column("name", "STRING").column("country", "STRING").primary_key("id").build()),
        ("Revenue", "revenue", Schema.new_builder().column("country", "STRING")
         .column("revenue", "BIGINT").column("n", "BIGINT").primary_key("country").build()),
    ):  # fmt: skip
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("jdbc")
            .schema(schema)
            .option("url", f"jdbc:sqlite:{db}")
            .option("table-name", table)
            .build(),
        )
    per_country = (
        env.from_path("SOrders")
        .temporal_join(
            env.from_path("SCustomers"), col("customer_id") == col("id"), as_of=col("o_proctime")
        )
        .group_by(col("country"))
        .select(col("country"), col("amount").sum.alias("revenue"), lit(1).count.alias("n"))
    )
    print("-- revenue(country PRIMARY KEY, revenue, n): upsert mode; each micro-batch in one")
    print("   transaction (a key's changes folded to its last; -U rows are not needed)")
    insert = per_country.execute_insert("Revenue")
    assert isinstance(insert, StreamingTableResult)  # a streaming environment's insert
    try:
        for i, (title, changes) in enumerate(SINK_STEPS, 1):
            _changelog_file(
                root / "orders",
                [{"op": op, "order_id": o, "customer_id": c, "amount": a}
                 for op, o, c, a in changes],
            )  # fmt: skip
            insert.process_all_available()
            with contextlib.closing(sqlite3.connect(db)) as conn:
                rows = conn.execute("SELECT * FROM revenue ORDER BY country").fetchall()
            print(f"-- step {i}, {title}: {' '.join(f'{op}{o}' for op, o, *_ in changes)}")
            print(f"   the revenue table: {rows}")
    finally:
        insert.cancel()


def windows(env: TableEnvironment, root: Path) -> None:
    """Part 8: a window aggregation (in SQL and with the Table API's Tumble) and a window
    join, over bounded files in streaming mode."""
    _header("8. Streaming: windows, a TUMBLE aggregation and a window join")
    day = "2026-11-23"
    for name, second, rows in (
        ("Clicks", ("url", "STRING"), WINDOW_CLICKS),
        ("Purchases", ("amount", "INT"), WINDOW_PURCHASES),
    ):
        schema = (
            Schema.new_builder()
            .column("user_name", "STRING")
            .column(*second)
            .column("ts", "TIMESTAMP(3)")
            .watermark("ts", "ts - INTERVAL '1' MINUTE")
            .build()
        )
        timed = [(u, x, f"{day} {t}:00") for u, x, t in rows]
        _json_table(env, name, root / name, schema, ["user_name", second[0], "ts"], timed)
    print("-- clicks per user and 10-minute window: one +I row per window and user, emitted")
    print("   when the watermark passes the window's end (here: the end of the bounded files)")
    per_window = env.sql_query("""
        SELECT window_start, window_end, user_name, COUNT(*) AS clicks
        FROM TABLE(TUMBLE(TABLE Clicks, DESCRIPTOR(ts), INTERVAL '10' MINUTE))
        GROUP BY window_start, window_end, user_name""")
    counted = sorted(per_window.execute().collect(), key=lambda r: (r[0], r[2]))
    for change in counted:
        print(repr(change))
    print("-- the same with the Table API's group window:")
    print("   t.window(Tumble.over(lit(10).minutes).on(col('ts')).alias('w'))")
    print("    .group_by(col('w'), col('user_name')).select(col('w').start, ...)")
    w = Tumble.over(lit(10).minutes).on(col("ts")).alias("w")
    api = (
        env.from_path("Clicks")
        .window(w)
        .group_by(col("w"), col("user_name"))
        .select(col("w").start.alias("window_start"), col("user_name"), lit(1).count.alias("n"))
    )
    api_rows = sorted(tuple(r) for r in api.execute().collect())
    same = api_rows == sorted((r[0], r[2], r[3]) for r in counted)
    print(f"   {len(api_rows)} rows, {'the same' if same else 'NOT the same'} windows and counts")
    print("-- a window join: each user's clicks and purchases in the same 10-minute window")
    joined = env.sql_query("""
        SELECT c.user_name, c.window_start, c.url, p.amount
        FROM (SELECT * FROM TABLE(TUMBLE(TABLE Clicks, DESCRIPTOR(ts), INTERVAL '10' MINUTE))) c
        JOIN (SELECT * FROM TABLE(TUMBLE(TABLE Purchases, DESCRIPTOR(ts), INTERVAL '10' MINUTE))) p
        ON c.window_start = p.window_start AND c.window_end = p.window_end
           AND c.user_name = p.user_name""")
    plan = joined.explain().split("== Optimized Physical Plan ==")[1]
    node = next(line for line in plan.splitlines() if "WindowJoin(" in line)
    print("   " + node[node.index("WindowJoin(") :][:88] + " ...")
    for change in sorted(joined.execute().collect(), key=lambda r: (r[1], r[0], r[2])):
        print(repr(change))


def streaming_joins(remote: str | None, root: Path) -> None:
    """Parts 4-8, each in its own streaming environment on the server at ``remote`` (None:
    the embedded one), with their files under ``root``."""
    for part in (changelog_join, event_time_temporal_join, lookup_join, jdbc_sink, windows):
        started = time.monotonic()
        env = TableEnvironment.create(mode="streaming", remote=remote)
        try:
            part(env, root / part.__name__)
        finally:
            env.close()
        print(f"({time.monotonic() - started:.1f} s)", flush=True)


def main(env: TableEnvironment | None = None) -> None:
    """Run the demo, batch parts 1-3 then streaming parts 4-8; without ``env``, on an
    embedded server started once."""
    own_env = env is None
    env = env or TableEnvironment.create()
    started = time.monotonic()
    if own_env:
        print("Starting an embedded Spark Connect server (about 10 s) ...", flush=True)
        env.spark  # noqa: B018  (connects, starting the server)
        print(f"Server ready ({time.monotonic() - started:.1f} s).", flush=True)
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
            streaming_joins(env.remote, Path(tmp) / "streaming")
        print(f"\nDone in {time.monotonic() - started:.0f} s. More in examples/ and README.md.")
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


__all__ = [
    "changelog_join",
    "cli",
    "computed_columns",
    "event_time_temporal_join",
    "interval_join",
    "jdbc_sink",
    "lookup_join",
    "main",
    "regular_join",
    "streaming_joins",
    "windows",
]
