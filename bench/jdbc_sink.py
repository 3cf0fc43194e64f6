"""Upserts into PostgreSQL: the Table API's jdbc sink against what a PySpark user writes by hand.

    uptime; flock /tmp/tableapi-bench.lock .venv/bin/python bench/jdbc_sink.py
    flock /tmp/tableapi-bench.lock .venv/bin/python bench/jdbc_sink.py --quick    # smoke run

Data: ``--rows`` (1,000,000) upserts over ``--keys`` (100,000) keys, uniformly at random, as
a changelog in ``--files`` (10) Parquet files written one after the other (``op`` is ``+I``
for a key's first change, ``+U`` after; ``k BIGINT, v BIGINT, name STRING``). The target is
a PostgreSQL table ``bench_totals(k bigint PRIMARY KEY, v bigint, name text)``, emptied
before each run. Both sides are Spark streaming queries over the same files, run to their
end (one micro-batch), on the same embedded server:

- **the product**: a filesystem table read as a changelog, ``execute_insert`` into a
  ``jdbc`` table with the primary key ``k`` (upsert mode, default options), with a
  checkpoint (exactly once);
- **PySpark by hand**: ``spark.readStream.parquet(...)`` and ``foreachBatch`` with a function
  that collects the batch's rows and upserts them with psycopg's ``executemany``
  (``INSERT ... ON CONFLICT (k) DO UPDATE``) in one transaction: what the Spark
  documentation's foreachBatch example becomes for PostgreSQL.

Each side runs once to warm up, then ``--runs`` (5) timed runs: end to end (the product:
from building the Table API query to ``execute_insert`` returning, which includes the
plan-time check of the database table; PySpark: from ``start()`` to ``awaitTermination()``)
and engine (Spark's ``triggerExecution`` summed over the query's batches); the table shows
the median and the spread, and rows/s = upserts / median end-to-end seconds. After each run
the table must hold one row per key: the product's rows must be each key's last change
(exact); the hand-written one's only counted (``collect()`` hands a key's changes over in
partition order, not change order). Goal (issue 23): the product >= 3x the rows/s of the
hand-written sink.

PostgreSQL: ``--pg-url jdbc:postgresql://host:port/db --pg-user u --pg-password p``, else
one started as the tests do (tests/postgres.py: the tableapi-postgres image, else the local
binaries, with fsync off: commits are cheap for both sides). Spark: ``--remote sc://...``
else an embedded local[2] server.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/postgres.py

from lookup_join import postgres
from noop_run import engine_seconds

from server_ext.lookup.spec import SourceSpec
from tableapi import Schema, TableDescriptor, TableEnvironment
from tableapi.config import CHECKPOINT_DIR, PIPELINE_NAME
from tableapi.result import tableau

TABLE = "bench_totals"
COLUMNS = (("k", "BIGINT"), ("v", "BIGINT"), ("name", "STRING"))
QUICK = {"rows": 100_000, "keys": 10_000, "runs": 1}
UPSERT = (
    f"INSERT INTO {TABLE} (k, v, name) VALUES (%s, %s, %s) "
    "ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, name = EXCLUDED.name"
)


def write_changes(root: Path, rows: int, keys: int, files: int, seed: int = 23) -> dict[int, tuple]:
    """The changelog files; returns each key's last row (what the table must hold)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)
    seen: set[int] = set()
    last: dict[int, tuple] = {}
    per_file = -(-rows // files)
    root.mkdir(parents=True)
    for f in range(files):
        ks, vs, names, ops = [], [], [], []
        for i in range(f * per_file, min(rows, (f + 1) * per_file)):
            k = rng.randrange(keys)
            ops.append("+U" if k in seen else "+I")
            seen.add(k)
            ks.append(k)
            vs.append(i)
            names.append(f"name-{i % 1000}")
            last[k] = (k, i, names[-1])
        table = pa.table({"k": ks, "v": vs, "name": names, "op": ops})
        pq.write_table(table, root / f"part-{f:05d}.parquet")
        time.sleep(0.02)  # distinct modification times: the files' order is the changes'
    root.chmod(0o777)
    return last


def connect(source: SourceSpec) -> Any:
    import psycopg

    return psycopg.connect(
        host=source.host, port=source.port, dbname=source.database, user=source.username,
        password=source.password, autocommit=True,
    )  # fmt: skip


def run_product(env: TableEnvironment, changes: Path, checkpoints: Path) -> tuple[float, float]:
    """One run of the product: a changelog table upserted into the jdbc table."""
    env.config.set(CHECKPOINT_DIR, str(checkpoints))
    env.config.set(PIPELINE_NAME, f"bench-{time.monotonic_ns()}")
    start = time.perf_counter()
    result = env.from_path("Changes").execute_insert("Totals")
    result.wait()
    seconds = time.perf_counter() - start
    return seconds, engine_seconds(result.query)  # type: ignore[attr-defined]


def hand_written(source: SourceSpec) -> Callable[[Any, int], None]:
    """The foreachBatch function a PySpark user writes: collect the batch, executemany."""
    params = {
        "host": source.host, "port": source.port, "dbname": source.database,
        "user": source.username, "password": source.password,
    }  # fmt: skip

    def upsert(batch_df: Any, batch_id: int) -> None:
        import psycopg

        rows = [tuple(r) for r in batch_df.select("k", "v", "name").collect()]
        with psycopg.connect(**params) as conn, conn.cursor() as cur:
            cur.executemany(UPSERT, rows)  # committed when the block ends

    return upsert


#: Starts of the hand-written query: Spark waits 10 s for foreachBatch's Python worker to
#: connect back, which a loaded machine misses (seen at load 13 twice in a row).
STARTS = 8


def run_pyspark(
    spark: Any, changes: Path, source: SourceSpec, checkpoint: Path
) -> tuple[float, float]:
    """One run of the hand-written sink over the same files."""
    start = time.perf_counter()
    writer = (
        spark.readStream.schema("k BIGINT, v BIGINT, name STRING, op STRING")
        .parquet(str(changes))
        .writeStream.foreachBatch(hand_written(source))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
    )
    for attempt in range(STARTS):
        try:
            query = writer.start()
            break
        except Exception as e:  # a loaded machine: the foreachBatch worker starts too slowly
            if "failed to connect back" not in str(e) or attempt == STARTS - 1:
                raise
            print("  (foreachBatch's Python worker did not start in time: again)", flush=True)
            start = time.perf_counter()
    query.awaitTermination()
    seconds = time.perf_counter() - start
    return seconds, engine_seconds(query)


def timed(label: str, run: Callable[[], tuple[float, float]], check: Callable[[], str],
          runs: int, empty: Callable[[], None]) -> dict[str, Any]:  # fmt: skip
    """A warm-up then ``runs`` timed runs, the table emptied before each and checked after."""
    ends, engines = [], []
    for i in range(runs + 1):
        empty()
        seconds, engine = run()
        verdict = check()
        print(f"  {label} {'warm-up' if i == 0 else f'run {i}'}: {seconds:.2f} s "
              f"(engine {engine:.2f} s), {verdict}", flush=True)  # fmt: skip
        if i:
            ends.append(seconds)
            engines.append(engine)
    return {"end": ends, "engine": engines, "check": check()}


def show(runs: list[float]) -> str:
    return f"{statistics.median(runs):.2f} ({min(runs):.2f}-{max(runs):.2f})"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> int:
    import contextlib

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help=f"a smoke run: {QUICK}")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--files", type=int, default=10)
    p.add_argument("--runs", type=int, default=5, help="timed runs per side, after a warm-up")
    p.add_argument("--remote", help="sc://host:port (default: an embedded server)")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--pg-url", help="jdbc:postgresql://host:port/db (default: one of its own)")
    p.add_argument("--pg-user")
    p.add_argument("--pg-password")
    args = p.parse_args()
    if args.quick:
        for key, value in QUICK.items():
            if getattr(args, key) == p.get_default(key):
                setattr(args, key, value)
    load_before = uptime()
    print(f"load before: {load_before}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench-jdbc-"))
    work.chmod(0o777)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        # PostgreSQL as lookup_join.py gets it (--pg-url, else one of its own), our table.
        source = dataclasses.replace(stack.enter_context(postgres(args)), table_name=TABLE)
        with connect(source) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
            conn.execute(f"CREATE TABLE {TABLE} (k bigint PRIMARY KEY, v bigint, name text)")
        print(f"writing {args.rows:,} changes over {args.keys:,} keys ...", flush=True)
        last = write_changes(work / "changes", args.rows, args.keys, args.files)
        want = sorted(last.values())
        if not args.remote:
            print("starting an embedded Spark Connect server ...", flush=True)
        env = TableEnvironment.create(mode="streaming", remote=args.remote, master=args.master)
        stack.callback(env.close)
        schema = Schema.new_builder()
        for n, t in COLUMNS:
            schema.column(n, t)
        env.create_temporary_table(
            "Changes",
            TableDescriptor.for_connector("filesystem")
            .schema(schema.build())
            .option("path", str(work / "changes"))
            .option("format", "parquet")
            .option("changelog.op-column", "op")
            .build(),
        )
        url = f"jdbc:postgresql://{source.host}:{source.port}/{source.database}"
        env.create_temporary_table(
            "Totals",
            TableDescriptor.for_connector("jdbc")
            .schema(schema.primary_key("k").build())
            .option("url", url)
            .option("table-name", TABLE)
            .option("username", source.username or "")
            .option("password", source.password or "")
            .build(),
        )

        def empty() -> None:
            with connect(source) as conn:
                conn.execute(f"TRUNCATE {TABLE}")

        def exact() -> str:
            with connect(source) as conn:
                got = sorted(conn.execute(f"SELECT k, v, name FROM {TABLE}").fetchall())
            if got != want:
                raise AssertionError(f"the product's table differs from each key's last change "
                                     f"({len(got):,} rows, {len(want):,} expected)")  # fmt: skip
            return f"{len(got):,} rows, each key's last change"

        def counted() -> str:
            with connect(source) as conn:
                (n,) = conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
            if n != len(want):
                raise AssertionError(f"the hand-written sink left {n:,} rows, not {len(want):,}")
            return f"{n:,} rows"

        runs = {}
        checkpoints = work / "checkpoints"
        print("the product (jdbc sink) ...", flush=True)
        runs["product: execute_insert into a jdbc table"] = timed(
            "product", lambda: run_product(env, work / "changes", checkpoints), exact,
            args.runs, empty,
        )  # fmt: skip
        print("PySpark by hand (foreachBatch + executemany) ...", flush=True)
        n = iter(range(10**6))
        runs["PySpark: foreachBatch + psycopg executemany"] = timed(
            "pyspark",
            lambda: run_pyspark(env.spark, work / "changes", source, checkpoints / f"h{next(n)}"),
            counted, args.runs, empty,
        )  # fmt: skip
        load_after = uptime()
        product, hand = runs.values()
        rate = {label: args.rows / statistics.median(r["end"]) for label, r in runs.items()}
        print(
            tableau(
                ["sink", "end-to-end s", "engine s", "upserts/s", "table"],
                [
                    (label, show(r["end"]), show(r["engine"]), f"{rate[label]:,.0f}", r["check"])
                    for label, r in runs.items()
                ],
            )
        )
        ratio = statistics.median(hand["end"]) / statistics.median(product["end"])
        print(f"{args.rows:,} upserts over {args.keys:,} keys in {args.files} Parquet files; "
              f"median (fastest-slowest) of {args.runs} timed runs after a warm-up, "
              f"{os.cpu_count()} cores, master {args.master}")  # fmt: skip
        print(f"load before: {load_before}\nload after:  {load_after}")
        verdict = "met" if ratio >= 3 else "MISSED"
        print(f"product / hand-written rows/s = {ratio:.2f}x (goal >= 3x): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
