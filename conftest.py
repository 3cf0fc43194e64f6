"""Doctests: the examples in the docstrings of ``tableapi`` and ``server_ext`` run in the suite.

They build plans and explain them; none may reach a Spark server (connecting fails them).
Their namespace has the names the examples use: ``env`` (batch) and ``senv`` (streaming)
environments with the tables ``orders``, ``products``, ``shipments`` and ``rates``, plus
``col``, ``lit``, ``call`` and the API classes.
"""

from __future__ import annotations

import doctest
from typing import Any

import pytest

from tableapi import session
from tests.doc_catalog import doc_catalog, doc_namespace

#: ``# doctest: +SERVER`` marks an example that needs a Spark server: skipped here, run by
#: tests/integration/test_docstring_examples.py against the test server.
SERVER = doctest.register_optionflag("SERVER")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.dtest is not None:
            for example in item.dtest.examples:
                if example.options.get(SERVER):
                    example.options[doctest.SKIP] = True


@pytest.fixture(autouse=True)
def _doctest_namespace(request: pytest.FixtureRequest, doctest_namespace: dict[str, Any]) -> None:
    if not isinstance(request.node, pytest.DoctestItem):
        return
    mp = request.getfixturevalue("monkeypatch")

    def refuse(*args: object, **kwargs: object) -> None:
        pytest.fail("a doctest tried to connect to or start a Spark Connect server")

    mp.setattr(session, "connect", refuse)
    mp.setattr(session.EmbeddedServer, "start", classmethod(refuse))
    doctest_namespace.update(doc_namespace(doc_catalog("batch"), doc_catalog("streaming")))
