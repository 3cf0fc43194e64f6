"""SemiAntiJoinProcessor (Flink's StreamingSemiAntiJoinOperator): exact changelogs."""

from __future__ import annotations

import pytest

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

LESS = ("call", "<", ("col", "l", 1), ("col", "r", 1))  # l.v < r.w
INTS_L = (("lk", "BIGINT"), ("lv", "BIGINT"))
INTS_R = (("rk", "BIGINT"), ("rw", "BIGINT"))


def test_semi_emits_a_left_row_while_it_has_a_match() -> None:
    h = JoinHarness(join_spec("semi"))
    assert h.process(L("+I", 1, "a")) == []
    assert h.process(R("+I", 1, "x")) == [("+I", 1, "a")]
    assert h.process(R("+I", 1, "y")) == []
    assert h.process(R("-D", 1, "x")) == []
    assert h.process(R("-D", 1, "y")) == [("-D", 1, "a")]
    # The right row's kind is forwarded when it gives a left row its first match.
    assert h.process(R("+U", 1, "z")) == [("+U", 1, "a")]
    assert h.process(L("+I", 1, "b")) == [("+I", 1, "b")]
    # A left row is emitted with its own kind.
    assert h.process(L("-U", 1, "a"), L("+U", 1, "c")) == [("-U", 1, "a"), ("+U", 1, "c")]
    assert h.process(R("-U", 1, "z")) == [("-U", 1, "b"), ("-U", 1, "c")]
    assert h.state(1) == ({(1, "b"): [(1, "b"), 1, 0, -1], (1, "c"): [(1, "c"), 1, 0, -1]}, {})


def test_anti_emits_a_left_row_while_it_has_no_match() -> None:
    h = JoinHarness(join_spec("anti"))
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a")]
    assert h.process(R("+I", 1, "x")) == [("-D", 1, "a")]
    assert h.process(R("+I", 1, "x")) == []  # a second copy of x
    assert h.state(1) == ({(1, "a"): [(1, "a"), 1, 2, -1]}, {(1, "x"): [(1, "x"), 2, -1, -1]})
    assert h.process(R("-D", 1, "x")) == []
    assert h.process(R("-D", 1, "x")) == [("+I", 1, "a")]
    assert h.process(R("+U", 1, "y")) == [("-D", 1, "a")]  # anti: always -D / +I
    assert h.process(R("-U", 1, "y")) == [("+I", 1, "a")]
    assert h.process(L("-D", 1, "a")) == [("-D", 1, "a")]
    assert h.state(1) is None
    # A retraction that is not in state is still emitted, as in Flink.
    assert h.process(L("-D", 1, "zz")) == [("-D", 1, "zz")]


def test_anti_duplicate_left_rows_are_emitted_per_copy() -> None:
    h = JoinHarness(join_spec("anti"))
    assert h.process(L("+I", 1, "a"), L("+I", 1, "a")) == [("+I", 1, "a")] * 2
    assert h.process(R("+I", 1, "x")) == [("-D", 1, "a")] * 2
    assert h.process(L("-D", 1, "a")) == []  # still matched: nothing was out
    assert h.process(R("-D", 1, "x")) == [("+I", 1, "a")]


def test_semi_duplicate_right_rows_are_counted_matches() -> None:
    h = JoinHarness(join_spec("semi"))
    assert h.process(R("+I", 1, "x"), R("+I", 1, "x")) == []
    assert h.process(L("+I", 1, "a")) == [("+I", 1, "a")]
    assert h.state(1)[0] == {(1, "a"): [(1, "a"), 1, 2, -1]}
    assert h.process(R("-D", 1, "x")) == []
    assert h.process(R("-D", 1, "x")) == [("-D", 1, "a")]


def test_semi_join_key_contains_unique_key_left_has_unique_key_right() -> None:
    right = side(HUK, (("rk", "BIGINT"), ("rid", "BIGINT"), ("rv", "STRING")), unique_key=(1,))
    h = JoinHarness(join_spec("semi", side(JKCUK), right))
    assert h.process(L("+I", 1, "a")) == []
    assert h.process(R("+I", 1, 10, "x")) == [("+I", 1, "a")]
    assert h.process(R("+I", 1, 11, "y")) == []
    assert h.process(R("-D", 1, 10, "x")) == []
    assert h.process(L("-U", 1, "a"), L("+U", 1, "b")) == [("-U", 1, "a"), ("+U", 1, "b")]
    assert h.process(R("-D", 1, 11, "y")) == [("-D", 1, "b")]
    assert h.state(1) == ({(): [(1, "b"), 1, 0, -1]}, {})


def test_semi_unique_key_replacement_counts_again_as_in_flink() -> None:
    # StreamingSemiAntiJoinOperator has no "additional match" check: an accumulate that
    # replaces a right row (same unique key, no retraction) counts as a new match.
    left = side(HUK, (("id", "BIGINT"), ("k", "BIGINT"), ("v", "STRING")), unique_key=(0,))
    h = JoinHarness(join_spec("semi", left, side(JKCUK, RIGHT_FIELDS)), left_key=(1,))
    assert h.process(L("+I", 7, 1, "a"), R("+I", 1, "x")) == [("+I", 7, 1, "a")]
    assert h.process(R("+I", 1, "y")) == []
    assert h.state(1)[0] == {7: [(7, 1, "a"), 1, 2, -1]}


@pytest.mark.parametrize("kind", ["semi", "anti"])
def test_null_keys_never_match(kind: str) -> None:
    h = JoinHarness(join_spec(kind))
    expected = kind == "anti"
    assert h.process(L("+I", None, "a")) == ([("+I", None, "a")] if expected else [])
    assert h.process(R("+I", None, "x")) == []
    assert h.process(L("-D", None, "a")) == ([("-D", None, "a")] if expected else [])
    assert h.state(None) is None


def test_semi_null_safe_key_matches_nulls() -> None:
    h = JoinHarness(join_spec("semi", null_safe=(True,)))
    assert h.process(L("+I", None, "a"), R("+I", None, "x")) == [("+I", None, "a")]


def test_semi_and_anti_apply_the_residual() -> None:
    semi = JoinHarness(join_spec("semi", side(fields=INTS_L), side(fields=INTS_R), residual=LESS))
    anti = JoinHarness(join_spec("anti", side(fields=INTS_L), side(fields=INTS_R), residual=LESS))
    assert semi.process(L("+I", 1, 5)) == []
    assert anti.process(L("+I", 1, 5)) == [("+I", 1, 5)]
    for h in (semi, anti):
        assert h.process(R("+I", 1, 3), R("+I", 1, None)) == []
    assert semi.process(R("+I", 1, 9)) == [("+I", 1, 5)]
    assert anti.process(R("+I", 1, 9)) == [("-D", 1, 5)]
    assert semi.process(L("+I", 1, 10)) == []
    assert anti.process(L("+I", 1, 10)) == [("+I", 1, 10)]
    assert semi.process(R("-D", 1, 9)) == [("-D", 1, 5)]
    assert anti.process(R("-D", 1, 9)) == [("+I", 1, 5)]


def test_ttl_semi_and_anti() -> None:
    ttl = {"ttl_ms": 1000}
    semi = JoinHarness(join_spec("semi", side(**ttl), side(fields=RIGHT_FIELDS, **ttl)))
    assert semi.process(R("+I", 1, "x")) == []
    semi.advance(1500)
    assert semi.process(L("+I", 1, "a")) == []  # x has expired

    anti = JoinHarness(join_spec("anti", side(**ttl), side(fields=RIGHT_FIELDS, **ttl)))
    assert anti.process(L("+I", 1, "a")) == [("+I", 1, "a")]
    anti.advance(500)
    assert anti.process(R("+I", 1, "x")) == [("-D", 1, "a")]  # a is rewritten (its count)
    anti.advance(1200)
    assert anti.process(R("-D", 1, "x")) == [("+I", 1, "a")]  # a and x are alive
    anti.advance(2300)
    assert anti.process(R("+I", 1, "y")) == []  # a (rewritten at 1200) has expired
    assert anti.state(1) == ({}, {(1, "y"): [(1, "y"), 1, -1, 2300]})
