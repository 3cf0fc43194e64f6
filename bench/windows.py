"""A TUMBLE window aggregation: the product against Apache Flink 2.3 and against Spark's own
``window()`` aggregation (append mode), over the same insert-only rows.

    uptime; flock /tmp/tableapi-bench.lock .venv/bin/python bench/windows.py
    flock /tmp/tableapi-bench.lock .venv/bin/python bench/windows.py --quick   # smoke run

``--rows`` (10,000,000) rows ``sale_id, category, amount, ts`` in 4 CSV files (no header),
``--categories`` (100) keys, ``--rate`` (2,000) rows per second of event time, each row's
time jittered by up to half a second. The watermark is ``ts - 1 day``, longer than the
data's span (5,000 s at the defaults): Flink's readers take the 4 files in any order, one
after another, and a shorter delay would make rows late on Flink only; so no row is late on
any system, and every window fires at the end of the input (the product reads a bounded input
in one micro-batch anyway). The query::

    SELECT window_start, window_end, category, SUM(amount) AS total, COUNT(*) AS n
    FROM TABLE(TUMBLE(TABLE Sales, DESCRIPTOR(ts), INTERVAL '10' SECOND))
    WHERE category <> '~end' GROUP BY window_start, window_end, category

The product runs it from SQL, Flink from the same SQL (parallelism 2, the ``hashmap``
backend, into a blackhole sink), Spark as ``withWatermark("ts", "1 day")`` then
``groupBy(window("ts", "10 seconds"), "category")`` in append mode, trigger availableNow,
into the noop sink. Spark's append mode emits a window when its watermark passes the end,
and a bounded run never moves the watermark to +infinity, so the last file ends with a
sentinel row two days later (category ``~end``) that every system reads and filters out after
its watermark: the sentinel moves each watermark past every real window, and no system emits
its window. The product and Spark run on 2 shuffle partitions (the product's
``table.exec.resource.default-parallelism``), as Flink runs with parallelism 2.

Each system runs once to warm up, then ``--runs`` (5) timed runs (the product's and Spark's
alternate), in two windows: end to end (the product: from building the query to the end of
its insert into a blackhole table; Flink: ``execute_sql`` to the end of ``wait()``; Spark:
from building the DataFrame to ``awaitTermination()``) and engine (Spark's
``triggerExecution`` summed over the batches, for the product and Spark; Flink's job net
runtime): median and spread. The rows (one per window and category) are counted in one more
untimed run on each and asserted equal. Goals (issue 33): at least Flink's throughput (time
ratio <= 1) and at least Spark's own (<= 1), end to end.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/conformance/flink_env

from noop_run import engine_seconds
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
    server_url,
    spark_comparison,
)

from tableapi import Schema, Table, TableDescriptor, TableEnvironment
from tests.conformance.flink_env import VENV_DIR

QUICK = {"rows": 200_000, "runs": 1}
SALES = (("sale_id", "BIGINT"), ("category", "STRING"), ("amount", "INT"), ("ts", "TIMESTAMP(3)"))
WATERMARK = "WATERMARK FOR ts AS ts - INTERVAL '1' DAY"
SENTINEL = "~end"
SQL = (
    "SELECT window_start, window_end, category, SUM(amount) AS total, COUNT(*) AS n "
    "FROM TABLE(TUMBLE(TABLE Sales, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
    f"WHERE category <> '{SENTINEL}' GROUP BY window_start, window_end, category"
)
OUTPUT = [
    ["window_start", "TIMESTAMP(3)"],
    ["window_end", "TIMESTAMP(3)"],
    ["category", "STRING"],
    ["total", "INT"],
    ["n", "BIGINT"],
]
PARALLELISM = 2
T0 = dt.datetime(2026, 11, 1)


def write_sales(folder: Path, rows: int, categories: int, rate: int, rng: random.Random) -> None:
    """``rows`` rows, row ``i`` at ``i / rate`` seconds plus a jitter below 0.5 s, into 4
    files by ``i % 4``; the last file ends with the sentinel two days after the last row."""
    folder.mkdir(parents=True)
    step_ms = 1000 / rate
    files: list[list[str]] = [[] for _ in range(4)]
    base = T0.timestamp() * 1000
    for i in range(rows):
        ms = int(base + i * step_ms + rng.randrange(500))
        stamp = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S.%f"
        )[:-3]
        files[i % 4].append(
            f"{i},cat-{rng.randrange(categories)},{rng.randrange(1, 1000)},{stamp}\n"
        )
    end = dt.datetime.fromtimestamp((base + rows * step_ms) / 1000 + 2 * 86400, dt.timezone.utc)
    files[-1].append(f"{rows},{SENTINEL},0,{end.strftime('%Y-%m-%d %H:%M:%S.000')}\n")
    for f, lines in enumerate(files):
        (folder / f"part-{f:05d}.csv").write_text("".join(lines))


def register(env: TableEnvironment, root: Path) -> None:
    schema = Schema.new_builder()
    for c, ty in SALES:
        schema.column(c, ty)
    schema.watermark("ts", "ts - INTERVAL '1' DAY")
    env.create_temporary_table(
        "Sales",
        TableDescriptor.for_connector("filesystem")
        .schema(schema.build())
        .option("path", str(root / "sales"))
        .option("format", "csv")
        .build(),
    )


def spark_windows(spark: Any, root: Path, sink: str, n: int) -> Any:
    """Spark's own window aggregation of the files, started (append mode, availableNow) into
    ``sink`` (``noop``, or ``memory`` as the query ``bench_spark_windows_<n>``)."""
    from pyspark.sql.connect import functions as F

    ddl = ", ".join(f"{c} {ty.replace('TIMESTAMP(3)', 'TIMESTAMP')}" for c, ty in SALES)
    df = (
        spark.readStream.schema(ddl)
        .option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSS")
        .csv(str(root / "sales"))
        .withWatermark("ts", "1 day")
        # reading ts keeps the filter above the watermark (Spark pushes a predicate that does
        # not read the event time below withWatermark, and the sentinel would not move it)
        .where((F.col("category") != SENTINEL) | F.col("ts").isNull())
    )
    agg = df.groupBy(F.window("ts", "10 seconds"), "category").agg(
        F.sum("amount").alias("total"), F.count(F.lit(1)).alias("n")
    )
    writer = agg.writeStream.format(sink).outputMode("append").trigger(availableNow=True)
    if sink == "memory":
        writer = writer.queryName(f"bench_spark_windows_{n}")
    return writer.option("checkpointLocation", str(root / f"spark-ckpt-{n}")).start()


def alternating_runs(env: TableEnvironment, build: Any, root: Path, runs: int) -> tuple:
    """The product's and Spark's runs alternating (a warm-up pair, then ``runs`` pairs)."""
    spark = env.spark
    sink = blackhole_for(env, build())
    times: dict[str, tuple[list[float], list[float]]] = {"product": ([], []), "Spark": ([], [])}
    for i in range(runs + 1):
        print(f"  run {i + 1} of {runs + 1} (the first warms up) ...", flush=True)
        product_seconds, product_engine = product_run(build, sink)
        start = time.perf_counter()
        query = spark_windows(spark, root, "noop", i)
        query.awaitTermination()
        spark_seconds = time.perf_counter() - start
        if i:
            times["product"][0].append(product_seconds)
            times["product"][1].append(product_engine)
            times["Spark"][0].append(spark_seconds)
            times["Spark"][1].append(engine_seconds(query))
    spark_windows(spark, root, "memory", runs + 1).awaitTermination()
    spark_rows = spark.sql(f"SELECT COUNT(*) AS n FROM bench_spark_windows_{runs + 1}").collect()
    return (
        Windows(*times["product"], product_rows(build)),
        Windows(*times["Spark"], int(spark_rows[0]["n"])),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="insert-only rows")
    parser.add_argument("--categories", type=int, default=100, help="group keys")
    parser.add_argument("--rate", type=int, default=2_000, help="rows per second of event time")
    parser.add_argument("--quick", action="store_true", help=f"a smoke run: {QUICK}")
    parser.add_argument("--remote", help="sc://host:port (default: an embedded server)")
    parser.add_argument("--no-flink", action="store_true", help="the product and Spark only")
    add_flink_option(parser)
    flink_venv_python = VENV_DIR / "bin" / "python"
    if flink_venv_python.exists():
        parser.set_defaults(flink_python=str(flink_venv_python))
    args = parser.parse_args()
    if args.quick:
        for k, v in QUICK.items():
            setattr(args, k, v)
    if not args.flink_python and not args.no_flink:
        parser.error(f"the benchmark runs Flink 2.3: pass --flink-python (none at {VENV_DIR})")

    root = Path(tempfile.mkdtemp(prefix="bench_windows_"))
    try:
        t0 = time.perf_counter()
        write_sales(root / "sales", args.rows, args.categories, args.rate, random.Random(33))
        print(
            f"data in {time.perf_counter() - t0:.1f} s: {args.rows:,} rows, "
            f"{args.categories} categories, {args.rate:,} rows per event-time second",
            flush=True,
        )
        env = TableEnvironment.create(mode="streaming", remote=server_url(args))
        try:
            register(env, root)
            on_backend(env, "hashmap")
            env.config.set("table.exec.resource.default-parallelism", str(PARALLELISM))
            env.spark.conf.set("spark.sql.shuffle.partitions", str(PARALLELISM))

            def tumble() -> Table:
                return env.sql_query(SQL)

            print(tumble().explain().split("== Optimized")[-1], flush=True)
            print(f"the product and Spark, alternating ({args.runs + 1} runs each) ...")
            product, spark = alternating_runs(env, tumble, root, args.runs)
        finally:
            env.close()
        rows = [("TUMBLE 10 s", product, spark)]
        print()
        print(f"TUMBLE 10 s SUM/COUNT per category over {args.rows:,} rows (vs Spark's window())")
        print(spark_comparison("TUMBLE 10 s", product, spark, args.runs))
        print(goal("end-to-end time, product / Spark", product.median("end_to_end")
                   / spark.median("end_to_end"), 1.0))  # fmt: skip
        if not args.no_flink:
            table = {
                "name": "Sales",
                "path": str(root / "sales"),
                "columns": [list(c) for c in SALES],
                "extra": [WATERMARK],
                "format": "csv",
            }
            query = {"label": "TUMBLE 10 s", "sql": SQL, "output": OUTPUT}
            flink = flink_runs(args.flink_python, [table], [query], args.runs)["TUMBLE 10 s"]
            print()
            print("The same query on Apache Flink 2.3")
            print(comparison([(label, p, flink) for label, p, _ in rows], args.runs))
            ratio = product.median("end_to_end") / flink.median("end_to_end")
            print(goal("end-to-end time, product / Flink", ratio, 1.0))
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
