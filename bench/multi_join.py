"""Multi-way join (FLIP-516) vs chains of binary joins, Spark's own and Apache Flink, in one run.

    .venv/bin/python bench/multi_join.py                    # 3 tables x 100k keys
    .venv/bin/python bench/multi_join.py --flink-python .flink-venv/bin/python
    .venv/bin/python bench/multi_join.py --keys 10000       # a quick look

Orders, Shipments and Payments each hold one row per order id (their primary key); every
query joins the three on it, reading the same Parquet files as streams in one micro-batch
(trigger availableNow) into Spark's no-op sink. The time is query start to termination.

(a) Spark's native stream-stream inner joins, two in a row, written in PySpark;
(b) the Table API's INNER-INNER chain as two server_ext binary join operators;
(c) the same chain as one multi-way join operator;
(d) an INNER-LEFT chain as binary operators, and (e) as one multi-way join;
(b) to (e) on server_ext's JVM operators, on hashmap and on RocksDB;
W3 on Flink 2.3 (--flink-python): the INNER-INNER chain, with and without its multi-way join
(``table.optimizer.multi-join.enabled``), on hashmap, against (b) and (c) on the JVM operators
(hashmap): both systems read the same CSV copy of the tables and write to a blackhole table;
end to end and engine time, median and spread of --runs timed runs after a warm-up, result
rows asserted equal (see tiers.comparison).

Goal (issue 13): the JVM operators (hashmap) <= 0.8x Flink on W3 (the INNER-INNER chain, each
system's fastest plan), in each window.

For each: seconds, ratio to (a), and the state it keeps at the end: rows (Spark's
numRowsTotal over the stateful operators) and bytes (the state stores' SST files for
RocksDB, memory for the HDFS-backed store). The multi-way join keeps its inputs only; a
binary chain also keeps the first join's results in the second join's state.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from noop_run import run_to_noop as run
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

from server_ext.conf import HDFS_PROVIDER
from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tableapi.result import tableau

TABLES = {  # name: columns (the first is the key)
    "Orders": ("order_id", "amount", "customer"),
    "Ships": ("s_id", "carrier", "weight"),
    "Pays": ("p_id", "paid", "method"),
}


def make_data(spark: Any, root: Path, keys: int) -> None:
    """One row per key in each table; payments cover 90% of the orders (left join pads)."""
    from pyspark.sql.connect import functions as F

    for i, (name, (key, a, b)) in enumerate(TABLES.items()):
        n = keys if name != "Pays" else keys * 9 // 10
        spark.range(n).select(
            F.col("id").alias(key),
            (F.col("id") * (7 + i) % 1000).alias(a),
            (F.col("id") * (13 + i) % 97).alias(b),
        ).repartition(2).write.mode("overwrite").parquet(str(root / name))


def register(env: TableEnvironment, root: Path, fmt: str = "parquet") -> None:
    """The three tables on the Parquet files, or (``fmt='csv'``) on their CSV copies."""
    for name, columns in TABLES.items():
        schema = Schema.new_builder()
        for c in columns:
            schema.column(c, "BIGINT NOT NULL" if c == columns[0] else "BIGINT")
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema.primary_key(columns[0]).build())
            .option("path", str(root / (name if fmt == "parquet" else f"{name}-csv")))
            .option("format", fmt)
            .build(),
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100_000, help="order ids (rows per table)")
    parser.add_argument("--remote", help="sc://host:port (default: an embedded server)")
    add_flink_option(parser)
    args = parser.parse_args()
    url = server_url(args)

    t0 = time.perf_counter()
    env = TableEnvironment.create(mode="streaming", remote=url)
    spark = env.spark
    print(f"Connected in {time.perf_counter() - t0:.1f} s; 3 tables x {args.keys:,} keys")
    root = Path(tempfile.mkdtemp(prefix="bench_multi_join_"))
    try:
        make_data(spark, root, args.keys)
        register(env, root)
        orders, ships, pays = (env.from_path(n) for n in TABLES)

        def chain(second: str) -> Any:
            first = orders.join(ships, col("order_id") == col("s_id"))
            return getattr(first, second)(pays, col("order_id") == col("p_id"))

        def native() -> Any:
            frames = [
                spark.readStream.schema(", ".join(f"{c} BIGINT" for c in cols)).parquet(
                    str(root / name)
                )
                for name, cols in TABLES.items()
            ]
            o, s, p = frames
            return o.join(s, o["order_id"] == s["s_id"]).join(p, o["order_id"] == p["p_id"])

        results: list[tuple[str, dict[str, Any]]] = []

        def measure(label: str, make_df: Any, provider: str | None = None) -> dict[str, Any]:
            print(f"running {label} ...", flush=True)
            if provider:
                spark.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
            r = run(spark, make_df(), root / f"ckpt{len(results)}")
            results.append((label, r))
            return r

        env.config.set("table.exec.join.spark-native.enabled", "false")
        a = measure("(a) Spark native inner joins x 2", native, HDFS_PROVIDER)

        def planned(second: str, multi: bool) -> Any:
            env.config.set("table.optimizer.multi-join.enabled", str(multi).lower())
            table = chain(second)
            assert ("MultiJoin(" in table.explain()) is multi
            return table.to_spark()

        for backend in BACKENDS:
            on_backend(env, backend)
            print(f"warm-up on {backend} (not counted) ...", flush=True)
            run(spark, planned("join", True), root / f"warmup-{backend}")
            t = f", {backend}"
            measure("(b) INNER-INNER, 2 binary" + t, lambda: planned("join", False))
            measure("(c) INNER-INNER, multi-way" + t, lambda: planned("join", True))
            measure("(d) INNER-LEFT, 2 binary" + t, lambda: planned("left_outer_join", False))
            measure("(e) INNER-LEFT, multi-way" + t, lambda: planned("left_outer_join", True))

        compared = []
        if args.flink_python:
            compared = flink_comparison(url, spark, root, args.flink_python, args.runs)

        rows = [
            (
                label,
                r["store"],
                f"{r['input']:,}",
                f"{r['seconds']:.2f}",
                f"{r['engine']:.2f}",
                f"{r['seconds'] / a['seconds']:.2f}x",
                f"{r['state_rows']:,}",
                f"{r['state_bytes'] / 1e6:.1f}",
                f"{r['state_bytes'] / args.keys:.0f}",
            )
            for label, r in results
        ]
        print()
        print(
            tableau(
                [
                    "query",
                    "store",
                    "input rows",
                    "seconds",
                    "engine s",
                    "vs (a)",
                    "state rows",
                    "state MB",
                    "state bytes/key",
                ],
                rows,
            )
        )
        by = dict(results)
        for backend in BACKENDS:
            for binary, multi in (("(b)", "(c)"), ("(d)", "(e)")):
                b = next(r for k, r in by.items() if k.startswith(binary) and k.endswith(backend))
                m = next(r for k, r in by.items() if k.startswith(multi) and k.endswith(backend))
                print(
                    f"{backend}: {multi} vs {binary}: {m['seconds'] / b['seconds']:.2f}x "
                    f"the time, {m['state_rows'] / max(b['state_rows'], 1):.2f}x the state rows, "
                    f"{m['state_bytes'] / max(b['state_bytes'], 1):.2f}x the state bytes"
                )
        for window in ("end_to_end", "engine"):
            if compared:
                print(
                    goal(
                        f"JVM hashmap W3 / Flink W3 (each one's best plan), "
                        f"{window.replace('_', '-')}",
                        min(p.median(window) for _, p, _ in compared)
                        / min(f.median(window) for _, _, f in compared),
                        0.8,
                    )
                )
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)
        env.close()


def flink_comparison(
    url: str, spark: Any, root: Path, flink_python: str, runs: int
) -> list[tuple[str, Any, Any]]:
    """W3, the INNER-INNER chain, as binary joins and as a multi-way join: (b) and (c) on
    the JVM operators (hashmap) against Flink's two plans, both on the CSV copies, into blackhole
    tables; prints the comparison table."""
    tables = [
        {
            "name": name,
            "path": str(csv_copy(spark, root / name, root / f"{name}-csv")),
            "columns": [[c, "BIGINT"] for c in cols],
            "extra": [f"PRIMARY KEY ({cols[0]}) NOT ENFORCED"],
        }
        for name, cols in TABLES.items()
    ]
    cenv = TableEnvironment.create(mode="streaming", remote=url)
    try:
        register(cenv, root, "csv")
        cenv.config.set("table.exec.join.spark-native.enabled", "false")
        on_backend(cenv, "hashmap")

        def w3() -> Any:
            o, s, p = (cenv.from_path(n) for n in TABLES)
            return o.join(s, col("order_id") == col("s_id")).join(p, col("order_id") == col("p_id"))

        product = {}
        for label, multi in (("W3 binary", False), ("W3 multi-way", True)):
            print(f"comparison: {label}, JVM on hashmap ({runs + 1} runs) ...", flush=True)
            cenv.config.set("table.optimizer.multi-join.enabled", str(multi).lower())
            assert ("MultiJoin(" in w3().explain()) is multi
            product[label] = product_runs(cenv, w3, runs)
    finally:
        cenv.close()
    sql = "SELECT * FROM Orders JOIN Ships ON order_id = s_id JOIN Pays ON order_id = p_id"
    output = [[c, "BIGINT"] for cols in TABLES.values() for c in cols]
    queries = [
        {"label": "W3 binary", "sql": sql, "output": output},
        {"label": "W3 multi-way", "sql": sql, "output": output, "multi_join": True},
    ]
    flink = flink_runs(flink_python, tables, queries, runs)
    compared = [(label, product[label], flink[label]) for label in product]
    print()
    print("Flink comparison: W3 on the JVM (hashmap), each plan against Flink's same plan")
    print(comparison(compared, runs))
    return compared


if __name__ == "__main__":
    sys.exit(main())
