"""How the test suite gets a Spark Connect server with server_ext."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tableapi.session import EmbeddedServer


@contextlib.contextmanager
def local_server() -> Iterator[str]:
    server = EmbeddedServer.start(master="local[2]")
    try:
        yield server.url
    finally:
        server.stop()


@contextlib.contextmanager
def start_test_server(kind: str) -> Iterator[str]:
    if kind not in ("auto", "local", "docker"):
        raise ValueError(f"TABLEAPI_TEST_SERVER must be auto, local or docker; got {kind!r}")
    with local_server() as url:
        yield url
