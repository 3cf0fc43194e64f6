"""Lookup sources: a PostgreSQL table (psycopg 3) or a SQLite table (sqlite3), one interface.

:class:`LookupSource` fetches the dimension rows of MANY keys per query (``sql.py`` builds
the queries), scans the whole table for a FULL cache, and converts values to the Python
types of the declared Spark column types (SQLite stores booleans as 0/1 and dates as text).

Connections: one :class:`ConnectionPool` per database per Python worker process, kept in a
module global, so a reused worker (``spark.python.worker.reuse``, Spark's default) keeps its
connections across tasks and micro-batches. A query that fails with a connection error
(the server restarted, the connection was killed, the SQLite file is not there) is retried
on a NEW connection, Flink's way: ``lookup.max-retries`` retries, sleeping ``backoff * i``
after the i-th failure (0 s, 1 s, 2 s with Flink's 1 s). When the database stays down the
query fails with :class:`LookupSourceError` naming the lookup table and the database: the
keys are never reported as missing. Other errors (no such table or column) fail at once.

Example::

    source = LookupSource(spec)                       # spec: a LookupSpec
    rows = source.fetch([(1,), (2,)])                 # the rows whose key is 1 or 2
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

from server_ext.databases import DRIVERS, Row, first_line
from server_ext.lookup.spec import LookupSpec, SourceSpec, base_type
from server_ext.lookup.sql import Query, key_query, scan_query, split_pushable, sqlite_chunk


class LookupSourceError(RuntimeError):
    """A lookup query failed for good: names the lookup table and the database."""


class Counters:
    """The database-side counts of one operator call, safe to bump from query threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.queries = 0
        self.failures = 0

    def add(self, queries: int = 0, failures: int = 0) -> None:
        with self._lock:
            self.queries += queries
            self.failures += failures


# --- pooling ----------------------------------------------------------------------------------


class ConnectionPool:
    """Idle connections to one database, reused by every operator of this worker process."""

    def __init__(self, source: SourceSpec) -> None:
        self.source = source
        self.driver = DRIVERS[source.dialect]
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self.opened = 0  # connections ever opened (tests check reuse)

    def acquire(self) -> Any:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        conn = self.driver.connect(self.source)
        with self._lock:
            self.opened += 1
        return conn

    def release(self, conn: Any) -> None:
        with self._lock:
            self._idle.append(conn)

    def discard(self, conn: Any) -> None:
        self.driver.close(conn)

    def clear(self) -> None:
        """Close the idle connections (the next query opens a new one)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            self.driver.close(conn)


_POOLS: dict[SourceSpec, ConnectionPool] = {}
_POOLS_LOCK = threading.Lock()
_EXECUTORS: dict[int, ThreadPoolExecutor] = {}


def pool_for(source: SourceSpec) -> ConnectionPool:
    """This worker's pool for ``source`` (made on first use).

    Example::

        conn = pool_for(spec.source).acquire()   # an idle connection, or a new one
    """
    with _POOLS_LOCK:
        pool = _POOLS.get(source)
        if pool is None:
            pool = _POOLS[source] = ConnectionPool(source)
        return pool


def _executor(threads: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        ex = _EXECUTORS.get(threads)
        if ex is None:
            ex = _EXECUTORS[threads] = ThreadPoolExecutor(threads, "tableapi-lookup")
        return ex


# --- value conversion -------------------------------------------------------------------------


def _to_utc(v: Any) -> Any:
    if isinstance(v, str):
        v = dt.datetime.fromisoformat(v)
    if isinstance(v, dt.datetime):
        utc = dt.timezone.utc
        return v.replace(tzinfo=utc) if v.tzinfo is None else v.astimezone(utc)
    return v


def _to_naive(v: Any) -> Any:
    if isinstance(v, str):
        v = dt.datetime.fromisoformat(v)
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return v


def _to_date(v: Any) -> Any:
    if isinstance(v, str):
        return dt.date.fromisoformat(v[:10])
    if isinstance(v, dt.datetime):
        return v.date()
    return v


def _to_decimal(v: Any) -> Any:
    return v if isinstance(v, Decimal) else Decimal(str(v))


def _to_str(v: Any) -> Any:
    return v if isinstance(v, str) else str(v)


def _to_bytes(v: Any) -> Any:
    return v if isinstance(v, bytes) else bytes(v)


# Per Spark base type: the converter of a fetched value, and the Python types a value may
# have to pass without it (None: every value is converted, as timestamps for their zone).
_CONVERTERS: dict[str, tuple[Callable[[Any], Any], frozenset[type] | None]] = {
    "BOOLEAN": (bool, frozenset({bool})),
    "TINYINT": (int, frozenset({int})),
    "SMALLINT": (int, frozenset({int})),
    "INT": (int, frozenset({int})),
    "BIGINT": (int, frozenset({int})),
    "FLOAT": (float, frozenset({float})),
    "DOUBLE": (float, frozenset({float})),
    "DECIMAL": (_to_decimal, frozenset({Decimal})),
    "STRING": (_to_str, frozenset({str})),
    "DATE": (_to_date, frozenset({dt.date})),
    "TIMESTAMP": (_to_utc, None),
    "TIMESTAMP_LTZ": (_to_utc, None),
    "TIMESTAMP_NTZ": (_to_naive, None),
    "BINARY": (_to_bytes, frozenset({bytes})),
}


def converter(ddl: str) -> Callable[[Any], Any] | None:
    """The value converter for a Spark column type (None when values pass as they are).

    Example::

        >>> converter("BOOLEAN")(1), converter("DATE")("2024-05-01")
        (True, datetime.date(2024, 5, 1))
    """
    entry = _CONVERTERS.get(base_type(ddl))
    return None if entry is None else entry[0]


def exact_types(ddl: str) -> frozenset[type] | None:
    """The Python types (``None`` included) a fetched value of a column may have to pass as it
    is; None when every value goes through the converter (timestamps: their zone).

    Example::

        >>> sorted(t.__name__ for t in exact_types("STRING")), exact_types("TIMESTAMP")
        (['NoneType', 'str'], None)
    """
    entry = _CONVERTERS.get(base_type(ddl))
    exact = None if entry is None else entry[1]
    return None if exact is None else exact | {type(None)}


def key_normalizer(ddl: str) -> Callable[[Any], Any] | None:
    """How a probe key value is made comparable with a fetched one (timestamps: to UTC).

    Example::

        >>> key_normalizer("BIGINT") is None, key_normalizer("TIMESTAMP_NTZ")("2024-01-02T03:04")
        (True, datetime.datetime(2024, 1, 2, 3, 4))
    """
    b = base_type(ddl)
    if b in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _to_utc
    if b == "TIMESTAMP_NTZ":
        return _to_naive
    return None


# --- the source -------------------------------------------------------------------------------


class LookupSource:
    """The dimension table of one lookup join: keyed fetches and full scans."""

    def __init__(self, spec: LookupSpec, counters: Counters | None = None) -> None:
        self.spec = spec
        self.source = spec.source
        self.pool = pool_for(spec.source)
        self.driver = self.pool.driver
        self.counters = counters or Counters()
        self.columns = [n for n, _ in spec.dim_fields]
        self.types = [t for _, t in spec.dim_fields]
        self.varying = [k for k in spec.keys if k.probe is not None]
        self.consts = [(self.columns[k.column], k.value) for k in spec.keys if k.probe is None]
        self.pushed = None
        if spec.push_filters:
            self.pushed, _ = split_pushable(spec.dim_filter, len(spec.dim_fields))
        self._convs = [
            (i, c, exact_types(t)) for i, t in enumerate(self.types) if (c := converter(t))
        ]
        self._queries: dict[int, Query] = {}
        if self.source.dialect == "sqlite":
            self.chunk_size = sqlite_chunk(spec.chunk_size, len(self.varying))
        else:
            self.chunk_size = spec.chunk_size

    # Queries ------------------------------------------------------------------------------

    def _query(self, n_keys: int) -> Query:
        # PostgreSQL's query text does not depend on the chunk's size; SQLite's does.
        size = n_keys if self.source.dialect == "sqlite" else 0
        q = self._queries.get(size)
        if q is None:
            q = self._queries[size] = key_query(
                self.source.dialect,
                self.source.table_name,
                self.columns,
                [self.columns[k.column] for k in self.varying],
                [self.types[k.column] for k in self.varying],
                self.consts,
                self.pushed,
                n_keys if self.source.dialect == "sqlite" else None,
                self.types,
            )
        return q

    def _params(self, keys: Sequence[tuple], q: Query) -> list[Any]:
        if not self.varying:
            return [*q.const_params, *q.pushed]
        if self.source.dialect == "postgresql":
            if len(self.varying) == 1:
                arrays = [[k[0] for k in keys]]
            else:
                arrays = [list(col) for col in zip(*keys, strict=True)]
            return [*arrays, *q.const_params, *q.pushed]
        flat = [v for key in keys for v in key]
        return [*flat, *q.const_params, *q.pushed]

    def chunks(self, keys: Sequence[tuple]) -> list[Sequence[tuple]]:
        """The keys split into query-sized chunks (one chunk when every key is constant)."""
        if not self.varying:
            return [keys[:1]] if keys else []
        n = self.chunk_size
        return [keys[i : i + n] for i in range(0, len(keys), n)]

    def fetch(self, keys: Sequence[tuple]) -> list[Row]:
        """The rows matching any of ``keys`` (tuples of the varying key values, in spec
        order): one query, which must fit one chunk."""
        if not keys:
            return []
        q = self._query(len(keys) if self.varying else 1)
        return self._convert(self.run(q.sql, self._params(keys, q)))

    def fetch_all(self, keys: Sequence[tuple], concurrent: int = 1) -> list[Row]:
        """The rows of all ``keys``, one query per chunk; ``concurrent`` > 1 runs chunks in
        threads (each on its own pooled connection). Rows come back in chunk order."""
        parts = self.chunks(keys)
        if concurrent <= 1 or len(parts) <= 1:
            return [r for part in parts for r in self.fetch(part)]
        ex = _executor(min(concurrent, 16))
        futures = [ex.submit(self.fetch, part) for part in parts]
        deadline = time.monotonic() + self.spec.timeout_ms / 1000
        out: list[Row] = []
        for f in futures:
            try:
                out.extend(f.result(timeout=max(0.0, deadline - time.monotonic())))
            except TimeoutError:
                raise LookupSourceError(
                    f"Lookup table {self.spec.table!r}: the async lookup of a batch's "
                    f"{len(keys)} keys in {self.source.describe()} timed out after "
                    f"{self.spec.timeout_ms} ms (the LOOKUP hint's 'timeout')."
                ) from None
        return out

    def scan(self) -> list[Row]:
        """Every row of the table (projected, filtered): a FULL cache's load."""
        sql, params = scan_query(
            self.source.dialect, self.source.table_name, self.columns, self.pushed, self.types
        )
        return self._convert(self.run(sql, list(params)))

    def _convert(self, rows: list[Row]) -> list[Row]:
        """The driver's rows with values of the columns' types, column by column: a column
        whose values already have the type (PostgreSQL's usual answer) is left as it is."""
        if not rows:
            return []
        rows = [r if type(r) is tuple else tuple(r) for r in rows]
        if not self._convs:
            return rows
        columns: list[Any] | None = None
        for i, c, exact in self._convs:
            if exact is not None:
                kinds = set(map(type, (r[i] for r in rows)))
                if kinds <= exact:
                    continue
            if columns is None:
                columns = [list(col) for col in zip(*rows, strict=True)]
            columns[i] = [None if v is None else c(v) for v in columns[i]]
        return rows if columns is None else list(zip(*columns, strict=True))

    # Running a query, with Flink's retries -------------------------------------------------

    def run(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """Run one query; retry on connection errors on a fresh connection."""
        max_retries = self.spec.max_retries
        last: BaseException | None = None
        for attempt in range(max_retries + 1):
            conn = None
            try:
                conn = self.pool.acquire()
                rows = self.driver.execute(conn, sql, params)
            except Exception as e:
                self.counters.add(failures=1)
                if conn is not None:
                    self.pool.discard(conn)  # never reuse a connection that failed
                if not self.driver.retryable(e):
                    raise LookupSourceError(
                        f"Lookup table {self.spec.table!r}: the lookup query on "
                        f"{self.source.describe()} failed: {self._said(e)}\nSQL: {sql}"
                    ) from e
                last = e
                if attempt < max_retries:
                    time.sleep(self.spec.retry_backoff_ms * attempt / 1000)
                continue
            self.pool.release(conn)
            self.counters.add(queries=1)
            return rows
        raise LookupSourceError(
            f"Lookup table {self.spec.table!r}: {self.source.describe()} is unreachable; "
            f"{max_retries + 1} attempts failed (lookup.max-retries = {max_retries}). "
            f"Last error: {self._said(last)}. No row was emitted for the keys of this batch; "
            "check that the database is up, or raise 'lookup.max-retries'."
        ) from last

    def _said(self, e: BaseException | None) -> str:
        """The driver's error, first line, for a message that leaves the worker: without the
        password, should a driver ever echo its connection settings."""
        return first_line(e, self.source.password)
