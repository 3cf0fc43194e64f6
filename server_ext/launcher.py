"""Start a Spark Connect server configured for the product's operators.

Example::

    python -m server_ext serve --port 15002 --master "local[*]"
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Mapping

from server_ext import __version__
from server_ext.conf import ROCKSDB_PROVIDER, STATE_STORE_PROVIDER, VERSION_CONF

CONNECT_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"


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
        "spark.sql.shuffle.partitions": "4",
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


def serve(
    host: str = "127.0.0.1",
    port: int = 15002,
    master: str = "local[*]",
    token: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> None:
    """Run a Spark Connect server in this process until SIGINT or SIGTERM."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
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

    conf = SparkConf().setMaster(master).setAppName("tableapi-server")
    conf.setAll(list(with_jvm_operators(server_conf(host, port, token, extra)).items()))
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
    while not stop.wait(0.5):
        pass
    print("stopping the Spark Connect server", flush=True)
    sc.stop()
