"""What the demo and the examples print, read back: boxed result tables (``TableResult.print``)
and changelog lines (``+I[...]``), for tests that check their output."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from tests.reference import eq, nested_loop_join

CHANGE = re.compile(r"^\s*([+-][IUD])\[(.*)\]$")
BORDER = re.compile(r"^\+(-+\+)+$")


def show(values: Sequence[Any]) -> str:
    """A row's values as a changelog line prints them (``Row.__repr__``)."""
    return ", ".join("<NULL>" if v is None else str(v) for v in values)


def cell(value: Any) -> str:
    """A value as a printed table shows it (decimals with their scale, as given)."""
    return "<NULL>" if value is None else str(value)


def changes(lines: Sequence[str]) -> list[tuple[str, str]]:
    """The changelog lines among ``lines``: (kind, the row's printed values)."""
    return [(m[1], m[2]) for line in lines if (m := CHANGE.match(line))]


def tables(text: str) -> list[tuple[tuple[str, ...], list[tuple[str, ...]]]]:
    """Every boxed table in ``text``, in order: its header and its rows, cells stripped.

    >>> tables("+---+\\n| a |\\n+---+\\n| 1 |\\n+---+\\n1 row in set")
    [(('a',), [('1',)])]
    """
    found = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not (BORDER.match(lines[i]) and i + 2 < len(lines) and BORDER.match(lines[i + 2])):
            i += 1
            continue
        header = _cells(lines[i + 1])
        rows = []
        i += 3
        while i < len(lines) and lines[i].startswith("|"):
            rows.append(_cells(lines[i]))
            i += 1
        found.append((header, rows))
        i += 1
    return found


def _cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in line.strip().strip("|").split("|"))


def money(amount: int, price: str) -> str:
    """``amount * price`` as DECIMAL(10, 2) arithmetic prints it (scale 2)."""
    return str((amount * Decimal(price)).quantize(Decimal("0.01")))


def sections(out: str, pattern: str = r"^(\d+)\. ") -> dict[str, list[str]]:
    """The printed lines under each numbered heading (``1. Regular join ...``), by number."""
    parts: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        if m := re.match(pattern, line):
            current = m[1]
            parts[current] = []
        elif current is not None:
            parts[current].append(line)
    return parts


def check_left_join_steps(
    steps: Sequence[tuple[str, str, Sequence[dict[str, Any]]]], printed: Sequence[Sequence[str]]
) -> None:
    """Orders LEFT JOIN Product (on ``product_id = id``) over changelog files: after each step
    (title, table, rows with their kind in ``op``), the changes printed so far, applied in
    order, give the join of the tables' current rows; no change retracts a row not there."""
    assert len(printed) == len(steps), printed
    current: dict[str, dict[Any, tuple[Any, ...]]] = {"Orders": {}, "Product": {}}
    result: Counter[str] = Counter()
    for (title, table, rows), lines in zip(steps, printed, strict=True):
        for r in rows:
            values = tuple(v for k, v in r.items() if k != "op")
            if r["op"] in ("+I", "+U"):
                current[table][values[0]] = values
            else:
                del current[table][values[0]]
        emitted = changes(lines)
        assert emitted, f"step {title!r} printed no change"
        for kind, row in emitted:
            if kind in ("+I", "+U"):
                result[row] += 1
            else:
                assert result[row] > 0, f"{kind}[{row}] retracts a row the result does not hold"
                result[row] -= 1
        want = nested_loop_join(
            list(current["Orders"].values()),
            list(current["Product"].values()),
            "left",
            lambda o, p: eq(o[1], p[0]),
            widths=(3, 3),
        )
        assert +result == Counter(show(w) for w in want), title
    # The second step retracts order 1's padded row: the changelog really has retractions.
    assert ("-D", show((1, 10, 3, None, None, None))) in changes(printed[1])


def revenue_after_steps(
    steps: Sequence[tuple[str, Sequence[tuple[str, int, int, int]]]], country: dict[int, str]
) -> list[list[tuple[str, int, int]]]:
    """The jdbc sink's revenue table after each step of order changes (``(op, order,
    customer, amount)``, +I/+U upsert an order, -D deletes it): ``(country, revenue, orders)``
    per country, sorted; orders of a customer without a country are not counted (the lookup
    join's inner side)."""
    orders: dict[int, tuple[int, int]] = {}
    tables = []
    for _title, changes in steps:
        for op, order, customer, amount in changes:
            if op in ("+I", "+U"):
                orders[order] = (customer, amount)
            elif op == "-D":
                del orders[order]
        revenue: Counter[str] = Counter()
        counts: Counter[str] = Counter()
        for customer, amount in orders.values():
            if customer in country:
                revenue[country[customer]] += amount
                counts[country[customer]] += 1
        tables.append(sorted((c, revenue[c], counts[c]) for c in revenue))
    return tables
