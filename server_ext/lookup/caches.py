"""Lookup caches (Flink's FLIP-221: NONE, PARTIAL, FULL) and where they live.

- :class:`PartialCache`: ``lookup.partial-cache.max-rows`` (LRU by key, as Guava's
  ``maximumSize`` that Flink uses: the bound counts keys), ``expire-after-write``,
  ``expire-after-access`` and ``cache-missing-key`` (an empty result is cached, so a row
  inserted later stays invisible until the entry expires: Flink's trade-off).
- :class:`FullCache`: the whole table (projected and filtered), loaded on first use and
  reloaded when due: ``PERIODIC`` every ``interval`` (``FIXED_DELAY``: from the end of the
  last load; ``FIXED_RATE``: from its start) or ``TIMED`` at an ISO time of day every N days.
  A key absent from the snapshot has no rows: no database call. Reloads happen at the first
  batch after they are due, before it is served (a worker runs no background thread).
- NONE: :data:`None` (the operator still asks the database once per distinct key per batch).

Every cache takes ``now`` (epoch ms) from the caller: one clock read per batch, and tests
inject time.

Where caches live (:func:`cache_for`): a module global of the Python worker process, so it
survives across tasks and micro-batches (workers are reused: ``spark.python.worker.reuse``).
The scope decides which probe rows share a cache:

- ``partition`` (the default for a hash lookup join, SHUFFLE_HASH / LOOKUP 'shuffle'): one
  cache per Spark partition id in each worker. After ``repartition(n, keys)`` partition p
  holds 1/n of the keys, so its cache of max-rows keys covers n times more of them than a
  cache shared by all partitions. Partition p of the next micro-batch may run in another
  worker; each worker keeps its own cache for p (bounded by max-rows each), so p comes back
  to a warm cache whenever it lands on a worker that ran p before.
- ``worker`` (the default without the hint): one cache per worker, shared by all partitions
  it runs (without hashing every partition sees every key: splitting would only shrink each
  cache's share of the traffic).
- ``task``: a fresh cache per task (for measurements: it forgets everything between
  micro-batches).

Measured (``bench/lookup_join.py --dists "" --scope-rows 200000``: streaming, 200,000 uniform
rows over 100,000 keys in 10 micro-batches of 4 partitions, PARTIAL cache of 5,000 keys,
local[2], so 2 reused workers), hit ratio:

=================  ======  ======  =========
input              task    worker  partition
=================  ======  ======  =========
as read            0.049   0.092   0.087
hashed on the key  0.094   0.103   0.236
=================  ======  ======  =========

A per-task cache forgets everything between micro-batches. Without hashing a cache per
worker is best (every partition brings every key). Hashing alone barely helps a per-worker
cache (each worker runs different partitions in each micro-batch, and their keys evict each
other); hashing with a cache per partition id is 2.6x the best unhashed ratio: partition
p's 25,000 keys share one 5,000-key cache, and p comes back to a warm cache for p in
whichever worker ran it before. Hence the defaults above.
Caches are also keyed by the spec's ``cache_id`` (one per query run) and by what they hold
(table, columns, keys, filter, cache options); a worker keeps at most
:data:`MAX_CACHES_PER_WORKER` of them (least recently used first out).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from server_ext.lookup.spec import CacheSpec, LookupSpec

Row = tuple
Rows = list
MAX_CACHES_PER_WORKER = 512


def now_ms() -> int:
    """Wall-clock epoch milliseconds (TIMED reloads need the time of day)."""
    return int(time.time() * 1000)


class PartialCache:
    """A bounded LRU map from lookup key to its rows, with Guava-style expiries.

    Example::

        >>> c = PartialCache(max_rows=2)
        >>> c.put((1,), [("a",)], now=0); c.put((2,), [], now=0); c.put((3,), [("c",)], now=0)
        >>> c.get((1,), now=1), c.get((3,), now=1), c.size()
        (None, [('c',)], 2)
    """

    kind = "PARTIAL"

    def __init__(
        self,
        max_rows: int | None = None,
        expire_after_write_ms: int | None = None,
        expire_after_access_ms: int | None = None,
        cache_missing_key: bool = True,
    ) -> None:
        self.max_rows = max_rows
        self.ew = expire_after_write_ms
        self.ea = expire_after_access_ms
        self.cache_missing_key = cache_missing_key
        # key -> [rows, write time, access time]; order = least recently used first
        self._d: OrderedDict[Hashable, list[Any]] = OrderedDict()
        self._puts = 0
        self.reported_size = 0  # numCachedRecords already reported (see metrics)

    def get(self, key: Hashable, now: int) -> Rows | None:
        """The key's rows (``[]`` for a cached miss), or None when absent or expired."""
        e = self._d.get(key)
        if e is None:
            return None
        if self._expired(e, now):
            del self._d[key]
            return None
        if self.ea is not None:
            e[2] = now
        self._d.move_to_end(key)
        return e[0]

    def put(self, key: Hashable, rows: Rows, now: int) -> None:
        """Store a fetched result; an empty one only with ``cache_missing_key``."""
        if not rows and not self.cache_missing_key:
            self._d.pop(key, None)
            return
        self._d[key] = [rows, now, now]
        self._d.move_to_end(key)
        if self.max_rows is not None:
            while len(self._d) > self.max_rows:
                self._d.popitem(last=False)
        self._puts += 1
        if (self.ew is not None or self.ea is not None) and self._puts % 1024 == 0:
            self.purge(now)

    def _expired(self, e: list[Any], now: int) -> bool:
        return (self.ew is not None and now - e[1] >= self.ew) or (
            self.ea is not None and now - e[2] >= self.ea
        )

    def purge(self, now: int) -> None:
        """Drop every expired entry (they also go lazily, when read)."""
        for k in [k for k, e in self._d.items() if self._expired(e, now)]:
            del self._d[k]

    def size(self) -> int:
        return len(self._d)


class FullCache:
    """The whole dimension table in a dict, reloaded on Flink's schedule.

    ``load`` returns ``(rows, key_of)``-compatible rows; ``key_of(row)`` gives a row's key.

    Example::

        >>> c = FullCache(CacheSpec("FULL", reload_interval_ms=1000), lambda: [(1, "a")],
        ...               lambda r: (r[0],))
        >>> c.refresh(now=0), c.get((1,)), c.get((2,)), c.refresh(now=500), c.refresh(now=1000)
        (True, [(1, 'a')], [], False, True)
    """

    kind = "FULL"

    def __init__(
        self,
        spec: CacheSpec,
        load: Callable[[], list[Row]] | None,
        key_of: Callable[[Row], Hashable],
    ) -> None:
        self.spec = spec
        self._load = load
        self._key_of = key_of
        self._d: dict[Hashable, Rows] = {}
        self.next_due: int | None = None  # None: never loaded
        self.loads = 0
        self.last_load_ms = -1
        self.last_load_end = 0
        self.reported_size = 0
        self._lock = threading.Lock()

    def refresh(self, now: int, load: Callable[[], list[Row]] | None = None) -> bool:
        """Load (first use) or reload (when due) with ``load`` (default: the one given at
        construction); True when it loaded."""
        with self._lock:
            if self.next_due is not None and now < self.next_due:
                return False
            t0 = time.monotonic()
            loader = load or self._load
            if loader is None:
                raise ValueError("FullCache.refresh needs a load function")
            rows = loader()
            table: dict[Hashable, Rows] = {}
            for r in rows:
                table.setdefault(self._key_of(r), []).append(r)
            self._d = table
            self.loads += 1
            self.last_load_ms = int((time.monotonic() - t0) * 1000)
            end = now + self.last_load_ms
            self.last_load_end = end
            self.next_due = self._next_due(now, end)
            return True

    def _next_due(self, start: int, end: int) -> int:
        s = self.spec
        if s.reload_strategy == "TIMED":
            if self.next_due is None:  # the initial load: the next occurrence of the time
                return next_timed_reload(start, s.reload_iso_time or "00:00")
            step = max(1, s.reload_interval_days) * 86_400_000
            due = self.next_due + step
            while due <= end:
                due += step
            return due
        if s.reload_interval_ms is None:
            return 2**62  # no interval: loaded once
        if s.schedule_mode == "FIXED_RATE":
            due = (self.next_due if self.next_due is not None else start) + s.reload_interval_ms
            while due <= end:  # a load longer than the interval skips the missed slots
                due += s.reload_interval_ms
            return due
        return end + s.reload_interval_ms

    def get(self, key: Hashable) -> Rows:
        return self._d.get(key, [])

    def size(self) -> int:
        return len(self._d)


def next_timed_reload(now: int, iso_time: str) -> int:
    """The epoch ms of the first ``iso_time`` of day strictly after ``now`` (Flink's TIMED
    reload: '10:15' is local time, '10:15Z' UTC, '10:15+07:00' UTC+7).

    Example::

        >>> next_timed_reload(0, "10:15Z")  # 1970-01-01T10:15Z
        36900000
    """
    text = iso_time.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    t = dt.time.fromisoformat(text)
    tz = t.tzinfo or dt.datetime.now().astimezone().tzinfo
    at = dt.datetime.fromtimestamp(now / 1000, tz)
    candidate = at.replace(hour=t.hour, minute=t.minute, second=t.second, microsecond=t.microsecond)
    if candidate.timestamp() * 1000 <= now:
        candidate += dt.timedelta(days=1)
    return int(candidate.timestamp() * 1000)


# --- the worker's registry --------------------------------------------------------------------

_CACHES: OrderedDict[Hashable, Any] = OrderedDict()
_CACHES_LOCK = threading.Lock()


def cache_identity(spec: LookupSpec) -> Hashable:
    """What a cache holds: operators with the same identity can share caches.

    Example::

        cache_identity(spec) == cache_identity(dataclasses.replace(spec, kind="left"))  # True
    """
    ident = (
        spec.cache_id,
        spec.source,
        spec.dim_fields,
        spec.keys,
        spec.dim_filter,
        spec.computed,
        spec.cache,
    )
    try:
        hash(ident)
    except TypeError:
        return repr(ident)
    return ident


def cache_for(spec: LookupSpec, partition: int | None, make: Callable[[], Any]) -> tuple[Any, bool]:
    """The cache for ``spec`` in this worker (``partition`` for the partition scope), made
    with ``make()`` on first use; also whether it is new. ``task`` scope: always new.

    Example::

        cache, new = cache_for(spec, TaskContext.get().partitionId(), lambda: PartialCache(5000))
    """
    if spec.cache.kind == "NONE":
        return None, False
    scope = spec.cache_scope
    if scope == "task":
        return make(), True
    key = (cache_identity(spec), partition if scope == "partition" else None)
    with _CACHES_LOCK:
        cache = _CACHES.get(key)
        if cache is not None:
            _CACHES.move_to_end(key)
            return cache, False
        cache = _CACHES[key] = make()
        while len(_CACHES) > MAX_CACHES_PER_WORKER:
            _CACHES.popitem(last=False)
        return cache, True


def clear_caches() -> None:
    """Forget every cache of this process (tests)."""
    with _CACHES_LOCK:
        _CACHES.clear()
