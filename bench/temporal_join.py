"""Temporal joins (FOR SYSTEM_TIME AS OF): the Table API's plans vs Spark's as-of join and
Apache Flink.

    .venv/bin/python bench/temporal_join.py                  # 200k orders, 1,000 x 20 rates
    .venv/bin/python bench/temporal_join.py --flink-python .flink-venv/bin/python
    .venv/bin/python bench/temporal_join.py --orders 20000   # a quick look

Data: orders at random times over one day, each in one of 1,000 currencies; rates: 20
versions per currency spread over the same day (Parquet files, read by the server).

(1) W4, the Table API's streaming event-time temporal join (server_ext operator), on each
    operator tier: Python (RocksDB), JVM on hashmap and on RocksDB; all data in one
    availableNow run to the no-op sink (a last order and rate a day later move the watermark
    past every order, as the end of a bounded input does in Flink); state bytes per key;
(2) the Table API's batch temporal join (it compiles to Spark's sort-merge as-of join);
(3) Spark's batch as-of join written directly in PySpark, same data;
(4) W4 on Flink 2.3 (--flink-python), same data as CSV, heap state.

Goal (issue 13): the JVM tier (hashmap) <= 1.0x Flink on W4.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from noop_run import state_of
from tiers import TIERS, add_flink_option, csv_copy, flink_times, goal, on_tier, server_url

from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tableapi.result import observed_metric, tableau

DAY_MS = 86_400_000
T0_MS = 1_795_000_000_000  # 2026-11-17


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


def register(env: TableEnvironment, root: Path) -> None:
    orders = (
        Schema.new_builder()
        .column("order_id", "BIGINT")
        .column("currency", "BIGINT")
        .column("amount", "BIGINT")
        .column("o_rowtime", "TIMESTAMP(3)")
        .watermark("o_rowtime", "o_rowtime")
        .build()
    )
    rates = (
        Schema.new_builder()
        .column("r_currency", "BIGINT")
        .column("rate", "BIGINT")
        .column("r_rowtime", "TIMESTAMP(3)")
        .watermark("r_rowtime", "r_rowtime")
        .primary_key("r_currency")
        .build()
    )
    for name, schema in (("Orders", orders), ("Rates", rates)):
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema)
            .option("path", str(root / name.lower()))
            .option("format", "parquet")
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
    "JOIN Rates FOR SYSTEM_TIME AS OF o.o_rt AS r ON o.currency = r.r_currency"
)


def flink_tables(spark: Any, root: Path) -> list[dict[str, Any]]:
    """Orders and Rates as CSV for Flink: rowtimes as epoch millis, read back as TIMESTAMP_LTZ
    with the same watermarks (none of delay)."""
    return [
        {
            "name": "Orders",
            "path": str(csv_copy(spark, root / "orders", root / "orders-csv")),
            "columns": [[c, "BIGINT"] for c in ("order_id", "currency", "amount", "o_rowtime")],
            "extra": ["o_rt AS TO_TIMESTAMP_LTZ(o_rowtime, 3)", "WATERMARK FOR o_rt AS o_rt"],
        },
        {
            "name": "Rates",
            "path": str(csv_copy(spark, root / "rates", root / "rates-csv")),
            "columns": [[c, "BIGINT"] for c in ("r_currency", "rate", "r_rowtime")],
            "extra": [
                "r_rt AS TO_TIMESTAMP_LTZ(r_rowtime, 3)",
                "WATERMARK FOR r_rt AS r_rt",
                "PRIMARY KEY (r_currency) NOT ENFORCED",
            ],
        },
    ]


def timed_stream(spark: Any, df: Any, checkpoint: Path) -> tuple[float, int]:
    from pyspark.sql.connect import functions as F

    start = time.perf_counter()
    q = (
        df.observe("bench_out", F.count(F.lit(1)).alias("n"))
        .writeStream.format("noop")
        .trigger(availableNow=True)
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    q.awaitTermination()
    seconds = time.perf_counter() - start
    timed_stream.last_state = state_of(spark, q)  # type: ignore[attr-defined]
    out = 0
    for p in q.recentProgress:
        row = (p.observedMetrics or {}).get("bench_out")
        if row is not None:
            out += int(observed_metric(row, "n") or 0)
    return seconds, out


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
        seconds: dict[tuple[str, str], float] = {}
        for tier, backend in TIERS:
            on_tier(stream, tier, backend)
            assert f"tier=[{tier}]" in query(stream).explain()
            print(f"warm-up of the {tier} tier (not counted) ...", flush=True)
            timed_stream(stream.spark, query(stream).to_spark(), root / f"warm-{tier}-{backend}")
            print(f"(1) W4 streaming temporal join, {tier} tier on {backend} ...", flush=True)
            df = query(stream).to_spark()
            s, out = timed_stream(stream.spark, df, root / f"ckpt-{tier}-{backend}")
            state = timed_stream.last_state  # type: ignore[attr-defined]
            per_key = f"{state['state_bytes'] / args.currencies:.0f}"
            results.append((f"(1) W4 streaming, {tier} tier, {backend}", s, out, per_key))
            seconds[(tier, backend)] = s
        flink: dict[str, float] = {}
        if args.flink_python:
            q = [
                {
                    "label": "W4",
                    "sql": FLINK_SQL,
                    "output": [["order_id", "BIGINT"], ["converted", "BIGINT"]],
                }
            ]
            flink = flink_times(args.flink_python, flink_tables(spark, root), q)
            results.append(("(4) W4 Apache Flink 2.3 (heap)", flink["W4"], "", ""))
        base = results[0][1]
        rows = [(n, f"{s:.2f}", f"{s / base:.2f}x", out, b) for n, s, out, b in results]
        print()
        print(tableau(["query", "seconds", "vs (3)", "output rows", "state bytes/key"], rows))
        jvm = seconds[("jvm", "hashmap")]
        print(f"W4: Python tier / JVM hashmap = {seconds[('python', 'rocksdb')] / jvm:.1f}x")
        if flink:
            print(goal("JVM hashmap W4 / Flink W4", jvm / flink["W4"], 1.0))
        stream.close()
        return 0
    finally:
        batch.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
