"""The jdbc connector's option validation: Flink's names, defaults and messages."""

from __future__ import annotations

import pytest

from tableapi.connectors.jdbc import parse_jdbc_url, validate_jdbc_options
from tableapi.errors import ValidationError

PG = {"url": "jdbc:postgresql://db.local:5433/shop", "table-name": "customers"}
LITE = {"url": "jdbc:sqlite:/data/shop.db", "table-name": "customers"}


def check(options: dict, *fragments: str) -> None:
    with pytest.raises(ValidationError) as err:
        validate_jdbc_options(options, table="Customers")
    for f in fragments:
        assert f in str(err.value), str(err.value)


def test_defaults() -> None:
    o = validate_jdbc_options(PG)
    assert (o.source.host, o.source.port, o.source.database) == ("db.local", 5433, "shop")
    assert o.cache.kind == "NONE" and o.max_retries == 3 and o.max_retry_timeout_ms == 60_000
    assert o.push_filters and o.source.connect_timeout_s == 60
    assert parse_jdbc_url("jdbc:postgresql:///shop")[1]["host"] == "localhost"


def test_partial_cache_options() -> None:
    o = validate_jdbc_options(
        {**PG, "lookup.cache": "partial", "lookup.partial-cache.max-rows": "10000",
         "lookup.partial-cache.expire-after-write": "10 min",
         "lookup.partial-cache.expire-after-access": "30s",
         "lookup.partial-cache.cache-missing-key": "FALSE", "lookup.max-retries": "0"}
    )  # fmt: skip
    c = o.cache
    assert (c.kind, c.max_rows, c.expire_after_write_ms, c.expire_after_access_ms) == (
        "PARTIAL", 10_000, 600_000, 30_000,
    )  # fmt: skip
    assert not c.cache_missing_key and o.max_retries == 0


def test_partial_cache_without_a_bound_is_refused_with_flinks_message() -> None:
    check(
        {**PG, "lookup.cache": "PARTIAL"},
        "Missing 'lookup.partial-cache.expire-after-access', "
        "'lookup.partial-cache.expire-after-write' or 'lookup.partial-cache.max-rows' in the "
        "configuration. The cache will not have evictions",
    )


def test_full_cache_options() -> None:
    o = validate_jdbc_options(
        {**LITE, "lookup.cache": "FULL", "lookup.full-cache.periodic-reload.interval": "1 h",
         "lookup.full-cache.periodic-reload.schedule-mode": "FIXED_RATE"}
    )  # fmt: skip
    assert (o.cache.kind, o.cache.reload_interval_ms, o.cache.schedule_mode) == (
        "FULL", 3_600_000, "FIXED_RATE",
    )  # fmt: skip
    o = validate_jdbc_options(
        {**LITE, "lookup.cache": "FULL", "lookup.full-cache.reload-strategy": "TIMED",
         "lookup.full-cache.timed-reload.iso-time": "10:15+07:00",
         "lookup.full-cache.timed-reload.interval-in-days": "2"}
    )  # fmt: skip
    assert (o.cache.reload_strategy, o.cache.reload_iso_time, o.cache.reload_interval_days) == (
        "TIMED", "10:15+07:00", 2,
    )  # fmt: skip
    check({**LITE, "lookup.cache": "FULL"}, "Missing 'lookup.full-cache.periodic-reload.interval'")
    check(
        {**LITE, "lookup.cache": "FULL", "lookup.full-cache.reload-strategy": "TIMED"},
        "Missing 'lookup.full-cache.timed-reload.iso-time'",
    )
    check(
        {**LITE, "lookup.cache": "FULL", "lookup.full-cache.reload-strategy": "TIMED",
         "lookup.full-cache.timed-reload.iso-time": "25:99"},
        "lookup.full-cache.timed-reload.iso-time of table 'Customers' must be an ISO-8601 time "
        "such as '10:15', "
        "'10:15:30', '10:15Z' or '10:15+07:00', got '25:99'.",
    )  # fmt: skip


def test_unknown_and_unsupported_options() -> None:
    check(
        {**PG, "lookup.cache.maxrows": "1"},
        "Unsupported options found for 'jdbc'",
        "lookup.cache.maxrows",
        "Supported options:",
        "lookup.partial-cache.max-rows",
    )
    check({**PG, "scan.partition.column": "id"}, "never scanned as a source")


def test_sink_options_flinks_defaults_and_messages() -> None:
    o = validate_jdbc_options(PG).sink
    assert (o.max_rows, o.flush_interval_ms, o.max_retries, o.parallelism) == (100, 1000, 3, None)
    o = validate_jdbc_options(
        {**PG, "sink.buffer-flush.max-rows": "0", "sink.buffer-flush.interval": "0",
         "sink.max-retries": "7", "sink.parallelism": "2"}
    ).sink  # fmt: skip
    assert (o.max_rows, o.flush_interval_ms, o.max_retries, o.parallelism) == (0, 0, 7, 2)
    check({**PG, "sink.max-retries": "-1"},
          "The value of 'sink.max-retries' option shouldn't be negative, but is -1.")  # fmt: skip
    check({**PG, "sink.buffer-flush.max-rows": "-5"}, "'sink.buffer-flush.max-rows'", "-5")
    check({**PG, "sink.buffer-flush.interval": "soon"},
          "Could not parse value 'soon' for key 'sink.buffer-flush.interval' of table "
          "'Customers': it must be a number and a unit")  # fmt: skip
    check({**PG, "sink.parallelism": "0"}, "Invalid configured parallelism 0 for table 'Customers'")


def test_bad_values() -> None:
    check({**PG, "lookup.max-retries": "abc"},
          "Could not parse value 'abc' for key 'lookup.max-retries' of table 'Customers': "
          "it must be a whole number.")  # fmt: skip
    check({**PG, "lookup.cache": "LRU"},
          "Could not parse value 'LRU' for key 'lookup.cache' of table 'Customers': it "
          "must be one of ['NONE', 'PARTIAL', 'FULL'] (any case).")  # fmt: skip
    check({**PG, "lookup.cache": "PARTIAL", "lookup.partial-cache.expire-after-write": "10 minz"},
          "Could not parse value '10 minz' for key "
          "'lookup.partial-cache.expire-after-write'")  # fmt: skip
    check({**PG, "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10",
           "lookup.partial-cache.cache-missing-key": "yes"},
          "Could not parse value 'yes' for key 'lookup.partial-cache.cache-missing-key'",
          "true or false")  # fmt: skip
    check({**PG, "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "0"}, "positive")
    check({**PG, "filter.handling.policy": "sometimes"}, "one of ['always', 'never']")


def test_negative_max_retries_with_flinks_message() -> None:
    check({**PG, "lookup.max-retries": "-1"},
          "The value of 'lookup.max-retries' option shouldn't be negative, but is -1.")  # fmt: skip


def test_connection_max_retry_timeout_in_seconds() -> None:
    check({**PG, "connection.max-retry-timeout": "500 ms"},
          "must be in second granularity and shouldn't be smaller than 1 second")  # fmt: skip
    o = validate_jdbc_options({**PG, "connection.max-retry-timeout": "5 s"})
    assert o.source.connect_timeout_s == 5


def test_options_of_another_cache_kind_are_refused() -> None:
    check({**PG, "lookup.partial-cache.max-rows": "10"},
          "apply to lookup.cache = PARTIAL, but lookup.cache is NONE")  # fmt: skip
    check(
        {**PG, "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10",
         "lookup.full-cache.periodic-reload.interval": "1 h"},
        "apply to lookup.cache = FULL",
    )  # fmt: skip


def test_deprecated_options_both_or_none() -> None:
    check({**PG, "lookup.cache.max-rows": "100"},
          "Either all or none of the following options should be provided:\n"
          "lookup.cache.max-rows\nlookup.cache.ttl")  # fmt: skip
    o = validate_jdbc_options({**PG, "lookup.cache.max-rows": "100", "lookup.cache.ttl": "10s",
                               "lookup.cache.caching-missing-key": "false"})  # fmt: skip
    c = o.cache
    assert (c.kind, c.max_rows, c.expire_after_write_ms) == ("PARTIAL", 100, 10_000)
    assert not o.cache.cache_missing_key
    # The deprecated key is the new option's fallback (the new key wins when both are set).
    partial = {**PG, "lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10"}
    legacy = {**partial, "lookup.cache.caching-missing-key": "false"}
    assert not validate_jdbc_options(legacy).cache.cache_missing_key
    both = {**legacy, "lookup.partial-cache.cache-missing-key": "true"}
    assert validate_jdbc_options(both).cache.cache_missing_key
    check({**partial, "lookup.cache.caching-missing-key": "no"},
          "Could not parse value 'no' for key 'lookup.cache.caching-missing-key'")  # fmt: skip


def test_urls_and_credentials() -> None:
    check({**PG, "username": "app"}, "Either all or none", "username\npassword")
    check({**LITE, "username": "a", "password": "b"}, "for PostgreSQL only")
    check({**PG, "url": "jdbc:mysql://h/db"}, "expected 'jdbc:postgresql://host:port/database'")
    check({**PG, "url": "jdbc:postgresql://h/db?user=x"}, "use the 'username' and 'password'")
    check({**LITE, "url": "jdbc:sqlite:shop.db"}, "absolute path")
    check({"url": PG["url"]}, "Missing required options", "table-name")
    o = validate_jdbc_options({**PG, "username": "app", "password": "s3cret"})
    assert o.source.username == "app" and "s3cret" not in repr(o)
    assert validate_jdbc_options(LITE).source.database == "/data/shop.db"
