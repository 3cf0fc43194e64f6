"""The ``jdbc`` connector's options: Flink's JDBC SQL connector names, defaults and messages.

A ``jdbc`` table is a table in PostgreSQL (``url`` = ``jdbc:postgresql://host:port/db``) or
SQLite (``jdbc:sqlite:/path/file.db``, an extension: Flink has no SQLite dialect), used as a
lookup table (the dimension side of ``temporal_join``) or as a sink (``execute_insert``:
upsert mode with a primary key, append mode without). :func:`validate_jdbc_options` checks a
table's options when the table is created and returns :class:`JdbcOptions`, which carries
the ``server_ext.lookup.spec`` objects the compiler hands to the lookup operator.

Options (flink-connector-jdbc 4.1 names and defaults; see docs/lookup-joins.md 1.1, 1.2):

- ``url``, ``table-name`` (required); ``username`` + ``password`` (PostgreSQL only, both or
  none); ``driver`` (accepted and ignored: the dialect comes from the URL).
- ``lookup.cache`` = NONE (default) | PARTIAL | FULL (FULL is an extension: Flink's JDBC
  connector silently has no cache for it).
- PARTIAL: ``lookup.partial-cache.max-rows``, ``.expire-after-write``, ``.expire-after-access``
  (at least one of the three), ``.cache-missing-key`` (default true).
- FULL: ``lookup.full-cache.reload-strategy`` = PERIODIC (default) | TIMED,
  ``.periodic-reload.interval``, ``.periodic-reload.schedule-mode`` = FIXED_DELAY (default) |
  FIXED_RATE, ``.timed-reload.iso-time``, ``.timed-reload.interval-in-days`` (default 1).
- ``lookup.max-retries`` (default 3, >= 0), ``connection.max-retry-timeout`` (default 60 s,
  >= 1 s; the connect timeout here), ``filter.handling.policy`` = always (default) | never.
- Deprecated: ``lookup.cache.max-rows`` + ``lookup.cache.ttl`` (both or none; they make a
  PARTIAL cache with expire-after-write, overriding ``lookup.cache``, as in Flink) and
  ``lookup.cache.caching-missing-key``.
- Sink: ``sink.buffer-flush.max-rows`` (default 100, >= 0: rows per write of a write task,
  0 for all of them at once), ``sink.buffer-flush.interval`` (default 1 s, 0 disables),
  ``sink.max-retries`` (default 3, >= 0), ``sink.parallelism`` (the number of write tasks).

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
from tableapi.connectors.common import SINK_PARALLELISM, check_supported_options, sink_parallelism
from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError

URL = "url"
TABLE_NAME = "table-name"
DRIVER = "driver"
USERNAME = "username"
PASSWORD = "password"
CACHE = "lookup.cache"
MAX_ROWS = "lookup.partial-cache.max-rows"
EXPIRE_AFTER_WRITE = "lookup.partial-cache.expire-after-write"
EXPIRE_AFTER_ACCESS = "lookup.partial-cache.expire-after-access"
CACHE_MISSING_KEY = "lookup.partial-cache.cache-missing-key"
RELOAD_STRATEGY = "lookup.full-cache.reload-strategy"
PERIODIC_INTERVAL = "lookup.full-cache.periodic-reload.interval"
SCHEDULE_MODE = "lookup.full-cache.periodic-reload.schedule-mode"
TIMED_ISO_TIME = "lookup.full-cache.timed-reload.iso-time"
TIMED_INTERVAL_DAYS = "lookup.full-cache.timed-reload.interval-in-days"
MAX_RETRIES = "lookup.max-retries"
MAX_RETRY_TIMEOUT = "connection.max-retry-timeout"
FILTER_POLICY = "filter.handling.policy"
LEGACY_MAX_ROWS = "lookup.cache.max-rows"
LEGACY_TTL = "lookup.cache.ttl"
LEGACY_MISSING_KEY = "lookup.cache.caching-missing-key"
SINK_MAX_ROWS = "sink.buffer-flush.max-rows"
SINK_FLUSH_INTERVAL = "sink.buffer-flush.interval"
SINK_MAX_RETRIES = "sink.max-retries"

PARTIAL_KEYS = (MAX_ROWS, EXPIRE_AFTER_WRITE, EXPIRE_AFTER_ACCESS, CACHE_MISSING_KEY)
FULL_KEYS = (
    RELOAD_STRATEGY,
    PERIODIC_INTERVAL,
    SCHEDULE_MODE,
    TIMED_ISO_TIME,
    TIMED_INTERVAL_DAYS,
)
SUPPORTED_OPTIONS = frozenset(
    {
        "connector",
        URL,
        TABLE_NAME,
        DRIVER,
        USERNAME,
        PASSWORD,
        CACHE,
        *PARTIAL_KEYS,
        *FULL_KEYS,
        MAX_RETRIES,
        MAX_RETRY_TIMEOUT,
        FILTER_POLICY,
        LEGACY_MAX_ROWS,
        LEGACY_TTL,
        LEGACY_MISSING_KEY,
        SINK_MAX_ROWS,
        SINK_FLUSH_INTERVAL,
        SINK_MAX_RETRIES,
        SINK_PARALLELISM,
    }
)
DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RETRY_TIMEOUT_MS = 60_000
DEFAULT_SINK_MAX_ROWS = 100
DEFAULT_SINK_FLUSH_INTERVAL_MS = 1000

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
    where = f" of table {table!r}" if table else ""
    opts = {str(k): str(v) for k, v in options.items()}
    check_supported_options("jdbc", opts, SUPPORTED_OPTIONS, table, _scan_note)
    missing = [k for k in (URL, TABLE_NAME) if not opts.get(k)]
    if missing:
        raise ValidationError(
            f"One or more required options are missing{where}.\n\nMissing required options "
            "are:\n\n" + "\n".join(missing) + "\n\nSet them with .option('url', "
            "'jdbc:postgresql://host:5432/db') (or 'jdbc:sqlite:/path/file.db') and "
            ".option('table-name', '<table in the database>')."
        )
    _all_or_none(opts, (USERNAME, PASSWORD))
    _all_or_none(opts, (LEGACY_MAX_ROWS, LEGACY_TTL))

    max_retry_timeout_ms = _duration(opts, MAX_RETRY_TIMEOUT, DEFAULT_MAX_RETRY_TIMEOUT_MS)
    if max_retry_timeout_ms < 1000 or max_retry_timeout_ms % 1000:
        raise ValidationError(
            f"The value of '{MAX_RETRY_TIMEOUT}' option must be in second granularity and "
            f"shouldn't be smaller than 1 second, but is {opts[MAX_RETRY_TIMEOUT]}."
        )
    source = _source(opts, table, max_retry_timeout_ms // 1000)
    max_retries = _int(opts, MAX_RETRIES, DEFAULT_MAX_RETRIES)
    if max_retries < 0:
        raise ValidationError(
            f"The value of '{MAX_RETRIES}' option shouldn't be negative, but is {max_retries}."
        )
    policy = _enum(opts, FILTER_POLICY, ("always", "never"), "always")
    return JdbcOptions(
        source=source,
        cache=_cache(opts),
        max_retries=max_retries,
        max_retry_timeout_ms=max_retry_timeout_ms,
        push_filters=policy == "always",
        sink=_sink(opts, table),
    )


def _sink(opts: dict[str, str], table: str) -> JdbcSinkOptions:
    """The ``sink.*`` options, checked as Flink's JdbcDynamicTableFactory does.

    >>> _sink({"sink.buffer-flush.max-rows": "0", "sink.max-retries": "5"}, "T")
    JdbcSinkOptions(max_rows=0, flush_interval_ms=1000, max_retries=5, parallelism=None)
    """
    counts = {}
    for key, default in ((SINK_MAX_ROWS, DEFAULT_SINK_MAX_ROWS), (SINK_MAX_RETRIES, 3)):
        counts[key] = _int(opts, key, default)
        if counts[key] < 0:
            raise ValidationError(
                f"The value of '{key}' option shouldn't be negative, but is {counts[key]}."
            )
    return JdbcSinkOptions(
        max_rows=counts[SINK_MAX_ROWS],
        flush_interval_ms=_duration(opts, SINK_FLUSH_INTERVAL, DEFAULT_SINK_FLUSH_INTERVAL_MS),
        max_retries=counts[SINK_MAX_RETRIES],
        parallelism=sink_parallelism(opts, table),
    )


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


def _source(opts: dict[str, str], table: str, timeout_s: int) -> SourceSpec:
    dialect, fields = parse_jdbc_url(opts[URL])
    if dialect == "sqlite" and (USERNAME in opts or PASSWORD in opts):
        raise ValidationError(
            "Options 'username' and 'password' are for PostgreSQL only: a SQLite database is "
            f"a file ({fields['database']}). Remove them."
        )
    return SourceSpec(
        dialect,
        opts[TABLE_NAME],
        username=opts.get(USERNAME),
        password=opts.get(PASSWORD),
        connect_timeout_s=timeout_s,
        **fields,
    )


def _cache(opts: dict[str, str]) -> CacheSpec:
    kind = _enum(opts, CACHE, ("NONE", "PARTIAL", "FULL"), "NONE")
    legacy_rows = _int(opts, LEGACY_MAX_ROWS, -1)
    legacy_ttl = _duration(opts, LEGACY_TTL, 10_000)
    missing_key = _bool(opts, CACHE_MISSING_KEY, _bool(opts, LEGACY_MISSING_KEY, True))
    if legacy_rows > 0 and legacy_ttl > 0:
        # Flink: the legacy options build a PARTIAL cache whatever 'lookup.cache' says.
        return CacheSpec(
            "PARTIAL",
            max_rows=legacy_rows,
            expire_after_write_ms=legacy_ttl,
            cache_missing_key=missing_key,
        )
    if kind != "PARTIAL":
        stray = [k for k in PARTIAL_KEYS if k in opts]
        if stray:
            raise ValidationError(
                f"Option(s) {', '.join(repr(k) for k in stray)} apply to lookup.cache = "
                f"PARTIAL, but lookup.cache is {kind}. Add .option('lookup.cache', 'PARTIAL') "
                "or remove them."
            )
    if kind != "FULL":
        stray = [k for k in FULL_KEYS if k in opts]
        if stray:
            raise ValidationError(
                f"Option(s) {', '.join(repr(k) for k in stray)} apply to lookup.cache = FULL, "
                f"but lookup.cache is {kind}. Add .option('lookup.cache', 'FULL') or remove "
                "them."
            )
    if kind == "NONE":
        return CacheSpec()
    if kind == "PARTIAL":
        max_rows = _int(opts, MAX_ROWS, None)
        if max_rows is not None and max_rows <= 0:
            raise ValidationError(f"The value of '{MAX_ROWS}' must be positive, but is {max_rows}.")
        ew = _duration(opts, EXPIRE_AFTER_WRITE, None)
        ea = _duration(opts, EXPIRE_AFTER_ACCESS, None)
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
    strategy = _enum(opts, RELOAD_STRATEGY, ("PERIODIC", "TIMED"), "PERIODIC")
    mode = _enum(opts, SCHEDULE_MODE, ("FIXED_DELAY", "FIXED_RATE"), "FIXED_DELAY")
    interval = _duration(opts, PERIODIC_INTERVAL, None)
    days = _int(opts, TIMED_INTERVAL_DAYS, 1)
    iso = opts.get(TIMED_ISO_TIME)
    if strategy == "PERIODIC":
        if not interval:
            raise ValidationError(
                f"Missing '{PERIODIC_INTERVAL}' for the PERIODIC reload of a FULL lookup cache, "
                "e.g. .option('lookup.full-cache.periodic-reload.interval', '1 h')."
            )
    else:
        if not iso:
            raise ValidationError(
                f"Missing '{TIMED_ISO_TIME}' for the TIMED reload of a FULL lookup cache, e.g. "
                ".option('lookup.full-cache.timed-reload.iso-time', '10:15') (local time; "
                "'10:15Z' is UTC, '10:15+07:00' UTC+7)."
            )
        if not _iso_time_ok(iso):
            raise ValidationError(
                f"Could not parse value '{iso}' for key '{TIMED_ISO_TIME}': expected an ISO-8601 "
                "time such as '10:15', '10:15:30', '10:15Z' or '10:15+07:00'."
            )
        if days < 1:
            raise ValidationError(
                f"The value of '{TIMED_INTERVAL_DAYS}' must be at least 1, but is {days}."
            )
    return CacheSpec(
        "FULL",
        reload_strategy=strategy,
        reload_interval_ms=interval,
        schedule_mode=mode,
        reload_iso_time=iso,
        reload_interval_days=days,
    )


def _iso_time_ok(text: str) -> bool:
    t = text.strip()
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    try:
        dt.time.fromisoformat(t)
    except ValueError:
        return False
    return True


def _bad(key: str, value: str, expected: str) -> ValidationError:
    return ValidationError(f"Could not parse value '{value}' for key '{key}' ({expected}).")


def _scan_note(unknown: list[str]) -> str:
    refused = [k for k in unknown if k.startswith("scan.")]
    if not refused:
        return ""
    return (
        f"\n\n{', '.join(refused)}: Flink's scan options; a jdbc table is a lookup table or "
        "a sink here, never scanned as a source."
    )


def _all_or_none(opts: Mapping[str, str], keys: tuple[str, ...]) -> None:
    present = [k for k in keys if k in opts]
    if present and len(present) != len(keys):
        raise ValidationError(
            "Either all or none of the following options should be provided:\n" + "\n".join(keys)
        )


def _int(opts: Mapping[str, str], key: str, default: Any) -> Any:
    if key not in opts:
        return default
    value = opts[key].strip()
    if not re.fullmatch(r"[+-]?\d+", value):
        raise _bad(key, opts[key], "expected an integer")
    return int(value)


def _bool(opts: Mapping[str, str], key: str, default: bool) -> bool:
    if key not in opts:
        return default
    value = opts[key].strip().lower()
    if value not in ("true", "false"):
        raise _bad(key, opts[key], "expected true or false")
    return value == "true"


def _duration(opts: Mapping[str, str], key: str, default: Any) -> Any:
    if key not in opts:
        return default
    try:
        return parse_duration_ms(opts[key], key)
    except ValidationError:
        expected = "expected a duration such as '10 min', '30 s' or '500 ms'"
        raise _bad(key, opts[key], expected) from None


def _enum(opts: Mapping[str, str], key: str, values: tuple[str, ...], default: str) -> str:
    """Flink's enum options: matched case-insensitively."""
    if key not in opts:
        return default
    value = opts[key].strip()
    for v in values:
        if v.lower() == value.lower():
            return v
    shown = ", ".join(values)
    raise _bad(key, opts[key], f"expected one of [{shown}]")
