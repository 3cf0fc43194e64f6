"""PARTIAL and FULL lookup caches with an injected clock (epoch ms passed by the caller)."""

from __future__ import annotations

import datetime as dt

from server_ext.lookup.caches import FullCache, PartialCache, next_timed_reload
from server_ext.lookup.spec import CacheSpec


def test_lru_evicts_the_least_recently_used_key() -> None:
    c = PartialCache(max_rows=2)
    c.put((1,), [("a",)], now=0)
    c.put((2,), [("b",)], now=0)
    assert c.get((1,), now=1) == [("a",)]  # 1 is now the most recently used
    c.put((3,), [("c",)], now=2)
    assert c.get((2,), now=3) is None and c.get((1,), now=3) == [("a",)]
    assert c.size() == 2


def test_expire_after_write_counts_from_the_write() -> None:
    c = PartialCache(expire_after_write_ms=100)
    c.put((1,), [("a",)], now=0)
    assert c.get((1,), now=50) == [("a",)]
    assert c.get((1,), now=99) == [("a",)]  # reads do not extend it
    assert c.get((1,), now=100) is None and c.size() == 0


def test_expire_after_access_counts_from_the_last_read() -> None:
    c = PartialCache(expire_after_access_ms=100)
    c.put((1,), [("a",)], now=0)
    assert c.get((1,), now=90) == [("a",)]
    assert c.get((1,), now=180) == [("a",)]  # 90 ms after the last read
    assert c.get((1,), now=280) is None


def test_missing_keys_cached_by_default_and_not_when_disabled() -> None:
    c = PartialCache(max_rows=10)
    c.put((1,), [], now=0)
    assert c.get((1,), now=1) == []  # a cached miss: a hit that returns no rows
    c = PartialCache(max_rows=10, cache_missing_key=False)
    c.put((1,), [], now=0)
    assert c.get((1,), now=1) is None


def test_purge_drops_expired_entries_that_nobody_reads() -> None:
    c = PartialCache(expire_after_write_ms=10)
    for i in range(5):
        c.put((i,), [(i,)], now=0)
    c.purge(now=10)
    assert c.size() == 0


def _full(spec: CacheSpec, table: list[tuple]) -> FullCache:
    return FullCache(spec, lambda: list(table), lambda r: (r[0],))


def test_full_cache_fixed_delay_counts_from_the_end_of_the_load() -> None:
    table = [(1, "a")]
    c = _full(CacheSpec("FULL", reload_interval_ms=1000), table)
    assert c.refresh(now=0) and c.get((1,)) == [(1, "a")] and c.get((2,)) == []
    table.append((2, "b"))
    assert not c.refresh(now=c.last_load_end + 999)
    assert c.get((2,)) == []
    assert c.refresh(now=c.last_load_end + 1000) and c.get((2,)) == [(2, "b")]
    assert c.loads == 2 and c.size() == 2


def test_full_cache_fixed_rate_keeps_its_schedule() -> None:
    c = _full(CacheSpec("FULL", reload_interval_ms=1000, schedule_mode="FIXED_RATE"), [(1, "a")])
    c.refresh(now=0)
    assert c.next_due == 1000
    c.refresh(now=1500)  # late: the next slot is still on the 1 s grid
    assert c.next_due == 2000
    c.refresh(now=5300)  # missed slots are skipped
    assert c.next_due == 6000


def test_full_cache_without_an_interval_loads_once() -> None:
    c = _full(CacheSpec("FULL"), [(1, "a")])
    assert c.refresh(now=0) and not c.refresh(now=10**12)


def test_timed_reload_at_an_iso_time_every_n_days() -> None:
    day = 86_400_000
    start = int(dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc).timestamp() * 1000)
    ten_fifteen = int(dt.datetime(2024, 5, 2, 10, 15, tzinfo=dt.timezone.utc).timestamp() * 1000)
    assert next_timed_reload(start, "10:15Z") == ten_fifteen
    assert next_timed_reload(start, "13:15+01:00") == start + 15 * 60_000  # 12:15Z today
    spec = CacheSpec(
        "FULL", reload_strategy="TIMED", reload_iso_time="10:15Z", reload_interval_days=2
    )
    c = _full(spec, [(1, "a")])
    c.refresh(now=start)
    assert c.next_due == ten_fifteen
    assert not c.refresh(now=ten_fifteen - 1)
    assert c.refresh(now=ten_fifteen)
    assert c.next_due == ten_fifteen + 2 * day
