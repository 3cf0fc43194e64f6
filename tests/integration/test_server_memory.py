"""The embedded server's heap (issue 20): sized to the machine, kept by back-to-back streaming
joins, and named when it runs out.

- A default embedded server's JVM gets a quarter of the machine's memory, in [1g, 8g]
  (Spark's default, 1g, died of ``OutOfMemoryError`` at the sixth W1 join in a row).
- W1-size streaming joins (200k x 200k rows, 100k keys, Parquet), inner and left in turn,
  each ``execute()``, ``process_all_available()``, ``cancel()``, on a server of the test's
  own: it stays up and its heap after a full GC stays flat (a cancelled result's memory-sink
  rows and a stopped query's state store providers are let go). ``TABLEAPI_SOAK_RUNS`` sets
  the number of joins (default 6, about two minutes; 20 by hand).
- A server that dies of heap says so: the client's error carries the server log's
  ``OutOfMemoryError`` line and the setting to raise.

Each test starts its own server (``EmbeddedServer``), whatever the run's test server is.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from server_ext.launcher import MEMORY_ENV, default_heap_mb, machine_memory_bytes
from tableapi import Schema, ServerError, TableDescriptor, TableEnvironment, col
from tableapi.result import apply_changelog
from tableapi.session import EmbeddedServer

ROWS, KEYS = 200_000, 100_000
RUNS = int(os.environ.get("TABLEAPI_SOAK_RUNS", "6"))
#: How much the heap after a full GC may grow from the second join to any later one. A
#: cancelled W1 result kept in the memory sink alone is about 100 MB.
GROWTH_BOUND_MB = 150

needs_jcmd = pytest.mark.skipif(shutil.which("jcmd") is None, reason="needs the JDK's jcmd")


def _jvm_pid(server: EmbeddedServer) -> int:
    """The server's JVM: the java process in the server's process group."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rpartition(")")[2].split()
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[2]) == server.process.pid and cmdline and cmdline[0].endswith(b"java"):
            return int(proc.name)
    raise AssertionError(f"no JVM in the process group of the server {server.process.pid}")


def _xmx(pid: int) -> str:
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return [a for a in args if a.startswith("-Xmx")][-1]


def _used_heap_mb(pid: int) -> float:
    """The JVM's used heap after a full GC, in MB."""
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, check=True, timeout=120)
    info = subprocess.run(
        ["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    found = re.search(r"used (\d+)K", info)
    assert found is not None, info
    return int(found.group(1)) / 1024


@pytest.fixture
def own_server() -> Iterator[EmbeddedServer]:
    """A default embedded server of this test's own (not the run's shared server)."""
    server = EmbeddedServer.start()
    yield server
    server.stop()


def _expected_counts() -> tuple[int, int]:
    """Rows of W1's inner and left join results (``bench/streaming_join.py``'s data)."""
    left_per_key = [0] * KEYS
    for i in range(ROWS):
        left_per_key[i % KEYS] += 1
    matched = [0] * KEYS
    inner = 0
    for i in range(ROWS):
        rk = i * 7919 % (KEYS + KEYS // 10)
        if rk < KEYS:
            inner += left_per_key[rk]
            matched[rk] = 1
    unmatched = sum(n for n, m in zip(left_per_key, matched, strict=True) if not m)
    return inner, inner + unmatched


def _w1_tables(env: TableEnvironment, root: Path) -> None:
    from pyspark.sql.connect import functions as F

    spark = env.spark
    spark.range(ROWS).select(
        (F.col("id") % KEYS).alias("k"),
        F.col("id").alias("l_id"),
        (F.col("id") * 7 % 1000).alias("l_v"),
    ).repartition(2).write.parquet(str(root / "left"))
    spark.range(ROWS).select(
        (F.col("id") * 7919 % (KEYS + KEYS // 10)).alias("rk"),
        F.col("id").alias("r_id"),
        (F.col("id") * 13 % 1000).alias("r_v"),
    ).repartition(2).write.parquet(str(root / "right"))
    tables = (("L", "left", ("k", "l_id", "l_v")), ("R", "right", ("rk", "r_id", "r_v")))
    for name, folder, cols in tables:
        schema = Schema.new_builder()
        for c in cols:
            schema.column(c, "BIGINT")
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema.build())
            .option("path", str(root / folder))
            .option("format", "parquet")
            .build(),
        )


@needs_jcmd
def test_back_to_back_w1_joins_keep_the_default_server_up_and_its_heap_flat(
    own_server: EmbeddedServer,
) -> None:
    pid = _jvm_pid(own_server)
    wanted = os.environ.get(MEMORY_ENV) or f"{default_heap_mb(machine_memory_bytes())}m"
    assert _xmx(pid) == f"-Xmx{wanted}"  # Spark's default was -Xmx1g

    env = TableEnvironment.create(mode="streaming", remote=own_server.url)
    root = Path(tempfile.mkdtemp(prefix="w1-soak-"))
    try:
        _w1_tables(env, root)
        left, right = env.from_path("L"), env.from_path("R")
        joins = {
            "inner": left.join(right, col("k") == col("rk")),
            "left": left.left_outer_join(right, col("k") == col("rk")),
        }
        expected = dict(zip(joins, _expected_counts(), strict=True))
        used, seconds = [], []
        for run in range(RUNS):
            kind = "inner" if run % 2 == 0 else "left"
            started = time.monotonic()
            result = joins[kind].execute()
            result.process_all_available()
            if run < 2:  # each join's result, once: the changelog applied
                assert len(apply_changelog(result.collect())) == expected[kind]
            result.cancel()
            seconds.append(time.monotonic() - started)
            assert own_server.process.poll() is None, "the server died"
            used.append(_used_heap_mb(pid))
            print(f"run {run} ({kind}): {seconds[-1]:.1f} s, heap after GC {used[-1]:.0f} MB")
        growth = max(used[1:]) - used[1]
        assert growth <= GROWTH_BOUND_MB, f"the heap after GC grew by {growth:.0f} MB: {used}"
        # a cancelled result's rows are gone from the server: collecting says so
        with pytest.raises(Exception, match="cancel"):
            result.collect()
    finally:
        env.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_server_that_dies_of_heap_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MEMORY_ENV, "512m")  # Spark's least
    server = EmbeddedServer.start(master="local[1]")
    try:
        assert _xmx(_jvm_pid(server)) == "-Xmx512m"
        env = TableEnvironment.create(remote=server.url)
        # A 900 MB string, built by a task (not constant-folded by the driver): the task's
        # OutOfMemoryError takes the JVM down (Spark's exit code 52).
        big = env.spark.range(1).selectExpr("repeat('x', CAST(id + 900000000 AS INT)) AS s")
        with pytest.raises(ServerError) as died:
            env.from_spark(big).execute().collect()
        text = str(died.value)
        assert "is gone" in text and "java.lang.OutOfMemoryError: Java heap space" in text, text
        assert "spark.driver.memory = 512m" in text and f"{MEMORY_ENV}=1g" in text, text
        assert server.process.wait(timeout=30) == 52  # the launcher exits with its JVM
    finally:
        server.stop()
