"""Every file in ``examples/``, run as a user runs it (``python examples/<name>.py``, in a
process of its own) with the server's URL as its argument; what it prints is checked against
the same queries computed in plain Python over the example's own rows.

The examples write their files in temporary directories of this machine: they run on a local
server (``token_server``), whatever the run's test server is. (Starting an embedded server,
what each does without a URL, is the README demo's test: test_demo.py.)"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tableapi.session import EmbeddedServer
from tests.integration.printed import (
    changes,
    check_left_join_steps,
    money,
    revenue_after_steps,
    show,
    tables,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def url(token_server: tuple[EmbeddedServer, str]) -> str:
    return token_server[0].url


def run(name: str, *args: str) -> str:
    """Run ``examples/<name>.py`` with ``args``; its standard output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEAPI_")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,  # catches a hang only
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def example(name: str) -> ModuleType:
    """The example's module, imported (not run) for its rows."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_has_its_test_here() -> None:
    missing = [p.name for p in EXAMPLES.glob("*.py") if f"test_{p.stem}" not in globals()]
    assert not missing, f"examples that no test runs: {missing}"


def test_regular_join(url: str) -> None:
    m = example("regular_join")
    out = run("regular_join", url)
    inner, left, hinted = tables(out)
    price = {p: (name, cost) for p, name, cost in m.PRODUCTS}
    joined = [(o, p, n) for o, p, n in m.ORDERS if p in price]
    assert inner == (
        ("order_id", "name", "amount", "total"),
        [(str(o), price[p][0], str(n), money(n, price[p][1])) for o, p, n in joined],
    )
    assert left == (
        ("order_id", "product_id", "name", "price"),
        [(str(o), str(p), *price.get(p, ("<NULL>", "<NULL>"))) for o, p, _ in m.ORDERS],
    )
    assert hinted == (("order_id", "name"), [(str(o), price[p][0]) for o, p, _ in joined])
    no_hint, with_hint = out.split("-- No hint, auto-broadcast off:")[1].split("-- with_hint(")
    assert "SortMergeJoin" in no_hint and "BroadcastHashJoin" in with_hint


def test_interval_join(url: str) -> None:
    m = example("interval_join")
    (joined,) = tables(run("interval_join", url))
    want = [
        (str(o), str(amount), f"{ot}.000", carrier, f"{st}.000")
        for o, amount, ot in m.ORDERS
        for s, carrier, st in m.SHIPMENTS
        if o == s and st - timedelta(hours=4) <= ot <= st
    ]
    assert [r[0] for r in want] == ["1", "3"]
    assert joined == (("order_id", "amount", "o_rowtime", "carrier", "s_rowtime"), want)


def test_computed_columns(url: str) -> None:
    rows = example("computed_columns").ROWS
    out = run("computed_columns", url)
    read, written = tables(out)
    assert read[0] == ("a", "b", "c", "e", "e_upper", "pt")
    assert [r[:5] for r in read[1]] == [
        (str(a), str(a + 1), str(c), e, e.upper()) for a, c, e in rows
    ]
    assert len({r[5] for r in read[1]}) == 1  # PROCTIME(): the query's time
    assert "The written JSON files hold the keys ['a', 'c', 'e']" in out
    assert written == (
        ("a", "b", "c", "e", "e_upper"),
        [(str(10 * a), str(10 * a + 1), str(c), e.upper(), e.upper()) for a, c, e in rows],
    )


def test_temporal_join(url: str) -> None:
    m = example("temporal_join")
    out = run("temporal_join", url)
    at = lambda hh_mm: datetime.fromisoformat(f"{m.DAY} {hh_mm}")  # noqa: E731
    orders = sorted(((at(t), a, c) for a, c, t in m.ORDERS))
    rates = [(c, r, at(t)) for c, r, t in m.RATES]

    def rate_at(currency: str, t: datetime) -> int | None:
        versions = [(f, r) for c, r, f in rates if c == currency and f <= t]
        return max(versions)[1] if versions else None

    lateral, left, proctime = tables(out)
    as_of = [(t, a, c, rate_at(c, t)) for t, a, c in orders]
    stamp = lambda t: f"{t}.000"  # noqa: E731
    assert lateral == (
        ("o_rowtime", "amount", "currency", "rate", "yen"),
        [(stamp(t), str(a), c, str(r), str(a * r)) for t, a, c, r in as_of if r is not None],
    )
    assert left == (
        ("o_rowtime", "amount", "currency", "rate"),
        [(stamp(t), str(a), c, show((r,))) for t, a, c, r in as_of],
    )
    latest = {c: max((f, r) for cc, r, f in rates if cc == c)[1] for c, _, _ in rates}
    assert proctime == (
        ("amount", "currency", "rate"),
        [(str(a), c, str(latest[c])) for c, a in sorted((c, a) for _, a, c in orders)],
    )
    streaming = out.split("-- 4. streaming mode")[1].splitlines()
    want = [("+I", show((stamp(t), a, c, r))) for t, a, c, r in as_of if r is not None]
    assert Counter(changes(streaming)) == Counter(want)
    assert "(the query has finished: True)" in streaming


def test_streaming_join(url: str) -> None:
    m = example("streaming_join")
    out = run("streaming_join", url)
    steps: list[list[str]] = []
    for line in out.splitlines():
        if re.match(r"^-- .*: the join emitted$", line):
            steps.append([])
        elif steps and line.strip() != "result now:":
            steps[-1].append(line)
    check_left_join_steps(m.STEPS, steps)


def test_lookup_join(url: str) -> None:
    m = example("lookup_join")
    out = run("lookup_join", url)
    streaming, batch = out.split("\n2. Batch")
    customers = {c: (name, age, country) for c, name, age, country in m.CUSTOMERS}
    want = []
    for o, c, amount in m.ORDERS:
        name, age, country = customers.get(c, (None, None, None))
        found = name is not None and country != "FR"  # the condition's dimension filter
        want.append(
            ("+I", show((o, amount, name, age >= 18) if found else (o, amount, None, None)))
        )
    assert Counter(changes(streaming.splitlines())) == Counter(want)
    metrics = metrics_of(streaming)
    keys = [c for _, c, _ in m.ORDERS if c is not None]
    assert metrics["missCount"] == len(set(keys)) and metrics["hitCount"] == len(keys) - len(
        set(keys)
    )
    ((header, rows),) = tables(batch)
    assert header == ("order_id", "name")
    assert Counter(rows) == Counter(
        (str(o), customers[c][0]) for o, c, _ in m.ORDERS if c in customers
    )
    # Customer 9 is missing: looked up again after the first miss (max-attempts 2).
    assert metrics_of(batch)["numQueries"] >= 2


def metrics_of(text: str) -> dict[str, Any]:
    line = next(line for line in text.splitlines() if line.startswith("cache metrics:"))
    metrics = ast.literal_eval(line.split(":", 1)[1].strip())
    assert isinstance(metrics, dict)
    return metrics


def test_jdbc_sink(url: str, tmp_path: Path) -> None:
    m = example("jdbc_sink")
    out = run("jdbc_sink", url, "--data", str(tmp_path))
    printed = [line for line in out.splitlines() if line.startswith("   revenue table: ")]
    country = {c: k for c, _, k in m.CUSTOMERS}
    wants = revenue_after_steps(m.STEPS, country)
    assert len(printed) == len(wants)
    for (title, _), line, want in zip(m.STEPS, printed, wants, strict=True):
        assert line == f"   revenue table: {want}", title


def test_demo(url: str) -> None:
    """examples/demo.py is the README's demo (tableapi.demo.cli), on the given server."""
    from tests.integration.test_demo import check_demo_output

    check_demo_output(run("demo", url))
