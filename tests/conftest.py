"""Test fixtures. ``server_url`` is the one way integration tests reach Spark.

TABLEAPI_TEST_SERVER chooses the server: ``docker`` (the image from docker/, started with
testcontainers), ``local`` (``python -m server_ext serve`` as a child process) or ``auto``
(the default: docker when a Docker engine answers and the image exists, else local).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tableapi import TableEnvironment


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    from tests.servers import start_test_server

    with start_test_server(os.environ.get("TABLEAPI_TEST_SERVER", "auto")) as url:
        yield url


@pytest.fixture
def env(server_url: str) -> Iterator[TableEnvironment]:
    """A batch TableEnvironment on the test server (a fresh Spark Connect session)."""
    environment = TableEnvironment.create(mode="batch", remote=server_url)
    yield environment
    environment.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in item.path.parts:
            item.add_marker(pytest.mark.integration)
