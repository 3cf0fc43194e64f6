"""IntervalJoinProcessor (Flink's RowTimeIntervalJoin), harness style on TwsTester: matches
within the bounds, padding when the watermark passes an outer row's window, NULL keys,
residual conditions, late rows, timers and cleanup, and a property test against a plain
Python reference of Flink's interval join over a bounded input.

Unless a test says otherwise the bounds are ``-10 <= l.t - r.t <= 10`` (ms): a left row at
``t`` waits for right rows until the watermark passes ``t + 10``, its timer is at ``t + 11``.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.streaming.stateful_processor import TimerValues

from server_ext.joins.interval_spec import IntervalSpec
from server_ext.joins.spec import SideSpec
from tests.models import model_of
from tests.models.interval import IntervalJoinProcessor
from tests.unit.server_ext.interval_harness import A, B, IntervalHarness, interval_spec

OUTER = ["left", "right", "full"]
INTS_L = (("lk", "BIGINT"), ("lv", "BIGINT"), ("lt", "BIGINT"))
INTS_R = (("rk", "BIGINT"), ("rv", "BIGINT"), ("rt", "BIGINT"))
LESS = ("call", "<", ("col", "l", 1), ("col", "r", 1))  # l.lv < r.rv
END = 2**62  # the watermark at the end of a bounded input


def pads_left(kind: str) -> bool:
    return kind in ("left", "full")


def pads_right(kind: str) -> bool:
    return kind in ("right", "full")


# --------------------------------------------------------------------------- matching


def test_inner_matches_within_the_bounds_both_inclusive() -> None:
    h = IntervalHarness(interval_spec("inner"))
    out = h.process(
        A(100, 1, "a"),
        B(110, 1, "x"),  # l - r = -10: the lower bound
        B(90, 1, "y"),  # l - r = 10: the upper bound
        B(111, 1, "z"),  # -11: out
        B(89, 1, "w"),  # 11: out
        B(100, 2, "v"),  # another key
    )
    assert out == [("+I", 1, "a", 1, "x"), ("+I", 1, "a", 1, "y")]
    # Either arrival order: a later left row joins the cached right rows (in time order).
    assert h.process(A(100, 1, "b")) == [("+I", 1, "b", 1, "y"), ("+I", 1, "b", 1, "x")]
    assert h.watermark(END) == []
    assert h.all_states() == {} and h.all_timers() == {}


def test_strict_bounds_arrive_as_inclusive_bounds_one_ms_inside() -> None:
    # -10 < l.t - r.t < 10 is planned as -9 <= l.t - r.t <= 9 (the rule adds 1 ms).
    h = IntervalHarness(interval_spec("inner", lower_ms=-9, upper_ms=9))
    out = h.process(A(100, 1, "a"), B(110, 1, "x"), B(109, 1, "y"), B(91, 1, "z"), B(90, 1, "w"))
    assert out == [("+I", 1, "a", 1, "y"), ("+I", 1, "a", 1, "z")]


def test_asymmetric_and_one_sided_bounds() -> None:
    # The right row at most 5 ms before up to 20 ms after the left one: -20 <= l - r <= 5.
    h = IntervalHarness(interval_spec("left", lower_ms=-20, upper_ms=5))
    out = h.process(A(100, 1, "a"), B(95, 1, "p"), B(94, 1, "q"), B(120, 1, "r"), B(121, 1, "s"))
    assert out == [("+I", 1, "a", 1, "p"), ("+I", 1, "a", 1, "r")]
    # Window of the left row: its right rows can be as late as t + 20 -> timer at 121.
    # The right row at 94 expires first (once 94 + 5 < W); the left row once 100 + 20 < W.
    assert h.timers(1) == [94 + 5 + 1]
    assert h.watermark(END) == []  # matched: no padding


@pytest.mark.parametrize("kind", OUTER)
def test_outer_rows_are_padded_once_the_watermark_passes_their_window(kind: str) -> None:
    h = IntervalHarness(interval_spec(kind))
    assert h.process(A(100, 1, "a"), B(200, 1, "x")) == []
    assert h.timers(1) == [111]  # the left row's window ends at 110
    assert h.watermark(110) == []  # a right row at 110 may still come
    left_pad = [("+I", 1, "a", None, None)] if pads_left(kind) else []
    assert h.watermark(111) == left_pad
    assert h.timers(1) == [211]
    assert h.watermark(210) == []
    right_pad = [("+I", None, None, 1, "x")] if pads_right(kind) else []
    assert h.watermark(211) == right_pad
    assert h.all_states() == {} and h.all_timers() == {}


@pytest.mark.parametrize("kind", ["inner", *OUTER])
def test_each_kind_over_one_bounded_input(kind: str) -> None:
    h = IntervalHarness(interval_spec(kind))
    out = h.process(A(100, 1, "a"), A(300, 1, "b"), B(105, 1, "x"), B(500, 1, "y"), B(100, 2, "z"))
    out += h.watermark(END)
    want = [("+I", 1, "a", 1, "x")]
    if pads_left(kind):
        want.append(("+I", 1, "b", None, None))
    if pads_right(kind):
        want += [("+I", None, None, 1, "y"), ("+I", None, None, 2, "z")]
    assert Counter(out) == Counter(want)
    assert h.all_states() == {} and h.all_timers() == {}


def test_a_match_in_a_later_batch_keeps_the_outer_row_from_being_padded() -> None:
    h = IntervalHarness(interval_spec("full"))
    assert h.process(A(100, 1, "a")) == []
    assert h.batch(50, B(108, 1, "x")) == [("+I", 1, "a", 1, "x")]
    assert h.state(1)[0][0][2] is True  # the left row is marked as matched
    assert h.watermark(END) == []


@pytest.mark.parametrize("kind", ["inner", *OUTER])
def test_duplicates_join_and_pad_once_each(kind: str) -> None:
    h = IntervalHarness(interval_spec(kind))
    out = h.process(A(100, 1, "a"), A(100, 1, "a"), B(100, 1, "x"), B(300, 1, "y"))
    out += h.process(B(300, 1, "y"))
    assert out == [("+I", 1, "a", 1, "x")] * 2
    out = h.watermark(END)
    assert out == ([("+I", None, None, 1, "y")] * 2 if pads_right(kind) else [])


# --------------------------------------------------------------------------- residual


@pytest.mark.parametrize("kind", OUTER)
def test_residual_false_pads_rows_whose_key_and_time_match(kind: str) -> None:
    spec = interval_spec(kind, left_fields=INTS_L, right_fields=INTS_R, residual=LESS)
    h = IntervalHarness(spec)
    out = h.process(A(1000, 1, 5, 1000), B(1000, 1, 0, 1000), B(1000, 1, 9, 1000))
    assert out == [("+I", 1, 5, 1000, 1, 9, 1000)]  # 5 < 9 only
    out = h.watermark(END)
    assert out == ([("+I", None, None, None, 1, 0, 1000)] if pads_right(kind) else [])


def test_residual_null_is_not_a_match() -> None:
    spec = interval_spec("full", left_fields=INTS_L, right_fields=INTS_R, residual=LESS)
    h = IntervalHarness(spec)
    assert h.process(A(1000, 1, None, 1000), B(1000, 1, 9, 1000)) == []
    assert Counter(h.watermark(END)) == Counter(
        [("+I", 1, None, 1000, None, None, None), ("+I", None, None, None, 1, 9, 1000)]
    )


def test_seed_example_of_issue_11() -> None:
    """L=[(1, 5, 00:00:01)], R=[(2, 0, 00:00:01)], l.t BETWEEN r.t - 1 s AND r.t + 1 s AND
    l_v < r_v: Flink emits +I[1, 5, 00:00:01, NULL, NULL, NULL]."""
    spec = interval_spec(
        "left", -1000, 1000, left_fields=INTS_L, right_fields=INTS_R, residual=LESS
    )
    h = IntervalHarness(spec)
    assert h.process(A(1000, 1, 5, 1000), B(1000, 2, 0, 1000)) == []
    assert h.watermark(END) == [("+I", 1, 5, 1000, None, None, None)]


# --------------------------------------------------------------------------- NULL keys


@pytest.mark.parametrize("kind", ["inner", *OUTER])
def test_null_keys_never_match_and_outer_ones_are_padded_when_they_expire(kind: str) -> None:
    h = IntervalHarness(interval_spec(kind))
    assert h.process(A(100, None, "a"), B(100, None, "x")) == []
    if kind == "inner":
        assert h.state(None) is None and h.timers(None) == []  # nothing kept
    assert h.watermark(110) == []
    want = []
    if pads_left(kind):
        want.append(("+I", None, "a", None, None))
    if pads_right(kind):
        want.append(("+I", None, None, None, "x"))
    assert h.watermark(111) == want
    assert h.all_states() == {} and h.all_timers() == {}


def test_seed_example_of_issue_11_with_a_null_key() -> None:
    """L=[(NULL, 4, 00:00:01), (1, 5, 00:00:02)], R=[(1, 00:00:01)], bounds -1 s .. 3 s."""
    spec = interval_spec(
        "left", -1000, 3000, left_fields=INTS_L, right_fields=(("rk", "BIGINT"), ("rt", "BIGINT"))
    )
    h = IntervalHarness(spec)
    out = h.process(A(1000, None, 4, 1000), A(2000, 1, 5, 2000), B(1000, 1, 1000))
    out += h.watermark(END)
    assert Counter(out) == Counter([("+I", 1, 5, 2000, 1, 1000), ("+I", None, 4, 1000, None, None)])


def test_multi_column_keys_with_a_null_part_and_null_safe_keys() -> None:
    fields_l = (("a", "BIGINT"), ("b", "BIGINT"))
    fields_r = (("c", "BIGINT"), ("d", "BIGINT"))
    both = {"left_fields": fields_l, "right_fields": fields_r}
    strict = IntervalHarness(
        interval_spec("left", null_safe=(False, False), **both),
        left_key=(0, 1),
        right_key=(0, 1),
    )
    assert strict.process(A(100, 1, None), B(100, 1, None)) == []
    assert strict.watermark(END) == [("+I", 1, None, None, None)]
    safe = IntervalHarness(
        interval_spec("left", null_safe=(False, True), **both),
        left_key=(0, 1),
        right_key=(0, 1),
    )
    assert safe.process(A(100, 1, None), B(100, 1, None)) == [("+I", 1, None, 1, None)]
    assert safe.watermark(END) == []


# --------------------------------------------------------------------------- late rows


@pytest.mark.parametrize("kind", ["inner", *OUTER])
def test_late_rows_are_not_kept_and_outer_ones_are_padded_at_once(kind: str) -> None:
    h = IntervalHarness(interval_spec(kind))
    # W = 200: a left row at 100 can meet no right row that is still to come (<= 110).
    out = h.batch(200, A(100, 1, "a"), B(100, 1, "x"))
    want = []
    if pads_left(kind):
        want.append(("+I", 1, "a", None, None))
    if pads_right(kind):
        want.append(("+I", None, None, 1, "x"))
    assert out == want  # they arrived together but neither was cached for the other
    assert h.all_states() == {} and h.all_timers() == {}


def test_the_edge_of_lateness_is_flinks() -> None:
    # A left row is cached while W < t + 10 (t - lower); it expires once t + 10 < W.
    h = IntervalHarness(interval_spec("left"))
    h.watermark_before_timers(110)
    assert h.process(A(100, 1, "a")) == [("+I", 1, "a", None, None)]  # W = t + 10: late
    assert h.process(A(101, 1, "b")) == []  # cached: W < 111
    assert h.timers(1) == [112]
    # A right row at exactly the watermark still finds the cached row (t + 10 = 111 >= W).
    assert h.batch(111, B(111, 1, "x")) == [("+I", 1, "b", 1, "x")]
    # Both are marked as matched (Flink's ``emitted`` flag of a new row, too).
    assert h.state(1) == ([[101, (1, "b"), True]], [[111, (1, "x"), True]], 112)


def test_a_late_row_still_joins_the_rows_cached_for_its_window() -> None:
    h = IntervalHarness(interval_spec("left"))
    assert h.process(B(195, 1, "x")) == []  # cached until W > 205
    out = h.batch(200, A(188, 1, "a"), A(150, 1, "b"))
    assert out == [("+I", 1, "a", 1, "x"), ("+I", 1, "b", None, None)]
    assert h.state(1) == ([], [[195, (1, "x"), False]], 206)


def test_rows_without_a_time_never_match() -> None:
    h = IntervalHarness(interval_spec("full"))
    out = h.process(A(None, 1, "a"), B(None, 1, "x"), B(100, 1, "y"))
    assert out == [("+I", 1, "a", None, None), ("+I", None, None, 1, "x")]
    assert h.process(A(100, 1, "b")) == [("+I", 1, "b", 1, "y")]


@pytest.mark.parametrize("kind", ["inner", *OUTER])
def test_an_empty_window_pads_at_once_and_keeps_nothing(kind: str) -> None:
    h = IntervalHarness(interval_spec(kind, lower_ms=10, upper_ms=5))
    out = h.process(A(100, 1, "a"), B(93, 1, "x"))
    want = []
    if pads_left(kind):
        want.append(("+I", 1, "a", None, None))
    if pads_right(kind):
        want.append(("+I", None, None, 1, "x"))
    assert out == want
    assert h.all_states() == {} and h.all_timers() == {}


def test_retractions_are_refused() -> None:
    h = IntervalHarness(interval_spec("left"))
    with pytest.raises(ValueError, match="insert-only, but a -D row arrived"):
        h.process(A(100, 1, "a", kind="-D"))
    h.process(A(100, 1, "a", kind="+U"))  # an upsert-after is an insert here
    assert h.watermark(END) == [("+I", 1, "a", None, None)]


def test_event_time_without_a_watermark_is_refused() -> None:
    h = IntervalHarness(interval_spec("left"))
    row = h._wire_row((1,), "L", 0, 100, (1, "a"))
    with pytest.raises(RuntimeError, match="needs a watermark"):
        list(h.processor.handleInputRows((1,), iter([row]), TimerValues(-1, -1)))


# --------------------------------------------------------------------------- timers, state


def test_one_timer_per_key_at_its_earliest_expiry_moved_only_when_it_changes() -> None:
    h = IntervalHarness(interval_spec("full", lower_ms=-10, upper_ms=30))
    calls = h.count_calls()
    h.process(A(100, 1, "a"))  # left expiry: 100 + 10 + 1
    assert h.timers(1) == [111] and calls["registerTimer"] == 1
    h.process(B(50, 1, "x"))  # right expiry: 50 + 30 + 1 = 81, earlier
    assert h.timers(1) == [81] and calls["deleteTimer"] == 1 and calls["registerTimer"] == 2
    # Later expiries (211, 221): the timer stays.
    assert h.process(A(200, 1, "b"), B(190, 1, "y")) == [("+I", 1, "b", 1, "y")]
    assert h.timers(1) == [81] and calls["registerTimer"] == 2
    assert h.watermark(81) == [("+I", None, None, 1, "x")]
    assert h.timers(1) == [111]
    assert h.watermark(500) == [("+I", 1, "a", None, None)]  # b and y matched
    assert h.all_states() == {} and h.all_timers() == {}


def test_one_firing_expires_every_due_row_of_the_key() -> None:
    h = IntervalHarness(interval_spec("left"))
    h.process(*(A(t, 1, f"a{t}") for t in (100, 101, 102, 300)))
    assert h.timers(1) == [111]
    out = h.watermark(150)
    assert out == [("+I", 1, f"a{t}", None, None) for t in (100, 101, 102)]
    assert h.timers(1) == [311]
    assert h.state(1) == ([[300, (1, "a300"), False]], [], 311)
    assert h.watermark(311) == [("+I", 1, "a300", None, None)]
    assert h.state(1) is None and h.timers(1) == []


def test_a_batch_expires_the_rows_its_watermark_passed_before_joining_its_rows() -> None:
    """Spark fires the batch's timers after its rows; Flink expires rows when the watermark
    arrives, before the rows behind it. The processor expires first and moves the timer."""
    h = IntervalHarness(interval_spec("full"))
    h.process(A(100, 1, "a"))
    # W = 120: the left row's window (<= 110) has passed; the right row at 100 is late.
    out = h.batch(120, B(100, 1, "x"))
    assert out == [("+I", 1, "a", None, None), ("+I", None, None, 1, "x")]
    assert h.all_states() == {} and h.all_timers() == {}


def test_state_is_read_once_and_written_once_per_call() -> None:
    h = IntervalHarness(interval_spec("full"))
    calls = h.count_calls()
    h.process(A(100, 1, "a"), A(101, 1, "b"), B(100, 1, "x"), B(400, 1, "y"))
    assert calls["get"] == 1 and calls["update"] == 1
    h.process(B(101, 1, "z"))
    assert calls["get"] == 2 and calls["update"] == 2
    h.watermark(END)
    assert calls["get"] == 3 and calls["clear"] == 1 and calls["update"] == 2


def test_a_key_with_nothing_to_keep_writes_nothing() -> None:
    h = IntervalHarness(interval_spec("inner"))
    calls = h.count_calls()
    h.process(A(100, None, "a"))  # a NULL key on an inner side: dropped
    h.batch(500, A(100, 1, "b"))  # late, inner: dropped
    assert calls["update"] == 0 and calls["clear"] == 0 and calls["registerTimer"] == 0


def test_dict_structs_as_sparks_row_mode_worker_sends_them() -> None:
    h = IntervalHarness(interval_spec("left"), structs="dict")
    assert h.process(A(100, 1, "a"), B(100, 1, "x")) == [("+I", 1, "a", 1, "x")]


def test_spec_wiring_and_validation() -> None:
    spec = interval_spec("full")
    processor, mode = model_of(spec)
    assert isinstance(processor, IntervalJoinProcessor) and mode == "EventTime"
    assert spec.output_struct_ddl() == (
        "__kind TINYINT, `lk` BIGINT, `lv` STRING, `rk` BIGINT, `rv` STRING"
    )
    with pytest.raises(ValueError, match="kind must be one of"):
        IntervalSpec("semi", spec.left, spec.right, 0, 0)
    with pytest.raises(ValueError, match="unique"):
        IntervalJoinProcessor(
            IntervalSpec("inner", spec.left, spec.right, 0, 0, output_names=("a",) * 4)
        )
    with pytest.raises(ValueError, match="field 5 of the r row"):
        IntervalJoinProcessor(
            IntervalSpec("inner", spec.left, spec.right, 0, 0, residual=("col", "r", 5))
        )
    with pytest.raises(ValueError, match="unknown condition function"):
        IntervalJoinProcessor(
            IntervalSpec("inner", spec.left, spec.right, 0, 0, residual=("call", "pow"))
        )
    assert SideSpec(spec.left.fields) == spec.left


# --------------------------------------------------------------------------- property


def flink_reference(
    kind: str, lower: int, upper: int, lefts: list[tuple], rights: list[tuple], residual: bool
) -> list[tuple]:
    """Flink's interval join over bounded inputs no row of which is late: every pair of one
    (non-NULL) key within the bounds whose residual is True, plus the unmatched outer rows
    null-padded. Rows are ``(key, value, time)``."""
    out: list[tuple] = []
    right_matched = [False] * len(rights)
    for lrow in lefts:
        matched = False
        for j, rrow in enumerate(rights):
            if lrow[0] is None or lrow[0] != rrow[0] or lrow[2] is None or rrow[2] is None:
                continue
            if not lower <= lrow[2] - rrow[2] <= upper:
                continue
            if residual and not (lrow[1] is not None and rrow[1] is not None and lrow[1] < rrow[1]):
                continue
            out.append(("+I", *lrow, *rrow))
            matched = right_matched[j] = True
        if not matched and pads_left(kind):
            out.append(("+I", *lrow, None, None, None))
    if pads_right(kind):
        pairs = zip(rights, right_matched, strict=True)
        out += [("+I", None, None, None, *r) for r, m in pairs if not m]
    return out


rows = st.lists(
    st.tuples(
        st.sampled_from([1, 2, None]),
        st.one_of(st.none(), st.integers(0, 3)),
        st.integers(0, 80).map(lambda t: t or None),  # 0: a row without a time
    ),
    max_size=8,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["inner", *OUTER]),
    lower=st.integers(-15, 10),
    width=st.integers(-3, 25),
    residual=st.booleans(),
    lefts=rows,
    rights=rows,
    batches=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_property_equals_flinks_interval_join_over_a_bounded_input(
    kind: str,
    lower: int,
    width: int,
    residual: bool,
    lefts: list[tuple],
    rights: list[tuple],
    batches: int,
    seed: int,
) -> None:
    """All rows in any order and split into micro-batches, the watermark of each batch
    behind every row still to come (so no row is late, as on a bounded input whose rows
    are all read before the end), then the watermark to +infinity: the result is Flink's,
    and nothing is left in state."""
    upper = lower + width
    spec = interval_spec(kind, lower, upper, INTS_L, INTS_R, residual=LESS if residual else None)
    h = IntervalHarness(spec)
    arrivals: list[Any] = [A(r[2], *r) for r in lefts] + [B(r[2], *r) for r in rights]
    random.Random(seed).shuffle(arrivals)
    size = -(-len(arrivals) // batches) if arrivals else 1
    out: list[tuple] = []
    for start in range(0, len(arrivals), size):
        times = [c[2] for c in arrivals[start:] if c[2] is not None]
        watermark = max(min(times, default=1) - 1, 0)
        out += h.batch(watermark, *arrivals[start : start + size])
    out += h.watermark(END)
    assert Counter(out) == Counter(flink_reference(kind, lower, upper, lefts, rights, residual))
    assert h.all_states() == {} and h.all_timers() == {}
