"""W1 on a Spark standalone cluster in containers, on one worker and on two (issue 24).

    .venv/bin/python bench/cluster.py                       # 1M x 1M rows, 500k keys
    .venv/bin/python bench/cluster.py --rows 200000 --runs 2 # a quick look

A master, the workers (1 core each) and the Spark Connect server as the driver run in
containers from the project's image (tests/cluster.py, as the cluster tests); the data are
Parquet files on the directory they share. W1 (the inner join of bench/streaming_join.py) runs
on the JVM tier (hashmap) into Spark's no-op sink in one micro-batch, ``--runs`` times after a
warm-up, first with one worker, then after a second has joined. On this 2-core machine the
point is that it runs and how its cost splits, not a speed-up: per run the end-to-end and
engine times, the micro-batch's phases (planning, the batch itself, the offset and commit
logs), the state operator's commit time (checkpoint I/O: the state files written to the shared
directory) and its memory, and, from the driver's REST API, each executor's task time and
shuffle read and write of the join's stages.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from noop_run import run_to_noop
from streaming_join import make_data, register
from tiers import on_backend

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests/cluster.py starts the cluster

from tableapi import TableEnvironment, col  # noqa: E402
from tableapi.result import tableau  # noqa: E402
from tests.cluster import Cluster, start_cluster  # noqa: E402

#: The driver's web UI answers its REST API (off by default on the product's server).
UI_CONF = {"spark.ui.enabled": "true"}
_STAGES = """
import json, urllib.request
base = "http://localhost:4040/api/v1/applications"
app = json.load(urllib.request.urlopen(base))[0]["id"]
stages = json.load(urllib.request.urlopen(f"{base}/{app}/stages?details=true"))
print(json.dumps([
    {"id": s["stageId"], "name": s["name"][:60],
     "executors": {e: {"task_ms": v["taskTime"], "read": v["shuffleRead"],
                       "write": v["shuffleWrite"]}
                   for e, v in (s.get("executorSummary") or {}).items()}}
    for s in stages if s["status"] == "COMPLETE"]))
"""


def executor_split(cluster: Cluster, since_stage: int) -> tuple[dict[str, dict[str, int]], int]:
    """Task time and shuffle bytes per executor over the completed stages after
    ``since_stage``; and the highest stage id seen."""
    code, out = cluster.server.exec(["python", "-c", _STAGES])
    if code != 0:
        raise RuntimeError(f"the driver's REST API did not answer: {out!r}")
    stages = json.loads(out)
    totals: dict[str, dict[str, int]] = {}
    for stage in stages:
        if stage["id"] <= since_stage:
            continue
        for executor, v in stage["executors"].items():
            t = totals.setdefault(executor, {"task_ms": 0, "read": 0, "write": 0})
            for k in t:
                t[k] += int(v[k])
    return totals, max((s["id"] for s in stages), default=since_stage)


def measure(env: TableEnvironment, cluster: Cluster, root: Path, runs: int) -> dict[str, Any]:
    """``runs`` timed runs of W1 after a warm-up; medians of the windows and phases, the
    state, and the executors' split of the last run."""
    spark = env.spark
    w1 = env.from_path("L").join(env.from_path("R"), col("k") == col("rk"))
    plan = w1.explain()
    assert "join processor]" in plan, f"W1 must run the JVM join operator (a stale image?):\n{plan}"
    results = []
    last_stage = -1
    split: dict[str, dict[str, int]] = {}
    for i in range(runs + 1):
        _, last_stage = executor_split(cluster, last_stage)
        start = time.perf_counter()
        df = w1.to_spark()
        r = run_to_noop(spark, df, root / f"ckpt-{time.time_ns()}")
        r["end_to_end"] = time.perf_counter() - start
        split, _ = executor_split(cluster, last_stage)
        if i:
            results.append(r)
    med = lambda key: statistics.median(r[key] for r in results)  # noqa: E731
    phases: dict[str, float] = {}
    for name in sorted({n for r in results for n in r["phases"]}):
        phases[name] = statistics.median(r["phases"].get(name, 0) for r in results) / 1e3
    return {
        "end_to_end": med("end_to_end"),
        "engine": med("engine"),
        "spread": (min(r["engine"] for r in results), max(r["engine"] for r in results)),
        "output": results[-1]["output"],
        "state_rows": results[-1]["state_rows"],
        "state_bytes": results[-1]["state_bytes"],
        "commit_s": statistics.median(r["commit_ms"] for r in results) / 1e3,
        "phases": phases,
        "split": split,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per side")
    parser.add_argument("--keys", type=int, default=500_000, help="distinct join keys")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per cluster size")
    parser.add_argument("--worker-memory", default="3g", help="executor memory per worker")
    args = parser.parse_args()

    print("starting a master, one worker and the server (containers) ...", flush=True)
    with start_cluster(
        workers=1, worker_memory=args.worker_memory, server_memory="3g", server_conf=UI_CONF
    ) as cluster:
        env = TableEnvironment.create(mode="streaming", remote=cluster.url)
        root = cluster.shared_dir / "bench"
        root.mkdir()
        root.chmod(0o777)  # the containers' user writes the data and checkpoints here
        print(f"writing {args.rows:,} x {args.rows:,} rows ({args.keys:,} keys) ...", flush=True)
        make_data(env.spark, root, args.rows, args.keys)
        register(env, root)
        env.config.set("table.exec.join.spark-native.enabled", "false")
        on_backend(env, "hashmap")
        rows = []
        for workers in (1, 2):
            if workers == 2:
                print("a second worker joins ...", flush=True)
                cluster.add_worker("worker-2")
            print(f"W1 on {workers} worker(s): {args.runs + 1} runs ...", flush=True)
            m = measure(env, cluster, root, args.runs)
            split = "; ".join(
                f"exec {e}: {v['task_ms'] / 1e3:.1f} s tasks, shuffle read "
                f"{v['read'] / 2**20:.0f} MiB, write {v['write'] / 2**20:.0f} MiB"
                for e, v in sorted(m["split"].items())
            )
            phases = ", ".join(f"{k} {v:.2f}" for k, v in m["phases"].items() if v >= 0.01)
            rows.append(
                (
                    workers,
                    f"{m['end_to_end']:.2f}",
                    f"{m['engine']:.2f} ({m['spread'][0]:.2f}-{m['spread'][1]:.2f})",
                    phases,
                    f"{m['commit_s']:.2f}",
                    f"{m['state_rows']:,}",
                    f"{m['state_bytes'] / 2**20:.0f}",
                    f"{m['output']:,}",
                    split,
                )
            )
        env.close()
    print()
    print(
        tableau(
            [
                "workers",
                "end-to-end s",
                "engine s",
                "batch phases s",
                "state commit s",
                "state rows",
                "state MiB",
                "output rows",
                "executors (last run)",
            ],
            rows,
        )
    )
    print(
        f"Median of {args.runs} runs after a warm-up; W1 = {args.rows:,} x {args.rows:,} rows, "
        f"{args.keys:,} keys, JVM tier on hashmap, one micro-batch into the no-op sink; "
        "workers of 1 core each on one 2-core machine (containers)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
