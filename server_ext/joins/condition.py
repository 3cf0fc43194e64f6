"""Residual join conditions: the tuple tree of ``spec.py`` compiled into Python closures.

Every node compiles once into a function ``(left_row, right_row) -> value``; SQL NULL is
``None`` and propagates as SQL's three-valued logic says (``and`` / ``or`` can still decide
with an unknown operand). :func:`compile_condition` wraps the root so that a row pair
matches only when the tree evaluates to exactly ``True``.

Arithmetic follows Flink where Python differs: ``/`` on two integers truncates toward zero,
``mod`` takes the dividend's sign, and a zero divisor gives NULL (Flink would fail the job;
an operator that runs forever should not die on one row).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

Record = tuple  # a stored row: a plain tuple of field values
Fn = Callable[[Record, Record], Any]
Predicate = Callable[[Record, Record], bool]


def compile_condition(tree: tuple | None) -> Predicate | None:
    """The tree as a predicate over ``(left_row, right_row)``; None when there is no tree."""
    if tree is None:
        return None
    fn = compile_expr(tree)
    return lambda lr, rr: fn(lr, rr) is True


def compile_expr(tree: tuple) -> Fn:
    """One node (and its children) as a closure returning the node's SQL value."""
    if not isinstance(tree, tuple) or not tree:
        raise ValueError(f"condition node must be a non-empty tuple, got {tree!r}")
    tag = tree[0]
    if tag == "col":
        _, side, index = tree
        if side == "l":
            return lambda lr, rr: lr[index]
        if side == "r":
            return lambda lr, rr: rr[index]
        raise ValueError(f"column side must be 'l' or 'r', got {side!r}")
    if tag == "lit":
        value = tree[1]
        return lambda lr, rr: value
    if tag == "call":
        name, args = tree[1], [compile_expr(a) for a in tree[2:]]
        build = _CALLS.get(name)
        if build is None:
            raise ValueError(f"unknown condition function {name!r}; known: {sorted(_CALLS)}")
        return build(args)
    raise ValueError(f"unknown condition node {tag!r} in {tree!r}")


def _arity(args: list[Fn], n: int, name: str) -> None:
    if len(args) != n:
        raise ValueError(f"{name} takes {n} argument(s), got {len(args)}")


def _strict2(name: str, op: Callable[[Any, Any], Any]) -> Callable[[list[Fn]], Fn]:
    """A binary function that is NULL when either operand is NULL."""

    def build(args: list[Fn]) -> Fn:
        _arity(args, 2, name)
        fa, fb = args

        def fn(lr: Record, rr: Record) -> Any:
            a = fa(lr, rr)
            if a is None:
                return None
            b = fb(lr, rr)
            if b is None:
                return None
            return op(a, b)

        return fn

    return build


def _strict1(name: str, op: Callable[[Any], Any]) -> Callable[[list[Fn]], Fn]:
    def build(args: list[Fn]) -> Fn:
        _arity(args, 1, name)
        (fa,) = args

        def fn(lr: Record, rr: Record) -> Any:
            a = fa(lr, rr)
            return None if a is None else op(a)

        return fn

    return build


def _and(args: list[Fn]) -> Fn:
    if len(args) < 2:
        raise ValueError(f"and takes at least 2 arguments, got {len(args)}")

    def fn(lr: Record, rr: Record) -> bool | None:
        unknown = False
        for f in args:
            v = f(lr, rr)
            if v is False:  # False decides whatever the rest is
                return False
            if v is None:
                unknown = True
        return None if unknown else True

    return fn


def _or(args: list[Fn]) -> Fn:
    if len(args) < 2:
        raise ValueError(f"or takes at least 2 arguments, got {len(args)}")

    def fn(lr: Record, rr: Record) -> bool | None:
        unknown = False
        for f in args:
            v = f(lr, rr)
            if v is True:
                return True
            if v is None:
                unknown = True
        return None if unknown else False

    return fn


def _is_null(args: list[Fn]) -> Fn:
    _arity(args, 1, "is_null")
    (fa,) = args
    return lambda lr, rr: fa(lr, rr) is None


def _is_not_null(args: list[Fn]) -> Fn:
    _arity(args, 1, "is_not_null")
    (fa,) = args
    return lambda lr, rr: fa(lr, rr) is not None


def _not_distinct(args: list[Fn]) -> Fn:
    _arity(args, 2, "is_not_distinct_from")
    fa, fb = args

    def fn(lr: Record, rr: Record) -> bool:
        a, b = fa(lr, rr), fb(lr, rr)
        if a is None or b is None:
            return a is None and b is None
        return bool(a == b)

    return fn


def _coalesce(args: list[Fn]) -> Fn:
    if not args:
        raise ValueError("coalesce takes at least 1 argument")

    def fn(lr: Record, rr: Record) -> Any:
        for f in args:
            v = f(lr, rr)
            if v is not None:
                return v
        return None

    return fn


def _if(args: list[Fn]) -> Fn:
    _arity(args, 3, "if")
    fc, ft, fe = args
    return lambda lr, rr: ft(lr, rr) if fc(lr, rr) is True else fe(lr, rr)


def _numeric(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Python refuses Decimal with float; SQL widens to DOUBLE."""

    def fn(a: Any, b: Any) -> Any:
        if type(a) is not type(b):
            if isinstance(a, Decimal) and isinstance(b, float):
                a = float(a)
            elif isinstance(b, Decimal) and isinstance(a, float):
                b = float(b)
        return op(a, b)

    return fn


def _divide(a: Any, b: Any) -> Any:
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        q = abs(a) // abs(b)  # integer division truncates toward zero, as in Flink
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _mod(a: Any, b: Any) -> Any:
    if b == 0:
        return None
    m = abs(a) % abs(b)  # the result takes the dividend's sign, as in SQL
    return m if a >= 0 else -m


_CALLS: dict[str, Callable[[list[Fn]], Fn]] = {
    "=": _strict2("=", _numeric(operator.eq)),
    "<>": _strict2("<>", _numeric(operator.ne)),
    "<": _strict2("<", _numeric(operator.lt)),
    "<=": _strict2("<=", _numeric(operator.le)),
    ">": _strict2(">", _numeric(operator.gt)),
    ">=": _strict2(">=", _numeric(operator.ge)),
    "and": _and,
    "or": _or,
    "not": _strict1("not", operator.not_),
    "is_null": _is_null,
    "is_not_null": _is_not_null,
    "is_not_distinct_from": _not_distinct,
    "+": _strict2("+", _numeric(operator.add)),
    "-": _strict2("-", _numeric(operator.sub)),
    "*": _strict2("*", _numeric(operator.mul)),
    "/": _strict2("/", _numeric(_divide)),
    "mod": _strict2("mod", _numeric(_mod)),
    "neg": _strict1("neg", operator.neg),
    "abs": _strict1("abs", abs),
    "upper": _strict1("upper", str.upper),
    "lower": _strict1("lower", str.lower),
    "coalesce": _coalesce,
    "if": _if,
}

#: The function names a condition tree may call.
FUNCTIONS = frozenset(_CALLS)


def column_refs(tree: tuple | None) -> Iterator[tuple[str, int]]:
    """The ``(side, index)`` of every column the tree reads."""
    if tree is None or not isinstance(tree, tuple) or not tree:
        return
    if tree[0] == "col":
        yield tree[1], tree[2]
    elif tree[0] == "call":
        for arg in tree[2:]:
            yield from column_refs(arg)


def check_residual(residual: tuple | None, left_width: int, right_width: int) -> None:
    """Fail at plan time, on the client: ``residual`` reads fields that exist (``left_width``
    and ``right_width`` of them) and compiles (known functions, right arities).

    >>> check_residual(("call", "=", ("col", "l", 0), ("col", "r", 0)), 1, 1)
    >>> check_residual(("call", "=", ("col", "l", 3), ("col", "r", 0)), 2, 1)
    Traceback (most recent call last):
    ...
    ValueError: residual refers to field 3 of the l row (2)
    """
    widths = {"l": left_width, "r": right_width}
    for side, index in column_refs(residual):
        if not 0 <= index < widths[side]:
            raise ValueError(f"residual refers to field {index} of the {side} row ({widths[side]})")
    compile_condition(residual)
