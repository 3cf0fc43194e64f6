"""The ``jdbc`` connector's options: Flink's JDBC SQL connector names, defaults and messages.

A ``jdbc`` table is a table in PostgreSQL (``url`` = ``jdbc:postgresql://host:port/db``) or
SQLite (``jdbc:sqlite:/path/file.db``, an extension: Flink has no SQLite dialect), used as a
lookup table (the dimension side of ``temporal_join``) or as a sink (``execute_insert``:
upsert mode with a primary key, append mode without). :func:`validate_jdbc_options` checks a
table's options when the table is created and returns :class:`JdbcOptions`, which carries
the ``server_ext.lookup.spec`` objects the compiler hands to the lookup operator.

The options (flink-connector-jdbc 4.1 names and defaults; see docs/lookup-joins.md 1.1, 1.2)
are declared below, :data:`OPTIONS` (docs/options.md lists them). Beyond each option's own
type: ``username`` + ``password`` are PostgreSQL's, both or none; a PARTIAL cache needs one of
its three bounds; a cache kind's options need that kind; the deprecated
``lookup.cache.max-rows`` + ``lookup.cache.ttl`` (both or none) make a PARTIAL cache with
expire-after-write whatever ``lookup.cache`` says, as in Flink; counts Flink checks are >= 0.
Flink's scan options (``scan.*``: reading a whole jdbc table as a source) are refused.

Example::

    >>> opts = validate_jdbc_options({"url": "jdbc:sqlite:/data/shop.db",
    ...     "table-name": "customers", "lookup.cache": "PARTIAL",
    ...     "lookup.partial-cache.max-rows": "10000"}, table="Customers")
    >>> opts.cache.kind, opts.cache.max_rows, opts.max_retries, opts.source.dialect
    ('PARTIAL', 10000, 3, 'sqlite')
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

import attrs

from server_ext.lookup.spec import CacheSpec, SourceSpec
from tableapi.connectors.common import (
    CONNECTOR,
    SINK_PARALLELISM,
    check_supported_options,
    sink_parallelism,
    where,
)
from tableapi.errors import ValidationError
from tableapi.options import ConfigOption, ConfigOptions, OptionGroup


def _iso_time_ok(text: str) -> bool:
    t = text.strip()
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    try:
        dt.time.fromisoformat(t)
    except ValueError:
        return False
    return True


URL = (
    ConfigOptions.key("url")
    .string_type()
    .no_default_value()
    .with_description(
        "The database: 'jdbc:postgresql://host:port/database' or 'jdbc:sqlite:/path/file.db' "
        "(an extension: Flink has no SQLite dialect); required."
    )
)
TABLE_NAME = (
    ConfigOptions.key("table-name")
    .string_type()
    .no_default_value()
    .with_description("The table in the database; required.")
)
DRIVER = (
    ConfigOptions.key("driver")
    .string_type()
    .no_default_value()
    .with_description("Accepted and ignored: the dialect comes from the URL.")
)
USERNAME = (
    ConfigOptions.key("username")
    .string_type()
    .no_default_value()
    .with_description("PostgreSQL's user (with 'password': both or none).")
)
PASSWORD = (
    ConfigOptions.key("password")
    .string_type()
    .no_default_value()
    .with_description("PostgreSQL's password (with 'username': both or none).")
)
CACHE = (
    ConfigOptions.key("lookup.cache")
    .enum_type(("NONE", "PARTIAL", "FULL"))
    .default_value("NONE")
    .with_description(
        "The lookup cache: none, PARTIAL (rows looked up, bounded) or FULL (the whole table, "
        "reloaded; an extension: Flink's JDBC connector has no cache for it)."
    )
)
MAX_ROWS = (
    ConfigOptions.key("lookup.partial-cache.max-rows")
    .int_type()
    .no_default_value()
    .with_description("PARTIAL: the most rows cached (positive).")
)
EXPIRE_AFTER_WRITE = (
    ConfigOptions.key("lookup.partial-cache.expire-after-write")
    .duration_type()
    .no_default_value()
    .with_description("PARTIAL: how long a row stays cached after it is looked up.")
)
EXPIRE_AFTER_ACCESS = (
    ConfigOptions.key("lookup.partial-cache.expire-after-access")
    .duration_type()
    .no_default_value()
    .with_description("PARTIAL: how long a row stays cached after it is last read.")
)
CACHE_MISSING_KEY = (
    ConfigOptions.key("lookup.partial-cache.cache-missing-key")
    .boolean_type()
    .default_value(True)
    .with_deprecated_keys("lookup.cache.caching-missing-key")
    .with_description("PARTIAL: cache that a key has no rows too.")
)
RELOAD_STRATEGY = (
    ConfigOptions.key("lookup.full-cache.reload-strategy")
    .enum_type(("PERIODIC", "TIMED"))
    .default_value("PERIODIC")
    .with_description("FULL: reload every interval (PERIODIC) or at a time of day (TIMED).")
)
PERIODIC_INTERVAL = (
    ConfigOptions.key("lookup.full-cache.periodic-reload.interval")
    .duration_type()
    .no_default_value()
    .with_description("FULL, PERIODIC: the interval between reloads; required.")
)
SCHEDULE_MODE = (
    ConfigOptions.key("lookup.full-cache.periodic-reload.schedule-mode")
    .enum_type(("FIXED_DELAY", "FIXED_RATE"))
    .default_value("FIXED_DELAY")
    .with_description(
        "FULL, PERIODIC: the interval runs from a reload's end (FIXED_DELAY) or start."
    )
)
TIMED_ISO_TIME = (
    ConfigOptions.key("lookup.full-cache.timed-reload.iso-time")
    .string_type()
    .no_default_value()
    .with_requirement(
        "an ISO-8601 time such as '10:15', '10:15:30', '10:15Z' or '10:15+07:00'", _iso_time_ok
    )
    .with_description("FULL, TIMED: the time of day of a reload (local time; 'Z': UTC); required.")
)
TIMED_INTERVAL_DAYS = (
    ConfigOptions.key("lookup.full-cache.timed-reload.interval-in-days")
    .int_type()
    .default_value(1)
    .with_description("FULL, TIMED: reload every this many days (at least 1).")
)
MAX_RETRIES = (
    ConfigOptions.key("lookup.max-retries")
    .int_type()
    .default_value(3)
    .with_description("How often a failed lookup query is retried (>= 0).")
)
MAX_RETRY_TIMEOUT = (
    ConfigOptions.key("connection.max-retry-timeout")
    .duration_type()
    .default_value(60_000)
    .with_description("The connect timeout, in whole seconds (at least 1 s).")
)
FILTER_POLICY = (
    ConfigOptions.key("filter.handling.policy")
    .enum_type(("always", "never"))
    .default_value("always")
    .with_description("Push a lookup join's filters on the table into its query or not.")
)
LEGACY_MAX_ROWS = (
    ConfigOptions.key("lookup.cache.max-rows")
    .int_type()
    .default_value(-1)
    .with_description(
        "Deprecated (with lookup.cache.ttl, both or none): a PARTIAL cache of this many rows "
        "expiring after write, whatever lookup.cache says."
    )
)
LEGACY_TTL = (
    ConfigOptions.key("lookup.cache.ttl")
    .duration_type()
    .default_value(10_000)
    .with_description("Deprecated (with lookup.cache.max-rows): the legacy cache's expiry.")
)
SINK_MAX_ROWS = (
    ConfigOptions.key("sink.buffer-flush.max-rows")
    .int_type()
    .default_value(100)
    .with_description("Rows per write of a write task (>= 0; 0: all of them at once).")
)
SINK_FLUSH_INTERVAL = (
    ConfigOptions.key("sink.buffer-flush.interval")
    .duration_type()
    .default_value(1000)
    .with_description("The longest rows wait before they are written; 0 disables.")
)
SINK_MAX_RETRIES = (
    ConfigOptions.key("sink.max-retries")
    .int_type()
    .default_value(3)
    .with_description("How often a failed write is retried (>= 0).")
)

PARTIAL_OPTIONS = (MAX_ROWS, EXPIRE_AFTER_WRITE, EXPIRE_AFTER_ACCESS, CACHE_MISSING_KEY)
FULL_OPTIONS = (
    RELOAD_STRATEGY,
    PERIODIC_INTERVAL,
    SCHEDULE_MODE,
    TIMED_ISO_TIME,
    TIMED_INTERVAL_DAYS,
)
#: The connector's options.
OPTIONS = OptionGroup(
    "Connector 'jdbc'",
    "A table in PostgreSQL or SQLite: a lookup table (the dimension side of a lookup join) "
    "or a sink (upsert mode with a primary key, append mode without); Flink's JDBC connector "
    "4.1 names and defaults. Its scan options (scan.*) are refused.",
    (
        CONNECTOR,
        URL,
        TABLE_NAME,
        DRIVER,
        USERNAME,
        PASSWORD,
        CACHE,
        *PARTIAL_OPTIONS,
        *FULL_OPTIONS,
        MAX_RETRIES,
        MAX_RETRY_TIMEOUT,
        FILTER_POLICY,
        LEGACY_MAX_ROWS,
        LEGACY_TTL,
        SINK_MAX_ROWS,
        SINK_FLUSH_INTERVAL,
        SINK_MAX_RETRIES,
        SINK_PARALLELISM,
    ),
)
DEFAULT_MAX_RETRIES: int = MAX_RETRIES.default
DEFAULT_MAX_RETRY_TIMEOUT_MS: int = MAX_RETRY_TIMEOUT.default
DEFAULT_SINK_MAX_ROWS: int = SINK_MAX_ROWS.default
DEFAULT_SINK_FLUSH_INTERVAL_MS: int = SINK_FLUSH_INTERVAL.default

_PG_URL = re.compile(r"^jdbc:postgresql://(?P<host>[^:/?]*)(?::(?P<port>\d+))?/(?P<db>[^?/]+)$")
_SQLITE_URL = re.compile(r"^jdbc:sqlite:(?P<path>.+)$")


@attrs.frozen
class JdbcSinkOptions:
    """Flink's ``sink.*`` options of a ``jdbc`` table."""

    max_rows: int = DEFAULT_SINK_MAX_ROWS  # sink.buffer-flush.max-rows
    flush_interval_ms: int = DEFAULT_SINK_FLUSH_INTERVAL_MS  # sink.buffer-flush.interval
    max_retries: int = DEFAULT_MAX_RETRIES  # sink.max-retries
    parallelism: int | None = None  # sink.parallelism


@attrs.frozen
class JdbcOptions:
    """A validated ``jdbc`` table: where it is, how lookups cache it, how it is written."""

    source: SourceSpec  # the database (server_ext's wire type)
    cache: CacheSpec
    max_retries: int = DEFAULT_MAX_RETRIES
    max_retry_timeout_ms: int = DEFAULT_MAX_RETRY_TIMEOUT_MS
    push_filters: bool = True  # filter.handling.policy = always
    sink: JdbcSinkOptions = JdbcSinkOptions()

    @property
    def dialect(self) -> str:
        return self.source.dialect


def validate_jdbc_options(options: Mapping[str, str], table: str = "") -> JdbcOptions:
    """Check a ``jdbc`` table's options the way Flink's JdbcDynamicTableFactory does and
    return them typed. Raises :class:`ValidationError` naming the option and the fix.

    Example::

        >>> validate_jdbc_options({"url": "jdbc:postgresql://db:5432/shop",
        ...     "table-name": "customers", "username": "app", "password": "s3cret"}).source.host
        'db'
    """
    at = where(table)
    opts = {str(k): str(v) for k, v in options.items()}
    check_supported_options("jdbc", opts, OPTIONS.keys(), table, _scan_note)
    url, name = URL.read(opts), TABLE_NAME.read(opts)
    if not url or not name:
        missing = [str(o) for o in (URL, TABLE_NAME) if not o.read(opts)]
        raise ValidationError(
            f"One or more required options are missing{at}.\n\nMissing required options "
            "are:\n\n" + "\n".join(missing) + "\n\nSet them with .option('url', "
            "'jdbc:postgresql://host:5432/db') (or 'jdbc:sqlite:/path/file.db') and "
            ".option('table-name', '<table in the database>')."
        )
    _all_or_none(opts, (USERNAME, PASSWORD))
    _all_or_none(opts, (LEGACY_MAX_ROWS, LEGACY_TTL))

    max_retry_timeout_ms = MAX_RETRY_TIMEOUT.read(opts, at)
    if max_retry_timeout_ms < 1000 or max_retry_timeout_ms % 1000:
        raise ValidationError(
            f"The value of '{MAX_RETRY_TIMEOUT}' option must be in second granularity and "
            f"shouldn't be smaller than 1 second, but is {opts[str(MAX_RETRY_TIMEOUT)]}."
        )
    source = _source(opts, url, name, max_retry_timeout_ms // 1000)
    return JdbcOptions(
        source=source,
        cache=_cache(opts, at),
        max_retries=_not_negative(MAX_RETRIES, opts, at),
        max_retry_timeout_ms=max_retry_timeout_ms,
        push_filters=FILTER_POLICY.read(opts, at) == "always",
        sink=_sink(opts, table),
    )


def _sink(opts: dict[str, str], table: str) -> JdbcSinkOptions:
    """The ``sink.*`` options, checked as Flink's JdbcDynamicTableFactory does.

    >>> _sink({"sink.buffer-flush.max-rows": "0", "sink.max-retries": "5"}, "T")
    JdbcSinkOptions(max_rows=0, flush_interval_ms=1000, max_retries=5, parallelism=None)
    """
    at = where(table)
    return JdbcSinkOptions(
        max_rows=_not_negative(SINK_MAX_ROWS, opts, at),
        flush_interval_ms=SINK_FLUSH_INTERVAL.read(opts, at),
        max_retries=_not_negative(SINK_MAX_RETRIES, opts, at),
        parallelism=sink_parallelism(opts, table),
    )


def _not_negative(option: ConfigOption[int], opts: Mapping[str, str], at: str) -> int:
    """An integer option that Flink's factory requires to be >= 0, with Flink's message."""
    value = option.read(opts, at)
    if value < 0:
        raise ValidationError(
            f"The value of '{option}' option shouldn't be negative, but is {value}."
        )
    return value


def parse_jdbc_url(url: str) -> tuple[str, dict[str, Any]]:
    """``(dialect, fields)`` of a JDBC URL this connector reads.

    Example::

        >>> parse_jdbc_url("jdbc:postgresql://localhost:5432/shop")
        ('postgresql', {'host': 'localhost', 'port': 5432, 'database': 'shop'})
        >>> parse_jdbc_url("jdbc:sqlite:/data/shop.db")
        ('sqlite', {'database': '/data/shop.db'})
    """
    m = _PG_URL.match(url)
    if m:
        return "postgresql", {
            "host": m.group("host") or "localhost",
            "port": int(m.group("port") or 5432),
            "database": m.group("db"),
        }
    m = _SQLITE_URL.match(url)
    if m:
        path = m.group("path")
        if path.startswith("//"):  # jdbc:sqlite:///data/x.db
            path = path[2:]
        if path == ":memory:" or not path.startswith("/"):
            raise ValidationError(
                f"Invalid 'url' {url!r}: a SQLite lookup table needs an absolute path to its "
                "file (the server opens it), e.g. 'jdbc:sqlite:/data/shop.db'."
            )
        return "sqlite", {"database": path}
    raise ValidationError(
        f"Invalid 'url' {url!r}: expected 'jdbc:postgresql://host:port/database' or "
        "'jdbc:sqlite:/path/to/file.db' (no URL parameters: use the 'username' and "
        "'password' options)."
    )


def _source(opts: dict[str, str], url: str, name: str, timeout_s: int) -> SourceSpec:
    dialect, fields = parse_jdbc_url(url)
    if dialect == "sqlite" and (USERNAME.is_set(opts) or PASSWORD.is_set(opts)):
        raise ValidationError(
            "Options 'username' and 'password' are for PostgreSQL only: a SQLite database is "
            f"a file ({fields['database']}). Remove them."
        )
    return SourceSpec(
        dialect,
        name,
        username=USERNAME.read(opts),
        password=PASSWORD.read(opts),
        connect_timeout_s=timeout_s,
        **fields,
    )


def _cache(opts: dict[str, str], at: str) -> CacheSpec:
    kind = CACHE.read(opts, at)
    legacy_rows = LEGACY_MAX_ROWS.read(opts, at)
    legacy_ttl = LEGACY_TTL.read(opts, at)
    missing_key = CACHE_MISSING_KEY.read(opts, at)
    if legacy_rows > 0 and legacy_ttl > 0:
        # Flink: the legacy options build a PARTIAL cache whatever 'lookup.cache' says.
        return CacheSpec(
            "PARTIAL",
            max_rows=legacy_rows,
            expire_after_write_ms=legacy_ttl,
            cache_missing_key=missing_key,
        )
    for other, options in (("PARTIAL", PARTIAL_OPTIONS), ("FULL", FULL_OPTIONS)):
        stray = [repr(o.key) for o in options if o.key in opts]
        if kind != other and stray:
            raise ValidationError(
                f"Option(s) {', '.join(stray)} apply to lookup.cache = {other}, but "
                f"lookup.cache is {kind}. Add .option('lookup.cache', '{other}') or remove them."
            )
    if kind == "NONE":
        return CacheSpec()
    if kind == "PARTIAL":
        max_rows = MAX_ROWS.read(opts, at)
        if max_rows is not None and max_rows <= 0:
            raise ValidationError(f"The value of '{MAX_ROWS}' must be positive, but is {max_rows}.")
        ew = EXPIRE_AFTER_WRITE.read(opts, at)
        ea = EXPIRE_AFTER_ACCESS.read(opts, at)
        if max_rows is None and not ew and not ea:
            raise ValidationError(
                f"Missing '{EXPIRE_AFTER_ACCESS}', '{EXPIRE_AFTER_WRITE}' or '{MAX_ROWS}' in "
                "the configuration. The cache will not have evictions under this configuration "
                "and could lead to potential memory issues as the cache size may grow "
                "indefinitely."
            )
        return CacheSpec(
            "PARTIAL",
            max_rows=max_rows,
            expire_after_write_ms=ew or None,
            expire_after_access_ms=ea or None,
            cache_missing_key=missing_key,
        )
    strategy = RELOAD_STRATEGY.read(opts, at)
    interval = PERIODIC_INTERVAL.read(opts, at)
    days = TIMED_INTERVAL_DAYS.read(opts, at)
    iso = TIMED_ISO_TIME.read(opts, at)
    if strategy == "PERIODIC" and not interval:
        raise ValidationError(
            f"Missing '{PERIODIC_INTERVAL}' for the PERIODIC reload of a FULL lookup cache, "
            "e.g. .option('lookup.full-cache.periodic-reload.interval', '1 h')."
        )
    if strategy == "TIMED" and not iso:
        raise ValidationError(
            f"Missing '{TIMED_ISO_TIME}' for the TIMED reload of a FULL lookup cache, e.g. "
            ".option('lookup.full-cache.timed-reload.iso-time', '10:15') (local time; "
            "'10:15Z' is UTC, '10:15+07:00' UTC+7)."
        )
    if strategy == "TIMED" and days < 1:
        raise ValidationError(
            f"The value of '{TIMED_INTERVAL_DAYS}' must be at least 1, but is {days}."
        )
    return CacheSpec(
        "FULL",
        reload_strategy=strategy,
        reload_interval_ms=interval,
        schedule_mode=SCHEDULE_MODE.read(opts, at),
        reload_iso_time=iso,
        reload_interval_days=days,
    )


def _scan_note(unknown: list[str]) -> str:
    refused = [k for k in unknown if k.startswith("scan.")]
    if not refused:
        return ""
    return (
        f"\n\n{', '.join(refused)}: Flink's scan options; a jdbc table is a lookup table or "
        "a sink here, never scanned as a source."
    )


def _all_or_none(opts: Mapping[str, str], options: tuple[ConfigOption[Any], ...]) -> None:
    present = [o for o in options if o.is_set(opts)]
    if present and len(present) != len(options):
        raise ValidationError(
            "Either all or none of the following options should be provided:\n"
            + "\n".join(str(o) for o in options)
        )
