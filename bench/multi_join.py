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
(b) to (e) on each operator tier: Python (RocksDB), JVM on hashmap and on RocksDB;
W3 on Flink 2.3 (--flink-python): the INNER-INNER chain, with and without its multi-way join
(``table.optimizer.multi-join.enabled``), on hashmap.

Goal (issue 13): the JVM tier (hashmap) <= 0.8x Flink on W3 (the INNER-INNER chain, each
system's fastest plan).

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
from tiers import TIERS, add_flink_option, csv_copy, flink_times, goal, on_tier, server_url

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


def register(env: TableEnvironment, root: Path) -> None:
    for name, columns in TABLES.items():
        schema = Schema.new_builder()
        for c in columns:
            schema.column(c, "BIGINT NOT NULL" if c == columns[0] else "BIGINT")
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema.primary_key(columns[0]).build())
            .option("path", str(root / name))
            .option("format", "parquet")
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

        for tier, backend in TIERS:
            on_tier(env, tier, backend)
            print(f"warm-up of the {tier} tier (not counted) ...", flush=True)
            run(spark, planned("join", True), root / f"warmup-{tier}-{backend}")
            t = f", {tier} {backend}"
            measure("(b) INNER-INNER, 2 binary" + t, lambda: planned("join", False))
            measure("(c) INNER-INNER, multi-way" + t, lambda: planned("join", True))
            measure("(d) INNER-LEFT, 2 binary" + t, lambda: planned("left_outer_join", False))
            measure("(e) INNER-LEFT, multi-way" + t, lambda: planned("left_outer_join", True))

        flink: dict[str, float] = {}
        if args.flink_python:
            tables = [
                {
                    "name": name,
                    "path": str(csv_copy(spark, root / name, root / f"{name}-csv")),
                    "columns": [[c, "BIGINT"] for c in cols],
                    "extra": [f"PRIMARY KEY ({cols[0]}) NOT ENFORCED"],
                }
                for name, cols in TABLES.items()
            ]
            sql = "SELECT * FROM Orders JOIN Ships ON order_id = s_id JOIN Pays ON order_id = p_id"
            output = [[c, "BIGINT"] for cols in TABLES.values() for c in cols]
            queries = [
                {"label": "W3 binary", "sql": sql, "output": output},
                {"label": "W3 multi-way", "sql": sql, "output": output, "multi_join": True},
            ]
            flink = flink_times(args.flink_python, tables, queries)

        rows = [
            (
                label,
                r["store"],
                f"{r['input']:,}",
                f"{r['seconds']:.2f}",
                f"{r['seconds'] / a['seconds']:.2f}x",
                f"{r['state_rows']:,}",
                f"{r['state_bytes'] / 1e6:.1f}",
                f"{r['state_bytes'] / args.keys:.0f}",
            )
            for label, r in results
        ]
        rows += [
            (f"W3 Apache Flink 2.3, {k}", "heap", "", f"{v:.2f}", "", "", "", "")
            for k, v in flink.items()
        ]
        print()
        print(
            tableau(
                [
                    "query",
                    "store",
                    "input rows",
                    "seconds",
                    "vs (a)",
                    "state rows",
                    "state MB",
                    "state bytes/key",
                ],
                rows,
            )
        )
        by = dict(results)
        for tier, backend in TIERS:
            for binary, multi in (("(b)", "(c)"), ("(d)", "(e)")):
                b = next(
                    r for k, r in by.items() if k.startswith(binary) and tier in k and backend in k
                )
                m = next(
                    r for k, r in by.items() if k.startswith(multi) and tier in k and backend in k
                )
                print(
                    f"{tier} {backend}: {multi} vs {binary}: {m['seconds'] / b['seconds']:.2f}x "
                    f"the time, {m['state_rows'] / max(b['state_rows'], 1):.2f}x the state rows, "
                    f"{m['state_bytes'] / max(b['state_bytes'], 1):.2f}x the state bytes"
                )
        if flink:
            jvm = min(
                r["seconds"]
                for k, r in by.items()
                if k[:3] in ("(b)", "(c)") and "jvm hashmap" in k
            )
            print(
                goal(
                    "JVM hashmap W3 (best plan) / Flink W3 (best plan)",
                    jvm / min(flink.values()),
                    0.8,
                )
            )
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)
        env.close()


if __name__ == "__main__":
    sys.exit(main())
