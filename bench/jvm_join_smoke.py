"""Smoke benchmark of server_ext's JVM join operator: Spark's native stream-stream join, the
Python processor and the JVM operator (both state stores), in one run.

    flock /tmp/tableapi-bench.lock .venv/bin/python bench/jvm_join_smoke.py   # 20k x 20k
    flock /tmp/tableapi-bench.lock .venv/bin/python bench/jvm_join_smoke.py \
        --rows 200000 --keys 100000

Each query reads the same Parquet files as two streams in one availableNow micro-batch into
Spark's no-op sink (bench/noop_run.py); the time is query start to termination. The
operators get the tagged union the compiler builds (``__k0``, ``__side``, ``__kind``,
``__seq``, ``__l``, ``__r``) and run as the compiler would call them: the Python processor
through ``transformWithState`` (RocksDB only), the JVM one through ``jvm_join`` (the Spark
Connect plugin, ``flatMapGroupsWithState`` with one binary state value per key).
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
from pyspark.sql.connect import functions as F
from pyspark.sql.types import ByteType, LongType, StructField, StructType

from server_ext.joins import join_processor
from server_ext.joins.spec import JoinSpec, SideSpec, time_mode
from server_ext.launcher import ROCKSDB_PROVIDER
from tableapi import TableEnvironment
from tableapi.compiler.jvm_operators import jvm_join, jvm_operators_available
from tableapi.result import tableau

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
LEFT = (("k", "BIGINT"), ("l_id", "BIGINT"), ("l_v", "BIGINT"))
RIGHT = (("rk", "BIGINT"), ("r_id", "BIGINT"), ("r_v", "BIGINT"))


def make_data(spark: Any, root: Path, rows: int, keys: int) -> None:
    """As bench/streaming_join.py: right keys spread over 10% more than the left ones."""
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


def streams(spark: Any, root: Path) -> tuple[Any, Any]:
    ddl = ", ".join(f"{n} BIGINT" for n, _ in LEFT)
    left = spark.readStream.schema(ddl).parquet(str(root / "left"))
    right = spark.readStream.schema(", ".join(f"{n} BIGINT" for n, _ in RIGHT)).parquet(
        str(root / "right")
    )
    return left, right


def tagged_union(spark: Any, root: Path) -> Any:
    """Both inputs tagged by side, as tableapi/compiler/streaming.py's _join builds them."""
    left, right = streams(spark, root)
    lstruct = "struct<" + ", ".join(f"{n}: bigint" for n, _ in LEFT) + ">"
    rstruct = "struct<" + ", ".join(f"{n}: bigint" for n, _ in RIGHT) + ">"

    def tag(df: Any, side: int, key: str, names: tuple[tuple[str, str], ...]) -> Any:
        own = F.struct(*(n for n, _ in names))
        return df.select(
            F.col(key).alias("__k0"),
            F.lit(side).cast("tinyint").alias("__side"),
            F.lit(0).cast("tinyint").alias("__kind"),
            F.lit("").alias("__seq"),
            (own if side == 0 else F.lit(None).cast(lstruct)).alias("__l"),
            (F.lit(None).cast(rstruct) if side == 0 else own).alias("__r"),
        )

    return tag(left, 0, "k", LEFT).unionAll(tag(right, 1, "rk", RIGHT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000, help="rows per side")
    parser.add_argument("--keys", type=int, default=10_000, help="distinct join keys")
    parser.add_argument("--remote", help="sc://host:port (default: an embedded server)")
    args = parser.parse_args()

    env = TableEnvironment.create(mode="streaming", remote=args.remote)
    spark = env.spark
    if not jvm_operators_available(spark):
        print("the server has no server_ext JVM plugin (see the server's log)", file=sys.stderr)
        return 2
    print(f"{args.rows:,} x {args.rows:,} rows, {args.keys:,} keys", flush=True)
    root = Path(tempfile.mkdtemp(prefix="bench_jvm_join_"))
    results: list[tuple[str, dict[str, Any]]] = []
    try:
        make_data(spark, root, args.rows, args.keys)

        def native() -> Any:
            left, right = streams(spark, root)
            return left.join(right, left["k"] == right["rk"])

        def operator(kind: str, tier: str) -> Any:
            spec = JoinSpec(kind, SideSpec(LEFT), SideSpec(RIGHT), null_safe=(False,))
            output = StructType(
                [StructField("__kind", ByteType(), False)]
                + [StructField(n, LongType(), True) for n, _ in spec.output_fields()]
            )
            union = tagged_union(spark, root)
            if tier == "python":
                return union.groupBy("__k0").transformWithState(
                    join_processor(spec), output, "Append", time_mode(spec)
                )
            return jvm_join(union, ["__k0"], spec, output)

        def measure(label: str, df: Any, provider: str, counted: bool = True) -> None:
            print(f"running {label} ({'counted' if counted else 'warm-up'}) ...", flush=True)
            spark.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
            r = run_to_noop(spark, df, root / f"ckpt-{time.monotonic_ns()}")
            if counted:
                results.append((label, r))

        measure("native", native(), HDFS_PROVIDER, counted=False)
        measure("python", operator("inner", "python"), ROCKSDB_PROVIDER, counted=False)
        measure("jvm", operator("inner", "jvm"), HDFS_PROVIDER, counted=False)
        measure("Spark native stream-stream inner join", native(), HDFS_PROVIDER)
        measure("Spark native stream-stream inner join", native(), ROCKSDB_PROVIDER)
        measure("server_ext Python processor, inner", operator("inner", "python"), ROCKSDB_PROVIDER)
        measure("server_ext JVM operator, inner", operator("inner", "jvm"), HDFS_PROVIDER)
        measure("server_ext JVM operator, inner", operator("inner", "jvm"), ROCKSDB_PROVIDER)
        measure("server_ext JVM operator, left outer", operator("left", "jvm"), HDFS_PROVIDER)
        measure("server_ext JVM operator, left outer", operator("left", "jvm"), ROCKSDB_PROVIDER)

        native_s = {r["store"]: r["seconds"] for label, r in results if "native" in label}
        rows = [
            (
                label,
                "hashmap (HDFS)" if r["store"] == "HDFS" else "rocksdb",
                f"{r['seconds']:.2f}",
                f"{r['seconds'] / native_s['HDFS']:.2f}x",
                r["input"],
                r["state_rows"],
                f"{r['state_bytes'] / max(r['state_rows'], 1):.0f}",
            )
            for label, r in results
        ]
        print()
        print(
            tableau(
                [
                    "query",
                    "state store",
                    "seconds",
                    "vs native (hashmap)",
                    "input rows",
                    "state rows",
                    "state bytes/row",
                ],
                rows,
            )
        )
        return 0
    finally:
        env.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
