"""The docstring examples of the API, ``+SERVER`` ones included, run on the test server.

The unit run executes every example that needs no server (root ``conftest.py``); this test
runs them all against real files, so an example that executes a query is checked too.
"""

from __future__ import annotations

import doctest
import json
import sqlite3
from pathlib import Path

import pytest

import tableapi.environment
import tableapi.execution.printing
import tableapi.result
import tableapi.table
from tests.doc_catalog import doc_catalog, doc_namespace

ROWS = {
    "products": [{"id": 1, "name": "pen", "price": 2.5}, {"id": 2, "name": "ink", "price": 7.0}],
    "orders": [
        {"order_id": 1, "product_id": 1, "amount": 3, "currency": "EUR",
         "o_rowtime": "2026-01-01 10:00:00"},
    ],
    "shipments": [{"s_order_id": 1, "s_rowtime": "2026-01-01 11:00:00"}],
    "rates": [{"r_currency": "EUR", "rate": 1.1, "r_rowtime": "2026-01-01 09:00:00"}],
}  # fmt: skip


@pytest.mark.parametrize(
    "module",
    [tableapi.table, tableapi.environment, tableapi.result, tableapi.execution.printing],
    ids=lambda m: m.__name__,
)
def test_docstring_examples_run_on_a_server(module, server_url: str, shared_dir: Path) -> None:
    for name, rows in ROWS.items():
        (shared_dir / name).mkdir()
        (shared_dir / name / "part-0.json").write_text("\n".join(json.dumps(r) for r in rows))
    (shared_dir / "expensive").mkdir()
    (shared_dir / "expensive").chmod(0o777)  # mkdir's mode is masked by the umask
    db = sqlite3.connect(shared_dir / "shop.db")  # the lookup table Customers
    db.execute("CREATE TABLE customers (c_id INTEGER, c_name TEXT, c_age INTEGER)")
    db.execute("INSERT INTO customers VALUES (1, 'Ann', 34)")
    db.commit()
    db.close()
    (shared_dir / "shop.db").chmod(0o666)
    env = doc_catalog("batch", str(shared_dir), server_url)
    senv = doc_catalog("streaming", str(shared_dir), server_url)
    globs = {**vars(module), **doc_namespace(env, senv)}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = doctest.DocTestFinder().find(module, globs=globs)
    assert sum(len(t.examples) for t in tests) > 10
    for test in tests:
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} docstring example(s) failed (see above)"
    env.close()
    senv.close()
