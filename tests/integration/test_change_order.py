"""Changes of one key inside one file keep their file order, in the JVM join operator and in
the result of a stateless pipeline, whatever Spark does to the rows in between.

Spark keeps a file's row order only while nothing reorders rows of equal key: the sort in
front of a stateful operator merges its spill files in any order for equal keys. A server
forced to spill every few hundred rows (what memory pressure does on a big batch) shows it:
before ``__seq`` carried each row's position in its file, a table whose one file inserted,
deleted and re-inserted rows of a few keys joined to the wrong final result.
The files here are also split across several partitions (a small
``spark.sql.files.maxPartitionBytes``), so the order must hold across file splits too.
"""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tableapi.session import EmbeddedServer
from tests.integration.changelog_files import applied

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SPILL_EVERY = 200  # rows a sort holds before it spills (Spark's default: never by count)
CHANGES = 1500  # per table, all in one file
Change = tuple[str, tuple[Any, ...]]


@pytest.fixture(scope="module")
def spilling_server() -> Iterator[str]:
    """A server of its own whose sorts spill every SPILL_EVERY rows (a core conf: it must be
    set when the server starts)."""
    conf = {"spark.shuffle.spill.numElementsForceSpillThreshold": str(SPILL_EVERY)}
    server = EmbeddedServer.start(conf=conf)
    yield server.url
    server.stop()


@pytest.fixture
def senv(spilling_server: str) -> Iterator[TableEnvironment]:
    env = TableEnvironment.create(mode="streaming", remote=spilling_server)
    env.spark.conf.set("spark.sql.files.maxPartitionBytes", "2k")  # several splits a file
    env.spark.conf.set("spark.sql.files.openCostInBytes", "0")
    yield env
    env.close()


def keyed_changes(rng: random.Random) -> tuple[list[Change], dict[int, int]]:
    """A table keyed by ``a_id`` (3 ids) whose rows move between 4 join keys: +I, then
    -U/+U pairs; and its final rows (id -> key)."""
    changes: list[Change] = []
    current: dict[int, int] = {}
    while len(changes) < CHANGES:
        a_id, key = rng.randrange(3), rng.randrange(4)
        if a_id in current:
            changes += [("-U", (a_id, current[a_id])), ("+U", (a_id, key))]
        else:
            changes.append(("+I", (a_id, key)))
        current[a_id] = key
    return changes, current


def bag_changes(rng: random.Random) -> tuple[list[Change], Counter[tuple[Any, ...]]]:
    """A table without a key: rows of 4 join keys inserted, deleted and inserted again."""
    changes: list[Change] = []
    live: Counter[tuple[Any, ...]] = Counter()
    for _ in range(CHANGES):
        row = (rng.randrange(4), rng.randrange(3))
        if live[row] and rng.random() < 0.5:
            changes.append(("-D", row))
            live[row] -= 1
        else:
            changes.append(("+I", row))
            live[row] += 1
    return changes, live


def write_changes(path: Path, fmt: str, names: list[str], changes: list[Change]) -> None:
    """One file of ``changes`` in ``fmt`` (the op column ``op``: first in CSV, by name else)."""
    path.mkdir(parents=True)
    if fmt == "json":
        lines = (json.dumps(dict(zip(names, row, strict=True), op=op)) for op, row in changes)
        (path / "part-0.json").write_text("\n".join(lines) + "\n")
    elif fmt == "csv":
        with (path / "part-0.csv").open("w", newline="") as f:
            csv.writer(f).writerows([op, *row] for op, row in changes)
    else:
        columns = {n: [row[i] for _, row in changes] for i, n in enumerate(names)}
        columns["op"] = [op for op, _ in changes]
        table = pa.table(
            {n: pa.array(v, pa.int32() if n != "op" else pa.string()) for n, v in columns.items()}
        )
        pq.write_table(table, path / "part-0.parquet", row_group_size=100)


def register(
    env: TableEnvironment, name: str, path: Path, fmt: str, names: list[str], key: str | None = None
) -> None:
    schema = Schema.new_builder()
    for n in names:
        schema.column(n, "INT NOT NULL" if n == key else "INT")
    if key:
        schema.primary_key(key)
    env.create_temporary_table(
        name,
        TableDescriptor.for_connector("filesystem")
        .schema(schema.build())
        .option("path", str(path))
        .option("format", fmt)
        .option("changelog.op-column", "op")
        .build(),
    )


def splits(env: TableEnvironment, path: Path, fmt: str) -> int:
    """How many splits Spark reads the table's file in (the test's premise: several)."""
    reader = env.spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.schema("op STRING, a INT, b INT")
    return reader.load(str(path)).select("_metadata.file_block_start").distinct().count()


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_changes_of_one_key_in_one_split_file_join_in_file_order(
    senv: TableEnvironment, tmp_path: Path, fmt: str
) -> None:
    rng = random.Random(20)
    a_changes, a_rows = keyed_changes(rng)
    b_changes, b_rows = bag_changes(rng)
    write_changes(tmp_path / "A", fmt, ["a_id", "a_k"], a_changes)
    write_changes(tmp_path / "B", fmt, ["b_k", "b_v"], b_changes)
    register(senv, "A", tmp_path / "A", fmt, ["a_id", "a_k"], key="a_id")
    register(senv, "B", tmp_path / "B", fmt, ["b_k", "b_v"])
    assert splits(senv, tmp_path / "B", fmt) > 1

    result = senv.from_path("A").join(senv.from_path("B"), col("a_k") == col("b_k")).execute()

    want = Counter(
        {
            (a_id, k, bk, bv): n
            for a_id, k in a_rows.items()
            for (bk, bv), n in b_rows.items()
            if bk == k and n > 0
        }
    )
    changelog = [(r.kind.short_string, tuple(r)) for r in result.collect()]
    assert applied(changelog) == want
    got = Counter(tuple(int(v) for v in r) for r in result.materialize().itertuples(index=False))
    assert got == want


def test_a_stateless_changelog_result_keeps_the_order_of_a_split_file(
    senv: TableEnvironment, tmp_path: Path
) -> None:
    changes, rows = keyed_changes(random.Random(21))
    write_changes(tmp_path / "A", "json", ["a_id", "a_k"], changes)
    register(senv, "A", tmp_path / "A", "json", ["a_id", "a_k"], key="a_id")
    assert splits(senv, tmp_path / "A", "json") > 1

    result = senv.from_path("A").where(col("a_k") >= 0).execute()

    assert [(r.kind.short_string, tuple(r)) for r in result.collect()] == changes
    assert set(tuple(r) for r in result.materialize().itertuples(index=False)) == set(rows.items())


@pytest.mark.parametrize("plugin", [True, False], ids=["jvm", "python"])
def test_a_task_that_runs_again_numbers_its_rows_as_before(server_url: str, plugin: bool) -> None:
    """Positions restart at 0 in each task: a task run again (its executor lost) gives the same
    numbers, so its shuffle output is the same; Spark compares the two (shuffle checksums) and
    fails a micro-batch whose retried map output differs as indeterminate."""
    from pyspark.sql.connect import functions as F

    from tableapi.compiler.jvm_operators import jvm_operators_available
    from tableapi.compiler.streaming import with_positions

    env = TableEnvironment.create(mode="batch", remote=server_url)
    try:
        spark = env.spark
        if plugin and not jvm_operators_available(spark):
            pytest.skip("the server has no JVM operator plugin")
        rows = spark.range(0, 40, 1, 4).select("id", F.spark_partition_id().alias("task"))
        numbered = with_positions(rows, "pos", F.col("id"), plugin=plugin)
        runs = [sorted(tuple(r) for r in numbered.collect()) for _ in range(2)]
    finally:
        env.close()
    assert runs[0] == runs[1]
    for task in range(4):
        assert [pos for _, t, pos in runs[0] if t == task] == list(range(10)), runs[0]
