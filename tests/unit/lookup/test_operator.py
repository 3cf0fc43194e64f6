"""The lookup join operator on Arrow batches against REAL SQLite and REAL PostgreSQL.

Every rule of docs/lookup-joins.md section 3 that lives in the operator, each result
compared with the same join computed in plain Python (helpers.reference_join)."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from server_ext.lookup.caches import clear_caches
from server_ext.lookup.sources import LookupSourceError, pool_for
from server_ext.lookup.spec import CacheSpec, LookupKey, LookupSpec, RetrySpec, SourceSpec
from tests.postgres import PostgresServer
from tests.unit.lookup.helpers import Dim, batch, by_value, reference_join, run

BACKENDS = ["sqlite", "postgresql"]
PROBE = (("oid", "BIGINT"), ("cid", "BIGINT"), ("amount", "INT"))
DIM = (("id", "BIGINT"), ("name", "STRING"), ("age", "INT"))
CUSTOMERS = [(1, "ann", 30), (2, "bob", 17), (3, "cy", 45), (5, "dee", 22), (None, "nul", 50)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_dim(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Dim]:
    pg: PostgresServer | None = (
        request.getfixturevalue("postgres") if backend == "postgresql" else None
    )

    def make(columns=DIM, rows=CUSTOMERS) -> Dim:  # type: ignore[no-untyped-def]
        return Dim(backend, pg, tmp_path).create(columns, rows)

    return make


def spec_for(dim: Dim, **kw) -> LookupSpec:  # type: ignore[no-untyped-def]
    base = dict(
        table="Customers",
        source=dim.source(),
        kind="inner",
        probe_fields=PROBE,
        dim_fields=DIM,
        keys=(LookupKey(0, 1),),
        output_names=("id", "name", "age"),
        retry_backoff_ms=50,
    )
    base.update(kw)
    return LookupSpec(**base)  # type: ignore[arg-type]


#: Every join kind with each cache kind (PARTIAL small enough to evict).
KINDS_AND_CACHES = [
    (kind, cache)
    for kind in ("inner", "left")
    for cache in (CacheSpec(), CacheSpec("PARTIAL", max_rows=5), CacheSpec("FULL"))
]
ORDERS = [(10, 1, 5), (11, 2, 40), (12, 4, 7), (13, 1, 50), (14, None, 3), (15, 5, 1), (16, 3, 9)]


@pytest.mark.parametrize("kind", ["inner", "left"])
def test_single_key_inner_and_left_with_missing_and_null_keys(make_dim, kind: str) -> None:
    dim = make_dim()
    spec = spec_for(dim, kind=kind)
    got = run(spec, [batch(PROBE, ORDERS)])
    want = reference_join(kind, ORDERS, CUSTOMERS, [(1, 0, None)])
    assert got.rows == want  # input order kept (1:1 here)
    # Flink: rows with a non-NULL key are looked up; the NULL-key row never is.
    # No cache: every lookup is a miss (no hits without a cache), each distinct key fetched once
    assert (got.metric("hitCount"), got.metric("missCount")) == (0, 6)
    assert got.metric("loadCount") == 5  # distinct keys 1, 2, 4, 5, 3
    assert got.metric("numQueries") == 1  # one query for the batch's keys


def test_dimension_rows_with_a_null_key_never_match(make_dim) -> None:
    dim = make_dim()
    # look up by name: the row whose id is NULL has name 'nul'
    probe_fields = (("oid", "BIGINT"), ("who", "STRING"), ("amount", "INT"))
    probe = [(1, "nul", 1), (2, None, 2), (3, "ann", 3)]
    spec = spec_for(dim, kind="left", keys=(LookupKey(1, 1),), probe_fields=probe_fields)
    got = run(spec, [batch(probe_fields, probe)])
    assert got.rows == reference_join("left", probe, CUSTOMERS, [(1, 1, None)])
    # name 'nul' matches the row whose id is NULL: a NULL in a non-key column is fine
    assert got.rows[0] == (1, "nul", 1, None, "nul", 50)


def test_constant_keys_and_a_null_constant(make_dim) -> None:
    dim = make_dim()
    # ON o.cid = D.id AND D.name = 'ann'
    spec = spec_for(dim, keys=(LookupKey(0, 1), LookupKey(1, None, "ann")))
    got = run(spec, [batch(PROBE, ORDERS)])
    assert got.rows == reference_join("inner", ORDERS, CUSTOMERS, [(1, 0, None), (None, 1, "ann")])
    assert {r[0] for r in got.rows} == {10, 13}
    # ON D.id = NULL: nothing matches; a left join pads every row without a lookup
    for kind in ("inner", "left"):
        spec = spec_for(dim, kind=kind, keys=(LookupKey(0, None, None),))
        got = run(spec, [batch(PROBE, ORDERS)])
        assert got.rows == reference_join(kind, ORDERS, CUSTOMERS, [(None, 0, None)])
        assert got.metric("numQueries") == 0
    # Only constant keys: ON D.name = 'bob' (one query, every row joins bob)
    spec = spec_for(dim, keys=(LookupKey(1, None, "bob"),))
    got = run(spec, [batch(PROBE, ORDERS)])
    assert got.rows == reference_join("inner", ORDERS, CUSTOMERS, [(None, 1, "bob")])
    assert got.metric("numQueries") == 1


def test_multiple_keys_in_any_order(make_dim) -> None:
    cols = (("region", "STRING"), ("id", "BIGINT"), ("label", "STRING"))
    rows = [("eu", 1, "eu-1"), ("us", 1, "us-1"), ("eu", 2, "eu-2"), ("us", None, "us-?")]
    dim = make_dim(cols, rows)
    probe_fields = (("oid", "BIGINT"), ("cid", "BIGINT"), ("reg", "STRING"))
    probe = [(1, 1, "eu"), (2, 1, "us"), (3, 2, "us"), (4, 2, "eu"), (5, None, "us"), (6, 1, None)]
    # ON D.id = o.cid AND D.region = o.reg (the key order differs from the table's)
    spec = spec_for(
        dim,
        kind="left",
        probe_fields=probe_fields,
        dim_fields=cols,
        keys=(LookupKey(1, 1), LookupKey(0, 2)),
        output_names=("region", "id", "label"),
        chunk_size=2,  # several chunk queries for one batch
    )
    got = run(spec, [batch(probe_fields, probe)])
    assert got.rows == reference_join("left", probe, rows, [(1, 1, None), (2, 0, None)])
    assert got.metric("numQueries") == 2  # 4 distinct keys, 2 per query


def test_one_to_many(make_dim) -> None:
    rows = [(1, "a", 1), (1, "b", 2), (1, "c", 3), (2, "d", 4)]
    dim = make_dim(DIM, rows)
    spec = spec_for(dim, kind="left")
    probe = [(1, 1, 0), (2, 3, 0), (3, 1, 0), (4, 2, 0)]
    got = run(spec, [batch(PROBE, probe)])
    assert by_value(got.rows) == by_value(reference_join("left", probe, rows, [(1, 0, None)]))
    assert [r[0] for r in got.rows] == [1, 1, 1, 2, 3, 3, 3, 4]  # probe order kept
    # no cache: 4 misses; key 1's rows are fetched once for the batch, as a whole
    assert got.metric("missCount") == 4 and got.metric("hitCount") == 0
    assert got.metric("loadCount") == 3


def test_dimension_filters_pushed_and_not_pushed(make_dim) -> None:
    dim = make_dim()
    # ON o.cid = D.id AND D.age > 20 AND D.nominal_age < 40 (nominal_age = age + 1: computed)
    age_gt_20 = ("call", ">", ("col", "r", 2), ("lit", 20))
    nominal_lt_40 = ("call", "<", ("col", "r", 3), ("lit", 40))
    spec = spec_for(
        dim,
        kind="left",
        computed=(("nominal_age", "INT", ("call", "+", ("col", "r", 2), ("lit", 1))),),
        dim_filter=("call", "and", age_gt_20, nominal_lt_40),
        output_names=("id", "name", "age", "nominal_age"),
    )
    extended = [(*c, None if c[2] is None else c[2] + 1) for c in CUSTOMERS]
    got = run(spec, [batch(PROBE, ORDERS)])
    want = reference_join(
        "left", ORDERS, extended, [(1, 0, None)], dim_pred=lambda d: d[2] > 20 and d[3] < 40
    )
    assert got.rows == want
    assert {r[3] for r in got.rows if r[3] is not None} == {1, 5}  # ann 30, dee 22
    # The same without push-down (filter.handling.policy = never): same rows.
    got2 = run(spec_for(dim, **{**_kw(spec), "push_filters": False}), [batch(PROBE, ORDERS)])
    assert got2.rows == want


def _kw(spec: LookupSpec) -> dict:
    return {f: getattr(spec, f) for f in spec.__dataclass_fields__ if f != "source"}


def test_left_pre_filter_pads_without_lookup(make_dim) -> None:
    dim = make_dim()
    # LEFT JOIN ... ON o.cid = D.id AND o.amount > 6: failing rows padded, never looked up
    pre = ("call", ">", ("col", "l", 2), ("lit", 6))
    spec = spec_for(dim, kind="left", pre_filter=pre)
    got = run(spec, [batch(PROBE, ORDERS)])
    want = reference_join("left", ORDERS, CUSTOMERS, [(1, 0, None)], pre=lambda p: p[2] > 6)
    assert got.rows == want
    # looked up: amounts 40, 7, 50, 9 -> keys 2, 4, 1, 3 (amount 3 has a NULL key anyway)
    assert got.metric("hitCount") + got.metric("missCount") == 4
    # every row failing: no query at all
    got = run(spec, [batch(PROBE, [(1, 1, 1), (2, 2, 2)])])
    assert got.rows == [(1, 1, 1, None, None, None), (2, 2, 2, None, None, None)]
    assert got.metric("numQueries") == 0


def test_residual_per_joined_row(make_dim) -> None:
    rows = [(1, "a", 10), (1, "b", 60), (2, "c", 5)]
    dim = make_dim(DIM, rows)
    # ON o.cid = D.id AND o.amount > D.age
    residual = ("call", ">", ("col", "l", 2), ("col", "r", 2))
    for kind in ("inner", "left"):
        spec = spec_for(dim, kind=kind, residual=residual)
        got = run(spec, [batch(PROBE, ORDERS)])
        want = reference_join(kind, ORDERS, rows, [(1, 0, None)], residual=lambda p, d: p[2] > d[2])
        assert got.rows == want


def test_changelog_probe_keeps_each_rows_kind(make_dim) -> None:
    dim = make_dim()
    fields = (("__kind", "TINYINT"), *PROBE)
    probe = [(0, 10, 1, 5), (1, 10, 1, 5), (2, 10, 1, 6), (3, 11, 4, 1), (0, 12, None, 2)]
    spec = spec_for(
        dim, kind="left", probe_fields=fields, keys=(LookupKey(0, 2),), kind_column="__kind"
    )
    got = run(spec, [batch(fields, probe)])
    assert got.rows == reference_join("left", probe, CUSTOMERS, [(2, 0, None)])
    assert [r[0] for r in got.rows] == [0, 1, 2, 3, 0]


def random_probes(rng: random.Random, keys: int) -> tuple[list, list[tuple]]:
    """Four batches of 50 probe rows (oid, cid in 0..keys-1 or NULL, amount), and all rows."""
    batches, rows = [], []
    for b in range(4):
        probe = [
            (b * 100 + i, rng.choice([None, *range(keys)]), rng.randint(0, 80)) for i in range(50)
        ]
        rows += probe
        batches.append(batch(PROBE, probe))
    return batches, rows


def test_random_joins_match_plain_python(make_dim) -> None:
    rng = random.Random(7)
    rows = [(rng.randint(0, 30), f"n{i}", rng.randint(0, 80)) for i in range(60)]
    rows += [(None, "x", 1)]
    dim = make_dim(DIM, rows)
    residual = ("call", "<>", ("col", "l", 2), ("col", "r", 2))
    dim_filter = ("call", ">=", ("col", "r", 2), ("lit", 10))
    for kind, cache in KINDS_AND_CACHES:
        clear_caches()
        spec = spec_for(
            dim, kind=kind, residual=residual, dim_filter=dim_filter, cache=cache, chunk_size=7
        )
        batches, probe_all = random_probes(rng, 35)
        got = run(spec, batches)
        want = reference_join(
            kind,
            probe_all,
            rows,
            [(1, 0, None)],
            dim_pred=lambda d: d[2] >= 10,
            residual=lambda p, d: p[2] != d[2],
        )
        assert by_value(got.rows) == by_value(want), (kind, cache.kind)
        looked_up = sum(1 for p in probe_all if p[1] is not None)
        assert got.metric("hitCount") + got.metric("missCount") == looked_up


@pytest.mark.parametrize("unique_ids", [True, False], ids=["1:1", "1:N"])
def test_column_wise_joins_match_plain_python_in_input_order(make_dim, unique_ids: bool) -> None:
    """One varying key and no per-row predicate take the column-wise path (Arrow kernels,
    Python per distinct key); a key with several rows falls back to the row-wise join."""
    rng = random.Random(11)
    ids = list(range(40)) if unique_ids else [rng.randint(0, 30) for _ in range(60)]
    rows = [(i, f"n{j}", rng.randint(0, 80)) for j, i in enumerate(ids)] + [(None, "x", 1)]
    dim = make_dim(DIM, rows)
    dim_filter = ("call", ">=", ("col", "r", 2), ("lit", 10))
    for kind, cache in KINDS_AND_CACHES:
        for keys, ref_keys in (
            ((LookupKey(0, 1),), [(1, 0, None)]),
            # a constant key before the varying one: ON D.age = 40 AND D.id = o.cid
            ((LookupKey(2, None, 40), LookupKey(0, 1)), [(None, 2, 40), (1, 0, None)]),
        ):
            clear_caches()
            spec = spec_for(
                dim, kind=kind, dim_filter=dim_filter, cache=cache, keys=keys, chunk_size=7
            )
            batches, probe_all = random_probes(rng, 45)
            got = run(spec, batches)
            want = reference_join(kind, probe_all, rows, ref_keys, dim_pred=lambda d: d[2] >= 10)
            if unique_ids:  # one row per probe row at most: exactly the input order
                assert got.rows == want, (kind, cache.kind, keys)
            else:  # the matches of a key come in the database's order
                assert by_value(got.rows) == by_value(want), (kind, cache.kind, keys)
                assert [r[0] for r in got.rows] == [r[0] for r in want]
            looked_up = sum(1 for p in probe_all if p[1] is not None)
            assert got.metric("hitCount") + got.metric("missCount") == looked_up


# --- caches -----------------------------------------------------------------------------------


def test_flink_hit_and_miss_counting_within_and_across_batches(make_dim) -> None:
    dim = make_dim()
    spec = spec_for(dim, cache=CacheSpec("PARTIAL", max_rows=100))
    fn_batches = [batch(PROBE, [(1, 1, 0), (2, 1, 0), (3, 2, 0), (4, 1, 0)])]
    got = run(spec, fn_batches)
    assert (got.metric("missCount"), got.metric("hitCount")) == (2, 2)
    assert got.metric("loadCount") == 2 and got.metric("numCachedRecords") == 2
    got = run(spec, [batch(PROBE, [(5, 1, 0), (6, 2, 0)])])  # same worker, same partition
    assert (got.metric("missCount"), got.metric("hitCount")) == (0, 2)
    assert got.metric("numQueries") == 0 and got.metric("numCachedRecords") == 0  # no change


def test_row_inserted_after_a_miss_none_vs_partial(make_dim) -> None:
    dim = make_dim()
    cases = {
        "NONE": (CacheSpec(), True),
        "PARTIAL + cache-missing-key": (CacheSpec("PARTIAL", max_rows=10), False),
        "PARTIAL, missing keys not cached": (
            CacheSpec("PARTIAL", max_rows=10, cache_missing_key=False),
            True,
        ),
    }
    for i, (name, (cache, seen)) in enumerate(cases.items()):
        clear_caches()
        key = 100 + i
        spec = spec_for(dim, cache=cache, keys=(LookupKey(0, 1),))
        b1, b2 = [batch(PROBE, [(1, key, 0)])], [batch(PROBE, [(2, key, 0)])]
        assert run(spec, b1).rows == [], name
        dim.insert([(key, "late", 1)])
        assert (run(spec, b2).rows == [(2, key, 0, key, "late", 1)]) is seen, name


def test_partial_cache_expiry_with_an_injected_clock(make_dim) -> None:
    dim = make_dim()
    now = [0]
    spec = spec_for(dim, cache=CacheSpec("PARTIAL", expire_after_write_ms=1000))
    b = [batch(PROBE, [(1, 77, 0)])]
    assert run(spec, b, clock=lambda: now[0]).rows == []
    dim.insert([(77, "new", 3)])
    now[0] = 999
    assert run(spec, b, clock=lambda: now[0]).rows == []  # cached miss still fresh
    now[0] = 1000
    assert run(spec, b, clock=lambda: now[0]).rows == [(1, 77, 0, 77, "new", 3)]


def test_full_cache_loads_once_and_reloads_when_due(make_dim) -> None:
    dim = make_dim()
    now = [0]
    clock = lambda: now[0]  # noqa: E731
    spec = spec_for(dim, cache=CacheSpec("FULL", reload_interval_ms=60_000))
    b = [batch(PROBE, [(1, 1, 0), (2, 88, 0)])]
    got = run(spec, b, clock=clock)
    assert got.rows == [(1, 1, 0, 1, "ann", 30)]
    assert got.metric("loadCount") == 1 and got.metric("numQueries") == 1
    assert got.metric("hitCount") == 2 and got.metric("missCount") == 0  # FULL: all hits
    assert got.metric("numCachedRecords") == 4  # keys 1, 2, 3, 5 (not the NULL key)
    dim.insert([(88, "new", 1)])
    now[0] = 59_999
    got = run(spec, b, clock=clock)
    assert got.rows == [(1, 1, 0, 1, "ann", 30)] and got.metric("numQueries") == 0
    now[0] = 61_000  # FIXED_DELAY: 60 s after the end of the first load
    got = run(spec, b, clock=clock)
    assert got.rows == [(1, 1, 0, 1, "ann", 30), (2, 88, 0, 88, "new", 1)]
    assert got.metric("loadCount") == 1


def test_cache_scopes_partition_worker_task(make_dim) -> None:
    dim = make_dim()
    b = [batch(PROBE, [(1, 1, 0)])]
    cache = CacheSpec("PARTIAL", max_rows=10)
    shuffled = spec_for(dim, cache=cache, shuffle=True)  # partition scope
    assert run(shuffled, b, partition=0).metric("missCount") == 1
    assert run(shuffled, b, partition=1).metric("missCount") == 1  # another partition's cache
    assert run(shuffled, b, partition=0).metric("hitCount") == 1
    plain = spec_for(dim, cache=cache)  # worker scope: all partitions share
    assert run(plain, b, partition=0).metric("missCount") == 1
    assert run(plain, b, partition=1).metric("hitCount") == 1
    task = spec_for(dim, cache=CacheSpec("PARTIAL", max_rows=10, scope="task"))
    r1, r2 = run(task, b, partition=0), run(task, b, partition=0)
    assert r1.metric("missCount") == r2.metric("missCount") == 1
    assert r1.metric("numCachedRecords") == 0  # +1 then -1 when the task's cache is dropped


# --- LOOKUP hint: retry on lookup_miss, async ---------------------------------------------------


def test_retry_on_lookup_miss_finds_a_late_row(make_dim) -> None:
    dim = make_dim()
    retry = RetrySpec(fixed_delay_ms=300, max_attempts=5)
    spec = spec_for(dim, kind="left", retry=retry, cache=CacheSpec("PARTIAL", max_rows=10))
    timer = threading.Timer(0.4, lambda: dim.insert([(300, "late", 1)]))
    timer.start()
    try:
        got = run(spec, [batch(PROBE, [(1, 300, 0), (2, 301, 0), (3, 1, 0)])])
    finally:
        timer.join()
    assert got.rows[0] == (1, 300, 0, 300, "late", 1)
    assert got.rows[1] == (2, 301, 0, None, None, None)  # still missing after 5 retries
    assert got.metric("missCount") == 3 and got.metric("hitCount") == 0
    # keys 300 and 301 retried together: one query per attempt
    assert got.metric("numQueries") >= 3 and got.metric("loadCount") >= 5


def test_no_retry_without_the_hint(make_dim) -> None:
    dim = make_dim()
    got = run(spec_for(dim), [batch(PROBE, [(1, 400, 0)])])
    assert got.rows == [] and got.metric("numQueries") == 1


def test_async_chunks_run_concurrently_and_keep_order(make_dim) -> None:
    rows = [(i, f"n{i}", i % 90) for i in range(200)]
    dim = make_dim(DIM, rows)
    probe = [(i, (i * 37) % 220, i) for i in range(300)]
    sync = run(spec_for(dim, kind="left", chunk_size=16), [batch(PROBE, probe)])
    asyn = run(
        spec_for(dim, kind="left", chunk_size=16, async_lookup=True, capacity=4),
        [batch(PROBE, probe)],
    )
    assert asyn.rows == sync.rows == reference_join("left", probe, rows, [(1, 0, None)])
    assert asyn.metric("numQueries") == sync.metric("numQueries") == 14  # 220 keys / 16


# --- faults -----------------------------------------------------------------------------------


def test_a_database_that_is_down_fails_clearly_and_emits_nothing(backend: str, tmp_path) -> None:
    if backend == "sqlite":
        source = SourceSpec("sqlite", "customers", str(tmp_path / "missing.db"))
    else:
        source = SourceSpec("postgresql", "customers", "shop", host="127.0.0.1", port=_dead_port())
    spec = LookupSpec(
        table="Customers",
        source=source,
        kind="left",
        probe_fields=PROBE,
        dim_fields=DIM,
        keys=(LookupKey(0, 1),),
        max_retries=2,
        retry_backoff_ms=100,
    )
    fn = iter(run_iter(spec, [batch(PROBE, ORDERS)]))
    t0 = time.monotonic()
    with pytest.raises(LookupSourceError) as err:
        next(fn)  # not a single row: the keys are not reported as missing
    elapsed = time.monotonic() - t0
    text = str(err.value)
    assert "'Customers'" in text and "3 attempts" in text and "lookup.max-retries = 2" in text
    assert ("missing.db" in text) if backend == "sqlite" else ("'shop'" in text)
    if backend == "sqlite":  # each executor opens the file on its own host (a cluster)
        assert f"on host {socket.gethostname()}" in text, text
    assert elapsed >= 0.1  # Flink's back-off: 0 s after the 1st failure, 0.1 s after the 2nd


def run_iter(spec, batches):  # type: ignore[no-untyped-def]
    from server_ext.lookup.operator import LookupJoinFunction

    return LookupJoinFunction(spec, partition=0)(iter(batches))


def _dead_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: nothing listens there


def test_a_lost_connection_is_reopened(postgres: PostgresServer, tmp_path) -> None:
    dim = Dim("postgresql", postgres, tmp_path).create(DIM, CUSTOMERS)
    spec = spec_for(dim)
    assert run(spec, [batch(PROBE, [(1, 1, 0)])]).rows == [(1, 1, 0, 1, "ann", 30)]
    pool = pool_for(spec.source)
    opened = pool.opened
    assert postgres.terminate_lookup_connections() >= 1
    got = run(spec, [batch(PROBE, [(2, 2, 0)])])
    assert got.rows == [(2, 2, 0, 2, "bob", 17)]
    assert got.metric("numLoadFailures") == 1 and got.metric("numQueries") == 1
    assert pool.opened == opened + 1


def test_connections_are_pooled_across_tasks(make_dim) -> None:
    dim = make_dim()
    spec = spec_for(dim)
    pool = pool_for(spec.source)
    before = pool.opened
    for i in range(5):
        run(spec, [batch(PROBE, [(i, 1, 0)])], partition=i)
    assert pool.opened - before <= 1


def test_database_down_then_back_within_the_retries(postgres: PostgresServer, tmp_path) -> None:
    if not postgres.can_restart:
        pytest.skip("the server can be stopped and started only when the fixture runs it")
    dim = Dim("postgresql", postgres, tmp_path).create(DIM, CUSTOMERS)
    spec = spec_for(dim, max_retries=4, retry_backoff_ms=1000)
    assert run(spec, [batch(PROBE, [(1, 1, 0)])]).rows
    postgres.stop_server()
    restart = threading.Timer(1.5, postgres.start_server)
    restart.start()
    try:
        got = run(spec, [batch(PROBE, [(2, 2, 0), (3, 3, 0)])])
    finally:
        restart.join()
    assert got.rows == [(2, 2, 0, 2, "bob", 17), (3, 3, 0, 3, "cy", 45)]
    assert got.metric("numLoadFailures") >= 1
