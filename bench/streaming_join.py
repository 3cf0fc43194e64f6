"""Streaming joins: Spark's native join, the Table API's JVM join operator on each state
backend and Apache Flink, in one run.

    .venv/bin/python bench/streaming_join.py                 # 200k x 200k rows, 100k keys
    .venv/bin/python bench/streaming_join.py --flink-python .flink-venv/bin/python \
        --scale 200000,1000000,4000000                       # + Flink + the scaling rows
    .venv/bin/python bench/streaming_join.py --rows 20000 --keys 10000   # a quick look

Each query of (a), (b), W1 and W2 reads the same Parquet files as two streams, in one
micro-batch (trigger availableNow), into Spark's no-op sink; the time is query start to
termination (warm: a first run of each kind is not counted), and the engine's time
(triggerExecution summed over the batches).

(a) Spark's native stream-stream inner join, written in PySpark, on the RocksDB and on the
    HDFS-backed state store;
(b) the Table API's insert-only inner join: it must compile to the native join, ratio to (a)
    on the same store <= 1.1;
W1 (inner) and W2 (left outer) forced through the server_ext JVM operator on hashmap
    (HDFS-backed) and on RocksDB; state bytes per key;
Flink comparison (--flink-python, Flink 2.3): W1 and W2 on hashmap, W1 on RocksDB, against
the JVM operator on the same backend; both systems read the same CSV copy of the data and write
to a blackhole table; end to end and engine time, median and spread of --runs timed runs
after a warm-up, result rows asserted equal (see tiers.comparison);
scaling (--scale): W1 on the JVM operator (hashmap) and on Flink at each size (keys = rows / 2),
compared the same way.

Goals (issue 13): JVM hashmap <= 0.8x Flink on W1 and W2 (both windows shown), <= 0.8x
Spark's native join (HDFS) on W1; time per row at the largest size within 1.5x of that at the
smallest.
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
    Windows,
    add_flink_option,
    comparison,
    csv_copy,
    flink_runs,
    goal,
    on_backend,
    product_runs,
    server_url,
)

from server_ext.conf import HDFS_PROVIDER, ROCKSDB_PROVIDER
from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tableapi.result import tableau


def make_data(spark: Any, root: Path, rows: int, keys: int) -> None:
    """Left keys cover 0..keys-1; right keys spread over 10% more, so some left rows of (d)
    stay unmatched."""
    from pyspark.sql.connect import functions as F

    spark.range(rows).select(
        (F.col("id") % keys).alias("k"),
        F.col("id").alias("l_id"),
        (F.col("id") * 7 % 1000).alias("l_v"),
    ).repartition(2).write.mode("overwrite").parquet(str(root / "left"))
    spark.range(rows).select(
        (F.col("id") * 7919 % (keys + keys // 10)).alias("rk"),
        F.col("id").alias("r_id"),
        (F.col("id") * 13 % 1000).alias("r_v"),
    ).repartition(2).write.mode("overwrite").parquet(str(root / "right"))


FLINK_TABLES = [("L", ("k", "l_id", "l_v"), "left"), ("R", ("rk", "r_id", "r_v"), "right")]
W1_SQL = "SELECT * FROM L JOIN R ON k = rk"
W2_SQL = "SELECT * FROM L LEFT JOIN R ON k = rk"
OUTPUT = [[c, "BIGINT"] for c in ("k", "l_id", "l_v", "rk", "r_id", "r_v")]


def register(env: TableEnvironment, root: Path, fmt: str = "parquet") -> None:
    """L and R on the Parquet files, or (``fmt='csv'``) on their CSV copies."""
    for name, cols, folder in FLINK_TABLES:
        schema = Schema.new_builder()
        for c in cols:
            schema.column(c, "BIGINT")
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema.build())
            .option("path", str(root / (folder if fmt == "parquet" else f"{folder}-csv")))
            .option("format", fmt)
            .build(),
        )


def run(spark: Any, df: Any, checkpoint: Path, provider: str | None) -> dict[str, Any]:
    """``run_to_noop`` on the given state store provider (None: as configured)."""
    if provider:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
    return run_to_noop(spark, df, checkpoint)


def flink_tables(spark: Any, root: Path) -> list[dict[str, Any]]:
    """Writes the CSV copies both systems read in the comparison; Flink's table specs."""
    return [
        {
            "name": name,
            "path": str(csv_copy(spark, root / folder, root / f"{folder}-csv")),
            "columns": [[c, "BIGINT"] for c in cols],
        }
        for name, cols, folder in FLINK_TABLES
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows per side")
    parser.add_argument("--keys", type=int, default=100_000, help="distinct join keys")
    parser.add_argument("--scale", default="", help="rows per side of the scaling rows, a,b,c")
    parser.add_argument("--scale-only", action="store_true", help="only the scaling rows")
    parser.add_argument("--remote", help="sc://host:port (default: an embedded server)")
    add_flink_option(parser)
    args = parser.parse_args()
    url = server_url(args)

    t0 = time.perf_counter()
    env = TableEnvironment.create(mode="streaming", remote=url)
    spark = env.spark
    print(
        f"Connected in {time.perf_counter() - t0:.1f} s; {args.rows:,} x {args.rows:,} rows, "
        f"{args.keys:,} keys",
        flush=True,
    )
    root = Path(tempfile.mkdtemp(prefix="bench_streaming_join_"))
    if args.scale_only:
        try:  # each size warms up first (product_runs, flink_bench)
            sizes = [int(n) for n in args.scale.split(",")]
            scaling(env, url, spark, root, sizes, args.flink_python, args.runs)
            return 0
        finally:
            env.close()
            shutil.rmtree(root, ignore_errors=True)
    try:
        make_data(spark, root, args.rows, args.keys)
        register(env, root)
        left, right = env.from_path("L"), env.from_path("R")
        inner = left.join(right, col("k") == col("rk"))
        outer = left.left_outer_join(right, col("k") == col("rk"))
        env.config.set("table.exec.join.spark-native.enabled", "true")  # (b): Spark's join
        assert "operator=[spark stream-stream join]" in inner.explain(), inner.explain()

        def native() -> Any:
            lf = spark.readStream.schema("k BIGINT, l_id BIGINT, l_v BIGINT").parquet(
                str(root / "left")
            )
            rf = spark.readStream.schema("rk BIGINT, r_id BIGINT, r_v BIGINT").parquet(
                str(root / "right")
            )
            return lf.join(rf, lf["k"] == rf["rk"])

        results: list[tuple[str, dict[str, Any]]] = []

        def measure(label: str, make_df: Any, provider: str | None) -> dict[str, Any]:
            print(f"running {label} ...", flush=True)
            r = run(spark, make_df(), root / f"ckpt{len(results)}", provider)
            results.append((label, r))
            return r

        print("warm-up (not counted) ...", flush=True)
        run(spark, native(), root / "warmup", ROCKSDB_PROVIDER)
        a_rocks = measure("(a) Spark native inner join", native, ROCKSDB_PROVIDER)
        a_hdfs = measure("(a) Spark native inner join", native, HDFS_PROVIDER)
        b = measure("(b) Table API inner join (native path)", inner.to_spark, None)
        env.config.set("table.exec.join.spark-native.enabled", "false")
        operator_runs: dict[tuple[str, str], dict[str, Any]] = {}
        for backend in BACKENDS:
            on_backend(env, backend)
            plan = inner.explain()
            assert f"join processor], stateBackend=[{backend}]" in plan, plan
            # The first query on a store pays for loading its classes.
            print(f"warm-up on {backend} (not counted) ...", flush=True)
            run(spark, inner.to_spark(), root / f"warmup-{backend}", None)
            for w, table in (("W1 inner", inner), ("W2 left", outer)):
                label = f"{w}, JVM operator"
                operator_runs[(w[:2], backend)] = measure(label, table.to_spark, None)

        compared: dict[str, tuple[Windows, Windows]] = {}
        if args.flink_python:
            compared = flink_comparison(url, spark, root, args.flink_python, args.runs)

        rows = []
        for label, r in results:
            base = a_rocks if r["store"] == "RocksDB" else a_hdfs
            rows.append(
                (
                    label,
                    r["store"],
                    f"{r['seconds']:.2f}",
                    f"{r['engine']:.2f}",
                    f"{r['seconds'] / base['seconds']:.2f}x",
                    r["input"],
                    r["output"],
                    r["state_rows"],
                    f"{r['state_bytes'] / args.keys:.0f}",
                )
            )
        print()
        print(
            tableau(
                [
                    "query",
                    "state store",
                    "seconds",
                    "engine s",
                    "vs (a), same store",
                    "input rows",
                    "output rows",
                    "state rows",
                    "state bytes/key",
                ],
                rows,
            )
        )
        ok_b = b["seconds"] <= 1.1 * a_hdfs["seconds"]
        print(
            f"\n(b)/(a) = {b['seconds'] / a_hdfs['seconds']:.2f} (must be <= 1.1): "
            f"{'PASS' if ok_b else 'FAIL'}"
        )
        w1 = operator_runs[("W1", "hashmap")]["seconds"]
        print(goal("JVM hashmap W1 / Spark native W1 (HDFS)", w1 / a_hdfs["seconds"], 0.8))
        for w in ("W1", "W2"):
            if w in compared:
                print(flink_goals(w, *compared[w]))
        if args.scale:
            sizes = [int(n) for n in args.scale.split(",")]
            scaling(env, url, spark, root, sizes, args.flink_python, args.runs)
        return 0 if ok_b else 1
    finally:
        env.close()
        shutil.rmtree(root, ignore_errors=True)


def joins(env: TableEnvironment) -> tuple[Any, Any]:
    """Builders of W1 (inner) and W2 (left outer) on ``env``'s tables L and R."""

    def w1() -> Any:
        return env.from_path("L").join(env.from_path("R"), col("k") == col("rk"))

    def w2() -> Any:
        return env.from_path("L").left_outer_join(env.from_path("R"), col("k") == col("rk"))

    return w1, w2


def flink_comparison(
    url: str, spark: Any, root: Path, flink_python: str, runs: int
) -> dict[str, tuple[Windows, Windows]]:
    """W1 and W2 (hashmap) and W1 on RocksDB: the JVM operators on the same backend against
    Flink, both on the CSV copies, into blackhole tables; prints the comparison table."""
    tables = flink_tables(spark, root)
    cenv = TableEnvironment.create(mode="streaming", remote=url)
    try:
        register(cenv, root, "csv")
        cenv.config.set("table.exec.join.spark-native.enabled", "false")
        w1, w2 = joins(cenv)
        workloads = [("W1", "hashmap", w1, W1_SQL), ("W2", "hashmap", w2, W2_SQL)]
        workloads.append(("W1-rocksdb", "rocksdb", w1, W1_SQL))
        product = {}
        for label, backend, build, _ in workloads:
            print(f"comparison: {label}, JVM on {backend} ({runs + 1} runs) ...", flush=True)
            on_backend(cenv, backend)
            product[label] = product_runs(cenv, build, runs)
    finally:
        cenv.close()
    queries = [
        {"label": label, "sql": sql, "output": OUTPUT, "backend": backend}
        for label, backend, _, sql in workloads
    ]
    flink = flink_runs(flink_python, tables, queries, runs)
    compared = {label: (product[label], flink[label]) for label in product}
    print()
    print(f"Flink comparison: {'; '.join(f'{w[0]} = JVM operators on {w[1]}' for w in workloads)}")
    print(comparison([(label, p, f) for label, (p, f) in compared.items()], runs))
    return compared


def flink_goals(w: str, product: Windows, flink: Windows) -> str:
    """Issue 13's goal (JVM hashmap <= 0.8x Flink) on each window's medians."""
    return "\n".join(
        goal(
            f"JVM hashmap {w} / Flink {w}, {window.replace('_', '-')}",
            product.median(window) / flink.median(window),
            0.8,
        )
        for window in ("end_to_end", "engine")
    )


def scaling(
    env: Any,
    url: str,
    spark: Any,
    root: Path,
    sizes: list[int],
    flink_python: str | None,
    runs: int,
) -> None:
    """W1 on the JVM operators (hashmap), and on Flink, at each size (keys = rows / 2), on the
    same CSV files; the product's time per row from its engine time."""
    rows = []
    per_row: list[float] = []
    for n in sizes:
        data = root / f"scale-{n}"
        data.mkdir()
        print(f"scaling: {n:,} rows per side ...", flush=True)
        make_data(spark, data, n, n // 2)
        tables = flink_tables(spark, data)
        senv = TableEnvironment.create(mode="streaming", remote=url)
        try:
            register(senv, data, "csv")
            senv.config.set("table.exec.join.spark-native.enabled", "false")
            on_backend(senv, "hashmap")
            product = product_runs(senv, joins(senv)[0], runs)
        finally:
            senv.close()
        per_row.append(product.median("engine") / n)
        flink = None
        if flink_python:
            q = [{"label": "W1", "sql": W1_SQL, "output": OUTPUT, "backend": "hashmap"}]
            try:  # a large run can lose its TaskManager on a loaded machine: keep the others
                flink = flink_runs(flink_python, tables, q, runs)["W1"]
            except RuntimeError as e:
                print(f"Flink at {n:,} rows per side failed: {e}", flush=True)
        rows.append(
            (
                f"{n:,}",
                product.show("end_to_end"),
                product.show("engine"),
                f"{product.median('engine') / n * 1e6:.2f}",
                flink.show("end_to_end") if flink else "",
                flink.show("engine") if flink else "",
                f"{flink.median('engine') / n * 1e6:.2f}" if flink else "",
                f"{product.rows:,}" + ("" if not flink or flink.rows == product.rows else " !="),
            )
        )
        if flink and flink.rows != product.rows:
            raise AssertionError(f"W1 at {n:,}: {product.rows:,} rows != Flink's {flink.rows:,}")
    print()
    print(
        tableau(
            [
                "rows per side",
                "JVM hashmap end-to-end s",
                "engine s",
                "engine us/row",
                "Flink end-to-end s",
                "Flink engine s",
                "Flink engine us/row",
                "result rows (= Flink)",
            ],
            rows,
        )
    )
    print(goal("JVM engine us/row at the largest / at the smallest", per_row[-1] / per_row[0], 1.5))


if __name__ == "__main__":
    sys.exit(main())
