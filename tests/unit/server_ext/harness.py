"""A Flink-operator-harness-style driver for the join processors, on TwsTester (no Spark).

Changes are written ``L("+I", 1, "a")`` / ``R("-D", 1, "x")``; :meth:`JoinHarness.process`
runs them as one micro-batch (grouped by join key, as ``groupBy(__k..)`` would) and returns
the emitted changelog as tuples ``("+I", *left_fields, *right_fields)``.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.tws_tester import TwsTester

from server_ext.joins.spec import (
    DELETE,
    INSERT,
    LEFT,
    RIGHT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    InputSpec,
    JoinSpec,
    SideSpec,
    time_mode,
)
from tests.models import join_processor

KINDS = {"+I": INSERT, "-U": UPDATE_BEFORE, "+U": UPDATE_AFTER, "-D": DELETE}
KIND_NAMES = {v: k for k, v in KINDS.items()}

JKCUK = InputSpec.JOIN_KEY_CONTAINS_UNIQUE_KEY
HUK = InputSpec.HAS_UNIQUE_KEY
NUK = InputSpec.NO_UNIQUE_KEY

LEFT_FIELDS = (("lk", "BIGINT"), ("lv", "STRING"))
RIGHT_FIELDS = (("rk", "BIGINT"), ("rv", "STRING"))

Change = tuple[str, str, tuple]


def L(kind: str, *row: Any) -> Change:
    return ("L", kind, row)


def R(kind: str, *row: Any) -> Change:
    return ("R", kind, row)


def side(
    layout: InputSpec = NUK,
    fields: tuple[tuple[str, str], ...] = LEFT_FIELDS,
    unique_key: tuple[int, ...] | None = None,
    ttl_ms: int | None = None,
) -> SideSpec:
    """A side; the unique key defaults to field 0 (the join key) for the keyed layouts."""
    if unique_key is None:
        unique_key = () if layout is NUK else (0,)
    return SideSpec(fields, layout, unique_key, ttl_ms)


def join_spec(
    kind: str,
    left: SideSpec | None = None,
    right: SideSpec | None = None,
    null_safe: tuple[bool, ...] = (False,),
    residual: tuple | None = None,
) -> JoinSpec:
    return JoinSpec(
        kind,
        left or side(),
        right or side(fields=RIGHT_FIELDS),
        null_safe=null_safe,
        residual=residual,
    )


class JoinHarness:
    """Feeds changes to one processor instance and keeps its state between micro-batches."""

    def __init__(
        self,
        spec: JoinSpec,
        left_key: Sequence[int] = (0,),
        right_key: Sequence[int] = (0,),
        structs: str = "row",
        time_mode_override: str | None = None,
    ) -> None:
        self.spec = spec
        self.processor = join_processor(spec)
        self.tester = TwsTester(self.processor, timeMode=time_mode_override or time_mode(spec))
        self.left_key, self.right_key = tuple(left_key), tuple(right_key)
        self.structs = structs  # "row" (tests) or "dict" (what Spark's row-mode worker sends)
        self._seq = 0
        self._lnames = [n for n, _ in spec.left.fields]
        self._rnames = [n for n, _ in spec.right.fields]

    def process(self, *changes: Change) -> list[tuple]:
        """One micro-batch; returns the emitted changelog, key group by key group."""
        groups: dict[tuple, list[Row]] = {}
        for side_name, kind, row in changes:
            idx = self.left_key if side_name == "L" else self.right_key
            key = tuple(row[i] for i in idx)
            groups.setdefault(key, []).append(self._wire_row(key, side_name, KINDS[kind], row))
        out: list[tuple] = []
        for key, rows in groups.items():
            # Reversed on purpose: the processor must restore the __seq order itself.
            out.extend(self._call(key, rows[::-1]))
        return out

    def advance(self, now_ms: int) -> None:
        """Sets the processing time (ms) that the next micro-batches see."""
        assert self.tester.setProcessingTime(now_ms) == []  # the joins register no timers

    def state(self, key: Any, name: str = "rows") -> Any:
        """The unpickled ValueState of ``key`` (a scalar for one-column keys), or None."""
        value = self.tester.peekValueState(name, key)
        return None if value is None else pickle.loads(value[0])

    def _call(self, key: tuple, rows: list[Row]) -> list[tuple]:
        return [fmt(r) for r in run_key(self.tester, self.processor, key, rows)]

    def _wire_row(self, key: tuple, side_name: str, kind: int, row: tuple) -> Row:
        is_left = side_name == "L"
        names = self._lnames if is_left else self._rnames
        assert len(row) == len(names), f"{side_name} rows have {len(names)} fields: {row}"
        values = dict(zip(names, row, strict=True))
        struct: Any = values if self.structs == "dict" else Row(**values)
        self._seq += 1
        cols = {f"__k{i}": k for i, k in enumerate(key)}
        cols.update(
            __side=LEFT if is_left else RIGHT,
            __kind=kind,
            __seq=self._seq,
            __l=struct if is_left else None,
            __r=None if is_left else struct,
        )
        return Row(**cols)


def run_key(tester: TwsTester, processor: Any, key: tuple, rows: list[Row]) -> list[Row]:
    """The processor's output for one grouping key's rows, as Spark would call it."""
    if len(key) == 1:
        return list(tester.test(key[0], rows))
    # TwsTester.test wraps the key as (key,): call the processor directly, like Spark does.
    tester.handle.setGroupingKey(key)
    return list(processor.handleInputRows(key, iter(rows), tester._getTimerValues()))


def fmt(row: Row) -> tuple:
    """An output Row as ``("+I", *fields)``."""
    assert row.__fields__[0] == "__kind"
    return (KIND_NAMES[row[0]], *row[1:])


def pad(n: int) -> tuple:
    return (None,) * n
