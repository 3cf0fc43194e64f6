"""How the test suite gets a Spark Connect server with server_ext.

Two ways, one contract (a ``sc://`` URL plus a directory both sides see at the same path):

- ``docker``: the image built by ``docker/build.sh`` (``tableapi-server:<version>``), started
  with testcontainers; the shared directory is bind-mounted at its own path.
- ``local``: ``python -m server_ext serve`` as a child process of the test run.

``auto`` picks docker when a Docker engine answers and the image is at least as new as the
project's sources (a stale image would test old server code), else local, and says why.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from tableapi.session import CLIENT_VERSION, EmbeddedServer, connect

IMAGE = f"tableapi-server:{CLIENT_VERSION}"
CONTAINER_PORT = 15002
READY_LOG = re.compile(r"listening on sc://")
START_TIMEOUT_S = 180
OWNER_LABEL = "tableapi.tests.owner"  # host:pid of the test run that started the container
ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("tableapi", "server_ext", "pyproject.toml", "docker/Dockerfile")


@attrs.frozen
class TestServer:
    """A running server as the tests see it."""

    __test__ = False  # not a pytest test class

    url: str
    kind: str  # "docker" or "local"
    shared_dir: Path  # files written here are readable by the server at the same path
    container_id: str | None = None
    why: str = ""


@contextlib.contextmanager
def start_test_server(kind: str) -> Iterator[TestServer]:
    """Start the server ``kind`` asks for (``auto``, ``local`` or ``docker``)."""
    if kind not in ("auto", "local", "docker"):
        raise ValueError(f"TABLEAPI_TEST_SERVER must be auto, local or docker; got {kind!r}")
    why = f"TABLEAPI_TEST_SERVER={kind}"
    if kind == "auto":
        problem = docker_unavailable()
        kind, why = ("local", problem) if problem else ("docker", f"image {IMAGE} is current")
    elif kind == "docker" and (problem := docker_unavailable(check_age=False)):
        raise RuntimeError(f"TABLEAPI_TEST_SERVER=docker, but {problem}")
    # World-writable: in the container the server runs as uid 10001 and writes sink files here.
    shared = Path(tempfile.mkdtemp(prefix="tableapi-tests-"))
    shared.chmod(0o777)
    server = docker_server if kind == "docker" else local_server
    try:
        with server(shared) as (url, container_id):
            wait_for_first_query(url)
            yield TestServer(url, kind, shared, container_id, why)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def docker_unavailable(check_age: bool = True) -> str | None:
    """Why the docker path cannot be used here, or None when it can."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as e:
        return f"no Docker engine answers ({type(e).__name__})"
    try:
        image = client.images.get(IMAGE)
    except Exception:
        return f"image {IMAGE} is missing (build it: bash docker/build.sh)"
    if check_age:
        from datetime import datetime, timezone

        stamp = image.attrs["Created"][:19]  # e.g. 2026-11-23T10:40:12.123456789Z, in UTC
        created = datetime.fromisoformat(stamp).replace(tzinfo=timezone.utc).timestamp()
        newest = max(_mtimes(ROOT / p) for p in SOURCES)
        if newest > created:
            return f"image {IMAGE} is older than the sources (rebuild: bash docker/build.sh)"
    return None


def _mtimes(path: Path) -> float:
    if path.is_file():
        return path.stat().st_mtime
    # The image's sources: Python, and the Java of the operator jar it builds.
    files = (p for pattern in ("*.py", "*.java") for p in path.rglob(pattern))
    return max((p.stat().st_mtime for p in files), default=0.0)


@contextlib.contextmanager
def docker_server(shared: Path) -> Iterator[tuple[str, str | None]]:
    remove_orphans()
    container, url = start_container(shared)
    try:
        yield url, container.get_wrapped_container().id
    finally:
        container.stop()


def start_container(shared: Path) -> tuple[Any, str]:
    """Start the server image with ``shared`` mounted at its own path; return the container
    and a URL that reaches it with a fresh token (the image serves on 0.0.0.0 and so requires
    one: server_ext/security.py)."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # no ryuk image here
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    token = secrets.token_hex(16)
    container = (
        DockerContainer(IMAGE)
        .with_kwargs(labels={OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"})
        .with_env("TABLEAPI_TOKEN", token)
        .with_exposed_ports(CONTAINER_PORT)
        .with_volume_mapping(str(shared), str(shared), "rw")
        .waiting_for(LogMessageWaitStrategy(READY_LOG).with_startup_timeout(START_TIMEOUT_S))
    )
    container.start()
    host = container.get_container_host_ip()
    port = int(container.get_exposed_port(CONTAINER_PORT))
    if host not in ("127.0.0.1", "localhost", "::1"):
        # Inside a container (a CI runner) the engine's ports are at the bridge gateway, but
        # pyspark sends a token over a plain channel only to "localhost" (else it wants TLS):
        # reach the server through a loopback forwarder of the test run's own.
        port = LoopbackForwarder(host, port).port
    return container, f"sc://localhost:{port}/;token={token}"


class LoopbackForwarder:
    """Forwards connections to 127.0.0.1:``port`` on to ``host:target_port``, byte for byte,
    in daemon threads that end with the test run."""

    def __init__(self, host: str, target_port: int) -> None:
        self.target = (host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            client, _ = self._listener.accept()
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()  # the server is gone (killed by a test): refuse as it would
                continue
            upstream.settimeout(None)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)


def remove_orphans() -> None:
    """Remove test servers left by runs that were killed (without ryuk nothing else does)."""
    import docker

    client = docker.from_env()
    for c in client.containers.list(all=True, filters={"label": OWNER_LABEL}):
        host, _, pid = c.labels[OWNER_LABEL].rpartition(":")
        if host == socket.gethostname() and not _alive(int(pid)):
            c.remove(force=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def local_server(shared: Path) -> Iterator[tuple[str, str | None]]:
    server = EmbeddedServer.start(master="local[2]")
    try:
        yield server.url, None
    finally:
        server.stop()


def wait_for_first_query(url: str, timeout_s: float = 60) -> None:
    """The gRPC port can answer before the session is usable: run one query to be sure."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            spark = connect(url)
            assert spark.range(1).collect()[0][0] == 0
            spark.stop()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


class KillableServer:
    """A server of the test's own, of the run's kind, that the test kills (SIGKILL, or
    ``docker kill``) and replaces; ``shared`` is mounted at its own path in a container."""

    def __init__(self, kind: str, shared: Path) -> None:
        self.kind = kind
        self.shared = shared
        self._local: EmbeddedServer | None = None
        self._container: Any = None
        self.url = ""

    def start(self) -> str:
        if self.kind == "docker":
            self._container, self.url = start_container(self.shared)
        else:
            self._local = EmbeddedServer.start(master="local[2]")
            self.url = self._local.url
        wait_for_first_query(self.url)
        return self.url

    def kill(self) -> None:
        """Kill the server at once: no clean shutdown, no last checkpoint."""
        if self._container is not None:
            self._container.get_wrapped_container().kill()  # SIGKILL
            self._container.get_wrapped_container().remove(force=True)
            self._container = None
        if self._local is not None:
            os.killpg(self._local.process.pid, signal.SIGKILL)
            self._local.process.wait()
            self._local.stop()  # removes its warehouse
            self._local = None

    def stop(self) -> None:
        if self._container is not None:
            self._container.stop()
            self._container = None
        if self._local is not None:
            self._local.stop()
            self._local = None
