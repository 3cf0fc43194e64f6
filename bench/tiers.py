"""What the join benchmarks share: one Table API query on each state backend, Apache Flink on
the same data beside them, and the goals of issue 13.

Backends (``state.backend.type``): the JVM operators (the only runtime of the stateful
operators since issue 31 retired the Python tier) on the HDFS-backed store (``hashmap``) and
on RocksDB. Flink 2.3 runs in its own virtualenv (``--flink-python``, a
PyFlink 2.3 interpreter) through ``flink_bench.py``.

The Flink comparison (:func:`product_runs`, :func:`flink_runs`, :func:`comparison`) times
both systems the same way: the same CSV files (PyFlink 2.3 has no Parquet format), a
blackhole sink on both sides, one warm-up then ``--runs`` timed runs, both windows (end to
end, and the engine's own time), and the result's rows counted on both and asserted equal.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from noop_run import engine_seconds

from tableapi import Schema, Table, TableDescriptor, TableEnvironment
from tableapi.config import STATE_BACKEND
from tableapi.result import tableau

#: The state backends, in the order the tables show them.
BACKENDS = ("hashmap", "rocksdb")
FLINK_SCRIPT = Path(__file__).resolve().parent / "flink_bench.py"


def on_backend(env: TableEnvironment, backend: str) -> None:
    """The next queries of ``env`` keep their state on ``backend``."""
    env.config.set(STATE_BACKEND, backend)


def add_flink_option(parser: Any) -> None:
    parser.add_argument(
        "--flink-python",
        help="a PyFlink 2.3 interpreter (e.g. .flink-venv/bin/python): also run Apache Flink",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=5,
        help="timed runs of each system in the Flink comparison, after a warm-up (default 5)",
    )
    parser.add_argument(
        "--driver-memory",
        default="4g",
        help="the embedded server's JVM heap (the hashmap store keeps state on it; default 4g)",
    )


def server_url(args: Any) -> str:
    """``--remote``, else an embedded local[2] server with ``--driver-memory`` of heap."""
    if args.remote:
        return str(args.remote)
    from tableapi.session import EmbeddedServer

    conf = {"spark.driver.memory": args.driver_memory}
    return EmbeddedServer.start(master="local[2]", conf=conf).url


def csv_copy(spark: Any, parquet: Path, out: Path, keep: Any = None) -> Path:
    """A CSV copy (no header) of a Parquet directory, which both systems read in the Flink
    comparison (only the rows ``keep``, a Spark Column, selects); timestamps as
    ``yyyy-MM-dd HH:mm:ss.SSS`` (Flink's and Spark's CSV readers both parse that as a
    TIMESTAMP(3))."""
    from pyspark.sql.connect import functions as F
    from pyspark.sql.types import TimestampType

    df = spark.read.parquet(str(parquet))
    if keep is not None:
        df = df.where(keep)
    cols = [
        F.date_format(F.col(f.name), "yyyy-MM-dd HH:mm:ss.SSS").alias(f.name)
        if isinstance(f.dataType, TimestampType)
        else F.col(f.name)
        for f in df.schema.fields
    ]
    df.select(*cols).write.mode("overwrite").csv(str(out))
    return out


@dataclasses.dataclass
class Windows:
    """One system's timed runs of one workload, in the two windows, and the rows of its
    result (counted in a separate run of the same query, not timed)."""

    end_to_end: list[float]  # build and submit to the end of the job, seconds per run
    engine: list[float]  # the engine's own time: Flink's net runtime, Spark's triggers
    rows: int  # the result's rows (the changelog applied)

    def median(self, window: str) -> float:
        return statistics.median(getattr(self, window))

    def show(self, window: str) -> str:
        """``median (fastest-slowest)`` of a window, in seconds."""
        runs = getattr(self, window)
        return f"{statistics.median(runs):.2f} ({min(runs):.2f}-{max(runs):.2f})"


def blackhole_for(env: TableEnvironment, table: Table, name: str = "Blackhole") -> str:
    """A ``blackhole`` table with ``table``'s columns (replacing one of that name)."""
    schema = Schema.new_builder()
    for f in table.row_type:
        schema.column(f.name, f.type.plain())
    if name in env.list_tables():
        env.drop_temporary_table(name)
    env.create_temporary_table(
        name, TableDescriptor.for_connector("blackhole").schema(schema.build()).build()
    )
    return name


def product_runs(env: TableEnvironment, build: Callable[[], Table], runs: int) -> Windows:
    """The product's side of a Flink comparison: ``build()`` (the Table API query, built
    anew each run) inserted into a ``blackhole`` table, once to warm up, then ``runs`` timed
    runs. End to end: from building the query to ``execute_insert`` returning (bounded
    inputs: the query has ended); engine: Spark's trigger execution time of its batches.
    The rows are counted in one more run, into the client (``execute().materialize()``)."""
    sink = blackhole_for(env, build())
    end_to_end, engine = [], []
    for i in range(runs + 1):
        seconds, engine_s = product_run(build, sink)
        if i:  # the first run is the warm-up
            end_to_end.append(seconds)
            engine.append(engine_s)
    return Windows(end_to_end, engine, product_rows(build))


def product_run(build: Callable[[], Table], sink: str) -> tuple[float, float]:
    """One timed run of ``build()`` into the blackhole table ``sink``: end-to-end and engine
    seconds (see :func:`product_runs`)."""
    start = time.perf_counter()
    result = build().execute_insert(sink)
    result.wait()
    seconds = time.perf_counter() - start
    return seconds, engine_seconds(result.query)  # type: ignore[attr-defined]


def product_rows(build: Callable[[], Table]) -> int:
    """The rows of ``build()``'s result, the changelog applied (an untimed run)."""
    counted = build().execute()
    rows = len(counted.materialize())
    counted.cancel()
    return rows


def flink_runs(
    flink_python: str,
    tables: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    runs: int,
    jars: list[str] | None = None,
) -> dict[str, Windows]:
    """Flink's side, per query label (see ``flink_bench.py`` for the job format; ``jars``:
    file URIs of jars its job loads, such as a format's)."""
    job = {"tables": tables, "queries": queries, "parallelism": 2, "runs": runs}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({**job, "jars": jars or []}, f)
    print(f"running Apache Flink ({len(queries)} queries x {runs + 1} runs) ...", flush=True)
    proc = subprocess.run(
        [flink_python, str(FLINK_SCRIPT), f.name], capture_output=True, text=True, check=False
    )
    Path(f.name).unlink()
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-6000:], file=sys.stderr)
        raise RuntimeError("the Flink benchmark failed (its output is above)")
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            out[r["label"]] = Windows(r["end_to_end"], r["engine"], r["rows"])
    return out


def comparison(rows: list[tuple[str, Windows, Windows]], runs: int) -> str:
    """The Flink comparison: per workload (label, product, Flink) both windows of both
    systems, median (fastest-slowest) of ``runs`` timed runs after a warm-up, the ratios
    of the medians, and the result rows of each; raises if the row counts differ."""
    table = tableau(
        [
            "workload",
            "product end-to-end s",
            "Flink end-to-end s",
            "ratio",
            "product engine s",
            "Flink engine s",
            "ratio",
            "rows (product = Flink)",
        ],
        [
            (
                label,
                p.show("end_to_end"),
                f.show("end_to_end"),
                f"{p.median('end_to_end') / f.median('end_to_end'):.2f}x",
                p.show("engine"),
                f.show("engine"),
                f"{p.median('engine') / f.median('engine'):.2f}x",
                f"{p.rows:,}" if p.rows == f.rows else f"{p.rows:,} != {f.rows:,}",
            )
            for label, p, f in rows
        ],
    )
    notes = (
        f"Median (fastest-slowest) of {runs} timed runs after one warm-up, same CSV files, both "
        "writing to a blackhole sink. End to end: the product from building the Table API query "
        "to the end of its insert; Flink from execute_sql (planning, a MiniCluster per job) to "
        "the end of wait(). Engine: Spark's triggerExecution summed over the query's batches; "
        "Flink's job net runtime. Rows: the result's rows (changelog applied), counted in one "
        "more untimed run on each system (the product: execute().materialize(); Flink: SELECT "
        "COUNT(*) over the query)."
    )
    differ = [label for label, p, f in rows if p.rows != f.rows]
    if differ:
        raise AssertionError(f"{table}\nthe two systems' result rows differ on {differ}")
    return f"{table}\n{notes}"


def spark_comparison(label: str, product: Windows, spark: Windows, runs: int) -> str:
    """The comparison with Spark's own operators (one workload, ``label``), in the Flink
    comparison's shape; raises if the rows differ."""
    table = tableau(
        [
            "workload",
            "product end-to-end s",
            "Spark end-to-end s",
            "ratio",
            "product engine s",
            "Spark engine s",
            "ratio",
            "rows (product = Spark)",
        ],
        [
            (
                label,
                product.show("end_to_end"),
                spark.show("end_to_end"),
                f"{product.median('end_to_end') / spark.median('end_to_end'):.2f}x",
                product.show("engine"),
                spark.show("engine"),
                f"{product.median('engine') / spark.median('engine'):.2f}x",
                f"{product.rows:,}"
                if product.rows == spark.rows
                else f"{product.rows:,} != {spark.rows:,}",
            )
        ],
    )
    if product.rows != spark.rows:
        raise AssertionError(f"{table}\nthe product's and Spark's result rows differ")
    notes = (
        f"Median (fastest-slowest) of {runs} timed runs after one warm-up, same CSV files, "
        "HDFS-backed state store on both. End to end: the product from building the Table API "
        "query to the end of its insert into a blackhole table; Spark from building the "
        "DataFrame and start() (noop sink) to awaitTermination(). Engine: "
        "triggerExecution summed over the query's batches. Rows: the product's "
        "execute().materialize(); Spark's rows in a memory sink (one more run each)."
    )
    return f"{table}\n{notes}"


def goal(name: str, value: float, limit: float) -> str:
    """A goal line: ``name = value (goal <= limit): met | MISSED``."""
    return f"{name} = {value:.2f} (goal <= {limit}): {'met' if value <= limit else 'MISSED'}"
