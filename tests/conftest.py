"""Test fixtures. ``server_url`` is the one way integration tests reach Spark.

TABLEAPI_TEST_SERVER chooses the server: ``docker`` (the image from docker/, started with
testcontainers), ``local`` (``python -m server_ext serve`` as a child process) or ``auto``
(the default: docker when a Docker engine answers and the image exists, else local).

The test server must run server_ext's JVM operator plugin (the stateful operators' only
runtime): a run on a server without it stops at once, saying so.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tableapi import TableEnvironment
from tableapi.session import EmbeddedServer, close, connect, redacted
from tests.postgres import postgres  # noqa: F401  (the session fixture: jdbc tables)
from tests.servers import TestServer, start_test_server


@pytest.fixture(scope="session")
def test_server(pytestconfig: pytest.Config) -> Iterator[TestServer]:
    """The one server of the run (see tests/servers.py)."""
    with start_test_server(os.environ.get("TABLEAPI_TEST_SERVER", "auto")) as server:
        _check_jvm_plugin(server.url, server.kind)
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


@pytest.fixture(scope="session")
def token_server() -> Iterator[tuple[EmbeddedServer, str]]:
    """A second server, of this machine whatever the run's is, started with a token (its URL
    carries it): for the token tests, and for the examples (they read this machine's
    temporary files). One start serves both."""
    token = secrets.token_hex(16)
    server = EmbeddedServer.start(token=token)
    yield server, token
    server.stop()


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


def _check_jvm_plugin(url: str, server_kind: str) -> None:
    from tableapi.compiler.jvm_operators import jvm_operators_available

    spark = connect(url)
    try:
        if not jvm_operators_available(spark):
            pytest.exit(
                f"The test server ({server_kind}) has no server_ext JVM plugin, the only "
                "runtime of the stateful operators: python -m server_ext serve builds its jar "
                "where a JDK 17 is (javac on PATH or JAVA_HOME); the docker image carries it.",
                returncode=1,
            )
    finally:
        close(spark)
