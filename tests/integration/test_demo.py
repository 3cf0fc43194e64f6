"""The streaming part of ``python -m tableapi`` (tableapi/demo.py, parts 4-7) on the test
server: its printed changelogs are checked against the same joins computed in plain Python,
and part 7's printed database table after each step against the same aggregate."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tableapi import demo
from tableapi.result import RowKind
from tests.reference import eq, nested_loop_join

CHANGE = re.compile(r"^\s*([+-][IUD])\[(.*)\]$")
DAY = "2026-11-23"


def show(values: tuple) -> str:
    """A row's values as the demo prints them (``Row.__repr__``)."""
    return ", ".join("<NULL>" if v is None else str(v) for v in values)


def changes(lines: list[str]) -> list[tuple[str, str]]:
    return [(m[1], m[2]) for line in lines if (m := CHANGE.match(line))]


def sections(out: str) -> dict[str, list[str]]:
    """The printed lines of parts 4 to 7, by part number."""
    parts: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        if m := re.match(r"^([4-7])\. Streaming", line):
            current = m[1]
            parts[current] = []
        elif current is not None:
            parts[current].append(line)
    return parts


def test_demo_streaming_part_prints_the_joins_changelogs(
    server_url: str, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo.streaming_joins(server_url, shared_dir)
    parts = sections(capsys.readouterr().out)
    assert sorted(parts) == ["4", "5", "6", "7"], parts

    check_changelog_join(parts["4"])
    check_aggregated_join(parts["4"])

    # 5. Event time: each order with the rate of the latest version at or before its time.
    want = []
    for amount, currency, t in demo.TEMPORAL_ORDERS:
        versions = [(f, r) for c, r, f in demo.TEMPORAL_RATES if c == currency and f <= t]
        if versions:
            rate = max(versions)[1]
            want.append(("+I", show((f"{DAY} {t}:00.000", amount, currency, rate, amount * rate))))
    assert Counter(changes(parts["5"])) == Counter(want)

    # 6. Lookup join, left: every order, padded when its customer is not in the table.
    joined = nested_loop_join(
        demo.LOOKUP_ORDERS, demo.LOOKUP_CUSTOMERS, "left", lambda o, c: eq(o[1], c[0])
    )
    want = [("+I", show((o, c, name, country))) for o, c, _, name, country in joined]
    assert Counter(changes(parts["6"])) == Counter(want)
    assert "LookupJoin(table=[default_catalog.default_database.Customers]" in "\n".join(parts["6"])
    metrics_line = next(line for line in parts["6"] if "hitCount=" in line)
    metrics = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", metrics_line)}
    keys = [c for _, c in demo.LOOKUP_ORDERS if c is not None]
    # SHUFFLE_HASH: each key is looked up by one task, so its first row misses, the rest hit.
    assert metrics["missCount"] == len(set(keys))
    assert metrics["hitCount"] == len(keys) - len(set(keys))
    assert metrics["numLoadFailures"] == 0
    assert 1 <= metrics["numQueries"] <= len(set(keys))

    # 7. The SQLite table after each step: revenue and orders per country of the orders
    # whose customer is in the table (an inner lookup join), one row per country.
    printed = [line for line in parts["7"] if line.startswith("   the revenue table: ")]
    assert len(printed) == len(demo.SINK_STEPS)
    country = {c: k for c, _, k in demo.LOOKUP_CUSTOMERS}
    orders: dict[int, tuple[int, int]] = {}
    for (_title, steps), line in zip(demo.SINK_STEPS, printed, strict=True):
        for op, order, customer, amount in steps:
            if op in ("+I", "+U"):
                orders[order] = (customer, amount)
            elif op == "-D":
                del orders[order]
        totals: dict[str, tuple[int, int]] = {}
        for customer, amount in orders.values():
            if customer in country:
                revenue, n = totals.get(country[customer], (0, 0))
                totals[country[customer]] = (revenue + amount, n + 1)
        want = sorted((c, revenue, n) for c, (revenue, n) in totals.items())
        assert line == f"   the revenue table: {want}", _title


def check_changelog_join(lines: list[str]) -> None:
    """Part 4: after each step, the changes printed so far, applied in order, give the left
    join of the tables' current rows, and no change retracts a row that is not there."""
    steps: list[list[str]] = []
    for line in lines:
        if line.startswith("-- step "):
            steps.append([])
        elif line.startswith("-- the result now"):
            break
        elif steps:
            steps[-1].append(line)
    assert len(steps) == len(demo.CHANGELOG_STEPS)
    tables: dict[str, dict[int, tuple]] = {"Orders": {}, "Product": {}}
    result: Counter[str] = Counter()
    for (_title, table, rows), printed in zip(demo.CHANGELOG_STEPS, steps, strict=True):
        for r in rows:
            values = tuple(v for k, v in r.items() if k != "op")
            if r["op"] in ("+I", "+U"):
                tables[table][values[0]] = values
            else:
                del tables[table][values[0]]
        emitted = changes(printed)
        assert emitted, f"step {_title!r} printed no change"
        for kind, row in emitted:
            if kind in (RowKind.INSERT.short_string, RowKind.UPDATE_AFTER.short_string):
                result[row] += 1
            else:
                assert result[row] > 0, f"{kind}[{row}] retracts a row the result does not hold"
                result[row] -= 1
        want = nested_loop_join(
            list(tables["Orders"].values()),
            list(tables["Product"].values()),
            "left",
            lambda o, p: eq(o[1], p[0]),
            widths=(3, 3),
        )
        assert +result == Counter(show(w) for w in want), _title
    # Step 2 retracts order 1's padded row: the changelog really has retractions.
    assert ("-D", show((1, 10, 3, None, None, None))) in changes(steps[1])


def check_aggregated_join(lines: list[str]) -> None:
    """Part 4's join aggregated per product name: its changelog, applied, gives COUNT(*) and
    SUM(amount) per name of the final join; a -U/-D retracts a row that is there; a name's
    count changing shows as -U/+U (Flink's GroupAggregate)."""
    start = lines.index(
        "-- the join aggregated per product name (COUNT(*), SUM(amount)); its changelog:"
    )
    printed = lines[start + 1 : lines.index("-- the aggregate now:")]
    result: Counter[str] = Counter()
    for kind, row in changes(printed):
        if kind in ("+I", "+U"):
            result[row] += 1
        else:
            assert result[row] > 0, f"{kind}[{row}] retracts a row the aggregate does not hold"
            result[row] -= 1
    orders: dict[int, tuple] = {}
    products: dict[int, tuple] = {}
    for _title, table, rows in demo.CHANGELOG_STEPS:
        target = orders if table == "Orders" else products
        for r in rows:
            values = tuple(v for k, v in r.items() if k != "op")
            if r["op"] in ("+I", "+U"):
                target[values[0]] = values
            else:
                del target[values[0]]
    joined = nested_loop_join(
        list(orders.values()), list(products.values()), "left", lambda o, p: eq(o[1], p[0]),
        widths=(3, 3),
    )  # fmt: skip
    per_name: dict = {}
    for row in joined:
        n, total = per_name.get(row[4], (0, 0))
        per_name[row[4]] = (n + 1, total + row[2])
    assert +result == Counter(show((name, n, total)) for name, (n, total) in per_name.items())
    assert {"-U", "+U", "-D"} <= {kind for kind, _ in changes(printed)}
