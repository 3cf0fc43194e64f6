"""The lookup join operator: a function over Arrow record batches for ``mapInArrow``.

Flink's ``LookupJoinRunner`` / ``LookupJoinWithCalcRunner`` semantics, a batch at a time:

1. Probe rows failing the pre-filter (a left join's probe-only ON predicates) get no
   lookup: a left join pads them with NULLs, an inner join drops them.
2. Rows with a NULL lookup key never call the source (Flink: ``skipIfArgsNull``): inner
   drops them, left pads them. A NULL constant key (``D.id = NULL``) matches nothing.
3. The batch's distinct non-NULL keys are served from the cache where possible; the rest
   is fetched in one query per chunk of keys (``sources.py``), concurrently with
   ``async``. Fetched rows get their computed columns, must pass the dimension filter (also
   pushed into the SQL where it can be), and are grouped by key (1:N).
4. LOOKUP hint retry (``lookup_miss`` + ``fixed_delay``): the batch's keys still without
   rows are fetched again together, after the delay, at most ``max-attempts`` times. Keys
   answered by the cache (cached misses too) and FULL caches are not retried (Flink's
   "Effect Of Enabling Caching On Retries").
5. Each probe row joins its key's rows that pass the residual predicate; a left join pads
   a row with none. Output rows keep the probe row, its row-kind column included, in
   input order.

Metrics (FLIP-221), counted as Flink does per probe row with a non-NULL key (rows failing
the pre-filter are not looked up): the first row of a key that is not served from the cache
is a miss, every other row a hit (later rows of a key fetched in the same batch are served
without the database): ``hitCount + missCount`` = rows looked up. With a FULL cache every
lookup is a hit; with no cache (NONE) every lookup is a miss (Flink has no cache metrics
there: no hits), though a batch still fetches each distinct key once. ``loadCount``: keys
fetched (PARTIAL/NONE) or table loads (FULL);
``numLoadFailures``: failed database queries (each failed attempt, also when a retry then
succeeds); ``numQueries``: database queries. Each output batch ends with one marker row
carrying the batch's counts (see ``spec.py``).

Example::

    probe.mapInArrow(LookupJoinFunction(spec), spec.output_ddl())
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from server_ext.joins.condition import compile_condition, compile_expr
from server_ext.lookup.caches import FullCache, PartialCache, cache_for, now_ms
from server_ext.lookup.sources import Counters, LookupSource, key_normalizer
from server_ext.lookup.spec import METRIC_FIELDS, METRICS, LookupSpec, base_type

Row = tuple
_NO_ROW: tuple = ()

METRICS_TYPE = pa.struct([pa.field(m, pa.int64()) for m in METRIC_FIELDS])


_STRING = pa.string()


def arrow_type(ddl: str, string: pa.DataType = _STRING) -> pa.DataType:
    """The Arrow type Spark uses for a Spark DDL type.

    Example::

        >>> arrow_type("DECIMAL(10, 2)"), arrow_type("TIMESTAMP(3)")
        (Decimal128Type(decimal128(10, 2)), TimestampType(timestamp[us, tz=UTC]))
    """
    b = base_type(ddl)
    if b == "DECIMAL":
        inner = ddl[ddl.find("(") + 1 : ddl.find(")")] if "(" in ddl else "10,0"
        p, _, s = inner.partition(",")
        return pa.decimal128(int(p), int(s or 0))
    simple = {
        "BOOLEAN": pa.bool_(),
        "TINYINT": pa.int8(),
        "SMALLINT": pa.int16(),
        "INT": pa.int32(),
        "BIGINT": pa.int64(),
        "FLOAT": pa.float32(),
        "DOUBLE": pa.float64(),
        "STRING": string,
        "DATE": pa.date32(),
        "TIMESTAMP": pa.timestamp("us", tz="UTC"),
        "TIMESTAMP_LTZ": pa.timestamp("us", tz="UTC"),
        "TIMESTAMP_NTZ": pa.timestamp("us"),
        "BINARY": pa.binary(),
    }
    if b not in simple:
        raise ValueError(f"lookup tables do not support the column type {ddl!r} yet")
    return simple[b]


def _partition_id() -> int | None:
    try:
        from pyspark import TaskContext

        tc = TaskContext.get()
        return tc.partitionId() if tc is not None else None
    except Exception:
        return None


class LookupJoinFunction:
    """The ``mapInArrow`` function of a lookup join (pickled by reference with its spec).

    Example::

        out = probe.mapInArrow(LookupJoinFunction(spec), spec.output_ddl())
    """

    def __init__(
        self,
        spec: LookupSpec,
        clock: Callable[[], int] | None = None,
        partition: int | None = None,
    ) -> None:
        self.spec = spec
        self.clock = clock  # epoch ms; tests inject one (None: the wall clock)
        self.partition = partition  # None: the Spark task's partition id

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        op = LookupOperator(
            self.spec,
            self.clock or now_ms,
            self.partition if self.partition is not None else _partition_id(),
        )
        for batch in batches:
            out = op.process(batch)
            if out.num_rows:
                yield out
        tail = op.finish()
        if tail is not None:
            yield tail


@dataclass
class _Loads:
    """What one batch took from the database, for its metrics."""

    misses: int = 0  # distinct keys the cache did not answer
    keys: int = 0  # keys fetched, retries counted again
    table_loads: int = 0  # FULL cache: (re)loads of the table
    ms: int | None = None  # the latest load's duration
    end: int | None = None  # and its end (epoch millis)


class LookupOperator:
    """One task's lookup join: its cache (shared per worker, see caches.py) and source."""

    def __init__(self, spec: LookupSpec, clock: Callable[[], int], partition: int | None):
        self.spec = spec
        self.clock = clock
        self.left = spec.kind == "left"
        self.counters = Counters()
        self._source: LookupSource | None = None
        n_dim = len(spec.dim_fields)
        self.n_dim = n_dim
        self.key_probe = [k.probe for k in spec.keys]
        self.varying_pos = [i for i, k in enumerate(spec.keys) if k.probe is not None]
        self.const_null = any(k.probe is None and k.value is None for k in spec.keys)
        self.key_cols = [k.column for k in spec.keys]
        self.all_varying = len(self.varying_pos) == len(spec.keys)
        self.norms = [
            key_normalizer(spec.dim_fields[k.column][1]) if k.probe is not None else None
            for k in spec.keys
        ]
        self.computed = [compile_expr(t) for _, _, t in spec.computed]
        self.dim_fn = compile_condition(spec.dim_filter)
        self.pre_fn = compile_condition(spec.pre_filter)
        self.residual_fn = compile_condition(spec.residual)
        all_dim = spec.all_dim_fields
        self.out_dim = (
            list(range(len(all_dim))) if spec.dim_output is None else list(spec.dim_output)
        )
        self.out_types = [spec.dim_output_fields()[j][1] for j in range(len(self.out_dim))]
        # One varying key compared as it comes (no normalizer), no per-row predicate: the
        # batch is joined column-wise, with Python work per distinct key, not per row.
        self.columnar_probe: int | None = None
        self._key_head: tuple = ()  # the constant keys before the varying one
        self._key_tail: tuple = ()  # and after it
        if len(self.varying_pos) == 1:
            at = self.varying_pos[0]
            if (
                self.norms[at] is None
                and not self.const_null
                and self.pre_fn is None
                and self.residual_fn is None
            ):
                self.columnar_probe = spec.keys[at].probe
            self._key_head = tuple(k.value for k in spec.keys[:at])
            self._key_tail = tuple(k.value for k in spec.keys[at + 1 :])
        self._fetched_key = self._fetched_key_function()
        self.retry = spec.retry
        self.concurrent = min(spec.capacity, 16) if spec.async_lookup else 1
        self.cache, _ = cache_for(spec, partition, self._make_cache)
        self.full = isinstance(self.cache, FullCache)
        self.partial = isinstance(self.cache, PartialCache)
        self._string_type: pa.DataType | None = None
        self._probe_schema: pa.Schema | None = None

    # -- cache and source -------------------------------------------------------------------

    @property
    def source(self) -> LookupSource:
        if self._source is None:
            self._source = LookupSource(self.spec, self.counters)
        return self._source

    def _make_cache(self) -> Any:
        c = self.spec.cache
        if c.kind == "PARTIAL":
            return PartialCache(
                c.max_rows, c.expire_after_write_ms, c.expire_after_access_ms, c.cache_missing_key
            )
        key_cols = self.key_cols

        def key_of(row: Row) -> tuple:
            # The row's own values, constant keys' columns too: a row of another constant
            # value has a key no lookup asks for.
            return tuple(row[col] for col in key_cols)

        # The FULL cache holds extended, filtered rows. It is loaded by whichever operator
        # finds it due (its counters count the queries): see process().
        return FullCache(c, None, key_of)

    def _full_load(self) -> list[Row]:
        # A row with a NULL key column can never be matched: not worth keeping.
        cols = [k.column for k in self.spec.keys if k.probe is not None]
        rows = [r for r in self.source.scan() if all(r[c] is not None for c in cols)]
        return self._prepare(rows)

    def _extend(self, row: Row) -> Row:
        """A fetched row plus its computed columns."""
        if not self.computed:
            return row
        return row + tuple(f(_NO_ROW, row) for f in self.computed)

    def _prepare(self, rows: list[Row]) -> list[Row]:
        """Fetched rows -> extended rows that pass the dimension filter."""
        if not self.computed and self.dim_fn is None:
            return rows
        out = []
        dim_fn = self.dim_fn
        for r in rows:
            e = self._extend(r)
            if dim_fn is None or dim_fn(_NO_ROW, e):
                out.append(e)
        return out

    def _fetch(self, keys: list[tuple]) -> dict[tuple, list[Row]]:
        """The rows of ``keys`` (cache keys) from the database, keys without rows -> []."""
        vks = keys if self.all_varying else [tuple(k[i] for i in self.varying_pos) for k in keys]
        rows = self._prepare(self.source.fetch_all(vks, self.concurrent))
        found: dict[tuple, list[Row]] = {k: [] for k in keys}
        get, key_of = found.get, self._fetched_key
        for r in rows:
            got = get(key_of(r))
            if got is not None:  # a row the database matched differently (collation) is dropped
                got.append(r)
        return found

    def _fetched_key_function(self) -> Callable[[Row], tuple]:
        """A fetched row's cache key: its varying key values, the constants as asked."""
        spec_keys = self.spec.keys
        if len(spec_keys) == 1 and spec_keys[0].probe is not None:  # the common case
            col = spec_keys[0].column
            return lambda r: (r[col],)
        return lambda r: tuple(r[k.column] if k.probe is not None else k.value for k in spec_keys)

    # -- one batch ----------------------------------------------------------------------------

    def _row_keys(self, batch: pa.RecordBatch, passes: list[bool] | None) -> list[Any]:
        """Per row: its cache key (tuple of key values in spec order), or None (no lookup)."""
        n = batch.num_rows
        if self.const_null:
            return [None] * n
        cols: list[list[Any] | None] = []
        for k, norm in zip(self.spec.keys, self.norms, strict=True):
            if k.probe is None:
                cols.append(None)
                continue
            vals = batch.column(k.probe).to_pylist()
            if norm is not None:
                vals = [None if v is None else norm(v) for v in vals]
            cols.append(vals)
        consts = [k.value for k in self.spec.keys]
        if len(cols) == 1 and cols[0] is not None:
            keys: list[Any] = [None if v is None else (v,) for v in cols[0]]
        else:
            columns = [c if c is not None else [consts[i]] * n for i, c in enumerate(cols)]
            keys = [None if None in t else t for t in zip(*columns, strict=True)]
        if passes is not None:
            keys = [k if ok else None for k, ok in zip(keys, passes, strict=True)]
        return keys

    def process(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Join one probe batch; the result ends with the batch's metrics marker row."""
        n = batch.num_rows
        self._probe_schema = batch.schema
        now = self.clock()
        loads = _Loads()
        if self.full and n and self.cache.refresh(now, self._full_load):
            loads.table_loads, loads.ms, loads.end = 1, self.cache.last_load_ms, now_ms()
        if self.columnar_probe is not None:
            return self._process_columns(batch, now, loads)
        probe_rows: list[tuple] | None = None
        if self.pre_fn is not None or self.residual_fn is not None:
            columns = [c.to_pylist() for c in batch.columns]
            probe_rows = list(zip(*columns, strict=True)) if n else []
        passes = None
        if self.pre_fn is not None and probe_rows is not None:
            pre = self.pre_fn
            passes = [pre(r, _NO_ROW) for r in probe_rows]
        keys = self._row_keys(batch, passes)
        looked_up = n - keys.count(None)
        resolved = self._resolve(dict.fromkeys(k for k in keys if k is not None), now, loads)
        out_idx, dim_rows = self._join(keys, resolved, probe_rows)
        return self._output(batch, out_idx, dim_rows, self._metrics(looked_up, loads))

    def _process_columns(self, batch: pa.RecordBatch, now: int, loads: _Loads) -> pa.RecordBatch:
        """``process`` for one varying key and no per-row predicate: Arrow kernels map each
        row to its distinct key; Python runs per distinct key (cache, fetch, values)."""
        column = batch.column(self.columnar_probe)
        looked_up = len(column) - column.null_count
        distinct = pc.unique(column).drop_null()
        head, tail = self._key_head, self._key_tail
        keys = [(*head, v, *tail) for v in distinct.to_pylist()]
        resolved = self._resolve(keys, now, loads)
        metrics = self._metrics(looked_up, loads)
        found = [resolved[k] for k in keys]
        if any(len(rows) > 1 for rows in found):  # 1:N: a row per match, row by row
            out_idx, dim_rows = self._join(
                [None if v is None else (*head, v, *tail) for v in column.to_pylist()],
                resolved,
                None,
            )
            return self._output(batch, out_idx, dim_rows, metrics)
        at = pc.index_in(column, value_set=distinct)  # row -> its distinct key (null: none)
        matched = pa.array([bool(rows) for rows in found], pa.bool_()).take(at)
        probe_arrays: list[pa.Array] = list(batch.columns)
        if not self.left or matched.null_count or not pc.all(matched).as_py():
            keep = pc.fill_null(matched, False)
            if not self.left:  # inner: rows without a match are dropped
                probe_arrays = list(batch.filter(keep).columns)
                at = at.filter(keep)
            else:  # left: they are padded
                at = pc.if_else(keep, at, pa.scalar(None, at.type))
        strings = self._strings(batch)
        dim_arrays = []
        for j, ddl in zip(self.out_dim, self.out_types, strict=True):
            values = [rows[0][j] if rows else None for rows in found]
            dim_arrays.append(pa.array(values, arrow_type(ddl, strings)).take(at))
        return self._assemble(batch.schema, probe_arrays, dim_arrays, len(at), metrics)

    def _resolve(self, keys: Any, now: int, loads: _Loads) -> dict[tuple, list[Row]]:
        """The rows of the distinct ``keys``: from the cache, else fetched (with the LOOKUP
        hint's retries); what was fetched is counted in ``loads``."""
        resolved: dict[tuple, list[Row]] = {}
        need: list[tuple] = []
        cache = self.cache
        if self.full:
            for k in keys:
                resolved[k] = cache.get(k)
            return resolved
        if self.partial:
            get = cache.get
            for k in keys:
                rows = get(k, now)
                if rows is None:
                    need.append(k)
                else:
                    resolved[k] = rows
        else:
            need = list(keys)
        loads.misses = len(need)
        if need:
            t0 = time.monotonic()
            fetched = self._fetch(need)
            loads.keys += len(need)
            if self.retry is not None:
                missing = [k for k in need if not fetched[k]]
                for _ in range(self.retry.max_attempts):
                    if not missing:
                        break
                    time.sleep(self.retry.fixed_delay_ms / 1000)
                    again = self._fetch(missing)
                    loads.keys += len(missing)
                    fetched.update(again)
                    missing = [k for k in missing if not again[k]]
            loads.ms, loads.end = int((time.monotonic() - t0) * 1000), now_ms()
            resolved.update(fetched)
            if self.partial:
                put = cache.put
                for k in need:
                    put(k, fetched[k], now)
        return resolved

    def _metrics(self, looked_up: int, loads: _Loads) -> dict[str, int | None]:
        """The batch's metrics (see the module's docstring); resets the query counters."""
        cache, full = self.cache, self.full
        size_delta = 0
        if cache is not None:
            cached = cache.size()
            size_delta = cached - cache.reported_size
            cache.reported_size = cached
        c = self.counters
        # No cache, no hits: the batch's dedup is not a cache.
        misses = looked_up if cache is None else loads.misses
        metrics = {
            "hitCount": looked_up - misses,
            "missCount": misses,
            "loadCount": loads.table_loads if full else loads.keys,
            "numLoadFailures": c.failures,
            "latestLoadTime": loads.ms,
            "numCachedRecords": size_delta,
            "numQueries": c.queries,
            "latestLoadEnd": loads.end,
        }
        c.failures = c.queries = 0
        return metrics

    def _join(
        self,
        keys: list[Any],
        resolved: dict[tuple, list[Row]],
        probe_rows: list[tuple] | None,
    ) -> tuple[list[int], list[Row | None]]:
        left, residual = self.left, self.residual_fn
        out_idx: list[int] = []
        dim_rows: list[Row | None] = []
        append_i, append_r = out_idx.append, dim_rows.append
        for i, k in enumerate(keys):
            if k is None:
                if left:
                    append_i(i)
                    append_r(None)
                continue
            rows = resolved[k]
            if residual is None:
                if rows:
                    for r in rows:
                        append_i(i)
                        append_r(r)
                elif left:
                    append_i(i)
                    append_r(None)
                continue
            assert probe_rows is not None
            pr = probe_rows[i]
            matched = False
            for r in rows:
                if residual(pr, r):
                    append_i(i)
                    append_r(r)
                    matched = True
            if not matched and left:
                append_i(i)
                append_r(None)
        return out_idx, dim_rows

    def _strings(self, batch: pa.RecordBatch) -> pa.DataType:
        if self._string_type is None:
            self._string_type = self._strings_of(batch.schema)
        return self._string_type

    @staticmethod
    def _strings_of(schema: pa.Schema) -> pa.DataType:
        """Spark's string type on this wire (large_string with large var types)."""
        large = any(pa.types.is_large_string(f.type) for f in schema)
        return pa.large_string() if large else pa.string()

    def _output(
        self,
        batch: pa.RecordBatch,
        out_idx: list[int],
        dim_rows: list[Row | None],
        metrics: dict[str, int | None],
    ) -> pa.RecordBatch:
        probe_arrays: list[pa.Array] = list(batch.take(pa.array(out_idx, pa.int64())).columns)
        strings = self._strings(batch)
        dim_arrays = []
        for j, ddl in zip(self.out_dim, self.out_types, strict=True):
            values = [None if r is None else r[j] for r in dim_rows]
            dim_arrays.append(pa.array(values, arrow_type(ddl, strings)))
        return self._assemble(batch.schema, probe_arrays, dim_arrays, len(out_idx), metrics)

    def _assemble(
        self,
        schema: pa.Schema,
        probe_arrays: list[pa.Array],
        dim_arrays: list[pa.Array],
        n_data: int,
        metrics: dict[str, int | None],
    ) -> pa.RecordBatch:
        """The output batch: data rows, then the metrics marker row when there is news."""
        arrays = [*probe_arrays, *dim_arrays]
        if any(v for v in metrics.values()):
            arrays = [pa.concat_arrays([a, pa.nulls(1, a.type)]) for a in arrays]
            marker = pa.array([metrics], METRICS_TYPE)
            arrays.append(pa.concat_arrays([pa.nulls(n_data, METRICS_TYPE), marker]))
        else:
            arrays.append(pa.nulls(n_data, METRICS_TYPE))
        names = [*schema.names, *(n for n, _ in self.spec.dim_output_fields())]
        return pa.RecordBatch.from_arrays(arrays, names=[*names, METRICS])

    def finish(self) -> pa.RecordBatch | None:
        """A task-scoped cache dies with the task: report its records as gone."""
        cache = self.cache
        if cache is None or self.spec.cache_scope != "task" or not cache.reported_size:
            return None
        metrics: dict[str, int | None] = dict.fromkeys(METRIC_FIELDS, 0)
        metrics["latestLoadTime"] = metrics["latestLoadEnd"] = None
        metrics["numCachedRecords"] = -cache.reported_size
        cache.reported_size = 0
        schema = self._probe_schema
        if schema is None:
            return None
        strings = self._strings_of(schema)
        arrays = [pa.nulls(1, f.type) for f in schema]
        arrays += [pa.nulls(1, arrow_type(t, strings)) for t in self.out_types]
        arrays.append(pa.array([metrics], METRICS_TYPE))
        names = [*schema.names, *(n for n, _ in self.spec.dim_output_fields())]
        return pa.RecordBatch.from_arrays(arrays, names=[*names, METRICS])
