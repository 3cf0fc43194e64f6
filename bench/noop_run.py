"""Shared by the streaming benchmarks: run a stream to Spark's no-op sink, time it in both
windows, count what it emits, and read the state it keeps from the query's progress."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tableapi.result import observed_metric

OUT = "bench_out"  # the observation that counts the rows a query emits


def run_to_noop(spark: Any, df: Any, checkpoint: Path) -> dict[str, Any]:
    """Run ``df`` to the no-op sink in one availableNow batch: ``seconds`` (query start to
    termination), ``engine`` (Spark's trigger execution time summed over the batches),
    ``output`` (rows emitted, changes of every kind), input rows, state rows (numRowsTotal
    over the stateful operators) and state bytes (the SST files on RocksDB, memory on the
    HDFS-backed store)."""
    from pyspark.sql.connect import functions as F

    start = time.perf_counter()
    query = (
        df.observe(OUT, F.count(F.lit(1)).alias("n"))
        .writeStream.format("noop")
        .trigger(availableNow=True)
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    query.awaitTermination()
    seconds = time.perf_counter() - start
    output = sum(
        int(observed_metric((p.observedMetrics or {}).get(OUT), "n") or 0)
        for p in query.recentProgress
    )
    return {
        "seconds": seconds,
        "engine": engine_seconds(query),
        "output": output,
        **state_of(spark, query),
        **phases_of(query),
    }


def phases_of(query: Any) -> dict[str, Any]:
    """Where a finished query's engine time went: ``phases``, Spark's ``durationMs`` parts
    (ms, summed over the batches; ``addBatch`` is the batch's jobs), and ``commit_ms``, the
    state operators' commit time (writing their state files to the checkpoint)."""
    phases: dict[str, int] = {}
    commit = 0
    for p in query.recentProgress:
        for name, ms in (p.durationMs or {}).items():
            if name != "triggerExecution":
                phases[name] = phases.get(name, 0) + int(ms)
        commit += sum(int(s.commitTimeMs or 0) for s in p.stateOperators or [])
    return {"phases": phases, "commit_ms": commit}


def engine_seconds(query: Any) -> float:
    """Spark's engine time of a finished query: ``durationMs['triggerExecution']`` summed
    over its micro-batches (Spark keeps the last 100: a bounded run has a few)."""
    return sum((p.durationMs or {}).get("triggerExecution", 0) for p in query.recentProgress) / 1e3


def state_of(spark: Any, query: Any) -> dict[str, Any]:
    """A finished query's input rows and the state it keeps (rows, bytes, store)."""
    used = spark.conf.get("spark.sql.streaming.stateStore.providerClass")
    progress = [p for p in query.recentProgress if (p.numInputRows or 0) > 0]
    states = progress[-1].stateOperators if progress else []
    rocks = "RocksDB" in used
    size = sum(
        int((s.customMetrics or {}).get("rocksdbSstFileSize", 0)) if rocks else s.memoryUsedBytes
        for s in states
    )
    return {
        "input": sum(p.numInputRows for p in progress),
        "state_rows": sum(s.numRowsTotal or 0 for s in states),
        "state_bytes": size,
        "store": "RocksDB" if rocks else "HDFS",
    }
