"""The Python of a cluster's executors, checked when a client connects.

A server whose master runs executors on other hosts (``spark://...``) only knows its own
``server_ext``: the Python workers of each executor import theirs, from whatever that host
has installed. So on connect the client runs a small job over many tasks, each reporting its
host, its executor, its interpreter and the ``server_ext`` version it imports, and refuses a
cluster with a host whose version differs, or that has none, naming the host and the fix. (A
JVM-tier join needs no Python on the executors, but lookup joins, the Python tier and Python
UDFs do; a mismatch there would fail mid-query with a stack trace, or worse, run other code.)

One job need not reach every executor: one that has just registered gets tasks only once it
has started (until then the driver offers it no cores), and the others can take all the tasks
in a few milliseconds. So the job runs again, up to :data:`CHECK_SETTLE_S`, until as many
executors have reported as the driver has registered (the JVM plugin's ``executors``
relation). Executors that register after the check are not covered by it; on a local master
nothing runs.

Example::

    >>> reports = ["w1|7|/venv/bin/python|0.1.0", "w2|9|/venv/bin/python|missing: No module"]
    >>> print(worker_problem(reports, "0.1.0", "spark://m:7077"))  # doctest: +ELLIPSIS
    A worker of the cluster spark://m:7077 cannot run server_ext 0.1.0: w2 (Python /venv/bin/...
    >>> worker_problem(reports[:1], "0.1.0", "spark://m:7077") is None
    True
    >>> len(executors_reporting(reports + ["w1|7|/venv/bin/python|0.1.0"]))
    2
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkException

from server_ext.cluster import is_local_master
from tableapi.compiler.jvm_operators import jvm_executors
from tableapi.errors import ServerError

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

#: Tasks of the check job: enough that every executor of a small cluster runs some.
CHECK_TASKS = 16
#: How long the check waits for executors (a cluster with no worker never runs a task).
CHECK_TIMEOUT_S = 300.0
#: How long the check runs its job again for registered executors that have not reported
#: (one that has just registered starts in a second or two; a lost one is never heard from).
CHECK_SETTLE_S = 30.0
CHECK_PAUSE_S = 0.2
MASTER_CONF = "spark.master"


def _report(_: Any) -> str:
    """What one Python worker has: ``host|executor|interpreter|version`` (or ``missing:
    why``), the executor told by the worker's parent process (the executor's Python daemon, or
    the executor itself without one). Runs on the executors: it imports nothing of this
    package (pickled by value)."""
    import os
    import socket
    import sys

    try:
        import server_ext

        version = str(server_ext.__version__)
    except Exception as e:  # any import failure is what the check reports
        version = f"missing: {type(e).__name__}: {e}"
    return f"{socket.gethostname()}|{os.getppid()}|{sys.executable}|{version}"


def worker_problem(reports: Iterable[str], expected: str, master: str) -> str | None:
    """The message for hosts whose Python lacks ``server_ext`` ``expected``, or None."""
    bad = []
    for report in sorted(set(reports)):
        host, _, python, version = report.split("|", 3)
        if version.startswith("missing: "):
            bad.append(f"{host} (Python {python}: no server_ext, {version[9:]})")
        elif version != expected:
            bad.append(f"{host} (Python {python}: server_ext {version})")
    if not bad:
        return None
    return (
        f"A worker of the cluster {master} cannot run server_ext {expected}: "
        + "; ".join(bad)
        + f".\nFix: on each such host install the same version into the Python the executors "
        f"run (spark.pyspark.python): pip install flink-tableapi-spark=={expected} "
        "(the project's image has it), then restart that worker."
    )


def executors_reporting(reports: Iterable[str]) -> set[str]:
    """The executors (``host|process``) that ``reports`` come from."""
    return {"|".join(report.split("|", 2)[:2]) for report in reports}


def check_workers(spark: SparkSession, url: str, expected: str) -> None:
    """Refuse a cluster server whose executors' Python lacks ``server_ext`` ``expected``
    (see the module's text); nothing on a local master."""
    master = spark.conf.get(MASTER_CONF, "local") or "local"
    if is_local_master(master):
        return
    reports = set(_reports(spark, url, master, expected))
    deadline = time.monotonic() + CHECK_SETTLE_S
    while not worker_problem(reports, expected, master) and time.monotonic() < deadline:
        try:
            registered = len(jvm_executors(spark))
        except PySparkException:  # a server without the plugin: one job is all it gets
            break
        if len(executors_reporting(reports)) >= registered:
            break
        time.sleep(CHECK_PAUSE_S)
        reports.update(_reports(spark, url, master, expected))
    problem = worker_problem(reports, expected, master)
    if problem:
        raise ServerError(problem)


def _reports(spark: SparkSession, url: str, master: str, expected: str) -> list[str]:
    """One run of the check's job: the reports of the executors that ran its tasks."""
    from pyspark.sql.connect import functions as F
    from pyspark.sql.types import StringType

    report: Any = F.udf(_report_by_value(), StringType())
    job = spark.range(0, CHECK_TASKS, 1, CHECK_TASKS).select(report("id").alias("r")).distinct()
    result: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.extend(row["r"] for row in job.collect())
        except BaseException as e:  # handed to the caller's thread
            failure.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(CHECK_TIMEOUT_S)
    if worker.is_alive():
        spark.interruptAll()
        raise ServerError(
            f"The Spark Connect server at {url} runs on the cluster {master}, but no executor "
            f"ran a task within {CHECK_TIMEOUT_S:.0f} s: is a worker registered with the "
            "master and does it have free cores? (The master's web UI lists its workers.)"
        )
    if failure:
        first = str(failure[0]).strip().splitlines()[0] if str(failure[0]).strip() else ""
        raise ServerError(
            f"The executors of the cluster {master} (server {url}) cannot run Python: "
            f"{first}\nFix: each worker needs Python with flink-tableapi-spark=={expected} "
            "at the path spark.pyspark.python names (the project's image has it)."
        ) from None
    return result


def _report_by_value() -> Any:
    """:func:`_report` as a function cloudpickle sends by value: workers need not have this
    package (that is what is checked)."""
    import types

    return types.FunctionType(_report.__code__, {"__builtins__": __builtins__}, "_report")
