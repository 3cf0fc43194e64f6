"""The product's workloads W1-W5 on two versions of the product, in one run: did a change make
any workload slower?

    .venv/bin/python bench/versions.py --before 764d17f            # that commit vs the work tree
    .venv/bin/python bench/versions.py --before A --after B --runs 5

Each version runs from its own checkout (``--before``/``--after`` are git revisions, checked
out as worktrees under a temporary folder; ``--after`` defaults to this checkout's work
tree), in its own embedded server (local[2], ``--driver-memory`` of heap) with the JVM
operator jar built from that checkout's sources. Both versions read the same input files,
written once: W1 (inner) and W2 (left outer) are ``streaming_join.py``'s 200k x 200k rows
over 100k keys through the JVM join operator; W3 ``multi_join.py``'s three tables x 100k keys
as a multi-way join; W4 ``temporal_join.py``'s 200k orders x 1,000 x 20 rates; W5
``aggregate.py``'s 1M order changes JOIN 10k product changes, ``SUM``/``COUNT(*)`` per
category. All on the hashmap state backend, into a ``blackhole`` table.

Each workload is timed as the benchmarks time the product against Flink (``tiers.product_runs``):
end to end (build and submit to the end of the bounded run) and engine (Spark's trigger
execution), median and spread of ``--runs`` runs after one warm-up; the result's rows are
counted in one more run and must be equal between the versions. The versions alternate
(before, after, before, after, ...; ``--rounds``) so that a drift in the machine's load hits
both alike; each round's runs are pooled. Prints one table: per workload, both versions'
medians and the after/before ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKLOADS = ("W1", "W2", "W3", "W4", "W5")


def make_data(root: Path, scale: float) -> None:
    """Every workload's input files under ``root`` (``scale`` times the benchmarks' sizes),
    written by this checkout's benchmarks with the product ``PYTHONPATH`` finds."""
    import aggregate
    import multi_join
    import streaming_join
    import temporal_join

    from tableapi.session import EmbeddedServer

    server = EmbeddedServer.start(master="local[2]")
    try:
        from pyspark.sql.connect.session import SparkSession

        spark = SparkSession.builder.remote(server.url).getOrCreate()
        n = lambda size: max(int(size * scale), 10)  # noqa: E731
        streaming_join.make_data(spark, root / "w12", n(200_000), n(100_000))
        multi_join.make_data(spark, root / "w3", n(100_000))
        temporal_join.make_data(spark, root / "w4", n(200_000), n(1_000), 20)
        spark.stop()
    finally:
        server.stop()
    rng = random.Random(5)
    w5 = root / "w5"
    orders = aggregate.order_histories(rng, n(1_000_000), n(100_000), n(10_000))
    aggregate.write_files(w5 / "orders", orders, 4, rng)
    aggregate.write_files(w5 / "products", aggregate.product_histories(rng, n(10_000), 100), 2, rng)
    aggregate.write_sales(w5 / "sales", 1_000, 100, 1, rng)


def worker(
    root: Path, runs: int, driver_memory: str, only: tuple[str, ...] = WORKLOADS
) -> dict[str, Any]:
    """This process's version (``tableapi`` as ``PYTHONPATH`` finds it) on the workloads
    ``only``: {workload: {"end_to_end": [...], "engine": [...], "rows": n}}."""
    import aggregate
    import multi_join
    import streaming_join
    import temporal_join
    from tiers import product_runs

    from tableapi import TableEnvironment, col
    from tableapi.session import EmbeddedServer

    server = EmbeddedServer.start(master="local[2]", conf={"spark.driver.memory": driver_memory})

    def w12(env: TableEnvironment, outer: bool) -> Callable[[], Any]:
        streaming_join.register(env, root / "w12")
        return streaming_join.joins(env)[1 if outer else 0]

    def w3(env: TableEnvironment) -> Callable[[], Any]:
        multi_join.register(env, root / "w3")
        env.config.set("table.optimizer.multi-join.enabled", "true")

        def build() -> Any:
            o, s, p = (env.from_path(n) for n in multi_join.TABLES)
            return o.join(s, col("order_id") == col("s_id")).join(p, col("order_id") == col("p_id"))

        return build

    def w4(env: TableEnvironment) -> Callable[[], Any]:
        temporal_join.register(env, root / "w4")
        return lambda: temporal_join.query(env)

    def w5(env: TableEnvironment) -> Callable[[], Any]:
        aggregate.register(env, root / "w5")

        def build() -> Any:
            orders, products = env.from_path("Orders"), env.from_path("Products")
            return aggregate.per_category(orders.join(products, col("product_id") == col("id")))

        return build

    workloads: dict[str, Callable[[TableEnvironment], Callable[[], Any]]] = {
        "W1": lambda env: w12(env, False),
        "W2": lambda env: w12(env, True),
        "W3": w3,
        "W4": w4,
        "W5": w5,
    }
    out = {}
    try:
        for name, workload in workloads.items():
            if name not in only:
                continue
            print(f"  {name} ({runs + 1} runs) ...", file=sys.stderr, flush=True)
            env = TableEnvironment.create(mode="streaming", remote=server.url)
            try:
                env.config.set("state.backend.type", "hashmap")
                env.config.set("table.exec.join.spark-native.enabled", "false")
                w = product_runs(env, workload(env), runs)
            finally:
                env.close()
            out[name] = {"end_to_end": w.end_to_end, "engine": w.engine, "rows": w.rows}
        return out
    finally:
        server.stop()


def checkout(rev: str | None, into: Path) -> Path:
    """A worktree of ``rev`` under ``into`` (None: this checkout as it is)."""
    if rev is None:
        return ROOT
    path = into / rev.replace("/", "_")
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), rev],
        check=True,
        capture_output=True,
    )
    return path


def in_version(source: Path, *args: str) -> Any:
    """This script with ``args`` in a new interpreter that imports the product from
    ``source`` (and starts its server from there, with that checkout's jar): its last line
    of output, as JSON."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(HERE)])}
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    done = subprocess.run(cmd, env=env, cwd=source, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def show(xs: list[float]) -> str:
    return f"{median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def table(header: list[str], rows: list[tuple[str, ...]]) -> str:
    """``rows`` under ``header`` in a boxed table (``tableapi.result.tableau``'s look; this
    process does not import the product: each version runs in its own)."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def fmt(cells: tuple[str, ...] | list[str]) -> str:
        return "| " + " | ".join(f"{c:<{w}}" for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join([line, fmt(header), line, *(fmt(r) for r in rows), line])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="git revision of the version before the change")
    parser.add_argument("--after", help="git revision after (default: this work tree)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per round, after a warm-up")
    parser.add_argument("--rounds", type=int, default=1, help="alternations of the two versions")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--scale", type=float, default=1.0, help="input sizes (0.05: a smoke run)")
    parser.add_argument(
        "--workload",
        action="append",
        choices=WORKLOADS,
        help="only this workload (repeatable; default: all five)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--make-data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker or args.make_data:
        # The product first, from PYTHONPATH (the version's checkout): some benchmarks put
        # their own checkout's root first on sys.path when they are imported.
        import server_ext.jvm.build  # noqa: F401
        import tableapi
    if args.worker:
        print(f"  the product from {Path(tableapi.__file__).parent}", file=sys.stderr)
        only = tuple(args.workload or WORKLOADS)
        print(json.dumps(worker(Path(args.worker), args.runs, args.driver_memory, only)))
        return 0
    if args.make_data:
        make_data(Path(args.make_data), args.scale)
        print("{}")
        return 0
    if not args.before:
        parser.error("--before is required")

    tmp = Path(tempfile.mkdtemp(prefix="bench_versions_"))
    sources: dict[str, Path] = {}
    try:
        sources = {
            "before": checkout(args.before, tmp / "src"),
            "after": checkout(args.after, tmp / "src"),
        }
        t0 = time.perf_counter()
        in_version(sources["before"], "--make-data", str(tmp / "data"), "--scale", str(args.scale))
        print(f"input files written in {time.perf_counter() - t0:.0f} s", flush=True)
        labels = {"before": args.before, "after": args.after or "work tree"}
        pooled: dict[str, dict[str, dict[str, Any]]] = {v: {} for v in sources}
        for r in range(args.rounds):
            for version, source in sources.items():
                print(f"round {r + 1}: {version} ({labels[version]}) ...", flush=True)
                result = in_version(
                    source,
                    "--worker",
                    str(tmp / "data"),
                    "--runs",
                    str(args.runs),
                    "--driver-memory",
                    args.driver_memory,
                    *(a for w in args.workload or () for a in ("--workload", w)),
                )
                for w, got in result.items():
                    into = pooled[version].setdefault(
                        w, {"end_to_end": [], "engine": [], "rows": set()}
                    )
                    into["end_to_end"] += got["end_to_end"]
                    into["engine"] += got["engine"]
                    into["rows"].add(got["rows"])
        rows = []
        failed = False
        for w in args.workload or WORKLOADS:
            b, a = pooled["before"][w], pooled["after"][w]
            equal = len(b["rows"] | a["rows"]) == 1
            failed |= not equal
            rows.append(
                (
                    w,
                    show(b["end_to_end"]),
                    show(a["end_to_end"]),
                    f"{median(a['end_to_end']) / median(b['end_to_end']):.2f}x",
                    show(b["engine"]),
                    show(a["engine"]),
                    f"{median(a['engine']) / median(b['engine']):.2f}x",
                    ", ".join(f"{n:,}" for n in sorted(b["rows"] | a["rows"])),
                )
            )
        print(
            f"\nbefore = {labels['before']}, after = {labels['after']}; seconds, median "
            f"(fastest-slowest) of {args.runs * args.rounds} runs"
        )
        print(
            table(
                [
                    "workload",
                    "end to end before",
                    "after",
                    "after/before",
                    "engine before",
                    "after",
                    "after/before",
                    "result rows",
                ],
                rows,
            )
        )
        if failed:
            print("FAIL: the versions' result rows differ")
        return 1 if failed else 0
    finally:
        for source in sources.values():
            if source != ROOT:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(source)],
                    check=False,
                )
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
