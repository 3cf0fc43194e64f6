"""Apache Flink's side of bench/nexmark.py: run in a PyFlink virtualenv, not the project's.

    /path/to/flink-venv/bin/python bench/flink_nexmark.py job.json

``job.json`` (written by ``nexmark.flink_nexmark_runs``)::

    {"runs": 5, "parallelism": 2, "jar_dir": "/data/flink-jars", "side_input": "/data/side.tsv",
     "queries": [{"label": "q4@1000000", "query": "q4", "events_dir": "/data/events-1000000"}]}

Each query gets a table environment of its own (streaming mode, ``hashmap``, ``parallelism``,
``pipeline.jars`` = tests/nexmark/flink_runner's ``flink_jars``, compiled into ``jar_dir`` when
missing), its statements (``flink_statements``: the event tables over ``events_dir``, its
view, side input, ``CREATE FUNCTION``), its blackhole sink (Nexmark's ``CREATE TABLE
nexmark_qN``), then its ``INSERT INTO nexmark_qN`` once to warm up and ``runs`` timed runs,
each in two windows as ``flink_bench.py`` times them (end to end: ``execute_sql`` of the INSERT
to the end of ``wait()``; engine: the job's net runtime), and one more untimed job counting the
result's rows (``flink_bench.count``: ``SELECT COUNT(*)`` over the query's SELECT). Prints one
JSON line per query: ``{"label", "end_to_end": [s, ...], "engine": [s, ...], "rows", "seconds"}``
(``seconds``: the query's whole time here), or ``{"label", "error", "seconds"}`` when Flink
fails it (the others still run). Standard library and PyFlink only.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.nexmark

from flink_bench import count, table_env

from tests.nexmark.flink_runner import flink_jars, flink_statements
from tests.nexmark.queries import load


def run_query(
    spec: dict[str, Any], jars: list[str], side_input: str, runs: int, parallelism: int
) -> dict[str, Any]:
    """One query's timed runs and its rows (see the module's docstring)."""
    query = load(spec["query"])
    env = table_env("hashmap", parallelism, jars)
    for statement in flink_statements(spec["query"], Path(spec["events_dir"]), side_input):
        env.execute_sql(statement)
    env.execute_sql(query.sink)
    end_to_end, engine = [], []
    for i in range(runs + 1):  # the first run warms up (class loading, JIT)
        start = time.perf_counter()
        result = env.execute_sql(query.insert)
        result.wait()
        seconds = time.perf_counter() - start
        job = result.get_job_client().get_job_execution_result().result()
        if i:
            end_to_end.append(seconds)
            engine.append(job.get_net_runtime() / 1e3)
    rows = count(env, {"sql": query.select})
    return {"label": spec["label"], "end_to_end": end_to_end, "engine": engine, "rows": rows}


def main(path: str) -> None:
    import pyflink  # type: ignore[import-not-found]  # (Flink's virtualenv only)

    job = json.loads(Path(path).read_text())
    lib = Path(pyflink.__file__).resolve().parent / "lib"
    jars = [j.resolve().as_uri() for j in flink_jars(lib, Path(job["jar_dir"]))]
    for spec in job["queries"]:
        start = time.perf_counter()
        try:
            out = run_query(
                spec, jars, job["side_input"], int(job["runs"]), int(job.get("parallelism", 2))
            )
        except Exception as e:  # reported per query; the others still run
            traceback.print_exc(file=sys.stderr)
            out = {"label": spec["label"], "error": f"{type(e).__name__}: {str(e)[:500]}"}
        print(json.dumps({**out, "seconds": time.perf_counter() - start}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
