"""Start a Spark Connect server configured for the product's operators.

Example::

    python -m server_ext serve --port 15002 --master "local[*]"
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from server_ext import __version__, cluster
from server_ext.conf import (
    ROCKSDB_PROVIDER,
    SHUFFLE_PARTITIONS,
    STATE_STORE_PROVIDER,
    VERSION_CONF,
)

CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"
#: The server's JVM heap. Spark reads it only when it starts the JVM (pyspark hands the
#: SparkConf to spark-submit, which turns it into -Xmx): it must be set before, never at run
#: time. Spark's default, 1g, is too small for a streaming join of 200k x 200k rows.
DRIVER_MEMORY = "spark.driver.memory"
MEMORY_ENV = "TABLEAPI_SERVER_MEMORY"
HEAP_LINE = "server_ext: driver heap "  # the log line that says the heap and where it came from
_HEAP_MIN_MB, _HEAP_MAX_MB = 1024, 8192
_SIZE = re.compile(r"^\d+[kmgt]?$", re.IGNORECASE)


def server_conf(
    host: str, port: int, token: str | None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The Spark confs of a server that can run the product's operators."""
    conf = {
        "spark.plugins": CONNECT_PLUGIN,
        "spark.connect.grpc.binding.address": host,
        "spark.connect.grpc.binding.port": str(port),
        STATE_STORE_PROVIDER: ROCKSDB_PROVIDER,
        # Workers must import server_ext: run them on this very interpreter.
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        SHUFFLE_PARTITIONS: "4",
        # Batch temporal joins: the sort-merge as-of join (the default plan is a nested loop).
        "spark.sql.join.sortMergeAsOfJoin.enabled": "true",
        # Spark's JSON reader fails ("Predicate reference counter cannot be negative") on a
        # pushed filter that names no column (PushedFilters: [AlwaysTrue()], from a condition
        # the optimizer folds to true) when a record has several fields: it counts such a
        # filter once per field. Filters still run, above the scan (conformance repro
        # json-filter-pushdown-literal-assertion).
        "spark.sql.json.filterPushdown.enabled": "false",
        VERSION_CONF: __version__,
    }
    if token:
        conf["spark.connect.authenticate.token"] = token
    conf.update(extra or {})
    return conf


def with_jvm_operators(conf: Mapping[str, str]) -> dict[str, str]:
    """``conf`` plus server_ext's JVM operator jar (``spark.jars``) and plugin; unchanged, with
    one line naming the fix, when there is no jar and none can be built (the Python operators
    then run). ``TABLEAPI_JVM_OPERATORS=off`` leaves them out on purpose."""
    from server_ext.jvm import plugin_conf
    from server_ext.jvm.build import JarUnavailable

    if os.environ.get("TABLEAPI_JVM_OPERATORS", "on").lower() in ("off", "0", "false"):
        print("server_ext: JVM operators off (TABLEAPI_JVM_OPERATORS=off)", flush=True)
        return dict(conf)
    try:
        plugin = plugin_conf()
    except JarUnavailable as e:
        print(f"server_ext: JVM operators off, the Python ones run: {e}", flush=True)
        return dict(conf)
    out = dict(conf)
    for key, value in plugin.items():  # appended to what the caller set
        out[key] = f"{out[key]},{value}" if out.get(key) else value
    return out


def machine_memory_bytes() -> int | None:
    """The memory this process may use: the machine's, or its container's limit (cgroup v2 or
    v1) when lower; None when unknown.

    >>> (machine_memory_bytes() or 2**30) >= 2**20
    True
    """
    sizes: list[int] = []
    try:
        sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # "max" or a huge number: no limit
            sizes.append(int(text))
    return min(sizes) if sizes else None


def default_heap_mb(memory_bytes: int | None) -> int:
    """A quarter of ``memory_bytes`` (the rest is for the Python workers, RocksDB's native
    memory and the OS), clamped to [1g, 8g]; 1g when unknown.

    >>> default_heap_mb(16 * 2**30), default_heap_mb(2 * 2**30), default_heap_mb(64 * 2**30)
    (4096, 1024, 8192)
    """
    if not memory_bytes:
        return _HEAP_MIN_MB
    return max(_HEAP_MIN_MB, min(_HEAP_MAX_MB, memory_bytes // 4 // 2**20))


def driver_memory(
    extra: Mapping[str, str], environ: Mapping[str, str] = os.environ
) -> tuple[str | None, str]:
    """The driver heap to give the server's JVM, and where it comes from: ``--conf
    spark.driver.memory``, else :data:`MEMORY_ENV`, else Spark's own settings
    (``SPARK_DRIVER_MEMORY``, ``--driver-memory`` in ``PYSPARK_SUBMIT_ARGS``: left to Spark,
    None), else :func:`default_heap_mb` of this machine. Raises ValueError for a size Spark
    cannot read.

    >>> driver_memory({}, {"TABLEAPI_SERVER_MEMORY": "6g"})
    ('6g', 'TABLEAPI_SERVER_MEMORY')
    >>> driver_memory({"spark.driver.memory": "3g"}, {"TABLEAPI_SERVER_MEMORY": "6g"})
    ('3g', '--conf spark.driver.memory')
    """
    if DRIVER_MEMORY in extra:
        return extra[DRIVER_MEMORY], f"--conf {DRIVER_MEMORY}"
    if environ.get(MEMORY_ENV):
        size = environ[MEMORY_ENV].strip()
        if not _SIZE.match(size):
            raise ValueError(f"{MEMORY_ENV} must be a size such as 4g or 2048m, got {size!r}")
        return size.lower(), MEMORY_ENV
    if environ.get("SPARK_DRIVER_MEMORY") or "--driver-memory" in environ.get(
        "PYSPARK_SUBMIT_ARGS", ""
    ):
        return None, "Spark's SPARK_DRIVER_MEMORY / --driver-memory"
    memory = machine_memory_bytes()
    shown = f"{memory / 2**30:.0f} GiB" if memory else "unknown"
    return (
        f"{default_heap_mb(memory)}m",
        f"a quarter of this machine's memory ({shown}), in [1g, 8g]",
    )


def serve(
    host: str = "127.0.0.1",
    port: int = 15002,
    master: str = "local[*]",
    token: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> None:
    """Run a Spark Connect server in this process until SIGINT or SIGTERM."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    try:
        # Executors on other hosts connect back to the driver: see server_ext/cluster.py.
        on_cluster = cluster.driver_cluster_conf(master, extra or {})
    except ValueError as e:
        print(f"python -m server_ext serve: {e}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    if on_cluster:
        os.environ.clear()
        os.environ.update(cluster.role_environment())
    else:
        os.environ.setdefault(
            "SPARK_LOCAL_IP", "127.0.0.1" if host in ("127.0.0.1", "localhost") else "0.0.0.0"
        )
    os.environ.pop("SPARK_REMOTE", None)
    os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    if token:
        os.environ["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = token
    else:
        os.environ.pop("SPARK_CONNECT_AUTHENTICATE_TOKEN", None)

    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    settings = with_jvm_operators(server_conf(host, port, token, {**on_cluster, **(extra or {})}))
    try:
        heap, source = driver_memory(extra or {})
    except ValueError as e:
        print(f"python -m server_ext serve: {e}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    if heap:
        settings[DRIVER_MEMORY] = heap
    print(
        f"{HEAP_LINE}{heap or 'as Spark sets it'} ({source}; set {MEMORY_ENV} or "
        f"--conf {DRIVER_MEMORY}=... to change it)",
        flush=True,
    )
    conf = SparkConf().setMaster(master).setAppName("tableapi-server")
    conf.setAll(list(settings.items()))
    sc = SparkContext.getOrCreate(conf)
    sc.setLogLevel("WARN")
    SparkSession(sc)  # keeps the session (and the Connect plugin) alive

    shown_host = "localhost" if host in ("0.0.0.0", "127.0.0.1") else host
    # The token is a secret: logs show where it goes, not what it is.
    url = f"sc://{shown_host}:{port}" + ("/;token=<TABLEAPI_TOKEN>" if token else "")
    print(f"Spark Connect server with server_ext {__version__} listening on {url}", flush=True)

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    # The JVM (spark-submit, started by pyspark) may die under this process, e.g. of an
    # OutOfMemoryError: then exit too, so that whoever started the server sees it gone.
    jvm = getattr(getattr(SparkContext, "_gateway", None), "proc", None)
    while not stop.wait(0.5):
        if jvm is not None and (code := jvm.poll()) is not None:
            print(f"server_ext: the server's JVM exited ({_exit_reason(code)})", flush=True)
            os._exit(
                code if code > 0 else 1
            )  # no sc.stop(), no atexit: they would call the dead JVM
    print("stopping the Spark Connect server", flush=True)
    sc.stop()


def _exit_reason(code: int) -> str:
    """A JVM exit code in words (Spark's SparkExitCode: 52 is an OutOfMemoryError)."""
    if code == 52:
        return f"exit code 52: out of memory; give it a larger heap with {MEMORY_ENV}"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code}"
