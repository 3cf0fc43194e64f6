"""The operator harness of ``harness.py`` for temporal joins, on TwsTester (no Spark).

Probe rows are written ``P(t, 1, "a")`` (an insert at time ``t`` ms), build rows
``V("+I", t, 1, "x")``; :meth:`TemporalHarness.process` runs them as one micro-batch and
:meth:`TemporalHarness.watermark` moves the watermark (firing the event-time timers). Both
return the emitted rows as tuples ``("+I", *left_fields, *right_fields)`` (``"LATE"`` for
late probe rows).
"""

from __future__ import annotations

import pickle
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.tws_tester import TwsTester

from server_ext.joins.spec import LEFT, RIGHT
from server_ext.joins.temporal_spec import LATE, TemporalSpec, temporal_time_mode
from tests.models import temporal_join_processor
from tests.unit.server_ext.harness import (
    JKCUK,
    KIND_NAMES,
    KINDS,
    LEFT_FIELDS,
    RIGHT_FIELDS,
    run_key,
)
from tests.unit.server_ext.harness import side as side_spec

NAMES = {**KIND_NAMES, LATE: "LATE"}

TChange = tuple[str, str, int | None, tuple]


def P(t: int | None, *row: Any, kind: str = "+I") -> TChange:
    """A probe (left) row at time ``t``."""
    return ("L", kind, t, row)


def V(kind: str, t: int | None, *row: Any) -> TChange:
    """A build (right) row: +I/+U open a version at ``t``, -U/-D delete the key from ``t``."""
    return ("R", kind, t, row)


def temporal_spec(
    kind: str = "inner",
    time: str = "event",
    left_fields: tuple[tuple[str, str], ...] = LEFT_FIELDS,
    right_fields: tuple[tuple[str, str], ...] = RIGHT_FIELDS,
    right_key: tuple[int, ...] = (0,),
    residual: tuple | None = None,
) -> TemporalSpec:
    return TemporalSpec(
        kind,
        time,
        side_spec(fields=left_fields),
        side_spec(JKCUK, right_fields, right_key),
        residual=residual,
    )


class _Counting:
    """Wraps a state (or the handle) and counts the calls of the named methods."""

    def __init__(self, inner: Any, calls: Counter, names: Sequence[str]) -> None:
        self._inner = inner
        for name in names:
            setattr(self, name, self._counted(getattr(inner, name), name, calls))

    @staticmethod
    def _counted(fn: Callable, name: str, calls: Counter) -> Callable:
        def call(*args: Any) -> Any:
            calls[name] += 1
            return fn(*args)

        return call


class TemporalHarness:
    """Feeds changes to one processor instance; keeps its state and timers between calls.

    ``drop_late_like_spark``: when the union handed to transformWithState carries the
    watermark column, Spark drops rows at or behind the watermark (both sides!) before the
    processor sees them; TwsTester does the same with an ``eventTimeExtractor``. By default
    the harness hands every row over (the union without a watermark column)."""

    def __init__(
        self,
        spec: TemporalSpec,
        left_key: Sequence[int] = (0,),
        right_key: Sequence[int] = (0,),
        structs: str = "row",
        drop_late_like_spark: bool = False,
    ) -> None:
        self.spec = spec
        self.processor = temporal_join_processor(spec)
        mode = temporal_time_mode(spec)
        extractor = None
        if mode == "EventTime":
            extractor = (lambda r: r["__t"]) if drop_late_like_spark else (lambda r: sys.maxsize)
        self.tester = TwsTester(self.processor, timeMode=mode, eventTimeExtractor=extractor)
        self.state_name = "versions" if spec.time == "event" else "current"
        self.left_key, self.right_key = tuple(left_key), tuple(right_key)
        self.structs = structs
        self.calls: Counter = Counter()  # state and timer calls, see count_calls()
        self._seq = 0
        self._lnames = [n for n, _ in spec.left.fields]
        self._rnames = [n for n, _ in spec.right.fields]

    def count_calls(self) -> Counter:
        """From now on, count get/update/clear and registerTimer/deleteTimer calls."""
        proc = self.processor
        proc._state = _Counting(proc._state, self.calls, ("get", "update", "clear"))
        proc._handle = _Counting(proc._handle, self.calls, ("registerTimer", "deleteTimer"))
        return self.calls

    def process(self, *changes: TChange) -> list[tuple]:
        """One micro-batch; returns the emitted rows, key group by key group."""
        groups: dict[tuple, list[Row]] = {}
        for side_name, kind, t, row in changes:
            idx = self.left_key if side_name == "L" else self.right_key
            key = tuple(row[i] for i in idx)
            wire = self._wire_row(key, side_name, KINDS[kind], t, row)
            groups.setdefault(key, []).append(wire)
        out: list[tuple] = []
        for key, rows in groups.items():
            out.extend(self._call(key, rows[::-1]))  # reversed: the processor sorts by __seq
        return out

    def watermark(self, ms: int) -> list[tuple]:
        """Moves the watermark to ``ms`` and fires the timers at or behind it."""
        return [fmt(r) for r in self.tester.setWatermark(ms)]

    def watermark_before_timers(self, ms: int) -> None:
        """Moves the watermark without firing the timers: Spark's order within a micro-batch
        (the batch's input is processed with the new watermark, then the timers fire)."""
        self.tester._currentWatermarkMs = ms
        self.tester.handle.setWatermark(ms)

    def state(self, key: Any) -> Any:
        """The unpickled state of ``key`` (a scalar for one-column keys), or None."""
        value = self.tester.peekValueState(self.state_name, key)
        return None if value is None else pickle.loads(value[0])

    def state_size(self, key: Any) -> int:
        value = self.tester.peekValueState(self.state_name, key)
        return 0 if value is None else len(value[0])

    def timers(self, key: Any) -> list[int]:
        return list(self.tester.handle._timers.listTimers(key))

    def _call(self, key: tuple, rows: list[Row]) -> list[tuple]:
        return [fmt(r) for r in run_key(self.tester, self.processor, key, rows)]

    def _wire_row(self, key: tuple, side_name: str, kind: int, t: int | None, row: tuple) -> Row:
        is_left = side_name == "L"
        names = self._lnames if is_left else self._rnames
        assert len(row) == len(names), f"{side_name} rows have {len(names)} fields: {row}"
        values = dict(zip(names, row, strict=True))
        struct: Any = values if self.structs == "dict" else Row(**values)
        self._seq += 1
        cols: dict[str, Any] = {f"__k{i}": k for i, k in enumerate(key)}
        cols.update(
            __side=LEFT if is_left else RIGHT,
            __kind=kind,
            __seq=self._seq,
            __l=struct if is_left else None,
            __r=None if is_left else struct,
            __t=t,
        )
        return Row(**cols)


def fmt(row: Row) -> tuple:
    """An output Row as ``("+I", *fields)`` (``"LATE"`` for a late probe row)."""
    assert row.__fields__[0] == "__kind"
    return (NAMES[row[0]], *row[1:])
