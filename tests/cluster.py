"""A Spark standalone cluster in containers: a master, workers and the Spark Connect server
as the driver, all from the project's image (``tableapi-server``, ``docker/build.sh``), plus a
PostgreSQL (``tableapi-postgres``, ``docker/build-postgres.sh``), on a Docker network of this
run's own. Every container mounts one host directory at its own path (test data, the
server's warehouse and checkpoints: executors on every worker read and write there), as
``docker/compose.yaml``'s cluster does with a volume.

Example::

    with start_cluster(workers=2) as cluster:
        env = TableEnvironment.create(remote=cluster.url)
        ...
        cluster.kill_worker("worker-2")
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from tests.postgres import DATABASE, PASSWORD, USER
from tests.postgres import IMAGE as POSTGRES_IMAGE
from tests.servers import CONTAINER_PORT, IMAGE, OWNER_LABEL, LoopbackForwarder, _alive

MASTER, SERVER, POSTGRES = "spark-master", "spark-server", "postgres"
MASTER_URL = f"spark://{MASTER}:7077"
START_TIMEOUT_S = 240
#: Small daemons: a 2-core machine runs the whole cluster beside the tests.
DAEMON_ENV = {"SPARK_DAEMON_MEMORY": "256m"}
#: The master's REST submission server would take applications from anyone on the network.
MASTER_OPTS = "-Dspark.master.rest.enabled=false"


@attrs.define
class Cluster:
    """A running cluster as the tests see it."""

    url: str  # sc://localhost:<port>/;token=...: the Connect server
    shared_dir: Path  # the same path on the host and in every container
    network: Any
    master: Any
    server: Any
    postgres: Any
    postgres_port: int  # where the test process reaches PostgreSQL
    postgres_host: str = "127.0.0.1"
    workers: dict[str, Any] = attrs.field(factory=dict)
    worker_memory: str = "1g"

    @property
    def postgres_url(self) -> str:
        """The jdbc URL the cluster's executors reach PostgreSQL at."""
        return f"jdbc:postgresql://{POSTGRES}:5432/{DATABASE}"

    def postgres_connect(self) -> Any:
        """A psycopg connection from the test process."""
        import psycopg

        return psycopg.connect(
            host=self.postgres_host,
            port=self.postgres_port,
            user=USER,
            password=PASSWORD,
            dbname=DATABASE,
            autocommit=True,
        )

    def add_worker(
        self, name: str, executor_pythonpath: str | None = None, wait: bool = True
    ) -> Any:
        """Start a worker (1 core) that registers with the master; with ``wait``, until the
        server's application has an executor on it. ``executor_pythonpath``: its executors'
        Python workers import from there first (the worker itself starts with the image's)."""
        launched = self._executors_launched()
        command = (
            f"python -m server_ext worker {MASTER_URL} --cores 1 --memory "
            f"{self.worker_memory} --work-dir /tmp/spark-work"
        )
        if executor_pythonpath:  # set after server_ext has started the worker's launcher
            command = [
                "python",
                "-c",
                f"import os; from server_ext import cluster; "
                f"os.environ['PYTHONPATH'] = {executor_pythonpath!r}; "
                f"cluster.run(cluster.worker_command({MASTER_URL!r}, 1, "
                f"{self.worker_memory!r}, '/tmp/spark-work'))",
            ]
        container = _container(self, name).with_envs(**DAEMON_ENV).with_command(command)
        container.start()
        self.workers[name] = container
        if wait:
            _wait(lambda: self._executors_launched() > launched, f"an executor on {name}")
            # launched is not registered: until the driver has it, jobs run without it
            _wait(lambda: _registered(container), f"{name}'s executor registered with the driver")
        return container

    def kill_worker(self, name: str) -> None:
        """SIGKILL a worker's container (its executor dies with it)."""
        self.workers.pop(name).get_wrapped_container().kill()

    def stop_worker(self, name: str) -> None:
        self.workers.pop(name).stop()

    def _executors_launched(self) -> int:
        return len(re.findall(r"Launching executor app-\S+ on worker", logs(self.master)))

    def server_log(self) -> str:
        return logs(self.server)


def _container(cluster: Cluster, name: str) -> Any:
    """The project's image on the cluster's network as ``name``, with the shared directory."""
    from testcontainers.core.container import DockerContainer

    return (
        DockerContainer(IMAGE)
        .with_name(f"{name}-{cluster.network.name[:8]}")
        .with_kwargs(
            labels={OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"},
            hostname=name,
            # the image's health check asks for the Connect port, which only the server has
            healthcheck={"test": ["NONE"]} if name != SERVER else None,
        )
        .with_network(cluster.network)
        .with_network_aliases(name)
        .with_volume_mapping(str(cluster.shared_dir), str(cluster.shared_dir), "rw")
    )


def _registered(worker: Any) -> bool:
    """Whether an executor of ``worker`` has registered with the driver (its log says so)."""
    code, _ = worker.get_wrapped_container().exec_run(
        ["sh", "-c", "grep -qs 'Successfully registered with driver' /tmp/spark-work/*/*/stderr"]
    )
    return code == 0


def logs(container: Any) -> str:
    """A container's output so far (Spark's daemons log to standard error)."""
    out, err = container.get_logs()
    return (out or b"").decode(errors="replace") + (err or b"").decode(errors="replace")


def _wait(done: Any, what: str, timeout_s: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the cluster did not get {what} within {timeout_s:.0f} s")
        time.sleep(1)


def cluster_unavailable() -> str | None:
    """Why a cluster cannot be started here (no Docker engine, an image missing), or None."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as e:
        return f"no Docker engine answers ({type(e).__name__})"
    for image, build in ((IMAGE, "docker/build.sh"), (POSTGRES_IMAGE, "docker/build-postgres.sh")):
        try:
            client.images.get(image)
        except Exception:
            return f"image {image} is missing (build it: bash {build})"
    return None


@contextlib.contextmanager
def start_cluster(
    workers: int = 2,
    worker_memory: str = "1g",
    server_memory: str = "1500m",
    server_conf: dict[str, str] | None = None,
) -> Iterator[Cluster]:
    """A master, ``workers`` workers (1 core each), the Connect server on the master (with
    ``server_conf`` as ``--conf``), and PostgreSQL; everything is removed on exit."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # no ryuk image here
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.network import Network
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    remove_orphans()
    shared = Path(tempfile.mkdtemp(prefix="tableapi-cluster-"))
    shared.chmod(0o777)
    token = secrets.token_hex(16)
    network = Network().create()
    cluster = Cluster(
        url="",
        shared_dir=shared,
        network=network,
        master=None,
        server=None,
        postgres=None,
        postgres_port=0,
        worker_memory=worker_memory,
    )
    started: list[Any] = []

    def start(container: Any) -> Any:
        container.start()
        started.append(container)
        return container

    try:
        cluster.postgres = start(
            DockerContainer(POSTGRES_IMAGE)
            .with_name(f"{POSTGRES}-{network.name[:8]}")
            .with_kwargs(labels={OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"})
            .with_network(network)
            .with_network_aliases(POSTGRES)
            .with_envs(POSTGRES_USER=USER, POSTGRES_PASSWORD=PASSWORD, POSTGRES_DB=DATABASE)
            .with_exposed_ports(5432)
            .waiting_for(LogMessageWaitStrategy("ready to accept connections"))
        )
        cluster.postgres_port = int(cluster.postgres.get_exposed_port(5432))
        cluster.postgres_host = cluster.postgres.get_container_host_ip()
        cluster.master = start(
            _container(cluster, MASTER)
            .with_envs(**DAEMON_ENV, SPARK_MASTER_OPTS=MASTER_OPTS)
            .with_command(f"python -m server_ext master --host {MASTER}")
            .waiting_for(
                LogMessageWaitStrategy("I have been elected leader").with_startup_timeout(
                    START_TIMEOUT_S
                )
            )
        )
        for i in range(1, workers + 1):
            cluster.add_worker(f"worker-{i}", wait=False)
        _wait(
            lambda: logs(cluster.master).count("Registering worker") >= workers,
            f"{workers} workers registered",
        )
        cluster.server = start(
            _container(cluster, SERVER)
            .with_envs(
                TABLEAPI_TOKEN=token,
                TABLEAPI_MASTER=MASTER_URL,
                TABLEAPI_SHARED_DIR=str(shared / "spark"),
                TABLEAPI_DRIVER_HOST=SERVER,
                TABLEAPI_SERVER_MEMORY=server_memory,
            )
            .with_command(
                " ".join(
                    ["python -m server_ext serve"]
                    + [f"--conf {k}={v}" for k, v in (server_conf or {}).items()]
                )
            )
            .with_exposed_ports(CONTAINER_PORT)
            .waiting_for(
                LogMessageWaitStrategy("listening on sc://").with_startup_timeout(START_TIMEOUT_S)
            )
        )
        _wait(lambda: cluster._executors_launched() >= workers, f"{workers} executors")
        host = cluster.server.get_container_host_ip()
        port = int(cluster.server.get_exposed_port(CONTAINER_PORT))
        if host not in ("127.0.0.1", "localhost", "::1"):
            port = LoopbackForwarder(host, port).port
        cluster.url = f"sc://localhost:{port}/;token={token}"
        yield cluster
    finally:
        for c in [*started, *cluster.workers.values()]:
            with contextlib.suppress(Exception):
                c.get_wrapped_container().remove(force=True)
        with contextlib.suppress(Exception):
            network.remove()
        shutil.rmtree(shared, ignore_errors=True)


def remove_orphans() -> None:
    """Remove cluster containers and networks left by killed runs (nothing else does)."""
    import docker

    client = docker.from_env()
    for c in client.containers.list(all=True, filters={"label": OWNER_LABEL}):
        host, _, pid = c.labels[OWNER_LABEL].rpartition(":")
        if host == socket.gethostname() and not _alive(int(pid)):
            c.remove(force=True)
