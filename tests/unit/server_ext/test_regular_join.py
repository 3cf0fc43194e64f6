"""RegularJoinProcessor (Flink's StreamingJoinOperator): exact changelogs, harness style.

Expected outputs follow Flink's processElement: inner joins forward the input's row kind,
joins with an outer side emit +I / -D, null-padded rows are +I / -D, and matches are
visited in state order (insertion order), each match's padded row retracted just before
its joined row.
"""

from __future__ import annotations

import pytest

from server_ext.joins.spec import JoinSpec, time_mode
from tests.models import join_processor
from tests.models.regular import RegularJoinProcessor
from tests.models.semi_anti import SemiAntiJoinProcessor
from tests.models.state import FrozenDict
from tests.unit.server_ext.harness import (
    HUK,
    JKCUK,
    RIGHT_FIELDS,
    JoinHarness,
    L,
    R,
    join_spec,
    side,
)

N2 = (None, None)
LESS = ("call", "<", ("col", "l", 1), ("col", "r", 1))  # l.v < r.w
INTS_L = (("lk", "BIGINT"), ("lv", "BIGINT"))
INTS_R = (("rk", "BIGINT"), ("rw", "BIGINT"))


# --------------------------------------------------------------------------- inner


def test_inner_no_unique_key_counts_duplicates_and_forwards_row_kinds() -> None:
    h = JoinHarness(join_spec("inner"))
    assert h.process(L("+I", 1, "a")) == []
    assert h.process(R("+I", 1, "x")) == [("+I", 1, "a", 1, "x")]
    assert h.process(R("+I", 1, "x")) == [("+I", 1, "a", 1, "x")]  # a second copy of x
    assert h.process(L("+I", 1, "b")) == [("+I", 1, "b", 1, "x")] * 2
    assert h.process(R("-D", 1, "x")) == [("-D", 1, "a", 1, "x"), ("-D", 1, "b", 1, "x")]
    # -U/+U pass through an inner join unchanged (Flink forwards the input RowKind).
    assert h.process(L("-U", 1, "a"), L("+U", 1, "c")) == [
        ("-U", 1, "a", 1, "x"),
        ("+U", 1, "c", 1, "x"),
    ]
    assert h.process(R("-U", 1, "x"), R("+U", 1, "y")) == [
        ("-U", 1, "b", 1, "x"),
        ("-U", 1, "c", 1, "x"),
        ("+U", 1, "b", 1, "y"),
        ("+U", 1, "c", 1, "y"),
    ]
    assert h.state(1) == (
        {(1, "b"): [(1, "b"), 1, -1, -1], (1, "c"): [(1, "c"), 1, -1, -1]},
        {(1, "y"): [(1, "y"), 1, -1, -1]},
    )


def test_inner_keys_are_independent() -> None:
    h = JoinHarness(join_spec("inner"))
    assert h.process(L("+I", 1, "a"), L("+I", 2, "b"), R("+I", 2, "y"), R("+I", 3, "z")) == [
        ("+I", 2, "b", 2, "y")
    ]
    assert h.process(R("+I", 1, "x")) == [("+I", 1, "a", 1, "x")]


def test_rows_are_processed_in_seq_order() -> None:
    # The harness hands rows over in reverse; processed in that order this batch would emit
    # -D[a, x] and +I[a, x] (a retraction that is not in state still joins, as in Flink).
    h = JoinHarness(join_spec("inner"))
    assert h.process(L("+I", 1, "a"), L("-D", 1, "a"), R("+I", 1, "x")) == []
    assert h.state(1) == ({}, {(1, "x"): [(1, "x"), 1, -1, -1]})


def test_retraction_of_a_row_not_in_state_still_joins_as_in_flink() -> None:
    h = JoinHarness(join_spec("inner"))
    h.process(R("+I", 1, "x"))
    assert h.process(L("-D", 1, "never")) == [("-D", 1, "never", 1, "x")]


def test_inner_join_key_contains_unique_key_and_has_unique_key() -> None:
    right = side(HUK, (("rk", "BIGINT"), ("rid", "BIGINT"), ("rv", "STRING")), unique_key=(1,))
    h = JoinHarness(join_spec("inner", side(JKCUK), right))
    assert h.process(L("+I", 1, "a"), L("+I", 1, "b")) == []  # b replaces a: one row per key
    assert h.process(R("+I", 1, 10, "x")) == [("+I", 1, "b", 1, 10, "x")]
    # An accumulate with a stored unique key replaces the row (nothing is retracted).
    assert h.process(R("+I", 1, 10, "y")) == [("+I", 1, "b", 1, 10, "y")]
    assert h.process(R("+I", 1, 11, "z")) == [("+I", 1, "b", 1, 11, "z")]
    assert h.state(1) == (
        {(): [(1, "b"), 1, -1, -1]},
        {10: [(1, 10, "y"), 1, -1, -1], 11: [(1, 11, "z"), 1, -1, -1]},
    )
    # Retractions remove by unique key: the row's other fields do not matter.
    assert h.process(R("-D", 1, 10, "whatever")) == [("-D", 1, "b", 1, 10, "whatever")]
    assert h.process(L("-D", 1, "zzz")) == [("-D", 1, "zzz", 1, 11, "z")]
    assert h.state(1) == ({}, {11: [(1, 11, "z"), 1, -1, -1]})
    assert h.process(R("-D", 1, 11, "z")) == []
    assert h.state(1) is None  # both sides empty: the state is cleared


def test_inner_residual_uses_three_valued_logic() -> None:
    h = JoinHarness(join_spec("inner", side(fields=INTS_L), side(fields=INTS_R), residual=LESS))
    h.process(L("+I", 1, 5), L("+I", 1, None))
    assert h.process(R("+I", 1, 3), R("+I", 1, None), R("+I", 1, 7)) == [("+I", 1, 5, 1, 7)]
    assert h.process(R("-D", 1, 7)) == [("-D", 1, 5, 1, 7)]


# --------------------------------------------------------------------------- left / right


def test_left_outer_padding_follows_the_association_count() -> None:
    h = JoinHarness(join_spec("left"))
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a", *N2)]
    assert h.process(R("+I", 1, "x")) == [("-D", 1, "a", *N2), ("+I", 1, "a", 1, "x")]
    assert h.process(R("+I", 1, "y")) == [("+I", 1, "a", 1, "y")]
    assert h.state(1)[0] == {(1, "a"): [(1, "a"), 1, 2, -1]}  # two associations
    assert h.process(R("-D", 1, "x")) == [("-D", 1, "a", 1, "x")]
    assert h.process(R("-D", 1, "y")) == [("-D", 1, "a", 1, "y"), ("+I", 1, "a", *N2)]
    assert h.process(R("+I", 1, "x")) == [("-D", 1, "a", *N2), ("+I", 1, "a", 1, "x")]
    assert h.process(L("-D", 1, "a")) == [("-D", 1, "a", 1, "x")]
    assert h.process(R("-D", 1, "x")) == []
    assert h.state(1) is None


def test_left_outer_update_pairs_on_both_sides() -> None:
    h = JoinHarness(join_spec("left"))
    h.process(L("+I", 1, "a"), R("+I", 1, "x"))
    # The outer side's -U/+U become -D/+I.
    assert h.process(L("-U", 1, "a"), L("+U", 1, "b")) == [
        ("-D", 1, "a", 1, "x"),
        ("+I", 1, "b", 1, "x"),
    ]
    # The inner side's -U is forwarded; its +U meets an outer row and becomes +I.
    assert h.process(R("-U", 1, "x"), R("+U", 1, "y")) == [
        ("-U", 1, "b", 1, "x"),
        ("+I", 1, "b", *N2),
        ("-D", 1, "b", *N2),
        ("+I", 1, "b", 1, "y"),
    ]


def test_left_outer_residual_failing_key_mates_leave_the_row_padded() -> None:
    h = JoinHarness(join_spec("left", side(fields=INTS_L), side(fields=INTS_R), residual=LESS))
    assert h.process(L("+I", 1, 5)) == [("+I", 1, 5, *N2)]
    assert h.process(R("+I", 1, 3), R("+I", 1, None)) == []  # false, unknown: no match
    assert h.process(R("+I", 1, 9)) == [("-D", 1, 5, *N2), ("+I", 1, 5, 1, 9)]
    assert h.process(L("+I", 1, 4)) == [("+I", 1, 4, 1, 9)]
    assert h.process(L("+I", 1, 100)) == [("+I", 1, 100, *N2)]
    assert h.process(R("-D", 1, 9)) == [
        ("-D", 1, 5, 1, 9),
        ("+I", 1, 5, *N2),
        ("-D", 1, 4, 1, 9),
        ("+I", 1, 4, *N2),
    ]
    assert h.process(R("-D", 1, 3)) == []  # it never matched: counts untouched
    assert [e[2] for e in h.state(1)[0].values()] == [0, 0, 0]


def test_right_outer_mirrors_left_outer() -> None:
    h = JoinHarness(join_spec("right"))
    assert h.process(R("+I", 1, "x")) == [("+I", *N2, 1, "x")]
    assert h.process(L("+I", 1, "a")) == [("-D", *N2, 1, "x"), ("+I", 1, "a", 1, "x")]
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a", 1, "x")]
    assert h.process(L("-D", 1, "a")) == [("-D", 1, "a", 1, "x")]
    assert h.process(L("-D", 1, "a")) == [("-D", 1, "a", 1, "x"), ("+I", *N2, 1, "x")]
    assert h.process(R("-U", 1, "x"), R("+U", 1, "y")) == [
        ("-D", *N2, 1, "x"),
        ("+I", *N2, 1, "y"),
    ]


def test_left_outer_duplicates_on_the_outer_side_share_one_count() -> None:
    h = JoinHarness(join_spec("left"))
    assert h.process(L("+I", 1, "a"), L("+I", 1, "a")) == [("+I", 1, "a", *N2)] * 2
    # Each copy had its padded row out: both are retracted, one joined row per copy.
    assert h.process(R("+I", 1, "x")) == [
        ("-D", 1, "a", *N2),
        ("+I", 1, "a", 1, "x"),
        ("-D", 1, "a", *N2),
        ("+I", 1, "a", 1, "x"),
    ]
    assert h.state(1)[0] == {(1, "a"): [(1, "a"), 2, 1, -1]}  # 2 copies, 1 association
    assert h.process(L("-D", 1, "a")) == [("-D", 1, "a", 1, "x")]
    assert h.process(R("-D", 1, "x")) == [("-D", 1, "a", 1, "x"), ("+I", 1, "a", *N2)]
    assert h.state(1) == ({(1, "a"): [(1, "a"), 1, 0, -1]}, {})


def test_left_outer_duplicates_on_the_inner_side_are_counted_matches() -> None:
    h = JoinHarness(join_spec("left"))
    h.process(R("+I", 1, "x"), R("+I", 1, "x"))
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a", 1, "x")] * 2
    assert h.state(1)[0][(1, "a")][2] == 2
    assert h.process(R("-D", 1, "x")) == [("-D", 1, "a", 1, "x")]
    assert h.process(R("-D", 1, "x")) == [("-D", 1, "a", 1, "x"), ("+I", 1, "a", *N2)]


def test_left_outer_join_key_contains_unique_key_on_both_sides() -> None:
    h = JoinHarness(join_spec("left", side(JKCUK), side(JKCUK, RIGHT_FIELDS)))
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a", *N2)]
    assert h.process(R("+I", 1, "x")) == [("-D", 1, "a", *N2), ("+I", 1, "a", 1, "x")]
    # x is replaced by y without a retraction: not an additional match, a keeps 1 association.
    assert h.process(R("+I", 1, "y")) == [("+I", 1, "a", 1, "y")]
    assert h.state(1) == ({(): [(1, "a"), 1, 1, -1]}, {(): [(1, "y"), 1, -1, -1]})
    assert h.process(R("-D", 1, "y")) == [("-D", 1, "a", 1, "y"), ("+I", 1, "a", *N2)]
    # The outer side replaced: the new row gets its own count.
    assert h.process(L("+I", 1, "b")) == [("+I", 1, "b", *N2)]
    assert h.state(1) == ({(): [(1, "b"), 1, 0, -1]}, {})


# --------------------------------------------------------------------------- full


def test_full_outer_pads_both_sides() -> None:
    h = JoinHarness(join_spec("full"))
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a", *N2)]
    assert h.process(R("+I", 1, "x")) == [("-D", 1, "a", *N2), ("+I", 1, "a", 1, "x")]
    assert h.process(R("+I", 2, "y")) == [("+I", *N2, 2, "y")]
    assert h.process(L("-D", 1, "a")) == [("-D", 1, "a", 1, "x"), ("+I", *N2, 1, "x")]
    assert h.process(L("+I", 1, "b")) == [("-D", *N2, 1, "x"), ("+I", 1, "b", 1, "x")]
    assert h.process(R("-U", 1, "x"), R("+U", 1, "z")) == [
        ("-D", 1, "b", 1, "x"),
        ("+I", 1, "b", *N2),
        ("-D", 1, "b", *N2),
        ("+I", 1, "b", 1, "z"),
    ]
    assert h.state(1) == ({(1, "b"): [(1, "b"), 1, 1, -1]}, {(1, "z"): [(1, "z"), 1, 1, -1]})


def test_full_outer_unique_key_replacement_is_not_an_additional_match() -> None:
    left = side(HUK, (("id", "BIGINT"), ("k", "BIGINT"), ("v", "STRING")), unique_key=(0,))
    h = JoinHarness(join_spec("full", left), left_key=(1,))
    assert h.process(R("+I", 1, "x")) == [("+I", None, None, None, 1, "x")]
    assert h.process(L("+I", 7, 1, "a")) == [
        ("-D", None, None, None, 1, "x"),
        ("+I", 7, 1, "a", 1, "x"),
    ]
    # Same unique key again, without a retraction: the row is replaced and x keeps one count.
    assert h.process(L("+I", 7, 1, "b")) == [("+I", 7, 1, "b", 1, "x")]
    assert h.state(1)[1] == {(1, "x"): [(1, "x"), 1, 1, -1]}
    assert h.process(L("-D", 7, 1, "b")) == [
        ("-D", 7, 1, "b", 1, "x"),
        ("+I", None, None, None, 1, "x"),
    ]
    assert h.state(1) == ({}, {(1, "x"): [(1, "x"), 1, 0, -1]})


def test_full_outer_mixed_layouts_with_residual() -> None:
    left = side(JKCUK, INTS_L)
    right = side(HUK, (("rk", "BIGINT"), ("rw", "BIGINT"), ("id", "STRING")), unique_key=(2,))
    h = JoinHarness(join_spec("full", left, right, residual=LESS))
    assert h.process(L("+I", 1, 5), R("+I", 1, 3, "p"), R("+I", 1, 8, "q")) == [
        ("+I", 1, 5, *N2, None),
        ("+I", *N2, 1, 3, "p"),
        ("-D", 1, 5, *N2, None),
        ("+I", 1, 5, 1, 8, "q"),
    ]
    # The left row (one per key) changes: 2 < 3 and 2 < 8 now both match.
    assert h.process(L("-U", 1, 5), L("+U", 1, 2)) == [
        ("-D", 1, 5, 1, 8, "q"),
        ("+I", *N2, 1, 8, "q"),
        ("-D", *N2, 1, 3, "p"),
        ("+I", 1, 2, 1, 3, "p"),
        ("-D", *N2, 1, 8, "q"),
        ("+I", 1, 2, 1, 8, "q"),
    ]
    assert h.process(R("-D", 1, 3, "p")) == [("-D", 1, 2, 1, 3, "p")]
    assert h.process(R("-D", 1, 8, "q")) == [("-D", 1, 2, 1, 8, "q"), ("+I", 1, 2, *N2, None)]


# --------------------------------------------------------------------------- null keys


@pytest.mark.parametrize("kind", ["inner", "left", "right", "full"])
def test_null_keys_never_match_and_are_not_stored(kind: str) -> None:
    h = JoinHarness(join_spec(kind))
    left_pad = [("+I", None, "a", *N2)] if kind in ("left", "full") else []
    right_pad = [("+I", *N2, None, "x")] if kind in ("right", "full") else []
    assert h.process(L("+I", None, "a")) == left_pad
    assert h.process(R("+I", None, "x")) == right_pad
    assert h.process(L("-D", None, "a")) == [("-D", *r[1:]) for r in left_pad]
    assert h.state(None) is None


def test_null_safe_key_matches_nulls() -> None:
    h = JoinHarness(join_spec("left", null_safe=(True,)))
    assert h.process(L("+I", None, "a")) == [("+I", None, "a", *N2)]
    assert h.process(R("+I", None, "x")) == [("-D", None, "a", *N2), ("+I", None, "a", None, "x")]


def test_two_column_key_with_one_null_safe_column() -> None:
    fields_l = (("k1", "BIGINT"), ("k2", "BIGINT"), ("v", "STRING"))
    fields_r = (("rk1", "BIGINT"), ("rk2", "BIGINT"), ("w", "STRING"))
    spec = join_spec("inner", side(fields=fields_l), side(fields=fields_r), null_safe=(False, True))
    h = JoinHarness(spec, left_key=(0, 1), right_key=(0, 1))
    assert h.process(L("+I", 1, None, "a"), R("+I", 1, None, "x")) == [
        ("+I", 1, None, "a", 1, None, "x")
    ]
    assert h.process(L("+I", None, 1, "b"), R("+I", None, 1, "y")) == []
    assert h.state((None, 1)) is None


# --------------------------------------------------------------------------- TTL


def test_ttl_expires_rows_by_last_write_time() -> None:
    spec = join_spec("inner", side(ttl_ms=1000), side(fields=RIGHT_FIELDS, ttl_ms=1000))
    assert time_mode(spec) == "ProcessingTime"
    h = JoinHarness(spec)
    assert h.process(L("+I", 1, "a")) == []  # written at 0
    h.advance(999)
    assert h.process(R("+I", 1, "x")) == [("+I", 1, "a", 1, "x")]
    h.advance(1000)  # a expired (0 + 1000 <= 1000)
    assert h.process(R("+I", 1, "y")) == []
    assert h.process(L("+I", 1, "b")) == [("+I", 1, "b", 1, "x"), ("+I", 1, "b", 1, "y")]
    h.advance(2000)  # x (999) and y (1000) expired; b (1000) too
    assert h.process(L("+I", 1, "c")) == []
    assert h.state(1) == ({(1, "c"): [(1, "c"), 1, -1, 2000]}, {})


def test_ttl_association_updates_are_writes() -> None:
    spec = join_spec("left", side(ttl_ms=1000), side(fields=RIGHT_FIELDS, ttl_ms=1000))
    h = JoinHarness(spec)
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a", *N2)]
    h.advance(500)
    assert h.process(R("+I", 1, "x")) == [("-D", 1, "a", *N2), ("+I", 1, "a", 1, "x")]
    h.advance(1200)  # a was rewritten at 500 (its count changed): still alive
    assert h.process(R("+I", 1, "y")) == [("+I", 1, "a", 1, "y")]
    h.advance(2300)  # everything written at 1200 or before is gone
    assert h.process(L("+I", 1, "b")) == [("+I", 1, "b", *N2)]
    # A retraction of an expired row still emits its padded retraction (as Flink does).
    assert h.process(L("-D", 1, "a")) == [("-D", 1, "a", *N2)]


def test_ttl_on_one_side_uses_one_state_per_side() -> None:
    spec = join_spec("inner", side(ttl_ms=1000), side(fields=RIGHT_FIELDS))
    h = JoinHarness(spec)
    assert h.process(L("+I", 1, "a"), R("+I", 1, "x")) == [("+I", 1, "a", 1, "x")]
    h.advance(5000)
    assert h.process(L("+I", 1, "b")) == [("+I", 1, "b", 1, "x")]  # x never expires
    assert h.process(R("+I", 1, "y")) == [("+I", 1, "b", 1, "y")]  # a has expired
    assert h.state(1, "left_rows") == {(1, "b"): [(1, "b"), 1, -1, 5000]}
    assert set(h.state(1, "right_rows")) == {(1, "x"), (1, "y")}


def test_ttl_without_processing_time_is_refused() -> None:
    spec = join_spec("inner", side(ttl_ms=1000))
    h = JoinHarness(spec, time_mode_override="None")
    with pytest.raises(RuntimeError, match="ProcessingTime"):
        h.process(L("+I", 1, "a"))


def test_time_mode_without_ttl_is_none() -> None:
    assert time_mode(join_spec("full")) == "None"
    assert time_mode(join_spec("anti", right=side(fields=RIGHT_FIELDS, ttl_ms=5))) == (
        "ProcessingTime"
    )


# --------------------------------------------------------------------------- values, wiring


def test_structs_as_dicts_and_nested_values_are_hashable_in_state() -> None:
    fields = (
        ("k", "BIGINT"),
        ("tags", "ARRAY<STRING>"),
        ("m", "MAP<STRING, BIGINT>"),
        ("b", "BINARY"),
    )
    h = JoinHarness(join_spec("left", side(fields=fields)), structs="dict")
    row = (1, ["t"], {"x": 1}, bytearray(b"z"))
    out = h.process(L("+I", *row), L("+I", *row))
    assert out == [("+I", 1, ("t",), {"x": 1}, b"z", *N2)] * 2
    assert isinstance(out[0][3], FrozenDict)
    (entry,) = h.state(1)[0].values()
    assert entry[1] == 2  # the two copies are one entry
    assert (
        h.process(R("+I", 1, "r"))
        == [
            ("-D", 1, ("t",), {"x": 1}, b"z", *N2),
            ("+I", 1, ("t",), {"x": 1}, b"z", 1, "r"),
        ]
        * 2
    )


def test_join_processor_picks_the_model() -> None:
    assert isinstance(join_processor(join_spec("full")), RegularJoinProcessor)
    assert isinstance(join_processor(join_spec("semi")), SemiAntiJoinProcessor)


def test_invalid_specs_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="unique"):
        RegularJoinProcessor(
            JoinSpec("inner", side(), side(), null_safe=(False,))  # lk, lv twice
        )
    with pytest.raises(ValueError, match="field 5 of the r row"):
        join_processor(join_spec("inner", residual=("call", "is_null", ("col", "r", 5))))
    with pytest.raises(ValueError, match="unknown condition function"):
        join_processor(join_spec("inner", residual=("call", "like", ("lit", 1), ("lit", 1))))
    with pytest.raises(ValueError, match="semi/anti"):
        SemiAntiJoinProcessor(join_spec("inner"))
    with pytest.raises(ValueError, match="inner/left/right/full"):
        RegularJoinProcessor(join_spec("anti"))
