"""server_ext's JVM join operators on a real server, through the Spark Connect plugin.

A hand-built tagged union (changelog files of both sides, three micro-batches) runs through
the JVM operator on both state stores; their changelogs must equal the join model's
(``tests/models``, fed the same batches in memory) row for row per key (rows of one key come
from one group call, in order; across keys the order is free). A server without the plugin
refuses a stateful query, saying how to get it.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import PySparkException
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.dataframe import DataFrame
from pyspark.sql.types import ByteType, LongType, StringType, StructField, StructType

from server_ext.joins.spec import InputSpec, JoinSpec, SideSpec
from server_ext.jvm.build import find_javac
from server_ext.launcher import ROCKSDB_PROVIDER
from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tableapi.compiler.jvm_operators import jvm_join, jvm_operators_available
from tableapi.errors import ValidationError
from tableapi.session import EmbeddedServer, connect
from tests.unit.server_ext.harness import KIND_NAMES, KINDS, JoinHarness

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"
LEFT = (("lk", "BIGINT"), ("lv", "STRING"))
RIGHT = (("rk", "BIGINT"), ("rv", "STRING"))
LEFT_STRUCT = "struct<lk: bigint, lv: string>"
RIGHT_STRUCT = "struct<rk: bigint, rv: string>"
# Three micro-batches of changes: (side, kind, row). Duplicates, a null key, retractions.
BATCHES: list[list[tuple[str, int, tuple]]] = [
    [
        ("L", 0, (1, "a")),
        ("L", 0, (1, "a")),
        ("L", 0, (2, "b")),
        ("R", 0, (1, "x")),
        ("L", 0, (None, "n")),
        ("R", 0, (3, "z")),
    ],
    [
        ("R", 0, (2, "y")),
        ("R", 0, (1, "x2")),
        ("L", 3, (1, "a")),
        ("R", 0, (None, "m")),
        ("L", 0, (3, "c")),
    ],
    [
        ("R", 3, (1, "x")),
        ("L", 1, (2, "b")),
        ("L", 2, (2, "bb")),
        ("R", 3, (2, "y")),
        ("R", 0, (2, "y")),
    ],
]


@pytest.fixture
def spark(server_url: str) -> Iterator[Any]:
    session = connect(server_url)
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture
def jvm(spark: Any) -> Any:
    """The session, on a server with the plugin. Without a JDK here the jar could not be built
    (nor, then, the image's): skipped, saying so; with one, a missing plugin fails."""
    if not jvm_operators_available(spark):
        if find_javac() is None:
            pytest.skip("no javac here: the server has no JVM operator jar (install a JDK 17)")
        pytest.fail("the test server has no server_ext JVM plugin although a JDK is here")
    return spark


def test_the_test_server_has_the_plugin(jvm: Any) -> None:
    assert jvm_operators_available(jvm)


def test_a_server_without_the_plugin_refuses_stateful_queries(
    monkeypatch: pytest.MonkeyPatch, shared_dir: Path
) -> None:
    """A client on a server without the jar is told, before anything runs, that its stateful
    query needs the plugin and how to get it; a stateless query still runs."""
    monkeypatch.setenv("TABLEAPI_JVM_OPERATORS", "off")
    server = EmbeddedServer.start(master="local[1]")
    try:
        session = connect(server.url)
        try:
            assert not jvm_operators_available(session)
        finally:
            session.stop()
        env = TableEnvironment.create(mode="streaming", remote=server.url)
        try:
            (shared_dir / "a").mkdir()
            (shared_dir / "a" / "a.json").write_text('{"k": 1}\n')
            schema = Schema.new_builder().column("k", "BIGINT").build()
            descriptor = TableDescriptor.for_connector("filesystem").schema(schema)
            descriptor = descriptor.option("path", str(shared_dir / "a")).option("format", "json")
            env.create_temporary_table("A", descriptor.build())
            a = env.from_path("A")
            query = a.left_outer_join(a.select(col("k").alias("k2")), col("k") == col("k2"))
            refused = r"Join cannot run: .*JVM operator plugin only.*python -m server_ext serve"
            with pytest.raises(ValidationError, match=refused):
                query.to_spark()
            with pytest.raises(ValidationError, match=r"cannot run: .*server_ext serve"):
                a.distinct().to_spark()
            assert a.where(col("k") > 0).to_spark() is not None  # stateless: no plugin needed
        finally:
            env.close()
    finally:
        server.stop()


def _output(spec: JoinSpec) -> StructType:
    types = {"BIGINT": LongType(), "STRING": StringType()}
    return StructType(
        [StructField("__kind", ByteType(), False)]
        + [StructField(n, types[t], True) for n, t in spec.output_fields()]
    )


def _write_batch(root: Path, number: int, changes: list[tuple[str, int, tuple]]) -> None:
    """One JSON file of both sides' changes (written aside, then moved in: a micro-batch sees
    all of a batch or none of it; two sources could each see a different part)."""
    lines = []
    for seq, (side, kind, row) in enumerate(changes):
        names = ("lk", "lv") if side == "L" else ("rk", "rv")
        fields = dict(zip(names, row, strict=True))
        lines.append(json.dumps({"side": "LR".index(side), "kind": kind, "seq": seq, **fields}))
    staged = root / f".{number}.json"
    staged.write_text("\n".join(lines) + "\n")
    os.replace(staged, root / "changes" / f"{number:04d}.json")


def _union(spark: Any, root: Path) -> DataFrame:
    """The tagged union of both sides, as the compiler builds it (one source here)."""
    ddl = "side TINYINT, kind TINYINT, seq INT, lk BIGINT, lv STRING, rk BIGINT, rv STRING"
    df = spark.readStream.schema(ddl).json(str(root / "changes"))
    left = F.col("side") == 0
    return df.select(
        F.when(left, F.col("lk")).otherwise(F.col("rk")).alias("__k0"),
        F.col("side").alias("__side"),
        F.col("kind").alias("__kind"),
        F.format_string("%06d", F.col("seq")).alias("__seq"),  # order in the batch
        F.when(left, F.struct("lk", "lv")).cast(LEFT_STRUCT).alias("__l"),
        F.when(~left, F.struct("rk", "rv")).cast(RIGHT_STRUCT).alias("__r"),
    )


def _per_key(rows: list[Any], spec: JoinSpec) -> dict[Any, list[tuple]]:
    """The changelog split by join key, each key's rows in emitted order."""
    out: dict[Any, list[tuple]] = defaultdict(list)
    width = len(spec.left.fields)
    for r in rows:
        values = tuple(r)
        key = values[1] if values[1] is not None or not spec.projects_right else values[1 + width]
        out[key].append(values)
    return dict(out)


CASES = [
    ("inner", InputSpec.NO_UNIQUE_KEY, InputSpec.NO_UNIQUE_KEY, None, None),
    ("left", InputSpec.HAS_UNIQUE_KEY, InputSpec.NO_UNIQUE_KEY, None, None),
    (
        "full",
        InputSpec.NO_UNIQUE_KEY,
        InputSpec.HAS_UNIQUE_KEY,
        ("call", "<>", ("col", "l", 1), ("col", "r", 1)),
        None,
    ),
    ("anti", InputSpec.NO_UNIQUE_KEY, InputSpec.NO_UNIQUE_KEY, None, 3_600_000),
]


def _model_changelog(spec: JoinSpec) -> list[tuple]:
    """The join model's changelog of :data:`BATCHES` (one micro-batch each), as the
    operator's rows: ``(__kind, *fields)``."""
    harness = JoinHarness(spec)
    out = []
    for changes in BATCHES:
        rows = harness.process(*((side, KIND_NAMES[kind], row) for side, kind, row in changes))
        out += [(KINDS[r[0]], *r[1:]) for r in rows]
    return out


@pytest.mark.parametrize(("kind", "left_layout", "right_layout", "residual", "ttl"), CASES)
def test_jvm_operator_gives_the_models_changelog_on_both_stores(
    jvm: Any,
    shared_dir: Path,
    kind: str,
    left_layout: InputSpec,
    right_layout: InputSpec,
    residual: tuple | None,
    ttl: int | None,
) -> None:
    spark = jvm
    spec = JoinSpec(
        kind,
        SideSpec(LEFT, left_layout, () if left_layout is InputSpec.NO_UNIQUE_KEY else (1,), ttl),
        SideSpec(RIGHT, right_layout, () if right_layout is InputSpec.NO_UNIQUE_KEY else (1,)),
        null_safe=(False,),
        residual=residual,
    )
    (shared_dir / "changes").mkdir()
    if ttl is not None:  # ProcessingTime queries finish processAllAvailable only so
        spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    output = _output(spec)
    names = ["__kind", *(n for n, _ in spec.output_fields())]
    stores = {"hashmap": HDFS_PROVIDER, "rocksdb": ROCKSDB_PROVIDER}
    queries = {}
    for store, provider in stores.items():
        spark.conf.set(PROVIDER_CONF, provider)
        table = f"{store}_{uuid.uuid4().hex[:8]}"
        queries[store] = (
            (
                jvm_join(_union(spark, shared_dir), ["__k0"], spec, output)
                .select(*names)
                .writeStream.format("memory")
                .queryName(table)
                .outputMode("append")
                .option("checkpointLocation", str(shared_dir / f"cp-{store}"))
                .start()
            ),
            table,
        )
    spark.conf.set(PROVIDER_CONF, ROCKSDB_PROVIDER)
    try:
        for number, changes in enumerate(BATCHES):
            _write_batch(shared_dir, number, changes)
            for query, _ in queries.values():
                query.processAllAvailable()
        changelogs = {t: spark.table(table).collect() for t, (_, table) in queries.items()}
    finally:
        for query, _ in queries.values():
            query.stop()
    want = _per_key(_model_changelog(spec), spec)
    assert sum(len(v) for v in want.values()) >= 5  # the case emits something to compare
    for store in stores:
        assert _per_key(changelogs[store], spec) == want, store


def test_bad_input_fails_at_plan_time_naming_the_problem(jvm: Any) -> None:
    spark = jvm
    spec = JoinSpec("inner", SideSpec(LEFT), SideSpec(RIGHT), null_safe=(False,))
    union = spark.range(1).select(F.col("id").alias("__k0"))
    with pytest.raises(ValueError, match="output schema has 1 fields, the join operator"):
        jvm_join(union, ["__k0"], spec, StructType([StructField("__kind", ByteType(), False),
                                                   StructField("lk", LongType())]))  # fmt: skip
    # The plugin checks the union it is given: a plain relation is not a tagged union.
    with pytest.raises(PySparkException, match="needs the tagged union"):
        jvm_join(union, ["__k0"], spec, _output(spec)).schema  # noqa: B018
