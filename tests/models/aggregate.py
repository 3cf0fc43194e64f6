"""Flink's streaming group aggregation (GroupAggFunction) in plain Python: the model the JVM
operator (``GroupAggregate.java``) is compared with, change by change.

Each key keeps its current rows (a multiset); every result is computed from them afresh, so
the model shares no accumulator code with the operator. Emission follows Flink: +I for a
key's first result, -U (if asked) and +U when it changes (always with a state TTL), nothing
when it does not, -D when the key's last row is retracted; a retraction for a key without
state is dropped; with a TTL a key not written for that long is forgotten silently.

Two-phase (Flink's local and global MiniBatch*GroupAggFunction): a key keeps a signed
multiset of rows (a retraction is counted even where there is nothing to retract); values
count for MIN/MAX and DISTINCT while their summed count is positive; a key without state
whose bundle's row count sums to zero emits nothing (checked against PyFlink 2.3).

Example::

    >>> from server_ext.aggregate_spec import AggCall, AggregateSpec
    >>> spec = AggregateSpec((("k", "BIGINT"), ("v", "INT")), (0,),
    ...                      (AggCall("sum", 1, result_type="INT"),))
    >>> m = GroupAggModel(spec)
    >>> m.process(0, (1, (1, 5))), m.process(0, (1, (1, 2))), m.process(3, (1, (1, 5)))
    ([('+I', 1, 5)], [('-U', 1, 5), ('+U', 1, 7)], [('-U', 1, 7), ('+U', 1, 2)])
"""

from __future__ import annotations

import decimal
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from server_ext.aggregate_spec import AggregateSpec

KIND_NAMES = ("+I", "-U", "+U", "-D")
_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def _wrap(value: int, ddl: str) -> int:
    bits = _BITS[ddl]
    return (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def _scale(ddl: str) -> int:
    return int(ddl.split(",")[1].strip(" )"))


def result(function: str, ddl: str, values: Sequence[Any], rows: int) -> Any:
    """One aggregate's result over the values of the key's rows (NULLs included)."""
    present = [v for v in values if v is not None]
    if function == "count_star":
        return rows
    if function == "count":
        return len(present)
    if not present:
        return None
    if function in ("min", "max"):
        return min(present) if function == "min" else max(present)
    total = sum(present, Decimal(0) if isinstance(present[0], Decimal) else 0)
    if function == "sum":
        if ddl in _BITS:
            return _wrap(total, ddl)
        return (
            total.quantize(Decimal(1).scaleb(-_scale(ddl))) if ddl.startswith("DECIMAL") else total
        )
    if ddl in _BITS:  # an integral average: the BIGINT sum, truncated toward zero
        quotient = abs(total) // len(present) * (1 if total >= 0 else -1)
        return _wrap(quotient, ddl)
    if ddl.startswith("DECIMAL"):
        with decimal.localcontext(decimal.Context(prec=80)):
            exact = total / len(present)
        return exact.quantize(Decimal(1).scaleb(-_scale(ddl)), decimal.ROUND_HALF_UP)
    return total / len(present)


def signed_result(function: str, ddl: str, values: Counter, rows: int, distinct: bool) -> Any:
    """One aggregate's result over a signed multiset of its argument's values (``rows``: the
    summed row count), as Flink's merged accumulators give it: MIN, MAX and the DISTINCT
    forms over the values whose count is positive, the others over the counts as they are."""
    if function == "count_star":
        return rows
    if distinct or function in ("min", "max"):
        positive = [v for v, n in values.items() if v is not None and n > 0]
        return result(function, ddl, positive, rows)
    present = {v: n for v, n in values.items() if v is not None and n != 0}
    count = sum(present.values())
    if function == "count":
        return count
    if count == 0:
        return None
    zero = Decimal(0) if any(isinstance(v, Decimal) for v in present) else 0
    total = sum((v * n for v, n in present.items()), zero)
    if function == "sum":
        if ddl in _BITS:
            return _wrap(total, ddl)
        return (
            total.quantize(Decimal(1).scaleb(-_scale(ddl))) if ddl.startswith("DECIMAL") else total
        )
    if ddl in _BITS:  # Java's long division: truncated toward zero
        quotient = abs(total) // abs(count) * (1 if (total >= 0) == (count > 0) else -1)
        return _wrap(quotient, ddl)
    if ddl.startswith("DECIMAL"):
        with decimal.localcontext(decimal.Context(prec=80)):
            exact = total / count
        return exact.quantize(Decimal(1).scaleb(-_scale(ddl)), decimal.ROUND_HALF_UP)
    return total / count


class GroupAggModel:
    """The oracle for one operator instance: ``process(kind, (key, row), now)`` per change."""

    def __init__(self, spec: AggregateSpec) -> None:
        self.spec = spec
        self.rows: dict[Any, list[tuple]] = {}
        self.signed: dict[Any, Counter] = {}  # two-phase: a signed multiset of rows per key
        self.written: dict[Any, int] = {}

    def results(self, rows: list[tuple]) -> tuple:
        out = []
        for a in self.spec.aggs:
            values = [None if a.arg is None else r[a.arg] for r in rows]
            if a.distinct:
                values = list(dict.fromkeys(v for v in values if v is not None))
            out.append(result(a.function, a.result_type, values, len(rows)))
        return tuple(out)

    def process(self, kind: int, change: tuple[Any, tuple], now: int = 0) -> list[tuple]:
        key, row = change
        ttl = self.spec.ttl_ms
        if ttl is not None and key in self.rows and self.written[key] + ttl <= now:
            del self.rows[key]  # expired: forgotten without a word
        add = kind in (0, 2)
        rows = self.rows.get(key)
        if rows is None and not add:
            return []  # a retraction for a key without state
        shown = () if not self.spec.key else (key,)
        before = None if rows is None else self.results(rows)
        rows = [] if rows is None else rows
        if add:
            rows.append(row)
        else:
            rows.remove(row)
        self.written[key] = now
        if not rows:
            del self.rows[key]
            return [("-D", *shown, *before)] if before is not None else []
        self.rows[key] = rows
        return self._emit(shown, before, self.results(rows))

    def bundle(self, key: Any, changes: Sequence[tuple[int, tuple]], now: int = 0) -> list[tuple]:
        """Mini-batch (MiniBatchGroupAggFunction): one key's changes of a micro-batch folded,
        then one result; without state the leading retractions are dropped."""
        ttl = self.spec.ttl_ms
        if ttl is not None and key in self.rows and self.written[key] + ttl <= now:
            del self.rows[key]
        rows = self.rows.get(key)
        changes = list(changes)
        if rows is None:
            while changes and changes[0][0] in (1, 3):
                changes.pop(0)
            if not changes:
                return []
        shown = () if not self.spec.key else (key,)
        before = None if rows is None else self.results(rows)
        rows = [] if rows is None else rows
        for kind, row in changes:
            if kind in (0, 2):
                rows.append(row)
            else:
                rows.remove(row)
        self.written[key] = now
        if not rows:
            self.rows.pop(key, None)
            return [("-D", *shown, *before)] if before is not None else []
        self.rows[key] = rows
        return self._emit(shown, before, self.results(rows))

    def _emit(self, shown: tuple, before: tuple | None, after: tuple) -> list[tuple]:
        """A bundle's result for a key that has rows: +I, or -U/+U if it changed (with a state
        TTL also if not: Flink 2.3 emits them)."""
        if before is None:
            return [("+I", *shown, *after)]
        if after == before and self.spec.ttl_ms is None:
            return []
        update_before = [("-U", *shown, *before)] if self.spec.update_before else []
        return [*update_before, ("+U", *shown, *after)]

    def signed_results(self, rows: Counter) -> tuple:
        out = []
        for a in self.spec.aggs:
            values: Counter = Counter()
            for row, n in rows.items():
                values[None if a.arg is None else row[a.arg]] += n
            count = sum(rows.values())
            out.append(signed_result(a.function, a.result_type, values, count, a.distinct))
        return tuple(out)

    def merge(self, key: Any, partials: Sequence[Counter], now: int = 0) -> list[tuple]:
        """Two-phase: a bundle of the key's partials (signed multisets of rows) merged into its
        state, then one result; no state and partials that sum to no row: nothing."""
        ttl = self.spec.ttl_ms
        if ttl is not None and key in self.signed and self.written[key] + ttl <= now:
            del self.signed[key]
        buffer: Counter = Counter()
        for p in partials:
            buffer.update(p)
        state = self.signed.get(key)
        if state is None and sum(buffer.values()) == 0:
            return []
        shown = () if not self.spec.key else (key,)
        before = None if state is None else self.signed_results(state)
        state = Counter() if state is None else state
        state.update(buffer)
        state = Counter({r: n for r, n in state.items() if n != 0})
        self.written[key] = now
        if sum(state.values()) == 0:
            self.signed.pop(key, None)
            return [("-D", *shown, *before)] if before is not None else []
        self.signed[key] = state
        return self._emit(shown, before, self.signed_results(state))
