"""The contract between the client's compiler and the lookup join operator.

A lookup join (Flink's processing-time ``JOIN D FOR SYSTEM_TIME AS OF L.proctime``) enriches
each probe row with the dimension rows whose lookup keys equal the row's keys, fetched from
an external database (PostgreSQL or SQLite) through a cache. The client runs::

    out = probe.mapInArrow(LookupJoinFunction(spec), spec.output_ddl())
    out = out.observe(LOOKUP_METRICS_OBSERVATION, *metrics_aggregates(spec))   # see metrics.py
    out = out.where(F.col(METRICS).isNull()).drop(METRICS)

(``LookupJoinFunction`` is in ``server_ext.lookup.operator``; it is referenced by import, so
the server's Python workers must have ``server_ext`` installed.) With SHUFFLE_HASH or
``LOOKUP('shuffle'='true')`` the probe input is first ``repartition``-ed on the lookup key
expressions and ``shuffle=True`` is set: each cache is then kept per shuffle partition.

Input rows: the probe input's columns, exactly ``probe_fields`` (the row-kind column of a
changelog input among them, named by ``kind_column``). The probe's lookup-key values must
already have the dimension key columns' types (cast them on the client: Flink's lookup
function receives keys in the dimension column types).

Output rows: the probe row's columns (unchanged, kind column included), then the dimension
output columns (null-padded for a LEFT join without a match), then ``__lookup_metrics``
(STRUCT, see :data:`METRIC_FIELDS`): null on every data row; each output batch ends with one
marker row where it is set and every other column is null. The client sums the markers with
``DataFrame.observe`` and drops them (as with the LATE rows of temporal joins).

Trees (dimension filter, pre-filter, residual, computed columns) use the condition tuples of
``server_ext/joins/spec.py``: ``("col", "l", i)`` is probe field i, ``("col", "r", j)`` is
dimension column j, where j counts ``dim_fields`` first and then ``computed``.

This module must not import ``tableapi`` and everything here pickles by reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

DIALECTS = ("postgresql", "sqlite")
CACHE_KINDS = ("NONE", "PARTIAL", "FULL")
RELOAD_STRATEGIES = ("PERIODIC", "TIMED")
SCHEDULE_MODES = ("FIXED_DELAY", "FIXED_RATE")
CACHE_SCOPES = ("partition", "worker", "task")
LOOKUP_KINDS = ("inner", "left")

#: The marker column carrying one output batch's lookup metrics.
METRICS = "__lookup_metrics"
#: Its fields: FLIP-221's cache metrics, the database queries, and the end time of the
#: latest load (epoch ms; it orders ``latestLoadTime`` across markers).
METRIC_FIELDS = (
    "hitCount",
    "missCount",
    "loadCount",
    "numLoadFailures",
    "latestLoadTime",
    "numCachedRecords",
    "numQueries",
    "latestLoadEnd",
)
#: The name of the observation (``DataFrame.observe``) that sums the markers.
LOOKUP_METRICS_OBSERVATION = "tableapi_lookup_metrics"


@dataclass(frozen=True)
class SourceSpec:
    """Where the dimension table lives: a PostgreSQL table or a SQLite table.

    Example::

        SourceSpec("postgresql", "customers", "shop", host="db", port=5432, username="app")
        SourceSpec("sqlite", "customers", "/data/shop.db")
    """

    dialect: str  # postgresql | sqlite
    table_name: str  # Flink's 'table-name' (may be schema-qualified: public.customers)
    database: str  # PostgreSQL: the database name; SQLite: the file's path
    host: str = "localhost"
    port: int = 5432
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    connect_timeout_s: int = 10

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {DIALECTS}, got {self.dialect!r}")
        if not self.table_name:
            raise ValueError("table_name must not be empty")

    def location(self) -> str:
        """Where the database is, for messages (never the password).

        >>> SourceSpec("postgresql", "t", "shop", host="db", password="x").location()
        "PostgreSQL database 'shop' at db:5432"
        """
        if self.dialect == "sqlite":
            return f"SQLite database {self.database}"
        return f"PostgreSQL database {self.database!r} at {self.host}:{self.port}"

    def describe(self) -> str:
        """Where the table is, for messages (never the password)."""
        return f"{self.location()} (table {self.table_name})"


@dataclass(frozen=True)
class CacheSpec:
    """Flink's ``lookup.cache`` options (FLIP-221), in milliseconds.

    ``scope`` decides which probe rows share one cache (see ``caches.py``); None means
    ``partition`` under a hash lookup join (``LookupSpec.shuffle``) and ``worker`` otherwise.
    A FULL cache is always one per worker (it holds the whole table).
    """

    kind: str = "NONE"
    max_rows: int | None = None
    expire_after_write_ms: int | None = None
    expire_after_access_ms: int | None = None
    cache_missing_key: bool = True
    reload_strategy: str = "PERIODIC"
    reload_interval_ms: int | None = None
    schedule_mode: str = "FIXED_DELAY"
    reload_iso_time: str | None = None  # TIMED: '10:15', '10:15Z', '10:15+07:00'
    reload_interval_days: int = 1
    scope: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in CACHE_KINDS:
            raise ValueError(f"cache kind must be one of {CACHE_KINDS}, got {self.kind!r}")
        if self.reload_strategy not in RELOAD_STRATEGIES:
            raise ValueError(f"reload_strategy must be one of {RELOAD_STRATEGIES}")
        if self.schedule_mode not in SCHEDULE_MODES:
            raise ValueError(f"schedule_mode must be one of {SCHEDULE_MODES}")
        if self.scope is not None and self.scope not in CACHE_SCOPES:
            raise ValueError(f"cache scope must be one of {CACHE_SCOPES}, got {self.scope!r}")
        if self.kind == "PARTIAL" and not (
            self.max_rows or self.expire_after_write_ms or self.expire_after_access_ms
        ):
            raise ValueError("a PARTIAL cache needs max_rows or an expiry")
        if self.kind == "FULL" and self.reload_strategy == "TIMED" and not self.reload_iso_time:
            raise ValueError("a TIMED full-cache reload needs reload_iso_time")


@dataclass(frozen=True)
class RetrySpec:
    """The LOOKUP hint's retry: on an empty result (``lookup_miss``), with ``fixed_delay``,
    at most ``max_attempts`` more lookups of the key."""

    fixed_delay_ms: int
    max_attempts: int

    def __post_init__(self) -> None:
        if self.fixed_delay_ms < 0 or self.max_attempts <= 0:
            raise ValueError("fixed_delay_ms must be >= 0 and max_attempts > 0")


@dataclass(frozen=True)
class LookupKey:
    """One lookup key: dimension column ``column`` (an index into ``dim_fields``) equals
    probe field ``probe``, or the constant ``value`` when ``probe`` is None."""

    column: int
    probe: int | None = None
    value: Any = None


@dataclass(frozen=True)
class LookupSpec:
    """Everything the lookup join operator needs, decided at plan time."""

    table: str  # the lookup table's catalog name (errors, metrics)
    source: SourceSpec
    kind: str  # inner | left
    probe_fields: tuple[tuple[str, str], ...]  # the input's (name, Spark DDL type), in order
    dim_fields: tuple[tuple[str, str], ...]  # fetched columns: (database column name, type)
    keys: tuple[LookupKey, ...]
    computed: tuple[tuple[str, str, tuple], ...] = ()  # (name, type, tree over dim columns)
    dim_filter: tuple | None = None  # dimension-only predicate (pushed into the SQL if it can)
    pre_filter: tuple | None = None  # probe-only predicate: failing rows get no lookup
    residual: tuple | None = None  # predicate over (probe row, dimension row)
    dim_output: tuple[int, ...] | None = None  # dimension columns to output (default: all)
    output_names: tuple[str, ...] = ()  # names of the dimension output columns
    cache: CacheSpec = CacheSpec()
    max_retries: int = 3  # lookup.max-retries: retries of a query after a connection error
    retry_backoff_ms: int = 1000  # sleep before retry i is i * this (Flink: 1 s * i)
    retry: RetrySpec | None = None  # LOOKUP hint: retry on lookup_miss
    async_lookup: bool = False  # LOOKUP 'async': the batch's chunk queries run concurrently
    capacity: int = 100  # LOOKUP 'capacity': at most this many queries in flight
    timeout_ms: int = 180_000  # LOOKUP 'timeout' (async only): the batch's lookups
    chunk_size: int = 1000  # keys per database query
    shuffle: bool = False  # the input is hash-partitioned on the lookup keys
    push_filters: bool = True  # filter.handling.policy: push the dimension filter into SQL
    kind_column: str | None = None  # the probe's row-kind column, if it is a changelog
    cache_id: str = ""  # caches are shared only by operators with the same id (one query)

    def __post_init__(self) -> None:
        if self.kind not in LOOKUP_KINDS:
            raise ValueError(f"lookup join kind must be one of {LOOKUP_KINDS}, got {self.kind!r}")
        if not self.keys:
            raise ValueError("a lookup join needs at least one lookup key")
        n_dim, n_probe = len(self.dim_fields), len(self.probe_fields)
        for k in self.keys:
            if not 0 <= k.column < n_dim:
                raise ValueError(f"lookup key column {k.column} out of range ({n_dim} columns)")
            if k.probe is not None and not 0 <= k.probe < n_probe:
                raise ValueError(f"lookup key probe field {k.probe} out of range")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.chunk_size <= 0 or self.capacity <= 0:
            raise ValueError("chunk_size and capacity must be positive")
        names = self.dim_output_fields()
        if self.output_names and len(self.output_names) != len(names):
            raise ValueError("output_names must name every dimension output column")
        if self.kind_column is not None and self.kind_column not in (
            n for n, _ in self.probe_fields
        ):
            raise ValueError(f"kind column {self.kind_column!r} is not a probe field")

    @property
    def all_dim_fields(self) -> tuple[tuple[str, str], ...]:
        """Fetched columns then computed columns: the dimension row the trees read."""
        return self.dim_fields + tuple((n, t) for n, t, _ in self.computed)

    @property
    def cache_scope(self) -> str:
        if self.cache.kind == "FULL":
            return "worker"
        return self.cache.scope or ("partition" if self.shuffle else "worker")

    def dim_output_fields(self) -> tuple[tuple[str, str], ...]:
        fields = self.all_dim_fields
        picked = fields if self.dim_output is None else tuple(fields[i] for i in self.dim_output)
        if self.output_names:
            picked = tuple((n, t) for n, (_, t) in zip(self.output_names, picked, strict=True))
        return picked

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        """The data columns of the output (the metrics marker column not included)."""
        return self.probe_fields + self.dim_output_fields()

    def output_ddl(self) -> str:
        """The schema for ``mapInArrow``: the data columns, then the metrics marker."""
        metrics = ", ".join(f"{m}: BIGINT" for m in METRIC_FIELDS)
        cols = [f"{quote_ddl(n)} {t}" for n, t in self.output_fields()]
        return ", ".join([*cols, f"{METRICS} STRUCT<{metrics}>"])


def quote_ddl(name: str) -> str:
    """A column name for a Spark DDL string."""
    return "`" + name.replace("`", "``") + "`"


_SIMPLE_TYPE = re.compile(r"^\s*([A-Za-z_]+)")


def base_type(ddl: str) -> str:
    """``DECIMAL(10, 2)`` -> ``DECIMAL``; ``VARCHAR(20)`` -> ``STRING``; aliases unified."""
    m = _SIMPLE_TYPE.match(ddl)
    name = m.group(1).upper() if m else ddl.upper()
    return {
        "INTEGER": "INT",
        "LONG": "BIGINT",
        "SHORT": "SMALLINT",
        "BYTE": "TINYINT",
        "REAL": "FLOAT",
        "VARCHAR": "STRING",
        "CHAR": "STRING",
        "TEXT": "STRING",
        "BOOL": "BOOLEAN",
        "NUMERIC": "DECIMAL",
        "DEC": "DECIMAL",
        "BYTES": "BINARY",
        "VARBINARY": "BINARY",
    }.get(name, name)


__all__ = [
    "CACHE_KINDS",
    "CACHE_SCOPES",
    "DIALECTS",
    "LOOKUP_METRICS_OBSERVATION",
    "METRICS",
    "METRIC_FIELDS",
    "CacheSpec",
    "LookupKey",
    "LookupSpec",
    "RetrySpec",
    "SourceSpec",
    "base_type",
    "quote_ddl",
]
