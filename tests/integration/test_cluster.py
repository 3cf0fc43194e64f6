"""The product on a real multi-node Spark cluster (issue 24): a standalone master, two workers
and the Spark Connect server as the driver, each in its own container (tests/cluster.py).

- Every join family of the crash-recovery test (and its join-then-aggregate), over watched
  changelog files fed in rounds, gives on the cluster the changelog and the table the run's
  own test server gives on the same rounds.
- Bounded queries end on the cluster too (their end-of-input table lives in the shared
  warehouse): an interval join's padded rows, an event-time temporal join's held rows, an
  aggregation; a lookup join against PostgreSQL in its own container, checked in Python.
- A worker whose Python has another ``server_ext`` is refused on connect, by name.
- A worker killed during a micro-batch: the query goes on on the other one (its tasks run
  again there, the state is read back from the shared checkpoint) and the result is exactly
  that of the run that lost no worker.

Needs a Docker engine and the images (``bash docker/build.sh``, ``bash
docker/build-postgres.sh``); skipped without them unless ``TABLEAPI_TEST_CLUSTER=docker``
(CI), which makes a missing piece a failure.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tableapi import Schema, Table, TableDescriptor, TableEnvironment, col
from tableapi.compiler.jvm_operators import jvm_executors
from tableapi.errors import ServerError
from tableapi.result import StreamingTableResult, apply_changelog
from tests.cluster import Cluster, cluster_unavailable, logs, start_cluster
from tests.integration.changelog_files import Change, ChangelogTable
from tests.integration.test_crash_recovery import FAMILIES, SEED, Family, _rounds, _tables
from tests.servers import TestServer

ROUNDS = 2
WORKERS = 2


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    problem = cluster_unavailable()
    if problem:
        if os.environ.get("TABLEAPI_TEST_CLUSTER") == "docker":
            pytest.fail(f"TABLEAPI_TEST_CLUSTER=docker, but {problem}")
        pytest.skip(f"no cluster: {problem}")
    with start_cluster(workers=WORKERS) as started:
        yield started


class Runs:
    """Queries of the families on one server, over the same rounds of files.

    As in the crash-recovery test, a round's files are written while no query runs and each
    query then resumes from its checkpoint: a micro-batch holds the same files in every run
    (a query that watched the directories while they were written could split a round
    between two micro-batches, and a full join's padded rows then differ from run to run)."""

    def __init__(self, url: str, root: Path) -> None:
        root.mkdir(mode=0o777, parents=True, exist_ok=True)
        root.chmod(0o777)
        self.root = root
        self.env = TableEnvironment.create(mode="streaming", remote=url)
        self.env.config.set("execution.checkpointing.dir", str(root / "checkpoints"))
        self.tables = _tables(self.env, root / "data")
        self.results: dict[str, StreamingTableResult] = {}

    def start(self, family: Family) -> StreamingTableResult:
        """The family's query, resumed from its checkpoint (its result keeps every change)."""
        self.env.config.set("pipeline.name", family.name)
        for key, value in family.options:
            self.env.config.set(key, value)
        self.results[family.name] = family.query(self.env).execute()
        return self.results[family.name]

    def stop(self, family: Family) -> None:
        self.results.pop(family.name).cancel()

    def feed(self, changes: dict[str, list[Change]]) -> None:
        assert not self.results, "a round's files are written while no query runs"
        for name, rows in changes.items():
            self.tables[name].append(rows)

    def outcome(self, family: Family) -> tuple[Counter[str], list[tuple[Any, ...]]]:
        """The family's changelog (a multiset of its printed changes) and its table."""
        rows = self.results[family.name].collect()
        return Counter(repr(r) for r in rows), sorted(apply_changelog(rows), key=repr)

    def close(self) -> None:
        for result in self.results.values():
            with contextlib.suppress(Exception):
                result.cancel()
        self.env.close()


def _run_rounds(url: str, root: Path, families: Sequence[Family]) -> dict[str, Any]:
    """Each round fed, then every family's query resumed and run over it."""
    runs = Runs(url, root)
    try:
        for changes in _rounds(SEED)[:ROUNDS]:
            runs.feed(changes)
            for family in families:
                runs.start(family).process_all_available()
                runs.stop(family)
        outcomes = {}
        for family in families:
            runs.start(family).process_all_available()
            outcomes[family.name] = runs.outcome(family)
            runs.stop(family)
        return outcomes
    finally:
        runs.close()


#: One of each join operator (inner and anti share the operators of full and semi).
ON_CLUSTER = [f for f in FAMILIES if f.name not in ("inner", "anti")]


@pytest.fixture(scope="module")
def local_reference(test_server: TestServer) -> dict[str, Any]:
    """The families' outcomes on the run's own test server (a local[2] server)."""
    return _run_rounds(test_server.url, test_server.shared_dir / "cluster-reference", ON_CLUSTER)


def test_every_join_family_on_the_cluster_gives_the_local_servers_changelog(
    cluster: Cluster, local_reference: dict[str, Any]
) -> None:
    got = _run_rounds(cluster.url, cluster.shared_dir / "families", ON_CLUSTER)
    want = local_reference
    for family in ON_CLUSTER:
        want_log, want_table = want[family.name]
        got_log, got_table = got[family.name]
        assert sum(want_log.values()) > 0, f"{family.name}: the local run emitted nothing"
        if family.exact_changelog:
            assert got_log == want_log, (
                f"{family.name}: missing {dict(want_log - got_log)}, "
                f"extra {dict(got_log - want_log)}"
            )
        assert got_table == want_table, family.name


def _bounded(env: TableEnvironment, root: Path) -> dict[str, ChangelogTable]:
    """Bounded interval and temporal inputs (their end is signalled through the shared
    warehouse), all rounds in their files before the query starts."""
    tables = _tables(env, root)
    for changes in _rounds(SEED)[:ROUNDS]:
        for name, rows in changes.items():
            tables[name].append(rows)
    for name in ("IOrders", "Ships", "TOrders", "Rates", "Orders", "Product"):
        watched = env.descriptor(name).to_dict()
        del watched["options"]["source.monitor-interval"]
        env.drop_temporary_table(name)
        env.create_temporary_table(name, TableDescriptor.from_dict(watched))
    return tables


BOUNDED = [f for f in FAMILIES if f.name in ("interval", "temporal", "join-aggregate")]


def test_bounded_queries_end_on_the_cluster_as_on_the_local_server(
    cluster: Cluster, test_server: TestServer
) -> None:
    outcomes = []
    for url, root in (
        (cluster.url, cluster.shared_dir / "bounded"),
        (test_server.url, test_server.shared_dir / "cluster-bounded-reference"),
    ):
        root.mkdir(mode=0o777)
        root.chmod(0o777)
        env = TableEnvironment.create(mode="streaming", remote=url)
        try:
            _bounded(env, root)
            per_family = {}
            for family in BOUNDED:
                result = family.query(env).execute()
                assert result.finished, f"{family.name}: a bounded query runs to its end"
                rows = result.collect()
                per_family[family.name] = (Counter(map(repr, rows)), Counter(apply_changelog(rows)))
            outcomes.append(per_family)
        finally:
            env.close()
    got, want = outcomes
    padded = [r for r in want["interval"][1] if r[2] is None]
    assert padded, "the bounded interval join pads the orders never shipped in time"
    for family in BOUNDED:
        assert got[family.name][1] == want[family.name][1], family.name
        if family.exact_changelog:
            assert got[family.name][0] == want[family.name][0], family.name


CUSTOMERS = [(1, "Ann", "DE"), (2, "Bo", "SE"), (3, "Cy", None)]


def test_lookup_join_against_postgresql_on_the_cluster(cluster: Cluster) -> None:
    with contextlib.closing(cluster.postgres_connect()) as db:
        db.execute("CREATE TABLE customers (id BIGINT PRIMARY KEY, name TEXT, country TEXT)")
        with db.cursor() as cur:
            cur.executemany("INSERT INTO customers VALUES (%s, %s, %s)", CUSTOMERS)
    root = cluster.shared_dir / "lookup"
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    env = TableEnvironment.create(mode="streaming", remote=cluster.url)
    try:
        orders = ChangelogTable(  # insert-only: SHUFFLE_HASH hashes it on the lookup key
            env,
            root,
            "Orders",
            [("order_id", "BIGINT"), ("customer_id", "BIGINT")],
            op_column=None,
            computed=[("o_proctime", "PROCTIME()")],
        )
        env.create_temporary_table(
            "Customers",
            TableDescriptor.for_connector("jdbc")
            .schema(
                Schema.new_builder()
                .column("id", "BIGINT")
                .column("name", "STRING")
                .column("country", "STRING")
                .primary_key("id")
                .build()
            )
            .option("url", cluster.postgres_url)
            .option("table-name", "customers")
            .option("username", "tableapi")
            .option("password", "tableapi-test")
            .option("lookup.cache", "PARTIAL")
            .option("lookup.partial-cache.max-rows", "100")
            .build(),
        )
        joined: Table = (
            env.from_path("Orders")
            .temporal_join(
                env.from_path("Customers"),
                col("customer_id") == col("id"),
                as_of=col("o_proctime"),
                how="left",
            )
            .with_hint("SHUFFLE_HASH", "Customers")
            .select(col("order_id"), col("customer_id"), col("name"), col("country"))
        )
        result = joined.execute()
        orders.append([("+I", (o, 1 + o % 4)) for o in range(1, 13)])  # customer 4: none
        result.process_all_available()
        orders.append([("+I", (o, 1 + o % 4)) for o in range(13, 20)])
        result.process_all_available()
        names = {c: (n, country) for c, n, country in CUSTOMERS}
        want = Counter((o, c, *names.get(c, (None, None))) for o, c in orders.current())
        assert Counter(apply_changelog(result.collect())) == want
        metrics = result.lookup_metrics()["Customers"]  # summed over the executors' tasks
        assert metrics["missCount"] + metrics["hitCount"] == 19, metrics
        assert metrics["hitCount"] > 0, metrics  # the second round found keys in the caches
        result.cancel()
    finally:
        env.close()


def test_a_worker_with_another_server_ext_is_refused_by_name(cluster: Cluster) -> None:
    """A third worker whose executors' Python finds another server_ext first joins; a
    client connecting then is refused, naming that worker; once it is gone, connecting works.
    The driver's executor list (what the check waits to hear from) has it as soon as it has
    registered, before it may run a task."""
    fake = cluster.shared_dir / "other-server-ext" / "server_ext"
    fake.mkdir(parents=True, mode=0o777)
    (fake / "__init__.py").write_text('__version__ = "0.0.1-other"\n')
    fake.parent.chmod(0o755)
    checked = TableEnvironment.create(mode="batch", remote=cluster.url)  # before it joins
    # what the check counts: the executors the driver has registered, one per worker
    assert len(jvm_executors(checked.spark)) == WORKERS
    cluster.add_worker("worker-other", executor_pythonpath=str(fake.parent))
    try:
        assert len(jvm_executors(checked.spark)) == WORKERS + 1
        with pytest.raises(ServerError) as refused:
            TableEnvironment.create(mode="batch", remote=cluster.url).spark  # noqa: B018
        text = str(refused.value)
        assert "worker-other" in text and "0.0.1-other" in text, text
        assert "worker-1" not in text and "pip install flink-tableapi-spark==" in text, text
    finally:
        cluster.stop_worker("worker-other")
        checked.close()
    env = TableEnvironment.create(mode="batch", remote=cluster.url)
    assert env.from_elements([(1,)], ["x"]).execute().collect()[0][0] == 1
    env.close()


def test_a_killed_worker_leaves_the_result_exactly_that_of_a_run_without_kill(
    cluster: Cluster, local_reference: dict[str, Any]
) -> None:
    """Runs last in this module: the cluster has one worker after it."""
    family = next(f for f in FAMILIES if f.name == "full")
    want = local_reference
    runs = Runs(cluster.url, cluster.shared_dir / "killed")
    rng = random.Random(SEED)
    try:
        rounds = _rounds(SEED)[:ROUNDS]
        runs.feed(rounds[0])
        runs.start(family).process_all_available()
        runs.stop(family)
        runs.feed(rounds[1])
        result = runs.start(family)
        time.sleep(rng.uniform(0.5, 2.0))  # the round's micro-batch is under way
        cluster.kill_worker(f"worker-{WORKERS}")
        result.process_all_available()
        got_log, got_table = runs.outcome(family)  # both rounds: the result's sink keeps them
    finally:
        runs.close()
    want_log, want_table = want[family.name]
    missing, extra = dict(want_log - got_log), dict(got_log - want_log)
    assert got_log == want_log, f"after the kill: missing {missing}, extra {extra}"
    assert got_table == want_table
    # The master saw the worker go (its connection closed, or its heartbeats stopped).
    deadline = time.monotonic() + 120
    while "Removing worker" not in (log := logs(cluster.master)):
        assert time.monotonic() < deadline, f"the master never removed the killed worker:\n{log}"
        time.sleep(2)
