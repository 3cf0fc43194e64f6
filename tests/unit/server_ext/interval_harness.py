"""The operator harness of ``temporal_harness.py`` for interval joins, on TwsTester (no Spark).

Left rows are written ``A(t, 1, "a")`` (an insert at time ``t`` ms), right rows
``B(t, 1, "x")``. :meth:`IntervalHarness.process` runs rows as one micro-batch at the current
watermark; :meth:`IntervalHarness.batch` runs one as Spark does (the batch's new watermark,
its rows, then the timers that watermark fires); :meth:`IntervalHarness.watermark` is a
micro-batch without data (fires the event-time timers). All return the emitted rows as
tuples ``("+I", *left_fields, *right_fields)``.
"""

from __future__ import annotations

import pickle
import sys
from collections import Counter
from typing import Any

from pyspark.sql.streaming.tws_tester import TwsTester

from server_ext.joins.interval_spec import IntervalSpec, interval_time_mode
from server_ext.joins.spec import SideSpec
from tests.models import interval_join_processor
from tests.unit.server_ext.harness import LEFT_FIELDS, RIGHT_FIELDS
from tests.unit.server_ext.temporal_harness import TChange, TemporalHarness, fmt


def A(t: int | None, *row: Any, kind: str = "+I") -> TChange:
    """A left row at time ``t`` (ms)."""
    return ("L", kind, t, row)


def B(t: int | None, *row: Any, kind: str = "+I") -> TChange:
    """A right row at time ``t`` (ms)."""
    return ("R", kind, t, row)


def interval_spec(
    kind: str = "inner",
    lower_ms: int = -10,
    upper_ms: int = 10,
    left_fields: tuple[tuple[str, str], ...] = LEFT_FIELDS,
    right_fields: tuple[tuple[str, str], ...] = RIGHT_FIELDS,
    residual: tuple | None = None,
    null_safe: tuple[bool, ...] = (False,),
) -> IntervalSpec:
    return IntervalSpec(
        kind,
        SideSpec(left_fields),
        SideSpec(right_fields),
        lower_ms,
        upper_ms,
        null_safe=null_safe,
        residual=residual,
    )


class IntervalHarness(TemporalHarness):
    """Feeds rows to one interval join processor; keeps its state and timers between calls."""

    def __init__(
        self,
        spec: IntervalSpec,  # type: ignore[override]
        left_key: tuple[int, ...] = (0,),
        right_key: tuple[int, ...] = (0,),
        structs: str = "row",
    ) -> None:
        self.spec = spec  # type: ignore[assignment]
        self.processor = interval_join_processor(spec)  # type: ignore[assignment]
        # Every row reaches the processor (the union carries no watermark column): the
        # extractor puts every row ahead of the watermark.
        self.tester = TwsTester(
            self.processor,
            timeMode=interval_time_mode(spec),
            eventTimeExtractor=lambda r: sys.maxsize,
        )
        self.state_name = "rows"
        self.left_key, self.right_key = tuple(left_key), tuple(right_key)
        self.structs = structs
        self.calls: Counter = Counter()
        self._seq = 0
        self._lnames = [n for n, _ in spec.left.fields]
        self._rnames = [n for n, _ in spec.right.fields]

    def batch(self, watermark: int, *changes: TChange) -> list[tuple]:
        """One micro-batch as Spark runs it: the rows with the batch's watermark, then the
        timers it fires."""
        if watermark > self.tester._currentWatermarkMs:
            self.watermark_before_timers(watermark)
        out = self.process(*changes)
        return out + [fmt(r) for r in self.tester._handleExpiredTimers()]

    def all_timers(self) -> dict[Any, list[int]]:
        timers = self.tester.handle._timers
        return {k: list(timers.listTimers(k)) for k in timers.getAllKeysWithTimers()}

    def all_states(self) -> dict[Any, Any]:
        """Every key's unpickled state (empty once every key's state is cleared)."""
        state = self.tester.handle.value_states.get(self.state_name)
        return {} if state is None else {k: pickle.loads(v[0]) for k, v in state.state.items()}
