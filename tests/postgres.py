"""A real PostgreSQL for the tests: the ``postgres`` session fixture.

Two ways, one contract (:class:`PostgresServer`: host, port, user, password, database):

- ``docker``: the image built by ``docker/build-postgres.sh`` (``tableapi-postgres:15``:
  Debian's postgresql package on the debootstrap base image), started with testcontainers.
- ``local``: a throw-away cluster made by the fixture from the local binaries (``initdb``,
  ``pg_ctl``, found on PATH or in /usr/lib/postgresql/*/bin) in a temp dir, on a free port,
  run as the ``postgres`` user when the tests run as root (PostgreSQL refuses root). Nothing
  is installed at test time: ``.ci/run`` installs Debian's postgresql when it is missing.

``TABLEAPI_TEST_POSTGRES`` = ``auto`` (default: docker when a Docker engine answers and the
image exists, else local), ``docker`` or ``local``.

Example::

    def test_something(postgres):
        postgres.execute("CREATE TABLE t (id BIGINT PRIMARY KEY)")
        spec = postgres.source("t")          # a server_ext SourceSpec for table t
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server_ext.lookup.spec import SourceSpec

IMAGE = "tableapi-postgres:15"
USER = "tableapi"
PASSWORD = "tableapi-test"
DATABASE = "tableapi"
READY_LOG = "database system is ready to accept connections"


class PostgresServer:
    """A running PostgreSQL as the tests see it."""

    def __init__(self, kind: str, host: str, port: int, why: str = "") -> None:
        self.kind = kind
        self.host = host
        self.port = port
        self.user = USER
        self.password = PASSWORD
        self.database = DATABASE
        self.why = why
        self.container_ip: str | None = None  # on Docker's bridge network (docker kind)
        self._stop: Any = None
        self._start: Any = None

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def source(self, table: str, **kw: Any) -> SourceSpec:
        """A lookup source for ``table`` in the test database."""
        return SourceSpec(
            "postgresql",
            table,
            self.database,
            host=self.host,
            port=self.port,
            username=self.user,
            password=self.password,
            **kw,
        )

    def connect(self, dbname: str | None = None) -> Any:
        import psycopg

        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname=dbname or self.database,
            autocommit=True,
        )

    def execute(self, sql: str, params: Any = None) -> list[tuple]:
        with self.connect() as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def executemany(self, sql: str, rows: list[tuple]) -> None:
        with self.connect() as conn, conn.cursor() as cur:
            cur.executemany(sql, rows)

    def terminate_lookup_connections(self) -> int:
        """Kill the lookup operator's server connections (as a restart or a DBA would)."""
        rows = self.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'tableapi-lookup'"
        )
        return len(rows)

    def address_from(self, server_kind: str) -> tuple[str, int] | None:
        """Where a Spark server of ``server_kind`` (tests/servers.py: local or docker)
        reaches this PostgreSQL, or None when it cannot."""
        if server_kind == "local":
            return self.host, self.port
        if self.container_ip:
            return self.container_ip, 5432
        return None

    @property
    def can_restart(self) -> bool:
        return self._stop is not None

    def stop_server(self) -> None:
        """Stop the server (it keeps its port when started again)."""
        self._stop()

    def start_server(self) -> None:
        self._start()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The run's PostgreSQL (see the module docstring)."""
    with start_postgres(os.environ.get("TABLEAPI_TEST_POSTGRES", "auto")) as server:
        yield server


@contextlib.contextmanager
def start_postgres(kind: str = "auto") -> Iterator[PostgresServer]:
    if kind not in ("auto", "docker", "local"):
        raise ValueError(f"TABLEAPI_TEST_POSTGRES must be auto, docker or local; got {kind!r}")
    why = f"TABLEAPI_TEST_POSTGRES={kind}"
    if kind == "auto":
        problem = docker_unavailable()
        kind, why = ("local", problem) if problem else ("docker", f"image {IMAGE} exists")
    elif kind == "docker" and (problem := docker_unavailable()):
        raise RuntimeError(f"TABLEAPI_TEST_POSTGRES=docker, but {problem}")
    starter = docker_postgres if kind == "docker" else local_postgres
    with starter(why) as server:
        yield server


def docker_unavailable() -> str | None:
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as e:
        return f"no Docker engine answers ({type(e).__name__})"
    try:
        client.images.get(IMAGE)
    except Exception:
        return f"image {IMAGE} is missing (build it: bash docker/build-postgres.sh)"
    return None


@contextlib.contextmanager
def docker_postgres(why: str) -> Iterator[PostgresServer]:
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    # A fixed host port: the server keeps its address when the container is restarted.
    host_port = _free_port()
    container = (
        DockerContainer(IMAGE)
        .with_env("POSTGRES_USER", USER)
        .with_env("POSTGRES_PASSWORD", PASSWORD)
        .with_env("POSTGRES_DB", DATABASE)
        .with_bind_ports(5432, host_port)
        .waiting_for(LogMessageWaitStrategy(READY_LOG).with_startup_timeout(120))
    )
    container.start()
    try:
        host = container.get_container_host_ip()
        server = PostgresServer("docker", host, host_port, why)
        wrapped = container.get_wrapped_container()

        def start() -> None:
            wrapped.start()
            _wait_ready(server)

        server._stop, server._start = lambda: wrapped.stop(timeout=10), start
        wrapped.reload()
        server.container_ip = wrapped.attrs["NetworkSettings"].get("IPAddress") or None
        _wait_ready(server)
        yield server
    finally:
        container.stop()


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def local_postgres(why: str) -> Iterator[PostgresServer]:
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError(
            "No PostgreSQL for the tests: neither the image "
            f"{IMAGE} (bash docker/build-postgres.sh) nor the initdb/pg_ctl binaries "
            "(apt-get install -y postgresql) are here."
        )
    root = Path(tempfile.mkdtemp(prefix="tableapi-pg-"))
    data, log, pwfile = root / "data", root / "server.log", root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError(
                "The tests run as root and PostgreSQL refuses root, but there is no 'postgres' "
                "user to run it as (Debian's postgresql package creates it: apt-get install -y "
                "postgresql)."
            ) from None
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
    port = _free_port()

    def run(*cmd: str) -> None:
        done = subprocess.run([*as_user, *cmd], capture_output=True, text=True, check=False)
        if done.returncode:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}{tail}")

    run(
        initdb, "-D", str(data), "-U", USER, f"--pwfile={pwfile}", "-E", "UTF8",
        "--locale=C.UTF-8", "--auth-local=trust", "--auth-host=scram-sha-256",
    )  # fmt: skip
    server_opts = (
        f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )

    def start() -> None:
        run(pg_ctl, "-D", str(data), "-l", str(log), "-o", server_opts, "-w", "-t", "60", "start")

    def stop() -> None:
        run(pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop")

    start()
    try:
        server = PostgresServer("local", "127.0.0.1", port, why)
        server._stop, server._start = stop, start
        _wait_ready(server, dbname="postgres")
        with server.connect("postgres") as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        yield server
    finally:
        with contextlib.suppress(Exception):
            stop()
        shutil.rmtree(root, ignore_errors=True)


def _wait_ready(server: PostgresServer, dbname: str | None = None, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            server.connect(dbname).close()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
