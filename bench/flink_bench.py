"""Apache Flink's side of the join benchmarks: run in a PyFlink virtualenv, not the project's.

    /path/to/flink-venv/bin/python bench/flink_bench.py job.json

``job.json`` (written by the benchmarks' :func:`tiers.flink_runs`)::

    {"tables": [{"name": "L", "path": "/data/left", "columns": [["k", "BIGINT"], ...],
                 "extra": ["WATERMARK FOR t AS t - INTERVAL '1' DAY",
                           "PRIMARY KEY (k) NOT ENFORCED"], "format": "csv"}],
     "queries": [{"label": "W1", "sql": "SELECT ...", "output": [["k", "BIGINT"], ...],
                  "backend": "hashmap", "multi_join": false,
                  "config": {"table.exec.mini-batch.enabled": "true", ...}}],
     "parallelism": 2, "runs": 5, "jars": ["file:///.../changelog-csv-<hash>.jar"]}

Every table reads CSV files (no header) with Flink's filesystem connector, bounded (``format``
defaults to ``csv``; ``changelog-csv``, the op first, comes from one of ``jars``, Flink's
``pipeline.jars``); each query's ``config`` is set on its table environment; each query
runs in streaming mode into a ``blackhole`` sink, once to warm up, then ``runs`` timed runs.
Each run gives two windows: end to end (``execute_sql`` of the INSERT, which plans the job and
starts a MiniCluster for it, to the end of ``wait()``) and the job's net runtime (Flink's own
time of the job, from its JobExecutionResult). Then one more, untimed job counts the result's
rows: ``SELECT COUNT(*)`` over the query (mini-batched, so that the count's own changelog
stays short), the changelog applied. Prints one JSON line per query: ``{"label", "backend",
"end_to_end": [s, ...], "engine": [s, ...], "rows"}``.
This file imports only PyFlink and the standard library.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def table_env(
    backend: str, parallelism: int, jars: list[str], config: dict[str, str] | None = None
) -> Any:
    from pyflink.common import Configuration
    from pyflink.table import EnvironmentSettings, TableEnvironment

    conf = Configuration()
    conf.set_string("state.backend.type", backend)
    conf.set_string("parallelism.default", str(parallelism))
    conf.set_string("table.exec.resource.default-parallelism", str(parallelism))
    if jars:
        conf.set_string("pipeline.jars", ";".join(jars))
    for key, value in (config or {}).items():
        conf.set_string(key, value)
    settings = (
        EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build()
    )
    return TableEnvironment.create(settings)


def register(env: Any, tables: list[dict[str, Any]]) -> None:
    for t in tables:
        cols = [f"`{n}` {ty}" for n, ty in t["columns"]] + list(t.get("extra", []))
        env.execute_sql(
            f"CREATE TEMPORARY TABLE `{t['name']}` ({', '.join(cols)}) WITH ("
            f"'connector' = 'filesystem', 'path' = '{t['path']}', "
            f"'format' = '{t.get('format', 'csv')}')"
        )


def run(env: Any, query: dict[str, Any], n: int) -> tuple[float, float]:
    """One run into a new blackhole table: (end-to-end seconds, net runtime seconds)."""
    sink = f"sink_{n}"
    cols = ", ".join(f"`{c}` {ty}" for c, ty in query["output"])
    env.execute_sql(f"CREATE TEMPORARY TABLE {sink} ({cols}) WITH ('connector' = 'blackhole')")
    start = time.perf_counter()
    result = env.execute_sql(f"INSERT INTO {sink} {query['sql']}")
    result.wait()
    seconds = time.perf_counter() - start
    job = result.get_job_client().get_job_execution_result().result()
    return seconds, job.get_net_runtime() / 1e3


def count(env: Any, query: dict[str, Any]) -> int:
    """The query's result rows: the last value of a streaming COUNT(*) over it."""
    from pyflink.common import RowKind

    config = env.get_config()
    own = query.get("config", {})
    counting = {
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "1 s",
        "table.exec.mini-batch.size": "100000",
    }
    for key, value in counting.items():
        config.set(key, value)
    try:
        rows = 0
        with env.execute_sql(f"SELECT COUNT(*) FROM ({query['sql']})").collect() as changes:
            for row in changes:
                if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                    rows = row[0]
        return int(rows)
    finally:  # the query's own settings again (its environment is its config's alone)
        config.set(
            "table.exec.mini-batch.enabled", own.get("table.exec.mini-batch.enabled", "false")
        )
        for key in counting:
            if key in own:
                config.set(key, own[key])


def main(path: str) -> None:
    job = json.loads(open(path).read())
    runs = int(job.get("runs", 5))
    envs: dict[str, Any] = {}
    n = 0
    for query in job["queries"]:
        backend = query.get("backend", "hashmap")
        config = query.get("config", {})
        key = json.dumps([backend, config], sort_keys=True)
        if key not in envs:
            envs[key] = table_env(backend, job.get("parallelism", 2), job.get("jars", []), config)
            register(envs[key], job["tables"])
        env = envs[key]
        multi = "true" if query.get("multi_join") else "false"
        env.get_config().set("table.optimizer.multi-join.enabled", multi)
        end_to_end, engine = [], []
        for i in range(runs + 1):  # the first run warms up (class loading, JIT)
            n += 1
            seconds, net = run(env, query, n)
            if i:
                end_to_end.append(seconds)
                engine.append(net)
        rows = count(env, query)
        out = {"label": query["label"], "backend": backend, "end_to_end": end_to_end}
        print(json.dumps({**out, "engine": engine, "rows": rows}))
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
