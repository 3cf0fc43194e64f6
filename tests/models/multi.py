"""The multi-way join operator (FLIP-516's StreamingMultiJoinOperator) as a ``transformWithState``
processor: the model the JVM ``multi`` operator is compared with.

A chain of INNER/LEFT joins on a common key keeps no intermediate results: its state is the
rows of each input under the current key, one pickled ValueState per key (per input: row ->
[count, time last written]). Each micro-batch of a key applies its changes in ``__seq``
order, then emits the difference between the key's join result before and after them:
``-D`` for rows that left the result, ``+I`` for rows that entered it. With a state TTL,
rows not written for that long are dropped before the changes apply, silently, as Flink's
state TTL does. Recomputing a key's result costs the product of its inputs' rows under the
key: one row each when the inputs have the common key as their primary key, the case the
FLIP is for.

Example (what the client runs; see ``multi_spec.py``)::

    union.groupBy("__k0").transformWithState(
        MultiJoinProcessor(spec), output_schema, "Append", "None")
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from operator import itemgetter
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import (
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from server_ext.joins.condition import compile_condition
from server_ext.joins.multi_spec import MultiJoinSpec
from server_ext.joins.spec import DELETE, INSERT, KIND, LEFT_OUTER, UPDATE_AFTER
from tests.models.state import PICKLED_STATE, load_pickled, record_converter, save_pickled

_ADDS = (INSERT, UPDATE_AFTER)


class MultiJoinProcessor(StatefulProcessor):
    """One key's inputs in state; its join result recomputed from them on every change."""

    def __init__(self, spec: MultiJoinSpec) -> None:
        self.spec = spec

    def init(self, handle: StatefulProcessorHandle) -> None:
        spec = self.spec
        n = len(spec.inputs)
        # The whole key expires too once nothing was written for the TTL (Spark's own TTL).
        self._rows = handle.getValueState("rows", PICKLED_STATE, spec.ttl_ms)
        # Input columns sit at the end of each row: __side, __kind, __seq, __in0 .. __in{n-1}.
        self._side_at, self._kind_at, self._seq_at = -n - 3, -n - 2, -n - 1
        self._by_seq = itemgetter(self._seq_at)
        self._convert = [record_converter(fields) for fields in spec.inputs]
        self._nulls = [(None,) * len(fields) for fields in spec.inputs]
        self._matches = [compile_condition(tree) for tree in spec.conditions]
        self._outer = [kind == LEFT_OUTER for kind in spec.kinds]
        self._make = Row(KIND, *(name for name, _ in spec.output_fields()))

    def handleInputRows(
        self, key: Any, rows: Iterator[Any], timerValues: TimerValues
    ) -> Iterator[Row]:
        n, ttl = len(self.spec.inputs), self.spec.ttl_ms
        now = timerValues.getCurrentProcessingTimeInMs() if ttl is not None else 0
        stored = load_pickled(self._rows)
        tables: list[dict] = stored if stored is not None else [{} for _ in range(n)]
        if ttl is not None:
            tables = [{r: e for r, e in t.items() if e[1] + ttl > now} for t in tables]
        before = self._result(tables)
        for row in sorted(rows, key=self._by_seq):
            side = row[self._side_at]
            record = self._convert[side](row[side - n])
            table = tables[side]
            entry = table.get(record)
            if row[self._kind_at] in _ADDS:
                table[record] = [entry[0] + 1 if entry else 1, now]
            elif entry is not None and entry[0] > 1:
                table[record] = [entry[0] - 1, now]
            else:  # the last copy, or a row not in state (e.g. expired): nothing to keep
                table.pop(record, None)
        after = self._result(tables)
        save_pickled(self._rows, tables, any(tables), stored is not None)
        make = self._make
        out = [make(DELETE, *r) for r in (before - after).elements()]
        out += [make(INSERT, *r) for r in (after - before).elements()]
        return iter(out)

    def _result(self, tables: list[dict]) -> Counter:
        """The key's join result as a multiset of output tuples."""
        joined: Counter = Counter({r: e[0] for r, e in tables[0].items()})
        for i in range(1, len(tables)):
            matches, outer, nulls = self._matches[i - 1], self._outer[i - 1], self._nulls[i]
            step: Counter = Counter()
            for left, lcount in joined.items():
                found = False
                for right, (rcount, _) in tables[i].items():
                    if matches is None or matches(left, right):
                        step[left + right] += lcount * rcount
                        found = True
                if outer and not found:
                    step[left + nulls] += lcount
            joined = step
            if not joined:  # nothing left to join (an empty first input, an inner miss)
                break
        return joined

    def close(self) -> None:
        pass
