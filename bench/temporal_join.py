"""Temporal joins (FOR SYSTEM_TIME AS OF): the Table API's plans vs Spark's as-of join and
Apache Flink.

    .venv/bin/python bench/temporal_join.py                  # 200k orders, 1,000 x 20 rates
    .venv/bin/python bench/temporal_join.py --flink-python .flink-venv/bin/python
    .venv/bin/python bench/temporal_join.py --orders 20000   # a quick look

Data: orders at random times over one day, each in one of 1,000 currencies; rates: 20
versions per currency spread over the same day (Parquet files, read by the server). The
files hold them in no time order, so both tables' watermarks lag a day behind
(``WATERMARK FOR t AS t - INTERVAL '1' DAY``, on both systems): no order or rate is late,
and Flink, which moves its watermark row by row, drops none (with no delay it dropped the
orders that came behind it and did less work).

(1) W4, the Table API's streaming event-time temporal join (server_ext's JVM operator), on
    hashmap and on RocksDB; all data in one
    availableNow run to the no-op sink (a last order and rate a day later move the watermark
    past every order, as the end of a bounded input does in Flink); state bytes per key;
(2) the Table API's batch temporal join (it compiles to Spark's sort-merge as-of join);
(3) Spark's batch as-of join written directly in PySpark, same data;
(4) W4 on Flink 2.3 (--flink-python), heap state, against W4 on the JVM operators (hashmap):
    both systems read the same CSV copy of the tables and write to a blackhole table; end
    to end and engine time, median and spread of --runs timed runs after a warm-up, result
    rows asserted equal (see tiers.comparison).

Goal (issue 13): the JVM operators (hashmap) <= 1.0x Flink on W4, in each window.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from noop_run import run_to_noop
from tiers import (
    BACKENDS,
    add_flink_option,
    comparison,
    csv_copy,
    flink_runs,
    goal,
    on_backend,
    product_runs,
    server_url,
)

from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tableapi.result import tableau

DAY_MS = 86_400_000
T0_MS = 1_795_000_000_000  # 2026-11-17
DELAY = "INTERVAL '1' DAY"  # both tables' watermark delay: the data's disorder


def make_data(spark: Any, root: Path, orders: int, currencies: int, versions: int) -> None:
    from pyspark.sql.connect import functions as F

    ts = lambda ms: F.timestamp_millis(ms)  # noqa: E731
    o = spark.range(orders).select(
        F.col("id").alias("order_id"),
        (F.col("id") * 7919 % currencies).alias("currency"),
        (F.col("id") % 100 + 1).alias("amount"),
        ts(F.lit(T0_MS) + (F.col("id") * 104_729 % DAY_MS)).alias("o_rowtime"),
    )
    flush_o = spark.range(1).select(
        F.lit(-1).cast("bigint").alias("order_id"),
        F.lit(0).cast("bigint").alias("currency"),
        F.lit(1).cast("bigint").alias("amount"),
        ts(F.lit(T0_MS + 2 * DAY_MS)).alias("o_rowtime"),
    )
    o.unionAll(flush_o).repartition(2).write.mode("overwrite").parquet(str(root / "orders"))
    step = DAY_MS // versions
    r = spark.range(currencies * versions).select(
        (F.col("id") % currencies).alias("r_currency"),
        (F.col("id") * 13 % 1000 + 1).alias("rate"),
        ts(F.lit(T0_MS) + (F.floor(F.col("id") / currencies) * step)).alias("r_rowtime"),
    )
    flush_r = spark.range(1).select(
        F.lit(0).cast("bigint").alias("r_currency"),
        F.lit(1).cast("bigint").alias("rate"),
        ts(F.lit(T0_MS + 2 * DAY_MS)).alias("r_rowtime"),
    )
    r.unionAll(flush_r).repartition(2).write.mode("overwrite").parquet(str(root / "rates"))


def register(env: TableEnvironment, root: Path, fmt: str = "parquet") -> None:
    """Orders and Rates on the Parquet files, or (``fmt='csv'``) on their CSV copies."""
    orders = (
        Schema.new_builder()
        .column("order_id", "BIGINT")
        .column("currency", "BIGINT")
        .column("amount", "BIGINT")
        .column("o_rowtime", "TIMESTAMP(3)")
        .watermark("o_rowtime", f"o_rowtime - {DELAY}")
        .build()
    )
    rates = (
        Schema.new_builder()
        .column("r_currency", "BIGINT")
        .column("rate", "BIGINT")
        .column("r_rowtime", "TIMESTAMP(3)")
        .watermark("r_rowtime", f"r_rowtime - {DELAY}")
        .primary_key("r_currency")
        .build()
    )
    for name, schema in (("Orders", orders), ("Rates", rates)):
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema)
            .option("path", str(root / f"{name.lower()}{'' if fmt == 'parquet' else '-csv'}"))
            .option("format", fmt)
            .build(),
        )


def query(env: TableEnvironment) -> Any:
    return (
        env.from_path("Orders")
        .temporal_join(
            env.from_path("Rates"), col("currency") == col("r_currency"), as_of=col("o_rowtime")
        )
        .select(col("order_id"), (col("amount") * col("rate")).alias("converted"))
    )


FLINK_SQL = (
    "SELECT order_id, amount * rate AS converted FROM Orders AS o "
    "JOIN Rates FOR SYSTEM_TIME AS OF o.o_rowtime AS r ON o.currency = r.r_currency"
)


def flink_tables(spark: Any, root: Path) -> list[dict[str, Any]]:
    """Writes the CSV copies both systems read in the comparison; Flink's table specs (the
    same schemas and watermarks as :func:`register`). The copies leave out the last order
    and rate (two days later): both systems end bounded inputs themselves, and with them a
    reader that met one before the other rows would have found those a day late."""
    from pyspark.sql.connect import functions as F

    def before_flush(rowtime: str) -> Any:
        return F.col(rowtime) < F.timestamp_millis(F.lit(T0_MS + 2 * DAY_MS))

    return [
        {
            "name": "Orders",
            "path": str(
                csv_copy(spark, root / "orders", root / "orders-csv", before_flush("o_rowtime"))
            ),
            "columns": [
                *([c, "BIGINT"] for c in ("order_id", "currency", "amount")),
                ["o_rowtime", "TIMESTAMP(3)"],
            ],
            "extra": [f"WATERMARK FOR o_rowtime AS o_rowtime - {DELAY}"],
        },
        {
            "name": "Rates",
            "path": str(
                csv_copy(spark, root / "rates", root / "rates-csv", before_flush("r_rowtime"))
            ),
            "columns": [
                ["r_currency", "BIGINT"],
                ["rate", "BIGINT"],
                ["r_rowtime", "TIMESTAMP(3)"],
            ],
            "extra": [
                f"WATERMARK FOR r_rowtime AS r_rowtime - {DELAY}",
                "PRIMARY KEY (r_currency) NOT ENFORCED",
            ],
        },
    ]


def timed_batch(df: Any) -> tuple[float, int]:
    start = time.perf_counter()
    n = df.count()
    return time.perf_counter() - start, n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=200_000)
    parser.add_argument("--currencies", type=int, default=1_000)
    parser.add_argument("--versions", type=int, default=20)
    parser.add_argument("--remote", help="sc://host:port (default: an embedded server)")
    add_flink_option(parser)
    args = parser.parse_args()
    url = server_url(args)

    root = Path(tempfile.mkdtemp(prefix="bench_temporal_join_"))
    batch = TableEnvironment.create(mode="batch", remote=url)
    spark = batch.spark
    print(f"{args.orders:,} orders, {args.currencies:,} currencies x {args.versions} versions")
    try:
        make_data(spark, root, args.orders, args.currencies, args.versions)
        register(batch, root)
        stream = TableEnvironment.create(mode="streaming", remote=url)
        register(stream, root)
        # Spark's as-of join, hand-written (sort-merge as-of join on epoch millis).
        from pyspark.sql.connect import functions as F

        spark.conf.set("spark.sql.join.sortMergeAsOfJoin.enabled", "true")
        o = spark.read.parquet(str(root / "orders")).withColumn("t", F.unix_millis("o_rowtime"))
        r = spark.read.parquet(str(root / "rates")).withColumn("rt", F.unix_millis("r_rowtime"))
        spark_asof = o._joinAsOf(
            r, "t", "rt", on=o["currency"] == r["r_currency"], how="inner", direction="backward"
        ).select("order_id", (F.col("amount") * F.col("rate")).alias("converted"))

        print("warm-up (not counted) ...", flush=True)
        timed_batch(spark_asof)

        results = []
        print("(3) Spark as-of join ...", flush=True)
        results.append(("(3) Spark batch as-of join (PySpark)", *timed_batch(spark_asof), ""))
        print("(2) Table API batch temporal join ...", flush=True)
        batch_df = query(batch).to_spark()
        results.append(("(2) Table API batch temporal join", *timed_batch(batch_df), ""))
        for backend in BACKENDS:
            on_backend(stream, backend)
            assert f"stateBackend=[{backend}]" in query(stream).explain()
            print(f"warm-up on {backend} (not counted) ...", flush=True)
            run_to_noop(stream.spark, query(stream).to_spark(), root / f"warm-{backend}")
            print(f"(1) W4 streaming temporal join on {backend} ...", flush=True)
            df = query(stream).to_spark()
            r = run_to_noop(stream.spark, df, root / f"ckpt-{backend}")
            per_key = f"{r['state_bytes'] / args.currencies:.0f}"
            label = f"(1) W4 streaming, JVM operator, {backend}"
            results.append((label, r["seconds"], r["output"], per_key))
        compared = []
        if args.flink_python:
            tables = flink_tables(spark, root)
            cenv = TableEnvironment.create(mode="streaming", remote=url)
            register(cenv, root, "csv")
            on_backend(cenv, "hashmap")
            print(f"comparison: W4, JVM on hashmap ({args.runs + 1} runs) ...", flush=True)
            product = product_runs(cenv, lambda: query(cenv), args.runs)
            cenv.close()
            output = [["order_id", "BIGINT"], ["converted", "BIGINT"]]
            q = [{"label": "W4", "sql": FLINK_SQL, "output": output}]
            compared = [("W4", product, flink_runs(args.flink_python, tables, q, args.runs)["W4"])]
        base = results[0][1]
        rows = [(n, f"{s:.2f}", f"{s / base:.2f}x", out, b) for n, s, out, b in results]
        print()
        print(tableau(["query", "seconds", "vs (3)", "output rows", "state bytes/key"], rows))
        if compared:
            print()
            print("Flink comparison: W4 on the JVM operators (hashmap), Flink on heap state")
            print(comparison(compared, args.runs))
            for window in ("end_to_end", "engine"):
                _, p, f = compared[0]
                ratio = p.median(window) / f.median(window)
                print(goal(f"JVM hashmap W4 / Flink W4, {window.replace('_', '-')}", ratio, 1.0))
        stream.close()
        return 0
    finally:
        batch.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
