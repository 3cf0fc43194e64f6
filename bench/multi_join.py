"""Multi-way join (FLIP-516) vs chains of binary joins, and Spark's own, in one run.

    .venv/bin/python bench/multi_join.py                    # 3 tables x 100k keys
    .venv/bin/python bench/multi_join.py --keys 10000       # a quick look

Orders, Shipments and Payments each hold one row per order id (their primary key); every
query joins the three on it, reading the same Parquet files as streams in one micro-batch
(trigger availableNow) into Spark's no-op sink. The time is query start to termination.

(a) Spark's native stream-stream inner joins, two in a row, written in PySpark;
(b) the Table API's INNER-INNER chain as two server_ext binary join operators;
(c) the same chain as one multi-way join operator;
(d) an INNER-LEFT chain as binary operators, and (e) as one multi-way join.

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
    args = parser.parse_args()

    t0 = time.perf_counter()
    env = TableEnvironment.create(mode="streaming", remote=args.remote)
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
        print("warm-up of the Python workers (not counted) ...", flush=True)
        run(spark, chain("join").to_spark(), root / "warmup")
        a = measure("(a) Spark native inner joins x 2", native, HDFS_PROVIDER)

        def planned(second: str, multi: bool) -> Any:
            env.config.set("table.optimizer.multi-join.enabled", str(multi).lower())
            table = chain(second)
            assert ("MultiJoin(" in table.explain()) is multi
            return table.to_spark()

        measure("(b) INNER-INNER, 2 binary operators", lambda: planned("join", False))
        measure("(c) INNER-INNER, 1 multi-way join", lambda: planned("join", True))
        measure("(d) INNER-LEFT, 2 binary operators", lambda: planned("left_outer_join", False))
        measure("(e) INNER-LEFT, 1 multi-way join", lambda: planned("left_outer_join", True))

        rows = [
            (
                label,
                r["store"],
                f"{r['input']:,}",
                f"{r['seconds']:.2f}",
                f"{r['seconds'] / a['seconds']:.2f}x",
                f"{r['state_rows']:,}",
                f"{r['state_bytes'] / 1e6:.1f}",
            )
            for label, r in results
        ]
        print()
        print(
            tableau(
                ["query", "store", "input rows", "seconds", "vs (a)", "state rows", "state MB"],
                rows,
            )
        )
        by = dict(results)
        for binary, multi in (("(b)", "(c)"), ("(d)", "(e)")):
            b = next(r for k, r in by.items() if k.startswith(binary))
            m = next(r for k, r in by.items() if k.startswith(multi))
            print(
                f"{multi} vs {binary}: {m['seconds'] / b['seconds']:.2f}x the time, "
                f"{m['state_rows'] / max(b['state_rows'], 1):.2f}x the state rows, "
                f"{m['state_bytes'] / max(b['state_bytes'], 1):.2f}x the state bytes"
            )
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)
        env.close()


if __name__ == "__main__":
    sys.exit(main())
