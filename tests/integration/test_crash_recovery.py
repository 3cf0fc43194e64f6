"""Exactly-once across a crash: every join family, a join followed by an aggregation, a
join's aggregation written into PostgreSQL, a window aggregation and a window join, the
server killed at random points.

Each family's query runs with ``execution.checkpointing.dir`` + ``pipeline.name`` over
changelog files fed in rounds (the lookup join's dimension table is a SQLite file). The
server (a process of the test's own, or a container: the run's kind) is killed with SIGKILL
(``docker kill``) between micro-batches and during one; a new server gets the same query,
which resumes from its checkpoint. At the end, each family's changelog (as a multiset of
``+I/-U/+U/-D`` rows) and its materialized table must equal those of the same rounds run on a
server that never died: no change lost, none repeated.

Both runs start and stop the queries at the same points (a round's files are written while
no query runs, and each round is processed to the end), so their micro-batches hold the same
files and a family's changelog is the same multiset in both.

The jdbc family inserts into a PostgreSQL table (``execute_insert``, upsert mode) instead of
a result. A trigger records every row the sink writes in an audit table, with the micro-batch
id the commit sets and the writing transaction: the crashed run's writes must be the
reference's, batch by batch (a batch applied twice writes twice; a lost one not at all),
each batch in one transaction, and its table the reference's.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from tableapi import Schema, Table, TableDescriptor, TableEnvironment, col, lit
from tableapi.result import StreamingTableResult, apply_changelog
from tableapi.window import Tumble
from tests.integration.changelog_files import Change, ChangelogTable
from tests.integration.jdbc_tables import SinkDatabase
from tests.postgres import PostgresServer
from tests.servers import KillableServer, TestServer

T0 = dt.datetime(2026, 1, 1)
H = dt.timedelta(hours=1)
# Kills between and during micro-batches; each round past two adds one more at random. CI
# runs two (the test is CI's longest); more by hand: TABLEAPI_CRASH_ROUNDS=4.
ROUNDS = max(2, int(os.environ.get("TABLEAPI_CRASH_ROUNDS", "2")))
SEED = int(os.environ.get("TABLEAPI_CRASH_SEED", "20261123"))


@attrs.frozen
class Family:
    name: str
    query: Callable[[TableEnvironment], Table]
    options: tuple[tuple[str, str], ...] = ()
    # The changelog is the same multiset in every run. Not so for an aggregation whose group
    # gathers several upstream keys: their changes reach it in an order that differs from
    # run to run (in Flink too), and so do its intermediate -U/+U. Such a family is checked
    # by its final table (a change lost or repeated leaves a wrong or negative row count).
    exact_changelog: bool = True
    # Written into the jdbc table of this name (PostgreSQL, upsert mode) instead of a result.
    sink: str | None = None


def _regular(how: str) -> Callable[[TableEnvironment], Table]:
    def query(env: TableEnvironment) -> Table:
        o, p = env.from_path("Orders"), env.from_path("Product")
        cond = col("product_id") == col("id")
        if how == "semi":
            return o.semi_join(p, cond)
        if how == "anti":
            return o.anti_join(p, cond)
        return getattr(o, how)(p, cond)

    return query


def _interval(env: TableEnvironment) -> Table:
    bound = col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime"))
    return env.from_path("IOrders").left_outer_join(
        env.from_path("Ships"), (col("order_id") == col("s_order_id")) & bound
    )


def _temporal(env: TableEnvironment) -> Table:
    return env.from_path("TOrders").temporal_join(
        env.from_path("Rates"), col("currency") == col("r_currency"), as_of=col("t_rowtime")
    )


def _lookup(env: TableEnvironment) -> Table:
    """A left lookup join (processing time) of the probe rows against a SQLite table; the
    processing time itself differs between runs and is not part of the result."""
    joined = env.from_path("LOrders").temporal_join(
        env.from_path("Customers"),
        col("customer_id") == col("id"),
        as_of=col("l_proctime"),
        how="left",
    )
    return joined.select(col("l_order_id"), col("customer_id"), col("id"), col("name"))


def _multi(env: TableEnvironment) -> Table:
    a, b, c = env.from_path("A"), env.from_path("B"), env.from_path("C")
    return a.join(b, col("a_id") == col("b_id")).left_outer_join(c, col("b_id") == col("c_id"))


def _join_aggregate(env: TableEnvironment) -> Table:
    """A left join's changelog aggregated per product name (issue 21): the aggregate's
    accumulators are checkpointed as the join's rows are. The NULL name gathers every
    unmatched order: its intermediate results depend on arrival order (exact_changelog)."""
    joined = env.from_path("Orders").left_outer_join(
        env.from_path("Product"), col("product_id") == col("id")
    )
    return joined.group_by(col("name")).select(
        col("name"), col("qty").sum.alias("qty"), lit(1).count.alias("n")
    )


def _join_totals(env: TableEnvironment) -> Table:
    """A left join's changelog aggregated per product id: the sink's key (the aggregate's
    state at the end of each micro-batch does not depend on the order of its changes)."""
    joined = env.from_path("Orders").left_outer_join(
        env.from_path("Product"), col("product_id") == col("id")
    )
    return joined.group_by(col("product_id")).select(
        col("product_id"),
        col("qty").sum.alias("qty"),
        lit(1).count.alias("n"),
        col("price").sum.alias("price"),
    )


def _window_aggregate(env: TableEnvironment) -> Table:
    """Orders per hour (the Table API's Tumble: a window aggregation), its windows' state
    checkpointed until the watermark of a later round fires them."""
    w = Tumble.over(lit(1).hours).on(col("o_rowtime")).alias("w")
    return (
        env.from_path("IOrders")
        .window(w)
        .group_by(col("w"))
        .select(col("w").start.alias("ws"), lit(1).count.alias("n"), col("order_id").sum)
    )


def _window_join(env: TableEnvironment) -> Table:
    """Orders and shipments of the same order in the same hour (a window join)."""
    tvf = "TABLE(TUMBLE(TABLE {}, DESCRIPTOR({}), INTERVAL '1' HOUR))"
    return env.sql_query(
        f"SELECT o.order_id, o.window_start, s.s_rowtime FROM "
        f"(SELECT * FROM {tvf.format('IOrders', 'o_rowtime')}) o JOIN "
        f"(SELECT * FROM {tvf.format('Ships', 's_rowtime')}) s ON o.order_id = s.s_order_id "
        "AND o.window_start = s.window_start AND o.window_end = s.window_end"
    )


SINK_COLUMNS = (("product_id", "BIGINT"), ("qty", "BIGINT"), ("n", "BIGINT"), ("price", "BIGINT"))
FAMILIES = (
    Family("inner", _regular("join")),
    Family("jdbc", _join_totals, sink="Totals"),
    Family("join-aggregate", _join_aggregate, exact_changelog=False),
    Family("full", _regular("full_outer_join")),
    Family("semi", _regular("semi")),
    Family("anti", _regular("anti")),
    Family("interval", _interval),
    Family("temporal", _temporal),
    Family("multi", _multi, (("table.optimizer.multi-join.enabled", "true"),)),
    Family("lookup", _lookup),
    Family("window-aggregate", _window_aggregate),
    Family("window-join", _window_join),
)
CUSTOMERS = [(c, f"customer-{c}") for c in range(1, 4)]  # customer 4 is missing: padded


def _tables(env: TableEnvironment, root: Path) -> dict[str, ChangelogTable]:
    """The input tables of every family, registered on ``env`` (files under ``root``)."""
    wm = lambda c: (c, f"{c} - INTERVAL '1' SECOND")  # noqa: E731
    ts = "TIMESTAMP(3)"
    specs: dict[str, dict[str, Any]] = {
        "Orders": dict(
            columns=[("order_id", "BIGINT"), ("product_id", "BIGINT"), ("qty", "BIGINT")]
        ),
        "Product": dict(columns=[("id", "BIGINT"), ("name", "STRING"), ("price", "BIGINT")]),
        "IOrders": dict(
            columns=[("order_id", "BIGINT"), ("o_rowtime", ts)],
            op_column=None,
            watermark=wm("o_rowtime"),
        ),
        "Ships": dict(
            columns=[("s_order_id", "BIGINT"), ("s_rowtime", ts)],
            op_column=None,
            watermark=wm("s_rowtime"),
        ),
        "TOrders": dict(
            columns=[("amount", "BIGINT"), ("currency", "STRING"), ("t_rowtime", ts)],
            op_column=None,
            watermark=wm("t_rowtime"),
        ),
        "Rates": dict(
            columns=[("r_currency", "STRING"), ("rate", "BIGINT"), ("r_rowtime", ts)],
            primary_key=("r_currency",),
            op_column=None,
            watermark=wm("r_rowtime"),
        ),
        "LOrders": dict(
            columns=[("l_order_id", "BIGINT"), ("customer_id", "BIGINT")],
            op_column=None,
            computed=[("l_proctime", "PROCTIME()")],
        ),
        "A": dict(columns=[("a_id", "BIGINT"), ("a_v", "BIGINT")]),
        "B": dict(columns=[("b_id", "BIGINT"), ("b_v", "BIGINT")]),
        "C": dict(columns=[("c_id", "BIGINT"), ("c_v", "BIGINT")]),
    }
    tables = {name: ChangelogTable(env, root, name, **spec) for name, spec in specs.items()}
    db = root / "shop.db"
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
        conn.executemany("INSERT INTO customers VALUES (?, ?)", CUSTOMERS)
    db.chmod(0o666)
    env.create_temporary_table(
        "Customers",
        TableDescriptor.for_connector("jdbc")
        .schema(Schema.new_builder().column("id", "BIGINT").column("name", "STRING").build())
        .option("url", f"jdbc:sqlite:{db}")
        .option("table-name", "customers")
        .option("lookup.cache", "PARTIAL")
        .option("lookup.partial-cache.max-rows", "100")
        .build(),
    )
    return tables


def _register(env: TableEnvironment, tables: dict[str, ChangelogTable], first: TableEnvironment):
    for name in [*tables, "Customers"]:
        env.create_temporary_table(name, first.descriptor(name))


def _changes(rng: random.Random, table: ChangelogTable, make: Callable[[], tuple]) -> list[Change]:
    """A few changes valid against the table's rows: inserts, updates and deletes."""
    alive = list(table.current())
    out: list[Change] = []
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["+I", "+I", "-D", "U"])
        if op == "+I" or not alive:
            row = make()
            out.append(("+I", row))
            alive.append(row)
        elif op == "-D":
            row = alive.pop(rng.randrange(len(alive)))
            out.append(("-D", row))
        else:
            old = alive.pop(rng.randrange(len(alive)))
            new = (*old[:-1], old[-1] + 1)
            out += [("-U", old), ("+U", new)]
            alive.append(new)
    return out


def _rounds(seed: int) -> list[dict[str, list[Change]]]:
    """Every round's changes per table (the same for both runs)."""
    rng = random.Random(seed)

    class Rows:  # the rows each table holds so far, to retract only what is there
        def __init__(self) -> None:
            self.rows: Counter[tuple] = Counter()

        def current(self) -> list[tuple]:
            return list(self.rows.elements())

        def apply(self, changes: list[Change]) -> list[Change]:
            for op, row in changes:
                self.rows[row] += 1 if op in ("+I", "+U") else -1
            return changes

    state = {name: Rows() for name in ("Orders", "Product", "A", "B", "C")}
    k = lambda: rng.randint(1, 4)  # noqa: E731
    rounds = []
    for r in range(ROUNDS):
        base = T0 + 2 * r * H
        t = lambda base=base: base + dt.timedelta(minutes=rng.randrange(0, 120))  # noqa: E731
        changes: dict[str, list[Change]] = {
            "Orders": _changes(rng, state["Orders"], lambda: (rng.randint(1, 99), k(), 1)),
            "Product": _changes(rng, state["Product"], lambda: (k(), rng.choice("xyz"), 1)),
            "A": _changes(rng, state["A"], lambda: (k(), 1)),
            "B": _changes(rng, state["B"], lambda: (k(), 1)),
            "C": _changes(rng, state["C"], lambda: (k(), 1)),
            "IOrders": [("+I", (k(), t())) for _ in range(3)],
            "LOrders": [("+I", (rng.randint(1, 99), k())) for _ in range(3)],
            "Ships": [("+I", (k(), t())) for _ in range(2)],
            "TOrders": [("+I", (rng.randint(1, 50), rng.choice("EU"), t())) for _ in range(3)],
            "Rates": [("+I", (c, rng.randint(1, 9), t())) for c in rng.sample("EU", 1)],
        }
        for name, rows in state.items():
            rows.apply(changes[name])
        rounds.append(changes)
    return rounds


class AuditedTable:
    """The jdbc family's PostgreSQL table of one run, and its audit of the sink's writes."""

    def __init__(self, db: SinkDatabase) -> None:
        self.db = db
        self.name = db.create("product_id bigint PRIMARY KEY, qty bigint, n bigint, price bigint")
        audit = f"{self.name}_audit"
        db.execute(f"CREATE TABLE {audit} (batch text, tx bigint, op text, row text)")
        db.execute(
            f"CREATE FUNCTION {audit}() RETURNS trigger AS $$ BEGIN INSERT INTO {audit} "
            "VALUES (current_setting('tableapi.sink_batch', true), txid_current(), TG_OP, "
            "CASE WHEN TG_OP = 'DELETE' THEN OLD::text ELSE NEW::text END); RETURN NULL; "
            "END $$ LANGUAGE plpgsql"
        )
        db.execute(f"CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON {self.name} "
                   f"FOR EACH ROW EXECUTE FUNCTION {audit}()")  # fmt: skip
        self.audit = audit

    def register(self, env: TableEnvironment, name: str) -> None:
        self.db.register(env, name, self.name, SINK_COLUMNS, key=("product_id",))

    def writes(self) -> tuple[Counter[str], dict[str, int]]:
        """Every write (batch, operation, row) and the transactions per batch."""
        rows = self.db.execute(f"SELECT batch, tx, op, row FROM {self.audit}")
        writes = Counter(f"batch {b}: {op} {row}" for b, _, op, row in rows)
        transactions: dict[str, set[int]] = {}
        for b, tx, _, _ in rows:
            transactions.setdefault(b, set()).add(tx)
        return writes, {b: len(t) for b, t in transactions.items()}


class RunningServer:
    """A server that is up already (the run's test server), as a Run uses one: never killed,
    not stopped by the run."""

    def __init__(self, url: str) -> None:
        self.url = url

    def start(self) -> str:
        return self.url

    def kill(self) -> None:
        raise AssertionError("the reference run's server is never killed")

    def stop(self) -> None:
        pass


class Run:
    """One run of every family over the rounds, on servers that ``server`` starts."""

    def __init__(
        self,
        server: KillableServer | RunningServer,
        root: Path,
        rounds: list[dict[str, list[Change]]],
        sink: AuditedTable | None,
    ):
        self.server = server
        self.root = root
        self.rounds = rounds
        self.sink = sink
        self.env: TableEnvironment | None = None
        self.first: TableEnvironment | None = None
        self.tables: dict[str, ChangelogTable] = {}
        self.results: dict[str, StreamingTableResult] = {}

    def connect(self) -> TableEnvironment:
        if self.env is None:
            url = self.server.url or self.server.start()
            self.env = TableEnvironment.create(mode="streaming", remote=url)
            self.env.config.set("execution.checkpointing.dir", str(self.root / "checkpoints"))
            if self.first is None:
                self.first, self.tables = self.env, _tables(self.env, self.root / "data")
            else:
                _register(self.env, self.tables, self.first)
            for family in self.families:
                if family.sink and self.sink is not None:
                    self.sink.register(self.env, family.sink)
        return self.env

    @property
    def families(self) -> list[Family]:
        """The families of this run (the jdbc family needs a PostgreSQL)."""
        return [f for f in FAMILIES if f.sink is None or self.sink is not None]

    def start(self, family: Family) -> StreamingTableResult:
        env = self.connect()
        env.config.set("pipeline.name", family.name)
        for key, value in family.options:
            env.config.set(key, value)
        table = family.query(env)
        result = table.execute_insert(family.sink) if family.sink else table.execute()
        assert isinstance(result, StreamingTableResult)
        self.results[family.name] = result
        return result

    def kill(self) -> None:
        self.server.kill()
        self.server.url = ""
        self.env = None  # its session went with the server
        self.results.clear()

    def feed(self, r: int) -> None:
        for name, changes in self.rounds[r].items():
            self.tables[name].append(changes)

    def round(self, r: int, kill: str | None, rng: random.Random) -> None:
        """Feed round ``r`` with no query running, then run every family over it; ``kill``:
        None, "between" (after the round's micro-batches) or "during" (while they run)."""
        self.connect()
        self.feed(r)
        if kill == "during":
            for family in self.families:  # all at once: the kill catches them mid-batch
                self.start(family)
            time.sleep(rng.uniform(0.5, 4.0))
            self.kill()
        for family in self.families:  # one at a time (a small machine)
            self.start(family).process_all_available()
            if kill != "between":
                self.results.pop(family.name).cancel()
        if kill == "between":
            self.kill()

    def finish(self) -> dict[str, tuple[Counter[str], list[tuple]]]:
        """Every family's changelog (both runs of it) and materialized table; the jdbc
        family's writes (audited) and its PostgreSQL table."""
        out = {}
        for family in self.families:
            result = self.start(family)
            result.process_all_available()
            if family.sink and self.sink is not None:
                writes, transactions = self.sink.writes()
                many = {b: n for b, n in transactions.items() if n != 1}
                assert not many, f"{family.name}: batches written by several transactions {many}"
                table = self.sink.db.rows(self.sink.name)
                result.cancel()
                out[family.name] = (writes, table)
                continue
            changelog = Counter(repr(r) for r in result.collect())
            table = sorted(apply_changelog(result.collect()), key=repr)
            result.cancel()
            out[family.name] = (changelog, table)
        return out


def test_every_join_family_is_exactly_once_across_server_kills(
    test_server: TestServer, tmp_path_factory: pytest.TempPathFactory, postgres: PostgresServer
) -> None:
    rounds = _rounds(SEED)
    reachable = postgres.address_from(test_server.kind) is not None
    rng = random.Random(SEED)
    kills = ["between", "during", *rng.sample([None, "between", "during"], ROUNDS - 2)]
    rng.shuffle(kills)
    outcomes = {}
    for label, plan in (("reference", [None] * ROUNDS), ("crashed", kills)):
        root = Path(tmp_path_factory.mktemp(label, numbered=True))
        # shared with a container server at the same path
        shared = test_server.shared_dir / f"crash-{label}-{root.name}"
        shared.mkdir(mode=0o777)
        shared.chmod(0o777)
        # The reference runs on the run's own server, warm already (it never dies): a
        # server start, and a fresh server's slower first round, fewer.
        server: KillableServer | RunningServer = (
            RunningServer(test_server.url)
            if label == "reference"
            else KillableServer(test_server.kind, shared)
        )
        db = SinkDatabase("postgresql", shared, test_server.kind, postgres)
        run = Run(server, shared, rounds, AuditedTable(db) if reachable else None)
        try:
            for r, kill in enumerate(plan):
                run.round(r, kill, rng)
            outcomes[label] = run.finish()
        finally:
            server.stop()
    print(f"kill points per round: {kills} (seed {SEED})")
    if not reachable:
        print(f"the jdbc family is left out: a {test_server.kind} server cannot reach the "
              f"{postgres.kind} PostgreSQL")  # fmt: skip
    for family in run.families:
        want_log, want_table = outcomes["reference"][family.name]
        got_log, got_table = outcomes["crashed"][family.name]
        assert sum(want_log.values()) > 0, f"{family.name}: the reference emitted nothing"
        lost, repeated = want_log - got_log, got_log - want_log
        assert not family.exact_changelog or (not lost and not repeated), (
            f"{family.name} after kills at {kills}: lost {dict(lost)}, repeated {dict(repeated)}"
        )
        assert got_table == want_table, f"{family.name} after kills at {kills}"
