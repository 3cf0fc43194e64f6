"""What the join benchmarks share: one Table API query on each operator tier and state backend,
Apache Flink on the same data beside them, and the goals of issue 13.

Tiers (``table.exec.operator.tier`` x ``state.backend.type``): the Python processors (they run
on RocksDB whatever the option says) and the JVM operators on the HDFS-backed store
(``hashmap``) and on RocksDB. Flink 2.3 runs in its own virtualenv (``--flink-python``, a
PyFlink 2.3 interpreter) through ``flink_bench.py``, reading CSV copies of the same Parquet
files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tableapi import TableEnvironment
from tableapi.config import OPERATOR_TIER, STATE_BACKEND

#: (tier, backend) in the order the tables show them.
TIERS = (("python", "rocksdb"), ("jvm", "hashmap"), ("jvm", "rocksdb"))
FLINK_SCRIPT = Path(__file__).resolve().parent / "flink_bench.py"


def on_tier(env: TableEnvironment, tier: str, backend: str) -> None:
    """The next queries of ``env`` compile for ``tier`` on ``backend``."""
    env.config.set(OPERATOR_TIER, tier)
    env.config.set(STATE_BACKEND, backend)


def add_flink_option(parser: Any) -> None:
    parser.add_argument(
        "--flink-python",
        help="a PyFlink 2.3 interpreter (e.g. .flink-venv/bin/python): also run Apache Flink",
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


def csv_copy(spark: Any, parquet: Path, out: Path) -> Path:
    """A CSV copy (no header) of a Parquet directory, for Flink; timestamps as epoch millis."""
    from pyspark.sql.connect import functions as F
    from pyspark.sql.types import TimestampType

    df = spark.read.parquet(str(parquet))
    cols = [
        F.unix_millis(F.col(f.name)).alias(f.name)
        if isinstance(f.dataType, TimestampType)
        else F.col(f.name)
        for f in df.schema.fields
    ]
    df.select(*cols).write.mode("overwrite").csv(str(out))
    return out


def flink_times(
    flink_python: str, tables: list[dict[str, Any]], queries: list[dict[str, Any]]
) -> dict[str, float]:
    """Flink's seconds per query label (see ``flink_bench.py`` for the job format)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"tables": tables, "queries": queries, "parallelism": 2}, f)
    print(f"running Apache Flink ({len(queries)} queries) ...", flush=True)
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
            out[r["label"]] = r["seconds"]
    return out


def goal(name: str, value: float, limit: float) -> str:
    """A goal line: ``name = value (goal <= limit): met | MISSED``."""
    return f"{name} = {value:.2f} (goal <= {limit}): {'met' if value <= limit else 'MISSED'}"
