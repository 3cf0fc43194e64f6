"""Fixtures for unit tests: a batch TableEnvironment that never reaches a Spark server.

Building plans and calling ``explain()`` needs no server; only ``execute()`` /
``to_spark()`` connect. To make sure no unit test starts (or reaches) a server by
accident, connecting is replaced by a function that fails the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tableapi import TableEnvironment, session
from tests.unit.helpers import ORDERS, PRODUCT, SHIPMENTS, file_table


@pytest.fixture(autouse=True)
def _no_spark_server(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        pytest.fail("a unit test tried to connect to or start a Spark Connect server")

    monkeypatch.setattr(session, "connect", refuse)
    monkeypatch.setattr(session.EmbeddedServer, "start", classmethod(refuse))


@pytest.fixture
def env() -> Iterator[TableEnvironment]:
    """A batch environment without a server (overrides the integration ``env`` fixture)."""
    yield TableEnvironment.create(mode="batch")


@pytest.fixture
def catalog(env: TableEnvironment) -> TableEnvironment:
    """``env`` with the tables Orders (computed columns, watermark, primary key),
    Product (primary key ``id``) and Shipments (no key) registered."""
    env.create_temporary_table("Orders", file_table(ORDERS, "orders"))
    env.create_temporary_table("Product", file_table(PRODUCT, "product"))
    env.create_temporary_table("Shipments", file_table(SHIPMENTS, "shipments"))
    return env
