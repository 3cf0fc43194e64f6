"""The README's first command, ``python -m tableapi``, run as the README says: a process of its
own that starts an embedded server (here with port 15002 taken, as on a machine where another
server runs: the embedded one must pick a free port). What it prints is checked: parts 1-3's
tables against the same queries computed in plain Python, parts 4-7's changelogs against the
same joins, part 7's database table after each step against the same aggregate."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

from tableapi import demo
from tests.integration.printed import (
    changes,
    check_left_join_steps,
    money,
    revenue_after_steps,
    sections,
    show,
    tables,
)
from tests.reference import eq, nested_loop_join

ROOT = Path(__file__).resolve().parents[2]
DAY = "2026-11-23"
# The rows tableapi/demo.py writes for parts 1-3.
ORDERS = [(1, 10, 3), (2, 11, 1), (3, 10, 2), (4, 12, 5), (5, 99, 1)]
PRODUCTS = [(10, "Apple", "0.50"), (11, "Pear", "0.75"), (12, "Fig", "1.20"), (13, "Kiwi", "0.30")]
SHIP_ORDERS = [(1, "10:00"), (2, "10:30"), (3, "11:00"), (4, "12:00")]
SHIPMENTS = [(1, "11:00"), (2, "15:00"), (3, "15:00"), (4, "11:30")]
T2 = [(1, "apple"), (2, "pear")]


def readme_demo_command() -> list[str]:
    """The README's first command's last step (after the install), as an argument list."""
    text = (ROOT / "README.md").read_text()
    block = text[text.index("# install, then run the demo") :]
    line = next(line for line in block.splitlines() if not line.startswith("#"))
    command = line.split("&&")[-1].split()
    assert command == [".venv/bin/python", "-m", "tableapi"], line
    return [sys.executable, *command[1:]]  # the venv's python runs the tests


@contextlib.contextmanager
def port_15002_taken() -> Iterator[None]:
    """Spark Connect's default port held (or already held by someone else: the same)."""
    blocker = socket.socket()
    try:
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        with contextlib.suppress(OSError):
            blocker.bind(("0.0.0.0", 15002))
            blocker.listen()
        yield
    finally:
        blocker.close()


def test_the_readme_demo_command_prints_right_results() -> None:
    # As a user runs it: none of the test run's TABLEAPI_ settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEAPI_")}
    with port_15002_taken():
        done = subprocess.run(
            readme_demo_command(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,  # catches a hang only: the demo takes about a minute
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Starting an embedded Spark Connect server" in done.stdout
    check_demo_output(done.stdout)


def check_demo_output(out: str) -> None:
    """All eight parts printed, each one's results right, and the run's end."""
    parts = sections(out)
    assert sorted(parts) == [str(n) for n in range(1, 9)], sorted(parts)
    check_batch_parts(parts)
    check_streaming_parts(parts)
    assert re.search(r"^Done in \d+ s\.", out, re.M), out[-3000:]


def check_batch_parts(parts: dict[str, list[str]]) -> None:
    # 1. Inner join (order 5 has no product), left join (padded), the BROADCAST hint.
    inner, left = tables("\n".join(parts["1"]))
    price = {p: (name, cost) for p, name, cost in PRODUCTS}
    want_inner = [(str(o), price[p][0], money(n, price[p][1])) for o, p, n in ORDERS if p in price]
    assert inner == (("order_id", "name", "total"), want_inner)
    want_left = [
        (str(o), str(p), *((price[p][0], price[p][1]) if p in price else ("<NULL>", "<NULL>")))
        for o, p, _ in ORDERS
    ]
    assert left == (("order_id", "product_id", "name", "price"), want_left)
    text = "\n".join(parts["1"])
    assert "hints=[[BROADCAST right:Product]]" in text and "BroadcastHashJoin" in text

    # 2. Interval join: shipped within 4 hours of the order, bounds included.
    (joined,) = tables("\n".join(parts["2"]))
    at = lambda hh_mm: datetime.fromisoformat(f"2024-01-01 {hh_mm}")  # noqa: E731
    shipped = [
        (str(o), f"{at(ot)}.000", str(s), f"{at(st)}.000")
        for o, ot in SHIP_ORDERS
        for s, st in SHIPMENTS
        if o == s and at(st) - timedelta(hours=4) <= at(ot) <= at(st)
    ]
    assert joined == (("order_id", "o_rowtime", "s_order_id", "s_rowtime"), shipped)
    assert [r[0] for r in shipped] == ["1", "3"]

    # 3. Computed columns read, and written: the sink's files hold the physical columns only.
    read, written = tables("\n".join(parts["3"]))
    assert read[0] == ("a", "b", "e", "e_upper", "pt")
    assert [r[:4] for r in read[1]] == [(str(a), str(a + 1), e, e.upper()) for a, e in T2]
    assert len({r[4] for r in read[1]}) == 1  # PROCTIME(): the query's time, one per batch
    assert "JSON keys in the written files: ['a', 'e']" in parts["3"]
    assert written == (
        ("a", "b", "e", "e_upper"),
        [(str(10 * a), str(10 * a + 1), e.upper(), e.upper()) for a, e in T2],
    )


def check_streaming_parts(parts: dict[str, list[str]]) -> None:
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
    country = {c: k for c, _, k in demo.LOOKUP_CUSTOMERS}
    tables = revenue_after_steps(demo.SINK_STEPS, country)
    assert len(printed) == len(tables)
    for (title, _), line, table in zip(demo.SINK_STEPS, printed, tables, strict=True):
        assert line == f"   the revenue table: {table}", title

    check_windows(parts["8"])


def check_windows(lines: list[str]) -> None:
    """Part 8: clicks per user and 10-minute TUMBLE window (+I only, one row per window and
    user), the Table API's twin agreeing, and the window join of clicks and purchases."""

    def window(hh_mm: str) -> datetime:
        t = datetime.fromisoformat(f"{DAY} {hh_mm}")
        return t - timedelta(minutes=t.minute % 10)

    at = next(i for i, line in enumerate(lines) if line.startswith("-- a window join"))
    counts = Counter((window(t), u) for u, _, t in demo.WINDOW_CLICKS)
    ms = ".000"
    want = [
        ("+I", show((f"{w}{ms}", f"{w + timedelta(minutes=10)}{ms}", u, n)))
        for (w, u), n in counts.items()
    ]
    assert Counter(changes(lines[:at])) == Counter(want)
    assert f"   {len(counts)} rows, the same windows and counts" in lines
    joined = [
        ("+I", show((u, f"{window(t)}{ms}", url, amount)))
        for u, url, t in demo.WINDOW_CLICKS
        for pu, amount, pt in demo.WINDOW_PURCHASES
        if u == pu and window(t) == window(pt)
    ]
    assert len(joined) == 4  # alice's two clicks of 10:00-10:10, bob's and carol's one each
    assert Counter(changes(lines[at:])) == Counter(joined)
    assert any(line.strip().startswith("WindowJoin(leftWindow=[TUMBLE(") for line in lines)


def check_changelog_join(lines: list[str]) -> None:
    """Part 4's changes, step by step (each step's lines follow its ``-- step`` line)."""
    steps: list[list[str]] = []
    for line in lines:
        if line.startswith("-- step "):
            steps.append([])
        elif line.startswith("-- the result now"):
            break
        elif steps:
            steps[-1].append(line)
    check_left_join_steps(demo.CHANGELOG_STEPS, steps)


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
    for joined_row in joined:
        n, total = per_name.get(joined_row[4], (0, 0))
        per_name[joined_row[4]] = (n + 1, total + joined_row[2])
    assert +result == Counter(show((name, n, total)) for name, (n, total) in per_name.items())
    assert {"-U", "+U", "-D"} <= {kind for kind, _ in changes(printed)}
