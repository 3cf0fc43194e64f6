"""Connecting to a Spark Connect server: the embedded one, or a remote one.

The embedded server is ``python -m server_ext serve`` run as a child process of this
interpreter on a free port, so ``server_ext`` is importable by its workers.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from server_ext import __version__ as CLIENT_VERSION
from server_ext.conf import VERSION_CONF
from server_ext.launcher import DRIVER_MEMORY, HEAP_LINE, MEMORY_ENV
from tableapi.errors import (
    FileTable,
    ServerError,
    database_failure,
    malformed_input,
    path_not_found,
)
from tableapi.workers import check_workers

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

__all__ = ["CLIENT_VERSION", "VERSION_CONF", "EmbeddedServer", "connect", "free_port"]
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

    def __init__(
        self, process: subprocess.Popen[str], port: int, warehouse: str, token: str | None = None
    ) -> None:
        self.process = process
        self.port = port
        self.warehouse = warehouse
        self.url = f"sc://localhost:{port}" + (f"/;token={token}" if token else "")
        self._log: deque[str] = deque(maxlen=200)
        self._last_error: str | None = None  # the log's last error line (OOM lines win)
        self._heap: str | None = None  # the driver heap, as the launcher says it
        self._out_of_memory_at = -1e9  # when the log last said OutOfMemoryError (monotonic)

    @classmethod
    def start(
        cls,
        master: str = "local[2]",
        port: int | None = None,
        conf: dict[str, str] | None = None,
        token: str | None = None,
    ) -> EmbeddedServer:
        """Start the server (on loopback); with ``token`` clients must present it."""
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
            and k != "TABLEAPI_TOKEN"
        }
        if token:
            env["TABLEAPI_TOKEN"] = token  # not on the command line, where ps would show it
        process = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
        )
        server = cls(process, port, conf["spark.sql.warehouse.dir"], token)
        _embedded_endpoints[("localhost", port)] = server
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
            line = line.rstrip()
            self._log.append(line)
            if _READY_LINE in line:
                ready.set()
            elif line.startswith(HEAP_LINE):
                self._heap = line[len(HEAP_LINE) :].split(" ", 1)[0]
            elif _OUT_OF_MEMORY in line:
                self._last_error = line.strip()
                self._out_of_memory_at = time.monotonic()
            elif _ERROR_LINE.search(line) and _OUT_OF_MEMORY not in (self._last_error or ""):
                self._last_error = line.strip()

    def exited(self, wait_s: float = 5.0) -> bool:
        """Has the server's process exited? A server whose log said OutOfMemoryError in the
        last minute is given ``wait_s`` to exit (its JVM is going down: the query's error may
        come back before the port closes).

        Example::

            server.exited()  # False while it runs
        """
        if time.monotonic() - self._out_of_memory_at < 60:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=wait_s)
        return self.process.poll() is not None

    def last_words(self, wait_s: float = 3.0) -> str:
        """Why the server went away, for the client's error: its log's last error line and,
        after an OutOfMemoryError, the heap setting to raise. Waits up to ``wait_s`` for a
        dying server to exit, so that its last lines are read.

        Example::

            server.last_words()  # "Its log's last error: java.lang.OutOfMemoryError: ..."
        """
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=wait_s)
        time.sleep(0.2)  # the pump thread reads the last lines
        if self._last_error is None:
            return ""
        line = _LOG_PREFIX.sub("", self._last_error)[:500]
        words = f" Its log's last error: {line}"
        if _OUT_OF_MEMORY in self._last_error:
            more = _larger(self._heap)
            words += (
                f" The server's JVM ran out of heap ({DRIVER_MEMORY} = {self._heap or '?'}): a "
                "streaming query's state and a result collected on the server live there. "
                f"Start it with a larger one: {MEMORY_ENV}={more} (python -m server_ext serve: "
                f"--conf {DRIVER_MEMORY}={more})."
            )
        return words

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


#: The servers this process started, by where they listen (host, port): they read this
#: machine's files, and their logs say why one went away.
_embedded_endpoints: dict[tuple[str, int], EmbeddedServer] = {}
#: A line of the server's log that reports an error (log4j's level, or a Java throwable).
_ERROR_LINE = re.compile(r"\bERROR\b|^\S*(Exception|Error)\b|^Caused by: ")
_OUT_OF_MEMORY = "java.lang.OutOfMemoryError"
_LOG_PREFIX = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ")  # log4j's date and time


def _larger(heap: str | None) -> str:
    """Twice the heap ``heap`` (Spark's size syntax), to suggest; 8g when unknown.

    >>> _larger("512m"), _larger("6026m"), _larger("4g"), _larger(None)
    ('1g', '12g', '8g', '8g')
    """
    found = re.fullmatch(r"(\d+)([kmgt]?)", (heap or "").lower())
    if found is None:
        return "8g"
    scale = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "": 1}[found.group(2)]
    gib = -(-2 * int(found.group(1)) * scale // 2**30)  # rounded up
    return f"{gib}g"


def reads_local_files(spark: SparkSession) -> bool:
    """Does ``spark``'s server read this machine's files, i.e. is it an embedded server of
    this process? A remote one may not, even on localhost: a container, or an SSH tunnel.

    Example::

        server = EmbeddedServer.start()
        reads_local_files(connect(server.url))                    # True
        reads_local_files(connect("sc://db-host:15002/;token=.."))  # False
    """
    return _endpoints.get(spark) in _embedded_endpoints


#: How long a call keeps retrying a server that does not answer (pyspark's default is more
#: than ten minutes): backoffs of 0.25, 0.5, 1, 2 and 4 s, then the call fails.
RETRIES, FIRST_BACKOFF_MS, MAX_BACKOFF_MS = 5, 250, 4000
#: The server each session of ours talks to (host, port).
_endpoints: weakref.WeakKeyDictionary[SparkSession, tuple[str, int]] = weakref.WeakKeyDictionary()


def connect(url: str) -> SparkSession:
    """A Spark Connect session to ``url``, checked for a matching ``server_ext``. Its calls
    give up on a server that does not answer within seconds (:data:`RETRIES` backoffs from
    :data:`FIRST_BACKOFF_MS`, doubling), and it
    does not hold up the interpreter's exit once its server is gone."""
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession

    shown = redacted(url)
    host, port = _host_port(url)
    try:
        # The Connect client retries an absent server for minutes: fail fast instead.
        socket.create_connection((host, port), timeout=10).close()
        spark = SparkSession.builder.remote(url).create()
        spark.client.set_retry_policies(
            [
                DefaultPolicy(
                    max_retries=RETRIES,
                    initial_backoff=FIRST_BACKOFF_MS,
                    backoff_multiplier=2.0,
                    max_backoff=MAX_BACKOFF_MS,
                )
            ]
        )
        _endpoints[spark] = (host, port)
        _close_at_exit_if_gone(spark, host, port)
        marker = spark.conf.get(VERSION_CONF, None)
    except Exception as e:
        if isinstance(e, ServerError):
            raise
        raise ServerError(_connect_problem(shown, e)) from None
    try:
        check_server_version(shown, marker)
        check_workers(spark, shown, CLIENT_VERSION)
    except ServerError:
        close(spark)
        raise
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    return spark


def _connect_problem(url: str, e: Exception) -> str:
    text = str(e)
    if "No authentication token provided" in text:
        return (
            f"The Spark Connect server at {url} requires a token, and none was given. "
            "Connect with sc://<host>:<port>/;token=<token> (the token the server was started "
            "with: --token or TABLEAPI_TOKEN)."
        )
    if "Invalid authentication token" in text:
        return (
            f"The Spark Connect server at {url} refused the token: it is not the one the "
            "server was started with (--token or TABLEAPI_TOKEN)."
        )
    return (
        f"Cannot reach a Spark Connect server at {url}: {text.splitlines()[0]}\n"
        "Start one with: python -m server_ext serve --port 15002\n"
        "or in Docker: docker run -p 127.0.0.1:15002:15002 -e TABLEAPI_TOKEN=<token> "
        "tableapi-server:latest"
    )


def redacted(url: str) -> str:
    """``url`` without its token, for messages and logs."""
    return re.sub(r"(token=)[^;]*", r"\1<redacted>", url)


def reachable(host: str, port: int, timeout_s: float = 1.0) -> bool:
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def close(spark: SparkSession) -> None:
    """End a session: released on the server when it answers; otherwise only the channel is
    closed (releasing would retry a dead server)."""
    if spark.client.is_closed:
        return
    endpoint = _endpoints.get(spark)
    if endpoint is None or reachable(*endpoint):
        spark.stop()
    else:
        spark.client.close()


def _close_at_exit_if_gone(spark: SparkSession, host: str, port: int) -> None:
    """At exit, pyspark releases the session (and clears its ML cache) on the server, retrying
    one that is gone for minutes. Registered after pyspark's own handler, this runs before it
    (atexit is last in, first out) and closes the channel of a session whose server is gone."""
    ref = weakref.ref(spark)

    def close_if_gone() -> None:
        session = ref()
        if session is not None and not session.client.is_closed and not reachable(host, port):
            session.client.close()

    atexit.register(close_if_gone)


#: gRPC statuses of a call that never got the server's answer (the channel failed).
_TRANSPORT_CODES = ("UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED")


def server_gone(e: BaseException, endpoint: tuple[str, int] | None = None) -> bool:
    """Is ``e`` a call that failed because the server no longer answers? Decided by whether
    ``endpoint`` (host, port) still accepts a connection and by the call's gRPC status, never
    by the error's words: a query's own error (a lookup database that refuses connections, a
    Python worker's exception) says "Connection refused" too, and its server is fine.

    >>> from pyspark.errors import PythonException
    >>> server_gone(PythonException("Lookup table 'T': ... Connection refused"))
    False
    >>> server_gone(RuntimeError("any error"), ("127.0.0.1", free_port()))  # nothing there
    True
    """
    if endpoint is not None and not reachable(*endpoint):
        return True
    return _transport_failure(e)


def _transport_failure(e: BaseException) -> bool:
    """The call failed in transport: a gRPC status that no answer of the server carries
    (the server's own errors come with an error class)."""
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    if isinstance(e, SparkConnectGrpcException):
        return e.getGrpcStatusCode().name in _TRANSPORT_CODES and not e.getCondition()
    # A grpc.RpcError that pyspark did not convert: its code() is the status.
    code = getattr(e, "code", None)
    if type(e).__module__.startswith("grpc") and callable(code):
        return getattr(code(), "name", "") in _TRANSPORT_CODES
    return False


@contextlib.contextmanager
def server_call(
    url: str, doing: str, advice: str, files: Sequence[FileTable] = ()
) -> Iterator[None]:
    """Turn a call that failed because the server at ``url`` went away into a ServerError
    that names the server, what was being done and ``advice`` (how to resume). The query's
    own errors are not that: a record that cannot be parsed becomes a DataError, a jdbc table's
    database's failure a DatabaseError, a path of ``files`` (the query's filesystem tables)
    that does not exist a ValidationError naming its table, and any other error is raised
    as it is."""
    try:
        yield
    except Exception as e:
        if (bad_data := malformed_input(e)) is not None:
            raise bad_data from None
        if (no_path := path_not_found(e, files)) is not None:
            raise no_path from None
        if (database := database_failure(e)) is not None:
            raise database from None
        if isinstance(e, ServerError):
            raise
        endpoint = _endpoint_of(url)
        embedded = _embedded_endpoints.get(endpoint) if endpoint else None
        if not server_gone(e, endpoint) and not (embedded is not None and embedded.exited()):
            raise
        detail = re.search(r'details = "([^"]+)"', str(e))
        reason = detail.group(1) if detail else type(e).__name__
        why = embedded.last_words() if embedded is not None else ""
        raise ServerError(
            f"The Spark Connect server at {redacted(url)} is gone ({reason}) while {doing}."
            f"{why} {advice}"
        ) from None


def _endpoint_of(url: str) -> tuple[str, int] | None:
    try:
        return _host_port(url)
    except (ServerError, ValueError):
        return None


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
