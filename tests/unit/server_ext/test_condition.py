"""Residual conditions: SQL three-valued logic over (left_row, right_row)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from server_ext.joins.condition import column_refs, compile_condition, compile_expr

T, F, U = True, False, None


def lit(v: Any) -> tuple:
    return ("lit", v)


def call(name: str, *args: tuple) -> tuple:
    return ("call", name, *args)


def ev(tree: tuple, left: tuple = (), right: tuple = ()) -> Any:
    return compile_expr(tree)(left, right)


@pytest.mark.parametrize(
    ("a", "b", "and_", "or_"),
    [
        (T, T, T, T),
        (T, F, F, T),
        (T, U, U, T),
        (F, F, F, F),
        (F, U, F, U),
        (U, F, F, U),
        (U, T, U, T),
        (U, U, U, U),
    ],
)
def test_and_or_truth_tables(a: Any, b: Any, and_: Any, or_: Any) -> None:
    assert ev(call("and", lit(a), lit(b))) is and_
    assert ev(call("or", lit(a), lit(b))) is or_


def test_and_or_take_more_than_two_operands() -> None:
    assert ev(call("and", lit(T), lit(U), lit(F))) is F
    assert ev(call("or", lit(F), lit(U), lit(T))) is T
    assert ev(call("and", lit(T), lit(T), lit(U))) is U


def test_not_and_null_tests() -> None:
    assert ev(call("not", lit(T))) is F
    assert ev(call("not", lit(U))) is U
    assert ev(call("is_null", lit(U))) is T
    assert ev(call("is_not_null", lit(U))) is F
    assert ev(call("is_not_null", lit(0))) is T


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        ("=", 1, 1, T),
        ("=", 1, 2, F),
        ("=", 1, U, U),
        ("<>", 1, 2, T),
        ("<>", U, 2, U),
        ("<", 1, 2, T),
        ("<", 2, 1, F),
        ("<=", 2, 2, T),
        (">", "b", "a", T),
        (">=", U, U, U),
        ("=", Decimal("1.5"), 1.5, T),  # DECIMAL vs DOUBLE widens instead of failing
        ("is_not_distinct_from", U, U, T),
        ("is_not_distinct_from", 1, U, F),
        ("is_not_distinct_from", 1, 1, T),
    ],
)
def test_comparisons(op: str, a: Any, b: Any, expected: Any) -> None:
    assert ev(call(op, lit(a), lit(b))) is expected


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        (call("+", lit(2), lit(3)), 5),
        (call("-", lit(2), lit(U)), U),
        (call("*", lit(2.5), lit(2)), 5.0),
        (call("/", lit(7), lit(2)), 3),  # integer division truncates toward zero
        (call("/", lit(-7), lit(2)), -3),
        (call("/", lit(7.0), lit(2)), 3.5),
        (call("/", lit(1), lit(0)), U),
        (call("mod", lit(-7), lit(3)), -1),  # the dividend's sign
        (call("mod", lit(7), lit(-3)), 1),
        (call("mod", lit(7), lit(0)), U),
        (call("neg", lit(4)), -4),
        (call("abs", lit(-4)), 4),
        (call("upper", lit("aB")), "AB"),
        (call("lower", lit(U)), U),
        (call("coalesce", lit(U), lit(U), lit(3)), 3),
        (call("coalesce", lit(U)), U),
        (call("if", lit(T), lit(1), lit(2)), 1),
        (call("if", lit(U), lit(1), lit(2)), 2),
    ],
)
def test_scalar_functions(tree: tuple, expected: Any) -> None:
    assert ev(tree) == expected
    assert type(ev(tree)) is type(expected)


def test_columns_read_the_left_and_right_rows() -> None:
    tree = call(
        "and", call("=", ("col", "l", 0), ("col", "r", 1)), call("<", ("col", "l", 1), lit(10))
    )
    assert ev(tree, (1, 5), ("x", 1)) is T
    assert ev(tree, (1, 50), ("x", 1)) is F
    assert ev(tree, (1, None), ("x", 1)) is U
    assert list(column_refs(tree)) == [("l", 0), ("r", 1), ("l", 1)]


def test_the_predicate_matches_only_on_true() -> None:
    pred = compile_condition(call(">", ("col", "l", 0), ("col", "r", 0)))
    assert pred is not None
    assert pred((2,), (1,)) is True
    assert pred((1,), (2,)) is False
    assert pred((None,), (2,)) is False  # unknown is not a match
    assert compile_condition(None) is None


@pytest.mark.parametrize(
    "tree",
    [
        ("call", "like", lit(1), lit(2)),
        ("call", "=", lit(1)),
        ("call", "and", lit(True)),
        ("col", "x", 0),
        ("nope",),
        (),
    ],
)
def test_malformed_trees_fail_at_compile_time(tree: tuple) -> None:
    with pytest.raises(ValueError):
        compile_expr(tree)
