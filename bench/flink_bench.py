"""Apache Flink's side of the join benchmarks: run in a PyFlink virtualenv, not the project's.

    /path/to/flink-venv/bin/python bench/flink_bench.py job.json

``job.json`` (written by the benchmarks' :func:`flink_times`)::

    {"tables": [{"name": "L", "path": "/data/left", "columns": [["k", "BIGINT"], ...],
                 "extra": ["rowtime AS TO_TIMESTAMP_LTZ(t_ms, 3)",
                           "WATERMARK FOR rowtime AS rowtime", "PRIMARY KEY (k) NOT ENFORCED"]}],
     "queries": [{"label": "W1", "sql": "SELECT ...", "output": [["k", "BIGINT"], ...],
                  "backend": "hashmap", "multi_join": false}],
     "parallelism": 2}

Every table reads CSV files (no header) with Flink's filesystem connector, bounded; each query
runs in streaming mode into a ``blackhole`` sink, once to warm up, then timed (submission to
the end of the job). Prints one JSON line per query: ``{"label", "seconds", "backend"}``.
This file imports only PyFlink and the standard library.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def table_env(backend: str, parallelism: int) -> Any:
    from pyflink.common import Configuration
    from pyflink.table import EnvironmentSettings, TableEnvironment

    conf = Configuration()
    conf.set_string("state.backend.type", backend)
    conf.set_string("parallelism.default", str(parallelism))
    conf.set_string("table.exec.resource.default-parallelism", str(parallelism))
    settings = (
        EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build()
    )
    return TableEnvironment.create(settings)


def register(env: Any, tables: list[dict[str, Any]]) -> None:
    for t in tables:
        cols = [f"`{n}` {ty}" for n, ty in t["columns"]] + list(t.get("extra", []))
        env.execute_sql(
            f"CREATE TEMPORARY TABLE `{t['name']}` ({', '.join(cols)}) WITH ("
            f"'connector' = 'filesystem', 'path' = '{t['path']}', 'format' = 'csv')"
        )


def run(env: Any, query: dict[str, Any], n: int) -> float:
    multi = "true" if query.get("multi_join") else "false"
    env.get_config().set("table.optimizer.multi-join.enabled", multi)
    sink = f"sink_{n}"
    cols = ", ".join(f"`{c}` {ty}" for c, ty in query["output"])
    env.execute_sql(f"CREATE TEMPORARY TABLE {sink} ({cols}) WITH ('connector' = 'blackhole')")
    start = time.perf_counter()
    env.execute_sql(f"INSERT INTO {sink} {query['sql']}").wait()
    return time.perf_counter() - start


def main(path: str) -> None:
    job = json.loads(open(path).read())
    envs: dict[str, Any] = {}
    n = 0
    for query in job["queries"]:
        backend = query.get("backend", "hashmap")
        if backend not in envs:
            envs[backend] = table_env(backend, job.get("parallelism", 2))
            register(envs[backend], job["tables"])
        env = envs[backend]
        n += 1
        run(env, query, n)  # warm-up: the first job of a mini cluster pays for its start
        n += 1
        seconds = run(env, query, n)
        print(json.dumps({"label": query["label"], "seconds": seconds, "backend": backend}))
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
