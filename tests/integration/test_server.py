"""Connecting: the embedded server, and the clear error from a server without server_ext."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from tableapi import ServerError, TableEnvironment, col, udf
from tableapi.session import VERSION_CONF, check_server_version, free_port

PLAIN_SERVER = textwrap.dedent("""
    import sys, time
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession
    conf = (SparkConf().setMaster("local[1]").setAppName("plain-connect")
            .set("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
            .set("spark.connect.grpc.binding.port", sys.argv[1])
            .set("spark.ui.enabled", "false"))
    SparkSession(SparkContext.getOrCreate(conf))
    print("ready", flush=True)
    time.sleep(600)
""")


def _wait_for_port(port: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on {port}")


def test_server_without_server_ext_gets_a_clear_error() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", PLAIN_SERVER, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port)
        env = TableEnvironment.create(remote=f"sc://localhost:{port}")
        with pytest.raises(ServerError, match="does not run server_ext") as info:
            env.from_elements([(1,)], ["a"]).execute().collect()
        assert "python -m server_ext serve" in str(info.value)
        assert VERSION_CONF in str(info.value)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_version_mismatch_names_both_versions_and_the_fix() -> None:
    with pytest.raises(ServerError, match=r"runs server_ext 0\.0\.1") as info:
        check_server_version("sc://h:1", "0.0.1")
    assert "pip install flink-tableapi-spark==" in str(info.value)


def test_unreachable_server_says_how_to_start_one() -> None:
    env = TableEnvironment.create(remote=f"sc://localhost:{free_port()}")
    with pytest.raises(ServerError, match="python -m server_ext serve"):
        env.from_elements([(1,)], ["a"]).execute().collect()


def test_server_reports_its_marker(env: TableEnvironment) -> None:
    from tableapi import __version__

    assert env.spark.conf.get(VERSION_CONF) == __version__
    assert "RocksDB" in env.spark.conf.get("spark.sql.streaming.stateStore.providerClass")


def test_to_spark_hands_over_a_connect_dataframe(env: TableEnvironment) -> None:
    table = env.from_elements([(1, "a"), (2, "b")], ["id", "s"]).where(col("id") > 1)
    df = table.to_spark()
    assert df.columns == ["id", "s"]
    assert [tuple(r) for r in df.collect()] == [(2, "b")]
    back = env.from_spark(df.selectExpr("id * 10 AS x"))
    assert [tuple(r) for r in back.execute().collect()] == [(20,)]


def test_the_server_runs_where_the_fixture_says(env: TableEnvironment, test_server) -> None:
    """With the docker fixture, Python workers run in the container (its hostname is the
    container id's first 12 characters); with the local one, on this machine."""
    hostname = udf(lambda _: socket.gethostname(), "STRING", name="hostname")
    table = env.from_elements([(1,)], ["a"]).select(hostname(col("a")).alias("host"))
    remote = table.execute().collect()[0][0]
    if test_server.kind == "docker":
        assert remote == test_server.container_id[:12]
        assert remote != socket.gethostname()
    else:
        assert remote == socket.gethostname()
    if os.environ.get("TABLEAPI_TEST_SERVER") == "docker":
        assert test_server.kind == "docker"


def test_a_client_of_another_version_gets_a_clear_error(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tableapi import __version__, session

    monkeypatch.setattr(session, "CLIENT_VERSION", "0.0.9")
    env = TableEnvironment.create(remote=server_url)
    with pytest.raises(ServerError, match=rf"runs server_ext {re.escape(__version__)}, but") as e:
        env.from_elements([(1,)], ["a"]).execute().collect()
    assert "this client is 0.0.9" in str(e.value)
    assert "pip install flink-tableapi-spark==0.0.9" in str(e.value)
