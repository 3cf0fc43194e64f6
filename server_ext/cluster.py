"""A Spark standalone cluster from the project's own install: master, workers, and what the
Connect server (the driver) needs when its executors run on other hosts.

Nothing here needs a container, but the image runs each role:

    python -m server_ext master                           # spark://<this host>:7077
    python -m server_ext worker spark://spark-master:7077 # --cores, --memory, --work-dir
    TABLEAPI_MASTER=spark://spark-master:7077 TABLEAPI_SHARED_DIR=/shared \\
        python -m server_ext serve --host 0.0.0.0         # the driver

A driver with executors elsewhere needs (:func:`cluster_conf`):

- an address the executors can reach: ``spark.driver.host`` (``TABLEAPI_DRIVER_HOST``, else this
  host's name) with the driver bound to every interface; a loopback ``SPARK_LOCAL_IP`` (what a
  ``local[N]`` server uses) would make every executor fail to connect back;
- a directory every host sees at the same path (``TABLEAPI_SHARED_DIR``): the warehouse, where
  the end-of-input table of bounded streaming queries lives, and the root of the checkpoints
  of queries that name none (the memory sink's), where executors write the state stores of
  the partitions they run; a partition that moves to another executor reads it there.

Example::

    >>> is_local_master("local[2]"), is_local_master("spark://m:7077")
    (True, False)
    >>> sorted(cluster_conf("/shared", "tcl-server"))  # doctest: +NORMALIZE_WHITESPACE
    ['spark.driver.bindAddress', 'spark.driver.host', 'spark.sql.streaming.checkpointLocation',
     'spark.sql.warehouse.dir']
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
MASTER_PORT = 7077
#: A directory every host of the cluster sees at the same path (a shared volume, NFS, ...).
SHARED_DIR_ENV = "TABLEAPI_SHARED_DIR"
#: The name or address executors reach the driver at (default: this host's name).
DRIVER_HOST_ENV = "TABLEAPI_DRIVER_HOST"
WAREHOUSE = "spark.sql.warehouse.dir"
CHECKPOINT_ROOT = "spark.sql.streaming.checkpointLocation"


def is_local_master(master: str) -> bool:
    """Does ``master`` run executors inside the driver's JVM (``local``, ``local[N]``, ...)?"""
    return master.split("[", 1)[0] in ("local", "local-cluster")


def cluster_conf(shared_dir: str, driver_host: str) -> dict[str, str]:
    """The confs of a driver whose executors run on other hosts (see the module's text)."""
    shared = shared_dir.rstrip("/")
    return {
        "spark.driver.host": driver_host,
        "spark.driver.bindAddress": "0.0.0.0",
        WAREHOUSE: f"{shared}/warehouse",
        CHECKPOINT_ROOT: f"{shared}/checkpoints",
    }


def driver_cluster_conf(
    master: str, extra: Mapping[str, str], environ: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """:func:`cluster_conf` for a server on ``master``, from the environment; empty for a
    local master. Confs the operator set (``extra``) win. Raises ValueError, saying what to
    set, when a cluster driver has no shared directory.

    >>> driver_cluster_conf("local[2]", {})
    {}
    >>> driver_cluster_conf("spark://m:7077", {}, {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: A server on the cluster spark://m:7077 needs a directory every host sees...
    >>> driver_cluster_conf("spark://m:7077", {}, {"TABLEAPI_SHARED_DIR": "/shared",
    ...                     "TABLEAPI_DRIVER_HOST": "tcl-server"})["spark.sql.warehouse.dir"]
    '/shared/warehouse'
    """
    if is_local_master(master):
        return {}
    shared = environ.get(SHARED_DIR_ENV, "").strip()
    if not shared and not (WAREHOUSE in extra and CHECKPOINT_ROOT in extra):
        raise ValueError(
            f"A server on the cluster {master} needs a directory every host sees at the same "
            f"path (a shared volume): its executors write streaming state there, and bounded "
            f"streaming queries signal their end through a table there. Set {SHARED_DIR_ENV}="
            f"/path/to/shared (or --conf {WAREHOUSE}=... and --conf {CHECKPOINT_ROOT}=... on "
            "shared storage)."
        )
    conf = cluster_conf(shared or "/unused", environ.get(DRIVER_HOST_ENV) or socket.gethostname())
    if not shared:
        del conf[WAREHOUSE], conf[CHECKPOINT_ROOT]
    return conf


def spark_home() -> Path:
    """The Spark that pyspark ships (its ``bin/spark-class`` starts the standalone roles)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def role_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The environment of a master, a worker or a cluster driver: a loopback
    ``SPARK_LOCAL_IP`` (the image's default, right for ``local[N]``) is dropped so that Spark
    binds and advertises this host's address; Python workers run this interpreter.

    >>> "SPARK_LOCAL_IP" in role_environment({"SPARK_LOCAL_IP": "127.0.0.1"})
    False
    >>> role_environment({"SPARK_LOCAL_IP": "10.1.2.3"})["SPARK_LOCAL_IP"]
    '10.1.2.3'
    """
    env = dict(environ)
    if env.get("SPARK_LOCAL_IP", "").startswith("127.") or env.get("SPARK_LOCAL_IP") in (
        "localhost",
        "::1",
    ):
        del env["SPARK_LOCAL_IP"]
    env["PYSPARK_PYTHON"] = sys.executable
    env.setdefault("SPARK_HOME", str(spark_home()))
    return env


def master_command(host: str, port: int, webui_port: int) -> list[str]:
    """``spark-class`` running a standalone master.

    >>> master_command("spark-master", 7077, 8080)[1:]  # doctest: +NORMALIZE_WHITESPACE
    ['org.apache.spark.deploy.master.Master', '--host', 'spark-master', '--port', '7077',
     '--webui-port', '8080']
    """
    return [
        str(spark_home() / "bin" / "spark-class"),
        MASTER_CLASS,
        "--host",
        host,
        "--port",
        str(port),
        "--webui-port",
        str(webui_port),
    ]


def worker_command(
    master_url: str, cores: int | None, memory: str | None, work_dir: str | None
) -> list[str]:
    """``spark-class`` running a standalone worker of ``master_url``; its work directory
    (executors' files and logs) defaults to a writable temporary one, not Spark's home (inside
    the virtualenv, which the image's user cannot write).

    >>> worker_command("spark://m:7077", 1, "1g", "/tmp/w")[1:]  # doctest: +NORMALIZE_WHITESPACE
    ['org.apache.spark.deploy.worker.Worker', '--work-dir', '/tmp/w', '--cores', '1',
     '--memory', '1g', 'spark://m:7077']
    """
    if not master_url.startswith("spark://"):
        raise ValueError(f"A worker needs its master's URL, spark://host:port; got {master_url!r}")
    command = [str(spark_home() / "bin" / "spark-class"), WORKER_CLASS]
    command += ["--work-dir", work_dir or tempfile.mkdtemp(prefix="spark-worker-")]
    if cores:
        command += ["--cores", str(cores)]
    if memory:
        command += ["--memory", memory]
    return [*command, master_url]


def run(command: list[str]) -> None:
    """Replace this process with ``command`` (signals then reach Spark's JVM directly)."""
    print(" ".join(command), flush=True)
    os.execve(command[0], command, role_environment())
