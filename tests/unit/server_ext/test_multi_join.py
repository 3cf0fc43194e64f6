"""The multi-way join processor (FLIP-516) on TwsTester: exact changelogs, retractions, and
random changelogs against the chain of binary joins computed in plain Python."""

from __future__ import annotations

import pickle
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import Row
from pyspark.sql.streaming.tws_tester import TwsTester

from server_ext.joins.multi_spec import MultiJoinSpec, input_column
from tests.models import multi_join_processor
from tests.reference import eq, nested_loop_join
from tests.unit.server_ext.harness import KINDS, fmt, run_key

FIELDS = (
    (("k0", "BIGINT"), ("a", "STRING")),
    (("k1", "BIGINT"), ("b", "STRING")),
    (("k2", "BIGINT"), ("c", "STRING")),
)
K1_EQ_K0 = ("call", "=", ("col", "l", 0), ("col", "r", 0))  # in1.k1 = in0.k0
K2_EQ_K1 = ("call", "=", ("col", "l", 2), ("col", "r", 0))  # in2.k2 = in1.k1 (not in0.k0)
A_NE_C = ("call", "<>", ("col", "l", 1), ("col", "r", 1))


def spec(
    kinds: tuple[str, str], second: tuple = K2_EQ_K1, ttl_ms: int | None = None
) -> MultiJoinSpec:
    return MultiJoinSpec(FIELDS, kinds, (K1_EQ_K0, second), ttl_ms)


class MultiHarness:
    """Feeds ``(input, kind, row)`` changes as micro-batches, grouped by the common key."""

    def __init__(self, spec: MultiJoinSpec) -> None:
        self.spec = spec
        self.processor = multi_join_processor(spec)
        self.tester = TwsTester(self.processor, timeMode=spec.time_mode)
        self._seq = 0

    def process(self, *changes: tuple[int, str, tuple]) -> list[tuple]:
        groups: dict[Any, list[Row]] = {}
        for side, kind, row in changes:
            self._seq += 1
            cols: dict[str, Any] = {"__k0": row[0], "__side": side, "__kind": KINDS[kind]}
            cols["__seq"] = self._seq
            for i, fields in enumerate(self.spec.inputs):
                names = [n for n, _ in fields]
                cols[input_column(i)] = (
                    Row(**dict(zip(names, row, strict=True))) if i == side else None
                )
            groups.setdefault(row[0], []).append(Row(**cols))
        out: list[tuple] = []
        for key, rows in groups.items():
            out += [fmt(r) for r in run_key(self.tester, self.processor, (key,), rows[::-1])]
        return out

    def advance(self, now_ms: int) -> None:
        assert self.tester.setProcessingTime(now_ms) == []  # no timers

    def state(self, key: Any) -> Any:
        value = self.tester.peekValueState("rows", key)
        return None if value is None else pickle.loads(value[0])


def test_inner_chain_joins_once_every_input_has_the_key() -> None:
    h = MultiHarness(spec(("inner", "inner")))
    assert h.process((0, "+I", (1, "a")), (1, "+I", (1, "b"))) == []
    assert h.process((2, "+I", (1, "c"))) == [("+I", 1, "a", 1, "b", 1, "c")]
    # An update of one input retracts the old result row and adds the new one.
    assert h.process((1, "-U", (1, "b")), (1, "+U", (1, "B"))) == [
        ("-D", 1, "a", 1, "b", 1, "c"),
        ("+I", 1, "a", 1, "B", 1, "c"),
    ]
    assert h.process((0, "-D", (1, "a"))) == [("-D", 1, "a", 1, "B", 1, "c")]
    # The key's state holds the inputs' rows only (count, time written): no join result.
    assert h.state(1) == [{}, {(1, "B"): [1, 0]}, {(1, "c"): [1, 0]}]


def test_left_chain_pads_and_retracts_the_padding() -> None:
    h = MultiHarness(spec(("left", "left")))
    assert h.process((0, "+I", (1, "a"))) == [("+I", 1, "a", None, None, None, None)]
    # in2 arrives first: its key meets in1's null padding (k2 = k1), so nothing changes.
    assert h.process((2, "+I", (1, "c"))) == []
    assert h.process((1, "+I", (1, "b"))) == [
        ("-D", 1, "a", None, None, None, None),
        ("+I", 1, "a", 1, "b", 1, "c"),
    ]
    assert h.process((2, "-D", (1, "c"))) == [
        ("-D", 1, "a", 1, "b", 1, "c"),
        ("+I", 1, "a", 1, "b", None, None),
    ]


def test_changes_of_one_batch_apply_in_seq_order_and_cancel_out() -> None:
    h = MultiHarness(spec(("inner", "left")))
    h.process((0, "+I", (1, "a")), (1, "+I", (1, "b")))
    # Deleted and re-inserted within one micro-batch: the result is unchanged, nothing emitted.
    assert h.process((1, "-D", (1, "b")), (1, "+I", (1, "b"))) == []
    assert h.process((0, "-D", (9, "x"))) == []  # a retraction of a row never seen
    assert h.state(9) is None


def test_null_keys_never_match() -> None:
    h = MultiHarness(spec(("left", "inner")))
    assert h.process((0, "+I", (None, "a")), (1, "+I", (None, "b")), (2, "+I", (None, "c"))) == []


def test_a_residual_term_on_the_second_level() -> None:
    second = ("call", "and", K2_EQ_K1, A_NE_C)
    h = MultiHarness(spec(("inner", "left"), second))
    out = h.process((0, "+I", (1, "x")), (1, "+I", (1, "b")), (2, "+I", (1, "x")))
    assert out == [("+I", 1, "x", 1, "b", None, None)]  # a = c: no match, padded


def test_state_ttl_drops_rows_silently_and_later_changes_do_not_see_them() -> None:
    h = MultiHarness(spec(("inner", "left"), ttl_ms=1000))
    h.advance(10_000)
    assert h.process((0, "+I", (1, "a")), (1, "+I", (1, "b"))) == [
        ("+I", 1, "a", 1, "b", None, None)
    ]
    h.advance(10_600)
    h.process((1, "-U", (1, "b")), (1, "+U", (1, "B")))  # in1's row is written again at 10.6 s
    h.advance(11_200)  # in0's row (written at 10.0 s) has expired, in1's has not
    # The expired order retracts nothing (Flink's TTL is silent); the new payment finds no
    # order to join.
    assert h.process((2, "+I", (1, "c"))) == []
    assert h.state(1) == [{}, {(1, "B"): [1, 10_600]}, {(1, "c"): [1, 11_200]}]
    assert h.process((0, "+I", (1, "a2"))) == [("+I", 1, "a2", 1, "B", 1, "c")]


def test_spec_refuses_other_kinds_and_wrong_arity() -> None:
    with pytest.raises(ValueError, match="kinds are"):
        MultiJoinSpec(FIELDS, ("inner", "full"), (K1_EQ_K0, K2_EQ_K1))
    with pytest.raises(ValueError, match="3 inputs need 2 join kinds"):
        MultiJoinSpec(FIELDS, ("inner",), (K1_EQ_K0,))
    with pytest.raises(ValueError, match="ttl_ms must be positive"):
        spec(("inner", "inner"), ttl_ms=0)


def _apply(rows: list[tuple]) -> Counter:
    table: Counter = Counter()
    for kind, *values in rows:
        table[tuple(values)] += 1 if kind in ("+I", "+U") else -1
    assert all(n >= 0 for n in table.values()), "a retraction of a row never emitted"
    return +table


def _reference(kinds: tuple[str, str], inputs: list[Counter]) -> Counter:
    rows = [list(t.elements()) for t in inputs]
    first = nested_loop_join(rows[0], rows[1], kinds[0], lambda a, b: eq(a[0], b[0]), (2, 2))
    both = nested_loop_join(first, rows[2], kinds[1], lambda ab, c: eq(ab[2], c[0]), (4, 2))
    return Counter(both)


@st.composite
def changelogs(draw) -> list[list[tuple[int, str, tuple]]]:
    alive: list[Counter] = [Counter(), Counter(), Counter()]
    batches = []
    for _ in range(draw(st.integers(1, 4))):
        batch = []
        for _ in range(draw(st.integers(1, 6))):
            side = draw(st.integers(0, 2))
            present = list(alive[side].elements())
            if present and draw(st.booleans()):
                row = draw(st.sampled_from(present))
                batch.append((side, draw(st.sampled_from(["-D", "-U"])), row))
                alive[side][row] -= 1
            else:
                row = (draw(st.one_of(st.none(), st.integers(1, 2))), draw(st.sampled_from("xy")))
                batch.append((side, draw(st.sampled_from(["+I", "+U"])), row))
                alive[side][row] += 1
        batches.append(batch)
    return batches


@settings(max_examples=300, deadline=None)
@given(
    kinds=st.sampled_from(
        [("inner", "inner"), ("inner", "left"), ("left", "inner"), ("left", "left")]
    ),
    batches=changelogs(),
)
def test_random_changelogs_match_the_chain_of_binary_joins(kinds, batches) -> None:
    h = MultiHarness(spec(kinds))
    inputs = [Counter(), Counter(), Counter()]
    emitted: list[tuple] = []
    for batch in batches:
        emitted += h.process(*batch)
        for side, kind, row in batch:
            inputs[side][row] += 1 if kind in ("+I", "+U") else -1
        assert _apply(emitted) == _reference(kinds, [+t for t in inputs])
