"""The lookup operator through ``mapInArrow`` on a real Spark Connect server, batch and
streaming, against real SQLite and PostgreSQL; rows and metrics checked (the metrics reach
the client through ``DataFrame.observe`` of the operator's marker rows)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.observation import Observation

from server_ext.lookup.metrics import aggregate_exprs, combine, observation_name
from server_ext.lookup.operator import LookupJoinFunction
from server_ext.lookup.spec import METRICS, CacheSpec, LookupKey, LookupSpec, SourceSpec
from tableapi.session import connect
from tests.postgres import PostgresServer
from tests.servers import TestServer
from tests.unit.lookup.helpers import by_value, reference_join

DIM = (("id", "BIGINT"), ("name", "STRING"), ("age", "INT"))
DIM_ROWS = [(i, f"c{i}", 20 + i % 50) for i in range(0, 300, 3)] + [(None, "nul", 1)]
PROBE = (("oid", "BIGINT"), ("cid", "BIGINT"), ("amount", "INT"))
PROBE_ROWS = [(i, None if i % 17 == 0 else (i * 7) % 320, i % 90) for i in range(1, 2001)]


@pytest.fixture
def spark(server_url: str) -> Iterator:  # type: ignore[type-arg]
    session = connect(server_url)
    yield session
    for q in session.streams.active:
        q.stop()
    session.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def dim_source(
    request: pytest.FixtureRequest, shared_dir: Path, test_server: TestServer
) -> SourceSpec:
    """The dimension table, where the SERVER's workers can read it."""
    name = f"customers_{uuid.uuid4().hex[:8]}"
    if request.param == "sqlite":
        path = shared_dir / f"{name}.db"
        with sqlite3.connect(path) as c:
            c.execute(f"CREATE TABLE {name} (id INTEGER, name TEXT, age INTEGER)")
            c.executemany(f"INSERT INTO {name} VALUES (?, ?, ?)", DIM_ROWS)
        path.chmod(0o666)
        return SourceSpec("sqlite", name, str(path))
    pg: PostgresServer = request.getfixturevalue("postgres")
    address = pg.address_from(test_server.kind)
    if address is None:
        pytest.skip(f"the {test_server.kind} Spark server cannot reach the {pg.kind} PostgreSQL")
    pg.execute(f"CREATE TABLE {name} (id BIGINT, name TEXT, age INTEGER)")
    pg.executemany(f"INSERT INTO {name} VALUES (%s, %s, %s)", DIM_ROWS)
    host, port = address
    return SourceSpec(
        "postgresql", name, pg.database, host, port, username=pg.user, password=pg.password
    )


def make_spec(source: SourceSpec, **kw) -> LookupSpec:  # type: ignore[no-untyped-def]
    base = dict(
        table="Customers",
        source=source,
        kind="left",
        probe_fields=PROBE,
        dim_fields=DIM,
        keys=(LookupKey(0, 1),),
        output_names=("id", "name", "age"),
        # ON o.cid = D.id AND D.age > 25 AND o.amount > D.age - 30
        dim_filter=("call", ">", ("col", "r", 2), ("lit", 25)),
        residual=("call", ">", ("col", "l", 2), ("call", "-", ("col", "r", 2), ("lit", 30))),
        cache=CacheSpec("PARTIAL", max_rows=40),
        cache_id=uuid.uuid4().hex,
        chunk_size=50,
    )
    base.update(kw)
    return LookupSpec(**base)  # type: ignore[arg-type]


def expected(kind: str, probe: list[tuple]) -> list[tuple]:
    return reference_join(
        kind,
        probe,
        DIM_ROWS,
        [(1, 0, None)],
        dim_pred=lambda d: d[2] > 25,
        residual=lambda p, d: p[2] > d[2] - 30,
    )


def lookup(df, spec: LookupSpec, observation):  # type: ignore[no-untyped-def]
    """What the compiler will emit: the operator, the observed metrics, markers dropped."""
    out = df.mapInArrow(LookupJoinFunction(spec), spec.output_ddl())
    out = out.observe(observation, *(F.expr(e).alias(a) for a, e in aggregate_exprs()))
    return out.where(F.col(METRICS).isNull()).drop(METRICS)


@pytest.mark.parametrize("shuffle", [False, True])
def test_batch_rows_and_metrics(spark, dim_source: SourceSpec, shuffle: bool) -> None:
    probe = spark.createDataFrame(PROBE_ROWS, "oid BIGINT, cid BIGINT, amount INT")
    if shuffle:  # SHUFFLE_HASH: hash-partition the probe input on the lookup key
        probe = probe.repartition(4, "cid")
    spec = make_spec(dim_source, shuffle=shuffle)
    obs = Observation(observation_name(spec.table))
    rows = [tuple(r) for r in lookup(probe, spec, obs).collect()]
    assert by_value(rows) == by_value(expected("left", PROBE_ROWS))  # shuffle: same result
    m = combine([obs.get])
    looked_up = sum(1 for p in PROBE_ROWS if p[1] is not None)
    assert m["hitCount"] + m["missCount"] == looked_up
    assert m["loadCount"] == m["missCount"] > 0
    # chunked queries: far fewer queries than keys fetched
    assert 0 < m["numQueries"] <= m["missCount"] / 10
    assert 0 < m["numCachedRecords"] and m["latestLoadTime"] >= 0 and m["numLoadFailures"] == 0


def test_streaming_changelog_rows_and_metrics(
    spark, dim_source: SourceSpec, shared_dir: Path
) -> None:
    """A changelog probe stream (the kind column kept on every output row), three
    micro-batches, the inner join's rows and the metrics summed over the micro-batches."""
    fields = (("__kind", "TINYINT"), *PROBE)
    src = shared_dir / f"probe_{uuid.uuid4().hex[:6]}"
    src.mkdir()
    src.chmod(0o777)
    batches = []
    for b in range(3):
        part = [((i % 4), *p) for i, p in enumerate(PROBE_ROWS[b * 300 : (b + 1) * 300])]
        batches.append(part)
        lines = [json.dumps(dict(zip([n for n, _ in fields], r, strict=True))) for r in part]
        (src / f"part-{b}.json").write_text("\n".join(lines) + "\n")
    schema = "__kind TINYINT, oid BIGINT, cid BIGINT, amount INT"
    probe = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(src))
    spec = make_spec(
        dim_source,
        kind="inner",
        probe_fields=fields,
        keys=(LookupKey(0, 2),),
        kind_column="__kind",
        dim_filter=None,
        residual=None,
    )
    name = observation_name(spec.table)
    sink = f"lookup_{uuid.uuid4().hex[:8]}"
    query = (
        lookup(probe, spec, name)
        .writeStream.format("memory")
        .queryName(sink)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    rows = [tuple(r) for r in spark.sql(f"SELECT * FROM {sink}").collect()]
    probe_all = [r for part in batches for r in part]
    want = reference_join("inner", probe_all, DIM_ROWS, [(2, 0, None)])
    assert by_value(rows) == by_value(want)
    assert {r[0] for r in rows} == {0, 1, 2, 3}  # +I, -U, +U, -D probe rows keep their kind
    progress = [p for p in query.recentProgress if p.numInputRows]
    assert len(progress) == 3
    m = combine(p.observedMetrics.get(name) for p in progress)
    looked_up = sum(1 for p in probe_all if p[2] is not None)
    assert m["hitCount"] + m["missCount"] == looked_up
    assert m["loadCount"] == m["missCount"] and m["numQueries"] > 0
    assert 0 < m["numCachedRecords"] <= 40 * 8  # bounded caches (a few workers x max-rows)
