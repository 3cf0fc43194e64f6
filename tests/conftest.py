"""Test fixtures. ``server_url`` is the one way integration tests reach Spark.

TABLEAPI_TEST_SERVER chooses the server: ``docker`` (the image from docker/, started with
testcontainers), ``local`` (``python -m server_ext serve`` as a child process) or ``auto``
(the default: docker when a Docker engine answers and the image exists, else local).

TABLEAPI_TEST_OPERATOR_TIER (``python`` or ``jvm``) sets ``table.exec.operator.tier`` on every
TableEnvironment the run creates, so the whole suite runs on either tier; ``jvm`` also checks
that the test server has the JVM plugin (else the run would test the Python fallback). Unset:
the product's default (the JVM tier where the server has the plugin).
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
from tableapi.config import OPERATOR_TIER
from tableapi.session import EmbeddedServer, close, connect, redacted
from tests.postgres import postgres  # noqa: F401  (the session fixture: jdbc tables)
from tests.servers import TestServer, start_test_server

TEST_OPERATOR_TIER = os.environ.get("TABLEAPI_TEST_OPERATOR_TIER", "").strip().lower() or None
if TEST_OPERATOR_TIER not in (None, "python", "jvm"):
    raise ValueError(
        f"TABLEAPI_TEST_OPERATOR_TIER must be python or jvm, got {TEST_OPERATOR_TIER!r}"
    )


@pytest.fixture(scope="session", autouse=True)
def _operator_tier() -> Iterator[None]:
    """Every environment of the run on TABLEAPI_TEST_OPERATOR_TIER's tier (when set)."""
    if TEST_OPERATOR_TIER is None:
        yield
        return
    created = TableEnvironment.__init__

    def init(self: TableEnvironment, *args: object, **kwargs: object) -> None:
        created(self, *args, **kwargs)  # type: ignore[arg-type]
        self.config.set(OPERATOR_TIER, TEST_OPERATOR_TIER)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(TableEnvironment, "__init__", init)
        yield


@pytest.fixture(scope="session")
def test_server(pytestconfig: pytest.Config) -> Iterator[TestServer]:
    """The one server of the run (see tests/servers.py)."""
    with start_test_server(os.environ.get("TABLEAPI_TEST_SERVER", "auto")) as server:
        if TEST_OPERATOR_TIER == "jvm":
            _check_jvm_plugin(server.url)
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


def _check_jvm_plugin(url: str) -> None:
    from tableapi.compiler.jvm_operators import jvm_operators_available

    spark = connect(url)
    try:
        if not jvm_operators_available(spark):
            pytest.exit(
                "TABLEAPI_TEST_OPERATOR_TIER=jvm but the test server has no server_ext JVM "
                "plugin (no JDK to build the jar?)",
                returncode=1,
            )
    finally:
        close(spark)
