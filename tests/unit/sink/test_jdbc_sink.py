"""server_ext's jdbc sink without Spark: write tasks stage Arrow batches, the driver commits.

The oracle is the changelog applied in plain Python (upsert mode: +I/+U replace the key's
row, -D deletes the key, -U is dropped before the sink; append mode: every row inserted),
on a real PostgreSQL and on SQLite files.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import random
import socket
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from server_ext.lookup.spec import SourceSpec
from server_ext.sink.describe import DescribeTable, describe
from server_ext.sink.spec import SinkSpec
from server_ext.sink.writer import JdbcSink, JdbcSinkError
from tests.postgres import PostgresServer

BACKENDS = ["sqlite", "postgresql"]
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
KINDS = {"+I": INSERT, "-U": UPDATE_BEFORE, "+U": UPDATE_AFTER, "-D": DELETE}


class Db:
    """A target table on one backend, and the sink's spec for it."""

    def __init__(self, backend: str, postgres: PostgresServer | None, tmp: Path) -> None:
        self.backend = backend
        self.pg = postgres
        self.path = tmp / "sink.db"
        if backend == "sqlite":
            sqlite3.connect(self.path).close()
        self.password = postgres.password if postgres else None

    def source(self, table: str, **kw: Any) -> SourceSpec:
        if self.pg is not None:
            return self.pg.source(table, **kw)
        return SourceSpec("sqlite", table, str(self.path), **kw)

    def execute(self, sql: str, params: Any = ()) -> list[tuple]:
        if self.pg is not None:
            return self.pg.execute(sql, params)
        with contextlib.closing(sqlite3.connect(self.path)) as conn, conn:
            return conn.execute(sql, params).fetchall()

    def fresh(self, name: str, ddl: str) -> str:
        """A new table ``name`` (dropped first, with the sink's own tables)."""
        catalog = (
            "pg_tables WHERE schemaname = 'public' AND tablename"
            if self.pg
            else ("sqlite_master WHERE type = 'table' AND name")
        )
        column = "tablename" if self.pg else "name"
        mark = "%s" if self.pg else "?"
        for (own,) in self.execute(f"SELECT {column} FROM {catalog} LIKE {mark}", ["tableapi%"]):
            self.execute(f"DROP TABLE {own}")
        self.execute(f"DROP TABLE IF EXISTS {name}")
        self.execute(f"CREATE TABLE {name} ({ddl})")
        return name

    def spec(self, table: str, columns: list[tuple[str, str]], **kw: Any) -> SinkSpec:
        spec = SinkSpec(
            self.source(table),
            table.capitalize(),
            tuple(n for n, _ in columns),
            tuple(t for _, t in columns),
            **kw,
        )
        return spec

    def rows_of(self, table: str) -> list[tuple]:
        return sorted(self.execute(f"SELECT * FROM {table}"))

    def spec_for_describe(self, table: str) -> SinkSpec:
        return SinkSpec(self.source(table), table, ("_",), ("STRING",))


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Db:
    pg = request.getfixturevalue("postgres") if request.param == "postgresql" else None
    return Db(request.param, pg, tmp_path)


def arrow(columns: list[tuple[str, str]], rows: list[tuple], changes: list[str] | None = None,
          seqs: list[str] | None = None) -> pa.RecordBatch:  # fmt: skip
    """A batch as the data source receives it: the sink's columns (Spark's Arrow types),
    then ``__kind`` and ``__seq`` for a changelog."""
    types = {
        "BIGINT": pa.int64(),
        "INT": pa.int32(),
        "STRING": pa.string(),
        "DOUBLE": pa.float64(),
        "BOOLEAN": pa.bool_(),
        "DATE": pa.date32(),
        "TIMESTAMP": pa.timestamp("us", tz="UTC"),
        "BINARY": pa.binary(),
    }
    arrays = []
    for i, (_, t) in enumerate(columns):
        kind = pa.decimal128(10, 2) if t.startswith("DECIMAL") else types[t]
        arrays.append(pa.array([r[i] for r in rows], kind))
    names = [n for n, _ in columns]
    if changes is not None:
        arrays.append(pa.array([KINDS[c] for c in changes], pa.int8()))
        arrays.append(pa.array(seqs or [""] * len(rows), pa.string()))
        names += ["__kind", "__seq"]
    return pa.RecordBatch.from_arrays(arrays, names)


def apply(changes: list[tuple[str, tuple]], key: int = 0) -> dict[Any, tuple]:
    """The changelog applied by key in plain Python (upsert mode)."""
    table: dict[Any, tuple] = {}
    for op, row in changes:
        if op in ("+I", "+U"):
            table[row[key]] = row
        elif op == "-D":
            table.pop(row[key], None)
    return table


COLS = [("k", "BIGINT"), ("v", "STRING"), ("n", "BIGINT")]
DDL = "k BIGINT PRIMARY KEY, v TEXT, n BIGINT"


def test_random_changelogs_upserted_by_key_equal_the_changelog_applied(db: Db) -> None:
    rng = random.Random(23)
    table = db.fresh("totals", DDL)
    spec = db.spec(table, COLS, key=("k",), changelog=True, max_rows=7)
    sink = JdbcSink(spec)
    applied: list[tuple[str, tuple]] = []
    live: dict[int, tuple] = {}
    for batch_id in range(6):
        # A batch: random changes valid against the rows so far, each key's changes in one
        # task (as an operator's output), -U rows dropped as the client does.
        changes: list[tuple[str, tuple]] = []
        for _ in range(rng.randint(0, 60)):
            k = rng.randint(1, 25)
            if k in live and rng.random() < 0.3:
                changes.append(("-D", live.pop(k)))
            elif k in live:
                new = (k, rng.choice(["a", "b", "", None]), rng.randint(-5, 5))
                changes += [("-U", live[k]), ("+U", new)]
                live[k] = new
            else:
                live[k] = (k, rng.choice("xyz"), rng.randint(0, 9))
                changes.append(("+I", live[k]))
        applied += changes
        written = [(op, row) for op, row in changes if op != "-U"]
        tasks = [[c for c in written if c[1][0] % 3 == t] for t in range(3)]
        messages = [
            sink.stage(iter([arrow(COLS, [r for _, r in task], [op for op, _ in task])]))
            for task in tasks
        ]
        sink.commit(messages, batch_id)
        got = sorted(db.execute(f"SELECT k, v, n FROM {table}"))
        assert got == sorted(apply(applied).values()), f"after batch {batch_id}"
    assert sum(m.changes for m in messages) >= sum(m.rows for m in messages)


def test_a_keys_changes_across_tasks_are_ordered_by_their_seq(db: Db) -> None:
    table = db.fresh("totals", DDL)
    sink = JdbcSink(db.spec(table, COLS, key=("k",), changelog=True))
    # Key 1: inserted in a task read late (seq 3), deleted in one read early (seq 2),
    # updated by a third (seq 1): its last change is the insert.
    a = sink.stage(iter([arrow(COLS, [(1, "last", 3)], ["+I"], ["0003"])]))
    b = sink.stage(
        iter([arrow(COLS, [(1, "gone", 2), (2, "two", 0)], ["-D", "+I"], ["0002", "0005"])])
    )
    c = sink.stage(iter([arrow(COLS, [(1, "first", 1)], ["+U"], ["0001"])]))
    sink.commit([c, a, b], 0)
    assert sorted(db.execute(f"SELECT k, v, n FROM {table}")) == [(1, "last", 3), (2, "two", 0)]


def test_a_replayed_batch_is_skipped_and_a_new_checkpoint_starts_afresh(
    db: Db, tmp_path: Path
) -> None:
    table = db.fresh("totals", DDL)
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "metadata").write_text('{"id":"query-1"}\n')
    spec = db.spec(table, COLS, key=("k",), job=str(checkpoint), checkpoint=str(checkpoint))
    sink = JdbcSink(spec)
    sink.commit([sink.stage(iter([arrow(COLS, [(1, "a", 1)])]))], 0)
    sink.commit([sink.stage(iter([arrow(COLS, [(1, "b", 2)])]))], 1)
    # After a crash, batch 1 comes again (here with other rows, to see it is not applied).
    replay = sink.stage(iter([arrow(COLS, [(1, "replayed", 9), (2, "x", 0)])]))
    sink.commit([replay], 1)
    assert db.execute(f"SELECT k, v, n FROM {table}") == [(1, "b", 2)]
    assert db.execute(f"SELECT count(*) FROM {spec.stage_table}") == [(0,)]
    assert db.execute("SELECT query_id, target, batch_id FROM tableapi_sink_commits") == [
        ("query-1", "totals", 1)
    ]
    # The checkpoint deleted and the query started again: Spark gives it a new id.
    (checkpoint / "metadata").write_text('{"id":"query-2"}\n')
    fresh = JdbcSink(spec)
    fresh.commit([fresh.stage(iter([arrow(COLS, [(3, "new", 0)])]))], 0)
    assert sorted(db.execute(f"SELECT k FROM {table}")) == [(1,), (3,)]


def test_staged_rows_that_went_missing_fail_the_commit_and_apply_nothing(db: Db) -> None:
    table = db.fresh("totals", DDL)
    spec = db.spec(table, COLS, key=("k",))
    sink = JdbcSink(spec)
    staged = sink.stage(iter([arrow(COLS, [(1, "a", 1), (2, "b", 2)])]))
    db.execute(f"DELETE FROM {spec.stage_table} WHERE k = 2")  # e.g. an unlogged table's crash
    with pytest.raises(JdbcSinkError, match=r"staged rows of 1 write task\(s\) are missing"):
        sink.commit([staged], 0)
    assert db.execute(f"SELECT * FROM {table}") == []


def test_append_mode_inserts_every_row_in_one_transaction(db: Db) -> None:
    table = db.fresh("log", "k BIGINT, v TEXT, n BIGINT")
    sink = JdbcSink(db.spec(table, COLS, max_rows=0))
    rows = [(i % 3, f"r{i}", i) for i in range(50)]
    messages = [
        sink.stage(iter([arrow(COLS, rows[:20])])),
        sink.stage(iter([arrow(COLS, rows[20:])])),
    ]
    assert db.execute(f"SELECT count(*) FROM {table}") == [(0,)]  # staged, not yet visible
    sink.commit([*messages, None], None)  # a failed task's message is None
    assert sorted(db.execute(f"SELECT k, v, n FROM {table}")) == sorted(rows)


def test_values_of_every_type_arrive_as_they_were(db: Db) -> None:
    columns = [
        ("id", "BIGINT"), ("s", "STRING"), ("d", "DECIMAL(10,2)"), ("f", "DOUBLE"),
        ("b", "BOOLEAN"), ("day", "DATE"), ("ts", "TIMESTAMP"), ("raw", "BINARY"),
    ]  # fmt: skip
    if db.backend == "postgresql":
        ddl = ("id bigint PRIMARY KEY, s text, d numeric(10,2), f double precision, b boolean, "
               "day date, ts timestamp(6), raw bytea")  # fmt: skip
    else:
        ddl = ("id INTEGER PRIMARY KEY, s TEXT, d NUMERIC, f REAL, b INTEGER, day DATE, "
               "ts TIMESTAMP, raw BLOB")  # fmt: skip
    table = db.fresh("typed", ddl)
    sink = JdbcSink(db.spec(table, columns, key=("id",)))
    t = dt.datetime(2026, 3, 1, 12, 30, 45, 123456, tzinfo=dt.timezone.utc)
    text = 'a "quoted", comma\nline'
    rows = [
        (1, text, Decimal("12.50"), 1.5, True, dt.date(2026, 1, 2), t, b"\x00\xff"),
        (2, "", Decimal("-0.01"), float("inf"), False, dt.date(1, 1, 1), t, b""),
        (3, None, None, None, None, None, None, None),
    ]  # fmt: skip
    sink.commit([sink.stage(iter([arrow(columns, rows)]))], None)
    got = sorted(db.execute(f"SELECT id, s, d, f, b, day, ts, raw FROM {table}"))
    if db.backend == "sqlite":  # text for dates and timestamps (UTC), 0/1 for booleans
        want = [
            (1, rows[0][1], 12.5, 1.5, 1, "2026-01-02", "2026-03-01 12:30:45.123456", b"\x00\xff"),
            (2, "", -0.01, float("inf"), 0, "0001-01-01", "2026-03-01 12:30:45.123456", b""),
            (3, None, None, None, None, None, None, None),
        ]  # fmt: skip
    else:
        naive = t.replace(tzinfo=None)
        want = [
            (1, rows[0][1], Decimal("12.50"), 1.5, True, dt.date(2026, 1, 2), naive, b"\x00\xff"),
            (2, "", Decimal("-0.01"), float("inf"), False, dt.date(1, 1, 1), naive, b""),
            (3, None, None, None, None, None, None, None),
        ]  # fmt: skip
    got = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in got]
    assert got == want


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_database_fails_naming_the_table_and_the_address_not_the_password() -> None:
    port = _dead_port()
    source = SourceSpec("postgresql", "totals", "shop", host="127.0.0.1", port=port,
                        username="app", password="s3cret-never-shown")  # fmt: skip
    spec = SinkSpec(source, "Totals", ("k",), ("BIGINT",), key=("k",), max_retries=1,
                    retry_backoff_ms=10)  # fmt: skip
    with pytest.raises(JdbcSinkError) as err:
        JdbcSink(spec).stage(iter([arrow([("k", "BIGINT")], [(1,)])]))
    text = str(err.value)
    assert text.startswith(f"Table 'Totals': PostgreSQL database 'shop' at 127.0.0.1:{port}")
    assert "2 attempts failed" in text and "sink.max-retries = 1" in text
    assert "s3cret" not in text


def test_a_refused_row_fails_the_batch_and_nothing_of_it_is_written(db: Db) -> None:
    table = db.fresh("strict", "k BIGINT PRIMARY KEY, v TEXT NOT NULL, n BIGINT")
    sink = JdbcSink(db.spec(table, COLS, key=("k",)))
    messages = [
        sink.stage(iter([arrow(COLS, [(1, "a", 1)])])),
        sink.stage(iter([arrow(COLS, [(2, None, 2)])])),  # NOT NULL refuses it at the commit
    ]
    with pytest.raises(JdbcSinkError, match=r"Table 'Strict': committing micro-batch 4 into"):
        sink.commit(messages, 4)
    assert db.execute(f"SELECT * FROM {table}") == []


def test_triggers_see_the_batch_id_of_the_commit(postgres: PostgresServer) -> None:
    db = Db("postgresql", postgres, Path("."))
    table = db.fresh("audited", DDL)
    db.execute("DROP TABLE IF EXISTS audit")
    db.execute("CREATE TABLE audit (batch text, op text, k bigint)")
    db.execute(
        "CREATE OR REPLACE FUNCTION audit_row() RETURNS trigger AS $$ BEGIN "
        "INSERT INTO audit VALUES (current_setting('tableapi.sink_batch', true), TG_OP, "
        "COALESCE(NEW.k, OLD.k)); RETURN NULL; END $$ LANGUAGE plpgsql"
    )
    db.execute(f"CREATE TRIGGER audited AFTER INSERT OR UPDATE OR DELETE ON {table} "
               "FOR EACH ROW EXECUTE FUNCTION audit_row()")  # fmt: skip
    sink = JdbcSink(db.spec(table, COLS, key=("k",), changelog=True))
    sink.commit([sink.stage(iter([arrow(COLS, [(1, "a", 1), (2, "b", 1)], ["+I", "+I"])]))], 7)
    sink.commit([sink.stage(iter([arrow(COLS, [(1, "a", 1)], ["-D"])]))], 8)
    assert sorted(db.execute("SELECT * FROM audit")) == [
        ("7", "INSERT", 1), ("7", "INSERT", 2), ("8", "DELETE", 1),
    ]  # fmt: skip


def test_describe_reads_columns_and_keys(db: Db) -> None:
    if db.backend == "postgresql":
        db.fresh("Described", "id bigint PRIMARY KEY, code text NOT NULL, amount numeric(10,2) "
                 "DEFAULT 0, at timestamp(3), UNIQUE (code)")  # fmt: skip
    else:
        db.fresh("Described", "id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, "
                 "amount NUMERIC DEFAULT 0, at TIMESTAMP")  # fmt: skip
    batches = DescribeTable(db.spec_for_describe("described"))(iter([]))
    got = json.loads(next(iter(batches)).column(0)[0].as_py())
    names = [(c["name"], c["nullable"], c["default"]) for c in got["columns"]]
    assert names[1:] == [("code", False, False), ("amount", True, True), ("at", True, False)]
    assert got["primary_key"] == ["id"] and ["code"] in got["unique_keys"]
    assert got["scratch_dir"]
    sink = JdbcSink(SinkSpec(db.source("nothing_here"), "X", ("a",), ("BIGINT",)))
    assert sink.run("describing", lambda conn: describe(conn, sink.spec.source)) == {
        "exists": False
    }


def test_the_first_writes_make_the_sinks_tables_once(db: Db) -> None:
    table = db.fresh("totals", DDL)
    spec = SinkSpec(db.source(table), "Totals", ("k", "v", "n"), ("BIGINT", "STRING", "BIGINT"))
    sinks = [JdbcSink(spec) for _ in range(3)]  # write tasks of one batch, and the driver
    messages = [s.stage(iter([arrow(COLS, [(i, "x", i)])])) for i, s in enumerate(sinks[:2])]
    assert db.execute(f"SELECT count(*) FROM {spec.stage_table}") == [(2,)]
    sinks[2].commit(messages, None)
    sinks[2].commit([], None)  # an empty batch: the tables are there
    assert db.execute(f"SELECT count(*) FROM {spec.stage_table}") == [(0,)]
    assert db.rows_of(table) == [(0, "x", 0), (1, "x", 1)]
