"""Connecting to a Spark Connect server: the embedded one, or a remote one.

The embedded server is ``python -m server_ext serve`` run as a child process of this
interpreter on a free port, so ``server_ext`` is importable by its workers.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque

from tableapi.errors import ServerError

CLIENT_VERSION = "0.1.0"
VERSION_CONF = "spark.tableapi.serverExt.version"
_READY_LINE = "listening on "
_START_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedServer:
    """A local Spark Connect server in a child process, stopped when this process exits.

    Example::

        server = EmbeddedServer.start(master="local[2]")
        print(server.url)      # sc://localhost:<port>
        server.stop()
    """

    def __init__(self, process: subprocess.Popen[str], port: int, warehouse: str) -> None:
        self.process = process
        self.port = port
        self.warehouse = warehouse
        self.url = f"sc://localhost:{port}"
        self._log: deque[str] = deque(maxlen=200)

    @classmethod
    def start(
        cls, master: str = "local[2]", port: int | None = None, conf: dict[str, str] | None = None
    ) -> EmbeddedServer:
        port = port or free_port()
        cmd = [sys.executable, "-m", "server_ext", "serve", "--port", str(port), "--master", master]
        # Managed tables (the end-of-input tables of streaming queries) go to a private
        # directory, not to spark-warehouse/ in the user's working directory.
        conf = {"spark.sql.warehouse.dir": tempfile.mkdtemp(prefix="tableapi-warehouse-")} | (
            conf or {}
        )
        for k, v in conf.items():
            cmd += ["--conf", f"{k}={v}"]
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")
        }
        process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
        )
        server = cls(process, port, conf["spark.sql.warehouse.dir"])
        ready = threading.Event()
        threading.Thread(target=server._pump, args=(ready,), daemon=True).start()
        atexit.register(server.stop)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not ready.wait(0.2):
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                tail = "\n".join(list(server._log)[-30:])
                raise ServerError(
                    f"The embedded Spark Connect server did not start (command: "
                    f"{' '.join(cmd)}). Java 17 must be on PATH or JAVA_HOME. Its output:\n"
                    f"{tail}"
                )
        return server

    def _pump(self, ready: threading.Event) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._log.append(line.rstrip())
            if _READY_LINE in line:
                ready.set()

    def stop(self) -> None:
        """Stop the server (SIGTERM to the process we started, SIGKILL if it lingers)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.warehouse, ignore_errors=True)


def connect(url: str):  # type: ignore[no-untyped-def]
    """A Spark Connect session to ``url``, checked for a matching ``server_ext``."""
    from pyspark.sql.connect.session import SparkSession

    try:
        # The Connect client retries an absent server for minutes: fail fast instead.
        socket.create_connection(_host_port(url), timeout=10).close()
        spark = SparkSession.builder.remote(url).create()
        marker = spark.conf.get(VERSION_CONF, None)
    except Exception as e:
        if isinstance(e, ServerError):
            raise
        raise ServerError(
            f"Cannot reach a Spark Connect server at {url}: {str(e).splitlines()[0]}\n"
            "Start one with: python -m server_ext serve --port 15002\n"
            "or in Docker: docker run -p 127.0.0.1:15002:15002 tableapi-server:latest"
        ) from None
    try:
        check_server_version(url, marker)
    except ServerError:
        # An open client blocks interpreter exit for minutes once its server is gone
        # (pyspark's atexit clean-up retries): close the one we will not hand out.
        spark.stop()
        raise
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    return spark


def _host_port(url: str) -> tuple[str, int]:
    """``sc://host:port/;token=...`` -> (host, port); Spark Connect's default port is 15002."""
    if not url.startswith("sc://"):
        raise ServerError(f"A remote must look like sc://host:15002, got {url!r}.")
    authority = url[len("sc://") :].split("/", 1)[0]
    host, _, port = authority.partition(":")
    return host or "localhost", int(port or 15002)


def check_server_version(url: str, marker: str | None) -> None:
    """Raise a ServerError that says how to fix a missing or mismatched server_ext."""
    if not marker:
        raise ServerError(
            f"The Spark Connect server at {url} does not run server_ext (its conf "
            f"{VERSION_CONF} is unset), so Flink-style operators cannot run there.\n"
            "Fix: start the server with server_ext: pip install flink-tableapi-spark && "
            "python -m server_ext serve --port 15002 "
            "(or docker run -p 127.0.0.1:15002:15002 tableapi-server:latest)."
        )
    if marker != CLIENT_VERSION:
        raise ServerError(
            f"The Spark Connect server at {url} runs server_ext {marker}, but this client is "
            f"{CLIENT_VERSION}.\nFix: install the same version on the server and restart it: "
            f"pip install flink-tableapi-spark=={CLIENT_VERSION} && "
            "python -m server_ext serve --port 15002"
        )
