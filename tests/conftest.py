"""Test fixtures. ``server_url`` is the one way integration tests reach Spark.

TABLEAPI_TEST_SERVER chooses the server: ``docker`` (the image from docker/, started with
testcontainers), ``local`` (``python -m server_ext serve`` as a child process) or ``auto``
(the default: docker when a Docker engine answers and the image exists, else local).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tableapi import TableEnvironment
from tableapi.session import redacted
from tests.servers import TestServer, start_test_server


@pytest.fixture(scope="session")
def test_server(pytestconfig: pytest.Config) -> Iterator[TestServer]:
    """The one server of the run (see tests/servers.py)."""
    with start_test_server(os.environ.get("TABLEAPI_TEST_SERVER", "auto")) as server:
        reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
        capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():
                shown = redacted(server.url)
                reporter.write_line(f"\n[test server] {server.kind} at {shown} ({server.why})")
        yield server


@pytest.fixture(scope="session")
def server_url(test_server: TestServer) -> str:
    return test_server.url


@pytest.fixture
def shared_dir(test_server: TestServer, request: pytest.FixtureRequest) -> Path:
    """A fresh directory the server reads and writes at the same path (for file tables)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:60]
    path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=test_server.shared_dir))
    path.chmod(0o777)
    return path


@pytest.fixture
def env(server_url: str) -> Iterator[TableEnvironment]:
    """A batch TableEnvironment on the test server (a fresh Spark Connect session)."""
    environment = TableEnvironment.create(mode="batch", remote=server_url)
    yield environment
    environment.close()


@pytest.fixture
def senv(server_url: str) -> Iterator[TableEnvironment]:
    """A streaming TableEnvironment on the test server; its queries are stopped after."""
    environment = TableEnvironment.create(mode="streaming", remote=server_url)
    yield environment
    for query in environment.spark.streams.active:
        query.stop()
    environment.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in item.path.parts:
            item.add_marker(pytest.mark.integration)
