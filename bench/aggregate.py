"""Streaming group aggregation: the product against Apache Flink 2.3 (W5, a join of two
changelogs, then the aggregate) and against Spark's own streaming aggregation (insert-only).

    uptime; flock /tmp/tableapi-bench.lock .venv/bin/python bench/aggregate.py
    flock /tmp/tableapi-bench.lock .venv/bin/python bench/aggregate.py --quick   # smoke run

Both workloads compute ``SUM(amount)`` and ``COUNT(*)`` per ``category`` (``--categories``,
100), and run as streaming queries over bounded CSV files (no header), into a blackhole sink:

- **W5** (against Flink): ``--changes`` (1,000,000) order changes over ``--orders`` (100,000)
  orders (``+I`` for each order, ``-U``/``+U`` pairs that change its amount, ``-D`` for one
  order in ten), joined with ``--products`` (10,000) products, a changelog too (``+I``, category
  changes, deletions), ``ON product_id = id``, then grouped by the product's category. Each
  table's changes are in a few files, all changes of one key in one file in their order (so
  that Flink, which reads each file whole in one reader, keeps a key's order too); primary keys
  ``order_id`` and ``id`` on both sides. The line is the op then the columns
  (``+U,17,3051,640``): the product reads it with ``'format' = 'csv', 'changelog.op-column'``
  (op first), Flink with ``'format' = 'changelog-csv'`` (``flink_changelog_csv/``: Flink's own
  CSV parser with the row kind set from op; Flink ships no changelog CSV format), so both read
  the same bytes.
- **insert-only**: ``--rows`` (1,000,000) rows ``sale_id, category, amount``: the product's
  aggregate against Spark's streaming aggregation written in PySpark
  (``groupBy().agg()``, output mode update, trigger availableNow, the noop sink), both on the
  HDFS-backed state store (Spark's default, the product's ``hashmap``).

Each system runs each workload once to warm up, then ``--runs`` (5) timed runs (insert-only:
the product's and Spark's runs alternate, so that neither runs in the other's leftovers), in
two windows:
end to end (the product: from building the Table API query to the end of its
``execute_insert`` into a blackhole table; Flink: ``execute_sql`` of the INSERT to the end of
``wait()``; Spark: from building the DataFrame and ``start()`` to ``awaitTermination()``) and
engine (Spark's ``triggerExecution`` summed over the query's batches, for the product and for
Spark; Flink's job net runtime): median and spread (fastest-slowest). Each system's result rows
(the changelog applied) are counted in one more untimed run and asserted equal (the product:
``execute().materialize()``; Flink: ``SELECT COUNT(*)`` over the query; Spark: the distinct
keys its update-mode output wrote to a memory sink).

Mini-batch and the aggregation's phases (``--mini-batch``): off by default on both the product
and Flink (Flink's defaults: one-phase ``GroupAggregate``); with ``--mini-batch`` both get
``table.exec.mini-batch.enabled=true``, ``allow-latency`` 1 s and ``size`` 10,000, so both run
Flink's two-phase plan (``LocalGroupAggregate`` before the shuffle). Spark's aggregation always
pre-aggregates before its shuffle.

Goals (issue 21): W5 engine time <= 0.5x Flink's; insert-only engine time <= 1.0x Spark's.
Beside them, W5 on Spark itself (``spark_floors``): a query that only reads both inputs and
shuffles them by the join key (what any Spark plan of W5 does before its stateful operators),
and Spark's own stream-stream join of the same rows, each in Flink's engine time.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/conformance/flink_env

from noop_run import engine_seconds, run_to_noop
from tiers import (
    Windows,
    add_flink_option,
    blackhole_for,
    comparison,
    flink_runs,
    goal,
    on_backend,
    product_rows,
    product_run,
    product_runs,
    server_url,
    spark_comparison,
)

from server_ext.conf import HDFS_PROVIDER
from tableapi import Schema, Table, TableDescriptor, TableEnvironment, col, lit
from tableapi.config import MINI_BATCH_ENABLED, MINI_BATCH_LATENCY, MINI_BATCH_SIZE
from tests.conformance.flink_env import VENV_DIR, ensure_flink_jar

QUICK = {"changes": 100_000, "orders": 10_000, "products": 1_000, "rows": 100_000, "runs": 1}
FORMAT_SOURCE = Path(__file__).resolve().parent / "flink_changelog_csv"
ORDERS = (("order_id", "BIGINT"), ("product_id", "BIGINT"), ("amount", "INT"))
PRODUCTS = (("id", "BIGINT"), ("name", "STRING"), ("category", "STRING"))
SALES = (("sale_id", "BIGINT"), ("category", "STRING"), ("amount", "INT"))
OUTPUT = [["category", "STRING"], ["total", "INT"], ["orders", "BIGINT"]]
W5_SQL = (
    "SELECT category, SUM(amount) AS total, COUNT(*) AS orders "
    "FROM Orders JOIN Products ON product_id = id GROUP BY category"
)
MINI_BATCH = {MINI_BATCH_ENABLED: "true", MINI_BATCH_LATENCY: "1 s", MINI_BATCH_SIZE: "10000"}


def interleaved(rng: random.Random, histories: list[list[str]]) -> Iterator[str]:
    """The lines of every key's history, each history in its order, the keys' steps in a
    uniformly random interleaving."""
    steps = [i for i, h in enumerate(histories) for _ in h]
    rng.shuffle(steps)
    nexts = [0] * len(histories)
    for i in steps:
        yield histories[i][nexts[i]]
        nexts[i] += 1


def write_files(folder: Path, histories: list[list[str]], files: int, rng: random.Random) -> int:
    """Key ``i``'s history into file ``i % files`` (a key's changes in one file, in order);
    returns the lines written."""
    folder.mkdir(parents=True)
    written = 0
    for f in range(files):
        text = "".join(interleaved(rng, histories[f::files]))
        (folder / f"part-{f:05d}.csv").write_text(text)
        written += text.count("\n")
    return written


def order_histories(rng: random.Random, changes: int, orders: int, products: int) -> list:
    """Each order: ``+I``, amount changes (``-U``, ``+U``), and for one in ten a final ``-D``;
    ``changes`` lines in all. One history step is one line, or an update's two lines (one
    step: ``-U`` directly before its ``+U``)."""
    deleted = set(rng.sample(range(orders), orders // 10))
    updates = (changes - orders - len(deleted)) // 2
    per_order = [0] * orders
    for _ in range(updates):
        per_order[rng.randrange(orders)] += 1
    histories = []
    for o in range(orders):
        product, amount = rng.randrange(products), rng.randrange(1, 1000)
        steps = [f"+I,{o},{product},{amount}\n"]
        for _ in range(per_order[o]):
            new = rng.randrange(1, 1000)
            steps.append(f"-U,{o},{product},{amount}\n+U,{o},{product},{new}\n")
            amount = new
        if o in deleted:
            steps.append(f"-D,{o},{product},{amount}\n")
        histories.append(steps)
    short = changes - sum(s.count("\n") for h in histories for s in h)
    for o in range(short):  # an odd remainder: one more insert-only order each
        histories.append([f"+I,{orders + o},{rng.randrange(products)},1\n"])
    return histories


def product_histories(rng: random.Random, products: int, categories: int) -> list:
    """Each product: ``+I``; one in five changes its category once (``-U``, ``+U``), one in
    twenty is deleted at the end."""
    histories = []
    for p in range(products):
        category = f"cat-{rng.randrange(categories)}"
        steps = [f"+I,{p},product-{p},{category}\n"]
        if rng.random() < 0.2:
            new = f"cat-{rng.randrange(categories)}"
            steps.append(f"-U,{p},product-{p},{category}\n+U,{p},product-{p},{new}\n")
            category = new
        if rng.random() < 0.05:
            steps.append(f"-D,{p},product-{p},{category}\n")
        histories.append(steps)
    return histories


def write_sales(folder: Path, rows: int, categories: int, files: int, rng: random.Random) -> None:
    """``rows`` insert-only rows over ``categories`` categories, in ``files`` files."""
    folder.mkdir(parents=True)
    per_file = -(-rows // files)
    for f in range(files):
        lines = [
            f"{i},cat-{rng.randrange(categories)},{rng.randrange(1, 1000)}\n"
            for i in range(f * per_file, min(rows, (f + 1) * per_file))
        ]
        (folder / f"part-{f:05d}.csv").write_text("".join(lines))


def register(env: TableEnvironment, root: Path) -> None:
    """Orders and Products (changelogs, keyed) and Sales (insert-only) on the CSV files."""
    for name, columns, key, folder in (
        ("Orders", ORDERS, "order_id", "orders"),
        ("Products", PRODUCTS, "id", "products"),
        ("Sales", SALES, None, "sales"),
    ):
        schema = Schema.new_builder()
        for c, ty in columns:
            schema.column(c, ty)
        if key:
            schema.primary_key(key)
        descriptor = (
            TableDescriptor.for_connector("filesystem")
            .schema(schema.build())
            .option("path", str(root / folder))
            .option("format", "csv")
        )
        if key:
            descriptor = descriptor.option("changelog.op-column", "op")
        env.create_temporary_table(name, descriptor.build())


def per_category(table: Table) -> Table:
    """``SUM(amount)``, ``COUNT(*)`` per category."""
    return table.group_by(col("category")).select(
        col("category"), col("amount").sum.alias("total"), lit(1).count.alias("orders")
    )


def flink_tables(root: Path) -> list[dict[str, Any]]:
    """Flink's specs of the same files (``flink_bench.py``)."""
    return [
        {
            "name": name,
            "path": str(root / folder),
            "columns": [list(c) for c in columns],
            "extra": [f"PRIMARY KEY ({key}) NOT ENFORCED"],
            "format": "changelog-csv",
        }
        for name, columns, key, folder in (
            ("Orders", ORDERS, "order_id", "orders"),
            ("Products", PRODUCTS, "id", "products"),
        )
    ]


def spark_aggregate(spark: Any, root: Path, sink: str, n: int) -> Any:
    """Spark's own streaming aggregation of the Sales files, started (update mode, trigger
    availableNow, HDFS-backed store) into ``sink`` (``noop``, or ``memory`` as a query named
    ``bench_spark_agg_<n>``)."""
    from pyspark.sql.connect import functions as F

    spark.conf.set("spark.sql.streaming.stateStore.providerClass", HDFS_PROVIDER)
    ddl = ", ".join(f"{c} {ty}" for c, ty in SALES)
    df = spark.readStream.schema(ddl).csv(str(root / "sales"))
    agg = df.groupBy("category").agg(
        F.sum("amount").alias("total"), F.count(F.lit(1)).alias("orders")
    )
    writer = agg.writeStream.format(sink).outputMode("update").trigger(availableNow=True)
    if sink == "memory":
        writer = writer.queryName(f"bench_spark_agg_{n}")
    return writer.option("checkpointLocation", str(root / f"spark-ckpt-{n}")).start()


def insert_only_runs(
    env: TableEnvironment, build: Any, root: Path, runs: int
) -> tuple[Windows, Windows]:
    """The insert-only comparison, the product's run and Spark's alternating (a warm-up pair,
    then ``runs`` pairs), so that both run in the same state of the server (W5's leftovers,
    such as its stores' maintenance and the garbage collector's, and the JIT's warm-up) rather
    than one system's runs all before the other's. The product as ``tiers.product_runs`` runs
    it (``product_run``, ``product_rows``); Spark into the noop sink,
    its rows the distinct keys its update-mode output wrote to a memory sink."""
    spark = env.spark
    sink = blackhole_for(env, build())
    times: dict[str, tuple[list[float], list[float]]] = {"product": ([], []), "Spark": ([], [])}
    for i in range(runs + 1):
        product_seconds, product_engine = product_run(build, sink)
        start = time.perf_counter()
        query = spark_aggregate(spark, root, "noop", i)
        query.awaitTermination()
        spark_seconds = time.perf_counter() - start
        if i:  # the first pair is the warm-up
            times["product"][0].append(product_seconds)
            times["product"][1].append(product_engine)
            times["Spark"][0].append(spark_seconds)
            times["Spark"][1].append(engine_seconds(query))
    spark_aggregate(spark, root, "memory", runs + 1).awaitTermination()
    spark_rows = spark.sql(
        f"SELECT COUNT(DISTINCT category) AS n FROM bench_spark_agg_{runs + 1}"
    ).collect()[0]["n"]
    return (
        Windows(*times["product"], product_rows(build)),
        Windows(*times["Spark"], int(spark_rows)),
    )


def spark_floors(spark: Any, root: Path, runs: int) -> dict[str, float]:
    """Where W5 stands on Spark itself, engine seconds (median of ``runs`` after a warm-up)
    of two streaming queries over W5's files into the noop sink: ``read and shuffle`` reads
    both inputs and shuffles each by the join key (what any Spark plan of W5 does before its
    stateful operators); ``Spark's join`` is Spark's own stream-stream inner join of the same
    rows (append only: the op column is a plain column, no retraction)."""
    from pyspark.sql.connect import functions as F

    def side(folder: str, columns: tuple[tuple[str, str], ...]) -> Any:
        ddl = ", ".join(f"{c} {ty}" for c, ty in (("op", "STRING"), *columns))
        return spark.readStream.schema(ddl).csv(str(root / folder))

    def shuffled(folder: str, columns: tuple[tuple[str, str], ...], key: str) -> Any:
        df = side(folder, columns).repartition(key)
        return df.select(*(F.col(c).cast("string") for c in df.columns))

    queries = {
        "read and shuffle": lambda: shuffled("orders", ORDERS, "product_id").unionAll(
            shuffled("products", PRODUCTS, "id")
        ),
        "Spark's join": lambda: side("orders", ORDERS).join(
            side("products", PRODUCTS).withColumnRenamed("op", "p_op"),
            F.col("product_id") == F.col("id"),
        ),
    }
    medians: dict[str, float] = {}
    for n, (label, make) in enumerate(queries.items()):
        runs_of = [
            run_to_noop(spark, make(), root / f"floor-ckpt-{n}-{i}") for i in range(runs + 1)
        ]
        medians[label] = statistics.median([r["engine"] for r in runs_of[1:]])  # [0]: warm-up
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=1_000_000, help="W5 order changes")
    parser.add_argument("--orders", type=int, default=100_000, help="W5 distinct orders")
    parser.add_argument("--products", type=int, default=10_000, help="W5 products")
    parser.add_argument("--categories", type=int, default=100, help="group keys")
    parser.add_argument("--rows", type=int, default=1_000_000, help="insert-only rows")
    parser.add_argument("--mini-batch", action="store_true", help="mini-batch (two phases) on both")
    parser.add_argument("--quick", action="store_true", help=f"a smoke run: {QUICK}")
    parser.add_argument("--remote", help="sc://host:port (default: an embedded server)")
    add_flink_option(parser)
    flink_venv_python = VENV_DIR / "bin" / "python"
    if flink_venv_python.exists():
        parser.set_defaults(flink_python=str(flink_venv_python))
    args = parser.parse_args()
    if args.quick:
        for k, v in QUICK.items():
            setattr(args, k, v)
    if not args.flink_python:
        parser.error(f"W5 runs against Flink 2.3: pass --flink-python (none at {VENV_DIR})")
    config = MINI_BATCH if args.mini_batch else {}

    root = Path(tempfile.mkdtemp(prefix="bench_aggregate_"))
    try:
        rng = random.Random(21)
        t0 = time.perf_counter()
        orders = order_histories(rng, args.changes, args.orders, args.products)
        n_changes = write_files(root / "orders", orders, 4, rng)
        products = product_histories(rng, args.products, args.categories)
        n_products = write_files(root / "products", products, 2, rng)
        write_sales(root / "sales", args.rows, args.categories, 4, rng)
        print(
            f"data in {time.perf_counter() - t0:.1f} s: {n_changes:,} order changes over "
            f"{args.orders:,} orders, {n_products:,} product changes over {args.products:,} "
            f"products, {args.rows:,} insert-only rows, {args.categories} categories; "
            f"mini-batch {'on' if config else 'off'} on the product and Flink",
            flush=True,
        )
        url = server_url(args)
        env = TableEnvironment.create(mode="streaming", remote=url)
        try:
            register(env, root)
            on_backend(env, "hashmap")
            for key, value in config.items():
                env.config.set(key, value)

            def w5() -> Table:
                joined = env.from_path("Orders").join(
                    env.from_path("Products"), col("product_id") == col("id")
                )
                return per_category(joined)

            def insert_only() -> Table:
                return per_category(env.from_path("Sales"))

            print(w5().explain().split("== Optimized")[-1], flush=True)
            product: dict[str, Windows] = {}
            print(f"the product: W5 ({args.runs + 1} runs) ...", flush=True)
            product["W5"] = product_runs(env, w5, args.runs)
            print(f"insert-only, the product and Spark alternating ({args.runs + 1} runs each) ...")
            product["insert-only"], spark = insert_only_runs(env, insert_only, root, args.runs)
            print(f"Spark: W5's read and shuffle, and its own join ({args.runs + 1} runs) ...")
            floors = spark_floors(env.spark, root, args.runs)
        finally:
            env.close()
        jar = ensure_flink_jar(flink_lib(args.flink_python), FORMAT_SOURCE, "changelog-csv")
        query = {"label": "W5", "sql": W5_SQL, "output": OUTPUT, "config": config}
        flink = flink_runs(
            args.flink_python, flink_tables(root), [query], args.runs, [jar.resolve().as_uri()]
        )["W5"]
        print()
        print("W5: order changes JOIN product changes, SUM/COUNT per category (vs Flink 2.3)")
        print(comparison([("W5", product["W5"], flink)], args.runs))
        print()
        print("The same aggregate over insert-only rows (vs Spark's streaming aggregation)")
        print(spark_comparison("insert-only", product["insert-only"], spark, args.runs))
        print()
        flink_engine = flink.median("engine")
        floor, spark_join = floors["read and shuffle"], floors["Spark's join"]
        print(
            f"W5 on Spark itself (engine, median of {args.runs}): reading both inputs and "
            f"shuffling them by the join key (no join, no aggregate) {floor:.2f} s = "
            f"{floor / flink_engine:.2f}x Flink's engine time, so the goal (0.5x, "
            f"{0.5 * flink_engine:.2f} s) leaves {0.5 * flink_engine - floor:.2f} s for the join "
            f"and the aggregate; Spark's own stream-stream join of the same rows (append, no "
            f"retractions) {spark_join:.2f} s = {spark_join / flink_engine:.2f}x Flink's"
        )
        w5_ratio = product["W5"].median("engine") / flink_engine
        agg_ratio = product["insert-only"].median("engine") / spark.median("engine")
        print(goal("W5 engine time, product / Flink", w5_ratio, 0.5))
        print(goal("insert-only engine time, product / Spark", agg_ratio, 1.0))
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def flink_lib(flink_python: str) -> Path:
    """PyFlink's jars (``pyflink/lib``) of the interpreter ``flink_python``."""
    out = subprocess.run(
        [flink_python, "-c", "import pyflink, os; print(os.path.dirname(pyflink.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(out) / "lib"


if __name__ == "__main__":
    sys.exit(main())
