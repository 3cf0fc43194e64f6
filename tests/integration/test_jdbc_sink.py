"""Inserts into jdbc tables on the real server, into real PostgreSQL and SQLite.

Append mode (no primary key) and upsert mode (a primary key), in batch and streaming mode;
the output of an outer join with retractions and of an aggregation, compared after every
micro-batch with the same query computed in plain Python over the same rows, and with the
query's own changelog applied by key in plain Python. Refused at plan time: a changelog
into a table without a primary key (Flink's message), a type mismatch and a key the
database table does not have. A PostgreSQL that goes away in the middle of a micro-batch's
commit fails the query with a message naming the table and the database (not the
password), leaves no half-written batch, and the query re-submitted once it is back
finishes with the exact result.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tableapi import DatabaseError, Table, TableEnvironment, ValidationError, col, lit
from tests.integration.changelog_files import Change, ChangelogTable
from tests.integration.jdbc_tables import SinkDatabase, upserted
from tests.postgres import PostgresServer
from tests.servers import TestServer

pytestmark = pytest.mark.integration

PASSWORD_HINT = "tableapi-test"  # tests/postgres.py's password: never in a message


@pytest.fixture(params=["postgresql", "sqlite"])
def database(request: pytest.FixtureRequest, shared_dir: Path, test_server: TestServer):
    pg: PostgresServer | None = None
    if request.param == "postgresql":
        pg = request.getfixturevalue("postgres")
        if pg.address_from(test_server.kind) is None:
            pytest.skip(f"a {test_server.kind} server cannot reach the {pg.kind} PostgreSQL")
    return SinkDatabase(request.param, shared_dir, test_server.kind, pg)


def bigint(db: SinkDatabase) -> str:
    return "bigint" if db.backend == "postgresql" else "INTEGER"


# -- batch mode ---------------------------------------------------------------------------------


def test_batch_inserts_append_and_upsert(env: TableEnvironment, database: SinkDatabase) -> None:
    db, big = database, bigint(database)
    double = "DOUBLE PRECISION" if db.backend == "postgresql" else "REAL"
    log = db.create(f"id {big}, name TEXT, price {double}")
    cols = [("id", "BIGINT"), ("name", "STRING"), ("price", "DOUBLE")]
    db.register(env, "Log", log, cols)
    items = [(1, "pen", 2.5), (2, None, 7.0), (1, "pen", 2.5)]
    env.from_elements(items, ["id", "name", "price"]).execute_insert("Log").wait()
    env.from_elements(items[:1], ["id", "name", "price"]).execute_insert("Log").wait()
    assert db.rows(log) == sorted([*items, items[0]], key=repr)  # appended, duplicates too

    stock = db.create(f"id {big} PRIMARY KEY, name TEXT, qty {big}")
    db.register(env, "Stock", stock, [("id", "BIGINT"), ("name", "STRING"), ("qty", "BIGINT")],
                key=("id",), **{"sink.buffer-flush.max-rows": "2"})  # fmt: skip
    first = [(i, f"item-{i}", i * 10) for i in range(1, 8)]
    env.from_elements(first, ["id", "name", "qty"]).execute_insert("Stock").wait()
    again = [(i, f"new-{i}", -i) for i in range(5, 11)]  # 5..7 updated, 8..10 new
    env.from_elements(again, ["id", "name", "qty"]).select(
        col("id"), col("name"), col("qty")
    ).execute_insert("Stock").wait()
    assert db.rows(stock) == upserted([("+I", r) for r in first + again])
    with pytest.raises(ValidationError, match="cannot be overwritten"):
        env.from_elements(first, ["id", "name", "qty"]).execute_insert("Stock", overwrite=True)


# -- streaming: an outer join's retractions, an aggregation --------------------------------------

ORDERS = (("order_id", "BIGINT"), ("product_id", "BIGINT"), ("qty", "BIGINT"))
PRODUCTS = (("id", "BIGINT"), ("name", "STRING"))


def _round(rng: random.Random, orders: ChangelogTable, products: ChangelogTable) -> None:
    """Random changes valid against the tables' rows: inserts, updates, deletes. An order
    keeps its product (its changes stay with one join key, as the sink's key needs)."""
    o: list[Change] = []
    alive = {r[0]: r for r in orders.current()}
    for _ in range(rng.randint(3, 8)):
        oid = rng.randint(1, 30)
        if oid not in alive:
            alive[oid] = (oid, rng.randint(1, 6), rng.randint(1, 5))
            o.append(("+I", alive[oid]))
        elif rng.random() < 0.3:
            o.append(("-D", alive.pop(oid)))
        else:
            old = alive[oid]
            alive[oid] = (oid, old[1], old[2] + 1)
            o += [("-U", old), ("+U", alive[oid])]
    p: list[Change] = []
    names = {r[0]: r for r in products.current()}
    for _ in range(rng.randint(1, 3)):
        pid = rng.randint(1, 6)
        if pid not in names:
            names[pid] = (pid, rng.choice(["pen", "ink", "cap"]))
            p.append(("+I", names[pid]))
        elif rng.random() < 0.4:
            p.append(("-D", names.pop(pid)))
        else:
            old = names[pid]
            names[pid] = (pid, old[1] + "!")
            p += [("-U", old), ("+U", names[pid])]
    orders.append(o)
    products.append(p)


def _left_join(orders: ChangelogTable, products: ChangelogTable) -> list[tuple]:
    names = {r[0]: r[1] for r in products.current()}
    return sorted(((oid, pid, qty, names.get(pid)) for oid, pid, qty in orders.current()), key=repr)


def _per_product(orders: ChangelogTable) -> list[tuple]:
    totals: dict[int, list[int]] = {}
    for _, pid, qty in orders.current():
        t = totals.setdefault(pid, [0, 0])
        t[0] += qty
        t[1] += 1
    return sorted(((pid, s, n) for pid, (s, n) in totals.items()), key=repr)


def test_streaming_upserts_of_an_outer_join_and_an_aggregation(
    senv: TableEnvironment, shared_dir: Path, database: SinkDatabase
) -> None:
    db, big = database, bigint(database)
    rng = random.Random(2301)
    orders = ChangelogTable(senv, shared_dir, "Orders", ORDERS, primary_key=("order_id",))
    products = ChangelogTable(senv, shared_dir, "Products", PRODUCTS, primary_key=("id",))
    joined_table = db.create(f"order_id {big} PRIMARY KEY, product_id {big}, qty {big}, name TEXT")
    totals_table = db.create(f"product_id {big} PRIMARY KEY, total {big}, n {big}")
    db.register(senv, "Joined", joined_table,
                [("order_id", "BIGINT"), ("product_id", "BIGINT"), ("qty", "BIGINT"),
                 ("name", "STRING")], key=("order_id",),
                **{"sink.buffer-flush.max-rows": "3", "sink.parallelism": "2"})  # fmt: skip
    db.register(senv, "Totals", totals_table,
                [("product_id", "BIGINT"), ("total", "BIGINT"), ("n", "BIGINT")],
                key=("product_id",))  # fmt: skip
    joined = (
        senv.from_path("Orders")
        .left_outer_join(senv.from_path("Products"), col("product_id") == col("id"))
        .select(col("order_id"), col("product_id"), col("qty"), col("name"))
    )
    totals = (
        senv.from_path("Orders")
        .group_by(col("product_id"))
        .select(col("product_id"), col("qty").sum.alias("total"), lit(1).count.alias("n"))
    )
    inserts = [joined.execute_insert("Joined"), totals.execute_insert("Totals")]
    results = [joined.execute(), totals.execute()]  # the queries' own changelogs
    try:
        for r in range(3):
            _round(rng, orders, products)
            for q in inserts + results:
                q.process_all_available()
            assert db.rows(joined_table) == _left_join(orders, products), f"round {r}"
            assert db.rows(totals_table) == _per_product(orders), f"round {r}"
            for result, table in zip(results, (joined_table, totals_table), strict=True):
                changes = [(row.kind.short_string, tuple(row)) for row in result.collect()]
                assert db.rows(table) == upserted(changes), f"round {r}: the changelog applied"
        kinds = Counter(row.kind.short_string for row in results[0].collect())
        assert kinds["-D"] > 0 and kinds["+I"] > 0, kinds  # the join retracted padded rows
    finally:
        for q in inserts + results:
            q.cancel()


def test_streaming_append_of_an_insert_only_join(
    senv: TableEnvironment, shared_dir: Path, database: SinkDatabase
) -> None:
    db, big = database, bigint(database)
    clicks = ChangelogTable(senv, shared_dir, "Clicks", (("user", "BIGINT"), ("page", "STRING")),
                            op_column=None, bounded=True)  # fmt: skip
    users = ChangelogTable(senv, shared_dir, "Users", (("uid", "BIGINT"), ("name", "STRING")),
                           op_column=None, bounded=True)  # fmt: skip
    clicks.append([("+I", (u % 4, f"p{u}")) for u in range(12)])
    users.append([("+I", (u, f"user-{u}")) for u in range(3)])
    table = db.create(f"page TEXT, name TEXT, n {big}")
    db.register(senv, "Visits", table, [("page", "STRING"), ("name", "STRING"), ("n", "BIGINT")])
    query = (
        senv.from_path("Clicks")
        .join(senv.from_path("Users"), col("user") == col("uid"))
        .select(col("page"), col("name"), lit(1).cast("BIGINT"))
    )
    query.execute_insert("Visits").wait()  # bounded: runs to the end
    want = sorted(((f"p{u}", f"user-{u % 4}", 1) for u in range(12) if u % 4 < 3), key=repr)
    assert db.rows(table) == want


# -- plan-time refusals ---------------------------------------------------------------------------


def test_refused_at_plan_time(
    senv: TableEnvironment, shared_dir: Path, database: SinkDatabase
) -> None:
    db, big = database, bigint(database)
    ChangelogTable(senv, shared_dir, "Orders", ORDERS, primary_key=("order_id",), bounded=True)
    totals = (
        senv.from_path("Orders")
        .group_by(col("product_id"))
        .select(col("product_id"), col("qty").sum.alias("total"))
    )
    keyless = db.create(f"product_id {big}, total {big}")
    db.register(senv, "Keyless", keyless, [("product_id", "BIGINT"), ("total", "BIGINT")])
    with pytest.raises(ValidationError) as err:
        totals.execute_insert("Keyless")
    assert "please declare primary key for sink table when query contains update/delete " in (
        str(err.value)
    )
    assert "The query's updates come from TableSourceScan(table=[[default_catalog, " in (
        str(err.value)
    )

    typed = db.create(f"product_id {big} PRIMARY KEY, total TEXT")
    db.register(senv, "Typed", typed, [("product_id", "BIGINT"), ("total", "BIGINT")],
                key=("product_id",))  # fmt: skip
    with pytest.raises(ValidationError) as err:
        totals.execute_insert("Typed")
    text = str(err.value)
    assert f"Cannot write into table 'Typed': its schema does not fit table {typed}" in text
    assert "column 'total': BIGINT values do not fit into TEXT" in text or (
        "column 'total': BIGINT values do not fit into text" in text
    ), text
    assert "Sink table 'Typed': (product_id BIGINT NOT NULL, total BIGINT, " in text
    assert f"Database table {typed}: (product_id " in text

    nokey = db.create(f"product_id {big}, total {big}")
    db.register(senv, "NoKey", nokey, [("product_id", "BIGINT"), ("total", "BIGINT")],
                key=("product_id",))  # fmt: skip
    with pytest.raises(ValidationError, match=r"the primary key \(product_id\) is neither"):
        totals.execute_insert("NoKey")
    db.register(senv, "Missing", "no_such_table", [("product_id", "BIGINT"), ("total", "BIGINT")],
                key=("product_id",))  # fmt: skip
    with pytest.raises(ValidationError, match=r"does not exist (?s:.)*CREATE TABLE no_such_table"):
        totals.execute_insert("Missing")
    assert senv.spark.streams.active == []  # nothing started
    for t in (keyless, typed, nokey):
        assert db.execute(f"SELECT count(*) FROM {t}") == [(0,)]


# -- a database that goes away in the middle of a micro-batch -------------------------------------


def test_postgres_gone_mid_batch_fails_clearly_then_the_resumed_query_is_exact(
    server_url: str, shared_dir: Path, test_server: TestServer, postgres: PostgresServer
) -> None:
    if not postgres.can_restart or postgres.address_from(test_server.kind) is None:
        pytest.skip("needs a PostgreSQL this test can stop and the server can reach")
    db = SinkDatabase("postgresql", shared_dir, test_server.kind, postgres)
    table = db.create("product_id bigint PRIMARY KEY, total bigint, n bigint")
    # Rows of product 99 make the commit wait inside its transaction: the test stops the
    # database then.
    db.execute(
        f"CREATE FUNCTION {table}_pause() RETURNS trigger AS $$ BEGIN "
        "IF NEW.product_id = 99 THEN PERFORM pg_sleep(30); END IF; RETURN NEW; END $$ "
        "LANGUAGE plpgsql"
    )
    db.execute(f"CREATE TRIGGER pause BEFORE INSERT OR UPDATE ON {table} FOR EACH ROW "
               f"EXECUTE FUNCTION {table}_pause()")  # fmt: skip
    checkpoints = shared_dir / "checkpoints"
    first = TableEnvironment.create(mode="streaming", remote=server_url)
    orders = ChangelogTable(first, shared_dir, "Orders", ORDERS, primary_key=("order_id",))

    def environment() -> tuple[TableEnvironment, Table]:
        env = TableEnvironment.create(mode="streaming", remote=server_url)
        env.config.set("execution.checkpointing.dir", str(checkpoints))
        env.config.set("pipeline.name", "totals-into-postgres")
        env.create_temporary_table("Orders", first.descriptor("Orders"))
        db.register(env, "Totals", table,
                    [("product_id", "BIGINT"), ("total", "BIGINT"), ("n", "BIGINT")],
                    key=("product_id",), **{"sink.max-retries": "1"})  # fmt: skip
        query = (
            env.from_path("Orders")
            .group_by(col("product_id"))
            .select(col("product_id"), col("qty").sum.alias("total"), lit(1).count.alias("n"))
        )
        return env, query

    env, query = environment()
    orders.append([("+I", (1, 1, 5)), ("+I", (2, 2, 7))])
    insert = query.execute_insert("Totals")
    insert.process_all_available()
    assert db.rows(table) == [(1, 5, 1), (2, 7, 1)]
    orders.append([("-U", (1, 1, 5)), ("+U", (1, 1, 6)), ("+I", (3, 99, 1)), ("+I", (4, 3, 2))])

    def stop_when_the_commit_waits() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            waiting = postgres.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
            )
            if waiting[0][0]:
                postgres.stop_server()
                return
            time.sleep(0.1)

    stopper = threading.Thread(target=stop_when_the_commit_waits)
    stopper.start()
    with pytest.raises(DatabaseError) as err:
        insert.process_all_available()
    stopper.join()
    text = str(err.value)
    assert text.startswith("Table 'Totals': "), text
    host, port = postgres.address_from(test_server.kind) or ("", 0)
    assert f"PostgreSQL database '{postgres.database}' at {host}:{port}" in text, text
    assert PASSWORD_HINT not in text
    insert.cancel()
    env.close()

    postgres.start_server()
    assert db.rows(table) == [(1, 5, 1), (2, 7, 1)]  # nothing of the failed batch
    db.execute(f"DROP TRIGGER pause ON {table}")
    env, query = environment()
    resumed = query.execute_insert("Totals")
    try:
        resumed.process_all_available()
        assert db.rows(table) == [(1, 6, 1), (2, 7, 1), (3, 2, 1), (99, 1, 1)]
        batches = db.execute("SELECT batch_id FROM tableapi_sink_commits WHERE target = %s",
                             [table])  # fmt: skip
        assert batches == [(1,)]  # batch 1 committed once, after the resume
    finally:
        resumed.cancel()
        env.close()
        first.close()
