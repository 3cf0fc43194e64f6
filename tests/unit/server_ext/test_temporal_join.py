"""TemporalJoinProcessor (Flink's TemporalRowTimeJoinOperator / TemporalProcessTimeJoinOperator),
harness style on TwsTester: event-time versions, the watermark, timers, late rows, cleanup.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from server_ext.joins.spec import INSERT, RIGHT
from server_ext.joins.temporal_spec import LATE, TemporalSpec, temporal_time_mode
from tests.models import temporal_join_processor
from tests.models.temporal import TemporalJoinProcessor
from tests.unit.server_ext.harness import HUK, side
from tests.unit.server_ext.temporal_harness import P, TemporalHarness, V, temporal_spec

N2 = (None, None)
INTS_L = (("lk", "BIGINT"), ("lv", "BIGINT"))
INTS_R = (("rk", "BIGINT"), ("rw", "BIGINT"))
LESS = ("call", "<", ("col", "l", 1), ("col", "r", 1))  # l.lv < r.rw


def hm(clock: str) -> int:
    """``"10:15"`` as epoch milliseconds of 1970-01-01 10:15."""
    hours, minutes = clock.split(":")
    return (int(hours) * 60 + int(minutes)) * 60_000


# --------------------------------------------------------------------------- the seed example

ORDERS = (("o_time", "BIGINT"), ("amount", "INT"), ("currency", "STRING"))
RATES = (("r_time", "BIGINT"), ("r_currency", "STRING"), ("rate", "INT"))


def order(clock: str, amount: int, currency: str) -> tuple:
    return P(hm(clock), hm(clock), amount, currency)


def rate(clock: str, currency: str, value: int, kind: str = "+I") -> tuple:
    return V(kind, hm(clock), hm(clock), currency, value)


def test_seed_example_orders_join_the_rate_valid_at_their_time() -> None:
    spec = temporal_spec("inner", left_fields=ORDERS, right_fields=RATES, right_key=(1,))
    h = TemporalHarness(spec, left_key=(2,), right_key=(1,))
    rates = [
        rate("09:00", "US Dollar", 102),
        rate("09:00", "Euro", 114),
        rate("09:00", "Yen", 1),
        rate("10:45", "Euro", 116),
        rate("11:15", "Euro", 119),
        rate("11:49", "Pounds", 108),
    ]
    orders = [
        order("10:15", 2, "Euro"),
        order("10:30", 1, "US Dollar"),
        order("10:32", 50, "Yen"),
        order("10:52", 3, "Euro"),
        order("11:04", 5, "US Dollar"),
    ]
    # Versions and orders arrive in one micro-batch; nothing is emitted before the watermark.
    assert h.process(*orders[:2], *rates, *orders[2:]) == []
    assert h.watermark(hm("10:00")) == []
    joined = h.watermark(hm("10:31")) + h.watermark(hm("11:04"))

    products = sorted((row[1], row[3], row[2] * row[6]) for row in joined)
    assert all(row[0] == "+I" for row in joined)
    assert products == [
        (hm("10:15"), "Euro", 2 * 114),
        (hm("10:30"), "US Dollar", 1 * 102),
        (hm("10:32"), "Yen", 50 * 1),
        (hm("10:52"), "Euro", 3 * 116),
        (hm("11:04"), "US Dollar", 5 * 102),
    ]
    assert [p for _, _, p in products] == [228, 102, 50, 348, 510]
    # Cleanup: only the version valid at the watermark and the later ones are left.
    assert h.state("Euro") == (
        [(hm("10:45"), (hm("10:45"), "Euro", 116)), (hm("11:15"), (hm("11:15"), "Euro", 119))],
        [],
        None,
    )
    assert h.state("Pounds") == ([(hm("11:49"), (hm("11:49"), "Pounds", 108))], [], None)
    assert all(h.timers(c) == [] for c in ("Euro", "US Dollar", "Yen", "Pounds"))


def test_seed_example_orders_arriving_after_the_versions_in_later_batches() -> None:
    spec = temporal_spec("left", left_fields=ORDERS, right_fields=RATES, right_key=(1,))
    h = TemporalHarness(spec, left_key=(2,), right_key=(1,))
    assert h.process(rate("09:00", "Euro", 114), rate("11:15", "Euro", 119)) == []
    assert h.process(order("10:15", 2, "Euro"), order("10:32", 50, "Yen")) == []
    assert h.process(rate("10:45", "Euro", 116)) == []  # out of order, before 11:15
    assert h.process(order("10:52", 3, "Euro")) == []
    assert h.watermark(hm("11:00")) == [
        ("+I", hm("10:15"), 2, "Euro", hm("09:00"), "Euro", 114),
        ("+I", hm("10:52"), 3, "Euro", hm("10:45"), "Euro", 116),
        ("+I", hm("10:32"), 50, "Yen", None, None, None),  # left join: no Yen rate
    ]


# --------------------------------------------------------------------------- event time


def test_probe_rows_wait_for_the_watermark() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    assert h.process(P(10, 1, "a"), V("+I", 5, 1, "x")) == []
    assert h.timers(1) == [10]
    assert h.watermark(9) == []
    assert h.state(1) == ([(5, (1, "x"))], [(10, (1, "a"))], 10)
    assert h.watermark(10) == [("+I", 1, "a", 1, "x")]
    assert h.timers(1) == []
    assert h.state(1) == ([(5, (1, "x"))], [], None)


def test_a_version_arriving_later_but_before_the_watermark_still_counts() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    assert h.process(V("+I", 5, 1, "x"), P(10, 1, "a")) == []
    assert h.process(V("+I", 8, 1, "y")) == []  # arrives after the probe row, time 8 <= 10
    assert h.process(V("+I", 12, 1, "z")) == []  # after the probe row's time: not for it
    assert h.watermark(20) == [("+I", 1, "a", 1, "y")]


def test_out_of_order_versions_are_kept_sorted_by_time() -> None:
    h = TemporalHarness(temporal_spec("left"))
    assert h.process(V("+I", 20, 1, "b")) == []
    assert h.process(V("+I", 10, 1, "a"), V("+I", 30, 1, "c")) == []
    assert h.state(1)[0] == [(10, (1, "a")), (20, (1, "b")), (30, (1, "c"))]
    assert h.process(P(35, 1, "p35"), P(15, 1, "p15"), P(5, 1, "p5"), P(25, 1, "p25")) == []
    assert h.process(P(20, 1, "p20"), P(30, 1, "p30")) == []
    # Emitted in time order; a version is valid from its own time on (time <= probe time).
    assert h.watermark(40) == [
        ("+I", 1, "p5", *N2),
        ("+I", 1, "p15", 1, "a"),
        ("+I", 1, "p20", 1, "b"),
        ("+I", 1, "p25", 1, "b"),
        ("+I", 1, "p30", 1, "c"),
        ("+I", 1, "p35", 1, "c"),
    ]


@pytest.mark.parametrize("kind", ["inner", "left"])
def test_a_deletion_closes_the_version_until_the_next_one(kind: str) -> None:
    h = TemporalHarness(temporal_spec(kind))
    assert h.process(V("+I", 10, 1, "a"), V("-D", 20, 1, "a"), V("+I", 30, 1, "c")) == []
    assert h.process(P(15, 1, "p15"), P(20, 1, "p20"), P(25, 1, "p25"), P(30, 1, "p30")) == []
    padded = [("+I", 1, "p20", *N2), ("+I", 1, "p25", *N2)] if kind == "left" else []
    assert h.watermark(30) == [("+I", 1, "p15", 1, "a"), *padded, ("+I", 1, "p30", 1, "c")]


def test_update_before_and_after_at_the_same_time_replace_the_version() -> None:
    h = TemporalHarness(temporal_spec("left"))
    assert h.process(V("+I", 10, 1, "a")) == []
    # The later arrival at one time wins (Flink keeps one version per time).
    assert h.process(V("-U", 20, 1, "a"), V("+U", 20, 1, "b"), P(25, 1, "p")) == []
    assert h.state(1)[0] == [(10, (1, "a")), (20, (1, "b"))]
    assert h.watermark(30) == [("+I", 1, "p", 1, "b")]
    # Only -U at a time (as a changelog without its +U): the key is deleted from then on.
    assert h.process(V("-U", 40, 1, "b"), P(45, 1, "q")) == []
    assert h.watermark(50) == [("+I", 1, "q", *N2)]


def test_rows_of_one_time_are_applied_in_seq_order() -> None:
    h = TemporalHarness(temporal_spec("left"))  # the harness hands rows over reversed
    assert h.process(V("+I", 10, 1, "a"), V("-D", 10, 1, "a"), P(10, 1, "p")) == []
    assert h.process(V("-D", 20, 1, "b"), V("+I", 20, 1, "b"), P(20, 1, "q")) == []
    assert h.watermark(20) == [("+I", 1, "p", *N2), ("+I", 1, "q", 1, "b")]


def test_inner_vs_left_without_any_version() -> None:
    inner = TemporalHarness(temporal_spec("inner"))
    left = TemporalHarness(temporal_spec("left"))
    for h in (inner, left):
        assert h.process(P(10, 1, "a"), V("+I", 11, 1, "x")) == []
    assert inner.watermark(10) == []
    assert left.watermark(10) == [("+I", 1, "a", *N2)]
    assert inner.state(1) == left.state(1) == ([(11, (1, "x"))], [], None)


def test_keys_are_independent() -> None:
    h = TemporalHarness(temporal_spec("left"))
    assert h.process(V("+I", 1, 1, "x"), V("+I", 1, 2, "y"), P(5, 1, "a"), P(7, 2, "b")) == []
    assert h.process(P(6, 3, "c")) == []
    assert h.timers(1) == [5] and h.timers(2) == [7] and h.timers(3) == [6]
    assert sorted(h.watermark(6)) == [("+I", 1, "a", 1, "x"), ("+I", 3, "c", *N2)]
    assert h.watermark(7) == [("+I", 2, "b", 2, "y")]
    assert h.state(3) is None  # nothing left for key 3: cleared


def test_late_rows_are_emitted_as_late_and_not_kept() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    assert h.process(V("+I", 10, 1, "x")) == []
    assert h.watermark(100) == []
    assert h.process(P(50, 1, "late"), P(99, 2, "late too")) == [
        ("LATE", 1, "late", *N2),
        ("LATE", 2, "late too", *N2),
    ]
    assert h.state(2) is None and h.timers(1) == [] and h.timers(2) == []
    assert h.state(1) == ([(10, (1, "x"))], [], None)
    # A row at exactly the watermark is not late: it joins at once (Spark takes no timer
    # at or behind the watermark), after the rest of its micro-batch.
    assert h.process(P(100, 1, "now"), V("+I", 100, 1, "y")) == [("+I", 1, "now", 1, "y")]
    assert h.watermark(200) == []


def test_late_rows_of_a_left_join_are_only_reported_as_late() -> None:
    h = TemporalHarness(temporal_spec("left"))
    assert h.watermark(100) == []
    assert h.process(P(99, 1, "a"), P(101, 1, "b")) == [("LATE", 1, "a", *N2)]
    assert h.watermark(101) == [("+I", 1, "b", *N2)]


def test_late_build_rows_still_update_the_versions() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    assert h.process(V("+I", 10, 1, "x"), P(200, 1, "p")) == []
    assert h.watermark(100) == []
    assert h.process(V("+I", 50, 1, "late version")) == []  # behind the watermark
    assert h.watermark(200) == [("+I", 1, "p", 1, "late version")]


def test_spark_drops_rows_behind_the_watermark_column_before_the_processor() -> None:
    """What happens when the union handed to transformWithState carries the watermark's
    column (TwsTester models Spark's late-row filter): late probe rows vanish instead of
    being reported, and late build rows are lost. The compiler should hand the processor a
    union without an event-time column (see "Wiring" in temporal.py's docstring)."""
    h = TemporalHarness(temporal_spec("inner"), drop_late_like_spark=True)
    assert h.process(V("+I", 10, 1, "x"), P(200, 1, "p")) == []
    assert h.watermark(100) == []
    assert h.process(V("+I", 50, 1, "late version"), P(60, 1, "late")) == []  # both dropped
    assert h.watermark(200) == [("+I", 1, "p", 1, "x")]


def test_versions_no_probe_row_can_need_are_dropped() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    assert h.process(*(V("+I", t, 1, f"v{t}") for t in range(10, 101, 10))) == []
    assert h.process(P(55, 1, "a"), P(95, 1, "b")) == []
    full = h.state_size(1)
    assert [t for t, _ in h.state(1)[0]] == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]

    assert h.watermark(60) == [("+I", 1, "a", 1, "v50")]
    # Kept: the latest version at or before min(watermark, held probe times) = 60, and later.
    assert [t for t, _ in h.state(1)[0]] == [60, 70, 80, 90, 100]
    middle = h.state_size(1)

    assert h.watermark(200) == [("+I", 1, "b", 1, "v90")]
    assert h.state(1) == ([(100, (1, "v100"))], [], None)
    assert full > middle > h.state_size(1)

    # A deletion stays as the key's last version: a late version older than it must not
    # come back to life.
    assert h.process(V("-D", 300, 1, "v100")) == []
    assert h.watermark(400) == []  # no probe row, no timer: cleanup waits for the next input
    assert h.state(1) == ([(100, (1, "v100")), (300, None)], [], None)
    assert h.process(V("+I", 250, 1, "too late"), P(400, 1, "c")) == []
    assert h.state(1) == ([(300, None)], [], None)


def test_held_probe_rows_keep_the_versions_they_need() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    assert h.process(V("+I", 10, 1, "a"), V("+I", 20, 1, "b"), P(15, 1, "p")) == []
    assert h.watermark(12) == []
    # Input arriving while the watermark is past 10 and a probe row at 15 waits: version 10
    # is still the one valid at the watermark, so it stays.
    assert h.process(V("+I", 30, 1, "c")) == []
    assert [t for t, _ in h.state(1)[0]] == [10, 20, 30]
    assert h.watermark(25) == [("+I", 1, "p", 1, "a")]
    assert [t for t, _ in h.state(1)[0]] == [20, 30]


def test_build_rows_alone_clean_up_old_versions() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    assert h.process(V("+I", 10, 1, "a"), V("+I", 20, 1, "b")) == []
    assert h.watermark(25) == []  # no probe row, no timer: nothing runs for key 1
    assert [t for t, _ in h.state(1)[0]] == [10, 20]
    assert h.process(V("+I", 30, 1, "c")) == []
    assert [t for t, _ in h.state(1)[0]] == [20, 30]


def test_residual_condition_sql_three_valued() -> None:
    for kind in ("inner", "left"):
        spec = temporal_spec(kind, left_fields=INTS_L, right_fields=INTS_R, residual=LESS)
        h = TemporalHarness(spec)
        assert h.process(V("+I", 0, 1, 5), V("+I", 10, 1, None)) == []
        assert h.process(P(5, 1, 4), P(6, 1, 5), P(7, 1, None), P(10, 1, 1)) == []
        padded = kind == "left"
        expected = [("+I", 1, 4, 1, 5)]  # 4 < 5
        if padded:
            expected += [
                ("+I", 1, 5, *N2),  # 5 < 5 is false: no older version is tried
                ("+I", 1, None, *N2),  # unknown is no match
                ("+I", 1, 1, *N2),  # 1 < NULL is unknown
            ]
        assert h.watermark(10) == expected


@pytest.mark.parametrize("kind", ["inner", "left"])
def test_null_keys_never_match(kind: str) -> None:
    h = TemporalHarness(temporal_spec(kind))
    assert h.process(V("+I", 1, None, "x"), P(10, None, "a")) == []
    expected_state = ([], [(10, (None, "a"))], 10) if kind == "left" else None
    assert h.state(None) == expected_state  # the build row is not kept
    # left: padded once the watermark passes the row's time, like any probe row
    assert h.watermark(10) == ([("+I", None, "a", *N2)] if kind == "left" else [])
    assert h.state(None) is None
    # late rows are reported whatever their key
    assert h.process(P(5, None, "late")) == [("LATE", None, "late", *N2)]


def test_multi_column_keys_with_a_null_part() -> None:
    fields_l = (("a", "BIGINT"), ("b", "STRING"), ("v", "STRING"))
    fields_r = (("ra", "BIGINT"), ("rb", "STRING"), ("w", "STRING"))
    spec = temporal_spec("left", left_fields=fields_l, right_fields=fields_r, right_key=(0, 1))
    h = TemporalHarness(spec, left_key=(0, 1), right_key=(0, 1))
    assert h.process(V("+I", 1, 1, "x", "r1"), V("+I", 1, 1, None, "r2")) == []
    assert h.process(P(5, 1, "x", "p1"), P(5, 1, None, "p2")) == []
    assert h.watermark(5) == [
        ("+I", 1, "x", "p1", 1, "x", "r1"),
        ("+I", 1, None, "p2", *(None,) * 3),
    ]


def test_probe_retractions_are_refused() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    with pytest.raises(ValueError, match=r"insert-only.*-D"):
        h.process(P(10, 1, "a", kind="-D"))
    with pytest.raises(ValueError, match=r"insert-only.*-U"):
        h.process(P(10, 1, "a", kind="-U"))
    proc = TemporalHarness(temporal_spec("inner", time="processing"))
    with pytest.raises(ValueError, match="insert-only"):
        proc.process(P(None, 1, "a", kind="-D"))


def test_rows_without_a_time_are_refused_in_event_mode() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    with pytest.raises(ValueError, match="without a time"):
        h.process(V("+I", None, 1, "x"))


def test_event_time_without_a_watermark_is_refused() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    timer_values = TimerValues(-1, -1)  # what transformWithState gives with timeMode="None"
    row = h._wire_row((1,), "L", INSERT, 5, (1, "a"))
    with pytest.raises(RuntimeError, match="needs a watermark"):
        h.processor.handleInputRows((1,), iter([row]), timer_values)


def test_one_timer_per_key_at_its_smallest_held_probe_time() -> None:
    h = TemporalHarness(temporal_spec("inner"))
    calls = h.count_calls()
    assert h.process(P(30, 1, "a"), P(20, 1, "b"), P(20, 1, "c"), P(40, 1, "d")) == []
    assert h.timers(1) == [20]
    assert calls == Counter(get=1, update=1, registerTimer=1)
    calls.clear()
    assert h.process(P(25, 1, "e"), P(50, 1, "f")) == []  # not earlier than 20: no timer call
    assert calls == Counter(get=1, update=1)
    assert h.process(P(10, 1, "g")) == []  # earlier: the timer moves
    assert h.timers(1) == [10]
    assert calls == Counter(get=2, update=2, deleteTimer=1, registerTimer=1)
    calls.clear()
    # One firing emits every due row (in time order, ties in arrival order) and sets the next.
    assert h.watermark(25) == []  # inner join, no versions
    assert h.timers(1) == [30]
    assert calls == Counter(get=1, update=1, registerTimer=1)
    assert h.state(1) == ([], [(30, (1, "a")), (40, (1, "d")), (50, (1, "f"))], 30)


def test_state_is_read_once_and_written_once_per_call() -> None:
    h = TemporalHarness(temporal_spec("left"))
    calls = h.count_calls()
    rows = [V("+I", t, 1, f"v{t}") for t in (5, 15, 25)] + [P(t, 1, f"p{t}") for t in (10, 20)]
    assert h.process(*rows) == []
    assert calls == Counter(get=1, update=1, registerTimer=1)
    calls.clear()
    assert len(h.watermark(20)) == 2
    assert calls == Counter(get=1, update=1)  # the last probe row went: no new timer
    calls.clear()
    assert h.process(P(19, 1, "late")) == [("LATE", 1, "late", *N2)]
    assert calls == Counter()  # a late row needs no state


def test_a_timer_with_nothing_left_to_do_writes_nothing() -> None:
    h = TemporalHarness(temporal_spec("left"))
    assert h.process(P(10, 1, "a")) == []
    # Spark fires the timers after the batch's input: rows held from earlier batches that
    # are due are emitted by the input call (same result), and the timer is moved.
    h.watermark_before_timers(15)
    calls = h.count_calls()
    assert h.process(P(20, 1, "b")) == [("+I", 1, "a", *N2)]
    assert calls == Counter(get=1, update=1, deleteTimer=1, registerTimer=1)
    assert h.timers(1) == [20]
    # A stale timer (e.g. one Spark already listed) firing finds nothing: one read only.
    calls.clear()
    out = h.processor.handleExpiredTimer((1,), h.tester._getTimerValues(), ExpiredTimerInfo(10))
    assert list(out) == [] and calls == Counter(get=1)


def test_input_columns_are_found_by_name() -> None:
    """Spark's row-mode worker hands structs over as dicts and the union may carry more
    columns (e.g. the watermark's ``__t_ts``) in any order."""
    h = TemporalHarness(temporal_spec("inner"))
    wire = Row("__k0", "__t_ts", "__t", "__r", "__l", "__seq", "__kind", "__side")
    build = wire(1, None, 5, {"rk": 1, "rv": "x"}, None, "a", INSERT, RIGHT)
    probe = wire(1, None, 9, None, {"lk": 1, "lv": "p"}, "b", INSERT, 0)
    assert h.tester.test(1, [probe, build]) == []
    assert h.watermark(9) == [("+I", 1, "p", 1, "x")]
    with pytest.raises(ValueError, match=r"lacks the columns \['__t'\]"):
        h.tester.test(2, [Row("__side", "__kind", "__seq", "__l", "__r")(0, 0, "c", None, None)])


def test_structs_as_dicts_and_nested_values() -> None:
    fields_r = (("rk", "BIGINT"), ("tags", "ARRAY<STRING>"))
    h = TemporalHarness(temporal_spec("inner", right_fields=fields_r), structs="dict")
    assert h.process(V("+I", 1, 1, ["a", "b"]), P(5, 1, "p")) == []
    assert h.watermark(5) == [("+I", 1, "p", 1, ("a", "b"))]


# --------------------------------------------------------------------------- processing time


@pytest.mark.parametrize("kind", ["inner", "left"])
def test_processing_time_joins_the_current_row_at_once(kind: str) -> None:
    h = TemporalHarness(temporal_spec(kind, time="processing"))
    pad = [("+I", 1, "a", *N2)] if kind == "left" else []
    assert h.process(P(None, 1, "a")) == pad
    assert h.process(V("+I", None, 1, "x")) == []  # earlier results are not revised
    assert h.process(P(None, 1, "b")) == [("+I", 1, "b", 1, "x")]
    assert h.process(V("-U", None, 1, "x"), V("+U", None, 1, "y"), P(None, 1, "c")) == [
        ("+I", 1, "c", 1, "y")
    ]
    assert h.state(1) == (1, "y")
    assert h.process(V("-D", None, 1, "y")) == []
    assert h.state(1) is None
    assert h.process(P(None, 1, "d")) == ([("+I", 1, "d", *N2)] if kind == "left" else [])


def test_processing_time_rows_in_seq_order() -> None:
    h = TemporalHarness(temporal_spec("left", time="processing"))
    assert h.process(P(None, 1, "a"), V("+I", None, 1, "x"), P(None, 1, "b")) == [
        ("+I", 1, "a", *N2),
        ("+I", 1, "b", 1, "x"),
    ]
    assert h.process(P(None, 1, "c"), V("-D", None, 1, "x"), P(None, 1, "d")) == [
        ("+I", 1, "c", 1, "x"),
        ("+I", 1, "d", *N2),
    ]


def test_processing_time_state_calls() -> None:
    h = TemporalHarness(temporal_spec("inner", time="processing"))
    calls = h.count_calls()
    assert h.process(V("+I", None, 1, "x"), V("+U", None, 1, "y")) == []
    assert calls == Counter(update=1)  # build rows only: the last one decides, no read
    calls.clear()
    assert h.process(P(None, 1, "a"), P(None, 1, "b"), V("+U", None, 1, "z")) == [
        ("+I", 1, "a", 1, "y"),
        ("+I", 1, "b", 1, "y"),
    ]
    assert calls == Counter(get=1, update=1)
    calls.clear()
    assert h.process(V("+U", None, 1, "w"), P(None, 1, "c")) == [("+I", 1, "c", 1, "w")]
    assert calls == Counter(update=1)
    assert h.timers(1) == []


def test_processing_time_null_keys_and_residual() -> None:
    spec = temporal_spec(
        "left", time="processing", left_fields=INTS_L, right_fields=INTS_R, residual=LESS
    )
    h = TemporalHarness(spec)
    assert h.process(V("+I", None, None, 9), P(None, None, 1)) == [("+I", None, 1, *N2)]
    assert h.state(None) is None
    assert h.process(V("+I", None, 1, 5), P(None, 1, 4), P(None, 1, 6)) == [
        ("+I", 1, 4, 1, 5),
        ("+I", 1, 6, *N2),
    ]


# --------------------------------------------------------------------------- spec / wiring


def test_factory_time_mode_and_output_schema() -> None:
    event = temporal_spec("left")
    proc = temporal_join_processor(event)
    assert isinstance(proc, TemporalJoinProcessor)
    assert temporal_time_mode(event) == "EventTime"
    assert temporal_time_mode(temporal_spec(time="processing")) == "None"
    assert event.output_struct_ddl() == (
        "__kind TINYINT, `lk` BIGINT, `lv` STRING, `rk` BIGINT, `rv` STRING"
    )
    assert LATE == 9


def test_plan_time_validation() -> None:
    with pytest.raises(ValueError, match="primary key is in the join key"):
        TemporalJoinProcessor(
            TemporalSpec("inner", "event", side(), side(HUK, fields=(("rk", "BIGINT"),)))
        )
    with pytest.raises(ValueError, match="unique"):
        spec = temporal_spec()
        TemporalJoinProcessor(
            TemporalSpec("inner", "event", spec.left, spec.right, output_names=("a",) * 4)
        )
    with pytest.raises(ValueError, match="field 5 of the r row"):
        TemporalJoinProcessor(temporal_spec(residual=("call", "=", ("col", "r", 5), ("lit", 1))))
    with pytest.raises(ValueError, match="unknown condition function"):
        TemporalJoinProcessor(temporal_spec(residual=("call", "nope", ("lit", 1))))
    with pytest.raises(ValueError, match="temporal join kind"):
        temporal_spec("full")
    with pytest.raises(ValueError, match="time must be"):
        temporal_spec(time="wall")


# --------------------------------------------------------------------------- property


@st.composite
def scenarios(draw: Any) -> tuple[str, list[tuple]]:
    """A random run for one key: micro-batches of build/probe rows, and watermark moves."""
    kind = draw(st.sampled_from(["inner", "left"]))
    version = st.tuples(st.just("V"), st.sampled_from(["+I", "+U", "-U", "-D"]), st.integers(0, 60))
    probe = st.tuples(st.just("P"), st.just("+I"), st.integers(0, 70))
    steps: list[tuple] = []
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.booleans()):
            steps.append(("wm", draw(st.integers(1, 15))))
        steps.append(("batch", draw(st.lists(st.one_of(version, probe), max_size=6))))
    return kind, steps


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_matches_a_plain_python_reference(scenario: tuple[str, list[tuple]]) -> None:
    """For each probe row, once the watermark passes it: the latest version with time <= the
    probe row's time, unless that is a deletion; probe rows behind the watermark: LATE."""
    kind, steps = scenario
    h = TemporalHarness(temporal_spec(kind, left_fields=INTS_L, right_fields=INTS_R))
    history: dict[int, int | None] = {}  # version time -> value (None: deleted), last wins
    held: list[tuple[int, int, int]] = []  # (time, arrival, probe id), not yet emitted
    watermark = arrival = 0

    def join(t: int, probe_id: int) -> list[tuple]:
        times = [vt for vt in history if vt <= t]
        value = history[max(times)] if times else None
        if value is not None:
            return [("+I", 1, probe_id, 1, value)]
        return [("+I", 1, probe_id, None, None)] if kind == "left" else []

    def due() -> list[tuple]:
        ready = sorted(p for p in held if p[0] <= watermark)  # time order, then arrival
        held[:] = [p for p in held if p[0] > watermark]
        return [row for t, _, probe_id in ready for row in join(t, probe_id)]

    for step in [*steps, ("wm", 100)]:  # at the end every held probe row is due
        if step[0] == "wm":
            watermark += step[1]
            assert h.watermark(watermark) == due()
            continue
        changes, expected = [], []
        touched = False  # does the processor load the key's state in this batch?
        for what, row_kind, t in step[1]:
            arrival += 1
            if what == "V":
                value = arrival
                changes.append(V(row_kind, t, 1, value))
                history[t] = None if row_kind in ("-U", "-D") else value
                touched = True
            else:
                changes.append(P(t, 1, arrival))
                if t < watermark:
                    expected.append(("LATE", 1, arrival, None, None))
                else:
                    held.append((t, arrival, arrival))
                    touched = True
        expected += due()  # rows at exactly the watermark join at the end of the batch
        assert h.process(*changes) == expected

        state = h.state(1)
        if state is None:
            assert held == []
            continue
        versions, probes, timer = state
        assert [(t, p) for t, (_, p) in probes] == [(t, p) for t, _, p in sorted(held)]
        if touched:  # cleaned up just now: at most one version at or before the horizon
            horizon = min([watermark] + [t for t, _, _ in held])
            assert sum(1 for t, _ in versions if t <= horizon) <= 1
        assert timer == (min(t for t, _, _ in held) if held else None)
        assert h.timers(1) == ([timer] if timer is not None else [])
    assert held == []
