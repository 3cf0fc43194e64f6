"""The jdbc sink: a Python data source that writes each micro-batch in one transaction.

Spark's data source write protocol (``pyspark.sql.datasource``) is the idempotent-sink
contract: write tasks run on the executors, then the driver commits the batch with its id
once every task succeeded, and a batch replayed after a crash comes again with the same id.
Here:

1. **Write tasks** (:meth:`JdbcSink.stage`, one per partition): read the task's rows, fold
   each key's changes to the last one in upsert mode (Flink's reduced buffer: a key's later
   change replaces its earlier one; ``-U`` rows never arrive, the client drops them), and
   write them into the staging table beside the target (PostgreSQL: ``COPY`` of CSV made by
   Arrow; SQLite: one ``executemany``), tagged with the job and a fresh token, in one
   transaction. A write that fails on the connection is retried on a new connection
   (``sink.max-retries``, sleeping ``i`` s after failure ``i``, 0 s after the first, as
   Flink's JDBC sink).
2. **The commit** (:meth:`JdbcSink.commit`, on the driver, with the batch id): one
   transaction that locks the query's row of the commits table, skips the batch when it is
   already recorded (a replay), checks that every task's staged rows are there, applies them
   to the target (``sql.py``), records the batch id and deletes the job's staged rows. The
   target never holds half a batch: either the transaction committed, or nothing of it did.

The query's identity in the commits table is Spark's query id, read from the checkpoint's
``metadata`` file (it changes when the checkpoint is deleted and the query starts afresh),
else the job (the checkpoint's location, or a fresh id for a run without a checkpoint).
PostgreSQL: the commit transaction sets ``tableapi.sink_batch`` to the batch id, for
triggers (an audit table can record which batch wrote each row).

A failure that outlives the retries raises :class:`JdbcSinkError`, naming the sink table and
the database's address (never the password); the query fails, nothing of the batch is in the
target, and a query re-submitted with the same checkpoint resumes with that batch.
"""

from __future__ import annotations

import io
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from server_ext.databases import DRIVERS, first_line
from server_ext.lookup.spec import base_type
from server_ext.sink.spec import BATCH_SETTING, DATA_SOURCE, KIND, POS, SEQ, SinkSpec
from server_ext.sink.sql import SinkSql

T = TypeVar("T")


class JdbcSinkError(RuntimeError):
    """Writing into a jdbc sink table failed for good: names the table and the database."""


@dataclass
class Staged(WriterCommitMessage):
    """What a write task staged: its token, and how many rows (in, and after folding)."""

    token: str
    rows: int
    changes: int


class JdbcSink:
    """One sink's database side: staging a task's rows, committing a batch."""

    def __init__(self, spec: SinkSpec) -> None:
        self.spec = spec
        self.sql = SinkSql(spec)
        self.driver = DRIVERS[spec.source.dialect]
        self._query_id: str | None = None

    # -- write tasks -------------------------------------------------------------------------
    def stage(self, batches: Iterator[pa.RecordBatch]) -> Staged:
        """Stage one write task's rows (folded per key in upsert mode)."""
        token = uuid.uuid4().hex
        read = [b for b in batches if b.num_rows]
        changes = sum(b.num_rows for b in read)
        if not changes:
            return Staged(token, 0, 0)
        rows = pa.Table.from_batches(read)
        rows = rows.append_column(POS, pa.array(range(changes), pa.int64()))
        if self.spec.upsert:
            rows = fold(rows, self.spec.key, self.spec.changelog)
        self.run("writing a micro-batch's rows", lambda conn: self._stage(conn, token, rows))
        return Staged(token, rows.num_rows, changes)

    def ensure_tables(self, conn: Any) -> None:
        """The staging and commits tables, unless they exist (made by the first write of a
        sink; another task may be making them at the same moment)."""
        for statement in self.sql.prepare():
            try:
                self.driver.execute(conn, statement)
            except Exception as e:
                if "already exists" not in str(e) and "duplicate key" not in str(e):
                    raise

    def _stage(self, conn: Any, token: str, rows: pa.Table) -> None:
        self.ensure_tables(conn)
        n = rows.num_rows
        control = [
            pa.array([self.spec.job] * n, pa.string()),
            pa.array([token] * n, pa.string()),
            rows[SEQ] if self.spec.changelog else pa.array([""] * n, pa.string()),
            rows[POS],
            rows[KIND] if self.spec.changelog else pa.array([0] * n, pa.int8()),
        ]
        data = [rows[c] for c in self.spec.columns]
        step = self.spec.max_rows or n
        if self.driver.dialect == "postgresql":
            columns = control + [_for_csv(c, t) for c, t in zip(data, self.spec.types, strict=True)]
            names = [f"c{i}" for i in range(len(columns))]
            table = pa.Table.from_arrays(columns, names)
            with conn.transaction(), conn.cursor() as cur, cur.copy(self.sql.copy_sql()) as copy:
                for start in range(0, n, step):  # sink.buffer-flush.max-rows rows per write
                    copy.write(_csv(table.slice(start, step)))
            return
        pylists = [c.to_pylist() for c in control] + [
            _for_sqlite(c, t) for c, t in zip(data, self.spec.types, strict=True)
        ]
        values = list(zip(*pylists, strict=True))
        conn.execute("BEGIN IMMEDIATE")
        try:
            for start in range(0, n, step):
                conn.executemany(self.sql.insert_stage_sql(), values[start : start + step])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- the driver --------------------------------------------------------------------------
    def commit(self, messages: list[Any], batch_id: int | None) -> None:
        """Apply the batch's staged rows to the target in one transaction (``batch_id``
        None: a batch job, committed once)."""
        staged = {m.token: m.rows for m in messages if isinstance(m, Staged) and m.rows}
        what = "committing a batch" if batch_id is None else f"committing micro-batch {batch_id}"
        self.run(what, lambda conn: self._commit(conn, staged, batch_id))

    def _commit(self, conn: Any, staged: dict[str, int], batch_id: int | None) -> None:
        sql, ex = self.sql, self.driver.execute
        self.ensure_tables(conn)
        # Only a checkpointed query replays its batches: the others record nothing.
        query_id = self.query_id() if batch_id is not None and self.spec.checkpoint else None
        with self._transaction(conn):
            if query_id is not None:
                ident = [query_id, self.spec.source.table_name]
                ex(conn, sql.claim_sql(), [*ident, self.spec.checkpoint])
                (last,) = ex(conn, sql.last_batch_sql(), ident)[0]
                if last >= batch_id:  # a replay of a committed batch: nothing to apply
                    ex(conn, sql.clear_stage_sql(), [self.spec.job])
                    return
            if staged:
                tokens = sorted(staged)
                counted = dict(ex(conn, sql.count_sql(len(tokens)), sql.token_params(tokens)))
                lost = {t: (n, counted.get(t, 0)) for t, n in staged.items() if counted.get(t) != n}
                if lost:
                    raise JdbcSinkError(
                        f"Table {self.spec.table!r}: staged rows of {len(lost)} write task(s) "
                        f"are missing from {sql.stage} (expected, found: {list(lost.values())}); "
                        "the batch is not committed, and is written again when the query "
                        "is re-submitted."
                    )
                if batch_id is not None and self.driver.dialect == "postgresql":
                    setting = [BATCH_SETTING, str(batch_id)]
                    ex(conn, "SELECT set_config(%s, %s, true)", setting)
                params = sql.token_params(tokens)
                if self.spec.upsert:
                    ex(conn, sql.last_changes_sql(len(tokens)), params)
                    ex(conn, sql.delete_sql())
                    ex(conn, sql.upsert_sql())
                    if (drop := sql.drop_last_sql()) is not None:
                        ex(conn, drop)
                else:
                    ex(conn, sql.append_sql(len(tokens)), params)
            ex(conn, sql.clear_stage_sql(), [self.spec.job])
            if query_id is not None:
                ex(conn, sql.record_batch_sql(), [batch_id, *ident])

    def abort(self) -> None:
        """A write task failed: the staged rows go (best effort; the next commit of the job
        deletes them anyway)."""
        try:
            conn = self.driver.connect(self.spec.source, writable=True)
        except Exception:
            return
        try:
            self.driver.execute(conn, self.sql.clear_stage_sql(), [self.spec.job])
        except Exception:
            pass
        finally:
            self.driver.close(conn)

    def _transaction(self, conn: Any) -> Any:
        if self.driver.dialect == "postgresql":
            return conn.transaction()
        return _SqliteTransaction(conn)

    def query_id(self) -> str:
        """The query's identity in the commits table: Spark's query id from the
        checkpoint's metadata, else the job (the checkpoint's location)."""
        if self._query_id is None:
            self._query_id = _checkpoint_query_id(self.spec.checkpoint) or self.spec.job
        return self._query_id

    def run(self, what: str, work: Callable[[Any], T]) -> T:
        """``work(connection)`` with the sink's retries (:func:`with_retries`)."""
        spec = self.spec
        return with_retries(spec, what, work)


def with_retries(spec: SinkSpec, what: str, work: Callable[[Any], T]) -> T:
    """``work(connection)`` on a new writable connection to ``spec``'s database, retried on
    a new connection after a connection error (``sink.max-retries``, Flink's sleeps); any
    failure becomes a :class:`JdbcSinkError` naming the sink table and the database."""
    driver = DRIVERS[spec.source.dialect]
    where = spec.source.describe()
    last: BaseException | None = None
    for attempt in range(spec.max_retries + 1):
        conn = None
        try:
            conn = driver.connect(spec.source, writable=True)
            result = work(conn)
        except JdbcSinkError:
            if conn is not None:
                driver.close(conn)
            raise
        except Exception as e:
            if conn is not None:
                driver.close(conn)
            if not driver.retryable(e):
                raise JdbcSinkError(
                    f"Table {spec.table!r}: {what} into {where} failed: "
                    f"{first_line(e, spec.source.password)}"
                ) from e
            last = e
            if attempt < spec.max_retries:
                time.sleep(spec.retry_backoff_ms * attempt / 1000)
            continue
        driver.close(conn)
        return result
    raise JdbcSinkError(
        f"Table {spec.table!r}: {where} is unreachable; {spec.max_retries + 1} attempts "
        f"failed while {what} (sink.max-retries = {spec.max_retries}). Last error: "
        f"{first_line(last, spec.source.password)}.{driver.hint(last, spec.source)} Nothing "
        "of the batch is in the table: "
        "once the database is back, re-submit the query (with the same "
        "execution.checkpointing.dir and pipeline.name it resumes with this batch)."
    ) from last


class _SqliteTransaction:
    """``BEGIN IMMEDIATE`` .. ``COMMIT`` (or ``ROLLBACK`` on an error) on a SQLite connection."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


def fold(rows: pa.Table, key: tuple[str, ...], changelog: bool) -> pa.Table:
    """Each key's last change (the latest ``__seq``, then position), in upsert mode.

    Example::

        >>> t = pa.table({"k": [1, 2, 1], "v": ["a", "b", "c"], "__pos": [0, 1, 2]})
        >>> fold(t, ("k",), False).sort_by("k").to_pydict()
        {'k': [1, 2], 'v': ['c', 'b'], '__pos': [2, 1]}
    """
    import pyarrow.compute as pc

    if changelog and pc.any(pc.not_equal(rows[SEQ], "")).as_py():
        rows = rows.take(pc.sort_indices(rows, [(SEQ, "ascending"), (POS, "ascending")]))
    order = pa.array(range(rows.num_rows), pa.int64())
    keyed = rows.select(list(key)).append_column("__i", order)
    last = keyed.group_by(list(key), use_threads=False).aggregate([("__i", "max")])
    return rows.take(last["__i_max"])


def _csv(table: pa.Table) -> bytes:
    import pyarrow.csv as pacsv

    out = io.BytesIO()
    pacsv.write_csv(table, out, pacsv.WriteOptions(include_header=False))
    return out.getvalue()


def _for_csv(column: Any, ddl: str) -> Any:
    """A column as PostgreSQL reads it from CSV: bytes as ``\\x`` hex (Arrow writes the
    rest as PostgreSQL reads it: NULL empty, strings quoted, timestamps ISO)."""
    if base_type(ddl) == "BINARY":
        values = column.to_pylist()
        return pa.array([None if v is None else "\\x" + v.hex() for v in values], pa.string())
    return column


def _for_sqlite(column: Any, ddl: str) -> list[Any]:
    """A column's values as sqlite3 stores them: timestamps as UTC text, dates as ISO text,
    decimals as text (SQLite has no decimal), booleans as 0/1."""
    values = column.to_pylist()
    kind = base_type(ddl)
    if kind in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ"):
        return [None if v is None else _utc_text(v) for v in values]
    if kind == "DATE":
        return [None if v is None else v.isoformat() for v in values]
    if kind == "DECIMAL":
        return [None if v is None else str(v) for v in values]
    if kind == "BOOLEAN":
        return [None if v is None else int(v) for v in values]
    return values


def _utc_text(v: Any) -> str:
    import datetime as dt

    if v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return str(v.isoformat(sep=" "))


def _checkpoint_query_id(checkpoint: str | None) -> str | None:
    """Spark's query id, from the ``metadata`` file of a checkpoint on a local filesystem."""
    if not checkpoint:
        return None
    path = checkpoint.removeprefix("file://").removeprefix("file:")
    try:
        with open(os.path.join(path, "metadata")) as f:
            return str(json.loads(f.readline())["id"])
    except (OSError, ValueError, KeyError):
        return None


# -- the data source ---------------------------------------------------------------------------


class JdbcSinkSource(DataSource):
    """The ``tableapi_jdbc_sink`` data source: batch and streaming writes."""

    @classmethod
    def name(cls) -> str:
        return DATA_SOURCE

    def writer(self, schema: Any, overwrite: bool) -> BatchWriter:
        return BatchWriter(SinkSpec.from_options(dict(self.options)))

    def streamWriter(self, schema: Any, overwrite: bool) -> StreamWriter:
        return StreamWriter(SinkSpec.from_options(dict(self.options)))


class BatchWriter(DataSourceArrowWriter):
    """A batch job's insert: one transaction when every task has staged its rows."""

    def __init__(self, spec: SinkSpec) -> None:
        self.sink = JdbcSink(spec)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Staged:
        return self.sink.stage(iterator)

    def commit(self, messages: list[Any]) -> None:
        self.sink.commit(messages, None)

    def abort(self, messages: list[Any]) -> None:
        self.sink.abort()


class StreamWriter(DataSourceStreamArrowWriter):
    """A streaming query's insert: one transaction per micro-batch, its id recorded."""

    def __init__(self, spec: SinkSpec) -> None:
        self.sink = JdbcSink(spec)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> Staged:
        return self.sink.stage(iterator)

    def commit(self, messages: list[Any], batchId: int) -> None:
        self.sink.commit(messages, batchId)

    def abort(self, messages: list[Any], batchId: int) -> None:
        self.sink.abort()


__all__ = ["JdbcSink", "JdbcSinkError", "JdbcSinkSource", "Staged", "fold", "with_retries"]
