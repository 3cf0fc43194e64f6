"""Soak: a streaming left join with state TTL over changelog files, 200 micro-batches.

    .venv/bin/python bench/soak_join.py                   # 200 batches, TTL 15 s
    .venv/bin/python bench/soak_join.py --batches 40 --ttl "5 s"   # a quick look

Each micro-batch reads one new file per table: new orders and products on a rolling key
range, updates and deletes of recent ones. Old keys are never touched again, so with the
state TTL the join's state must stay bounded: every 50 batches (and after the first 10) the
script prints the state rows, the server's memory (JVM and Python workers, RSS) and its open
files. State TTL is processing time, so the state holds what was written in the last TTL
(plus the clean-up lag of timers that fire at micro-batches): the state rows must stay within
the rows written in the last TTL + SLACK_S seconds (a faster machine runs more batches per TTL
and so holds more rows), and memory and open files must stay flat after warm-up. The last line
says whether they did.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tableapi.durations import parse_duration_ms
from tableapi.result import tableau
from tableapi.session import EmbeddedServer

KEYS_PER_BATCH = 200
SLACK_S = 5.0  # expired entries go when a timer fires or their key is next seen


def _write(path: Path, n: int, records: list[dict[str, Any]]) -> None:
    hidden = path / f".part-{n:05d}.json.tmp"
    hidden.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    os.replace(hidden, path / f"part-{n:05d}.json")


def _batch(b: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Batch ``b``: orders and products for keys of this batch, and updates/deletes of the
    previous batch's rows (so the join retracts)."""
    base = b * KEYS_PER_BATCH
    orders = [{"o_id": base + i, "o_pid": base + i, "qty": 1, "op": "+I"}
              for i in range(KEYS_PER_BATCH)]  # fmt: skip
    products = [{"p_id": base + i, "name": f"p{base + i}", "op": "+I"}
                for i in range(0, KEYS_PER_BATCH, 2)]  # fmt: skip
    if b:
        prev = base - KEYS_PER_BATCH
        for i in range(0, KEYS_PER_BATCH, 4):
            orders.append({"o_id": prev + i, "o_pid": prev + i, "qty": 1, "op": "-U"})
            orders.append({"o_id": prev + i, "o_pid": prev + i, "qty": 2, "op": "+U"})
        for i in range(1, KEYS_PER_BATCH, 8):
            orders.append({"o_id": prev + i, "o_pid": prev + i, "qty": 1, "op": "-D"})
    return orders, products


def _server_usage(server: EmbeddedServer) -> tuple[float, int]:
    """RSS (MB) and open files of the server's processes (the JVM and its Python workers)."""
    pids = [server.process.pid]
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
                stat = (proc / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(stat[2]) == server.process.pid or int(stat[1]) in pids:  # group or child
                pids.append(int(proc.name))
    rss_kb, files = 0, 0
    for pid in set(pids):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            rss_kb += int(next(x for x in status.splitlines() if x.startswith("VmRSS")).split()[1])
            files += len(os.listdir(f"/proc/{pid}/fd"))
        except (OSError, StopIteration):
            continue
    return rss_kb / 1024, files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--ttl", default="15 s")
    parser.add_argument("--every", type=int, default=50)
    args = parser.parse_args(argv)

    server = EmbeddedServer.start(master="local[2]")
    env = TableEnvironment.create(mode="streaming", remote=server.url)
    env.config.set("table.exec.state.ttl", args.ttl)
    root = Path(tempfile.mkdtemp(prefix="soak-"))
    tables = {"Orders": (("o_id", "BIGINT"), ("o_pid", "BIGINT"), ("qty", "INT")),
              "Products": (("p_id", "BIGINT"), ("name", "STRING"))}  # fmt: skip
    for name, columns in tables.items():
        (root / name).mkdir()
        schema = Schema.new_builder()
        for c, t in columns:
            schema.column(c, t + (" NOT NULL" if c in ("o_id", "p_id") else ""))
        schema.primary_key(columns[0][0])
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema.build())
            .option("path", str(root / name))
            .option("format", "json")
            .option("changelog.op-column", "op")
            .option("source.monitor-interval", "100 ms")
            .build(),
        )
    query = env.from_path("Orders").left_outer_join(
        env.from_path("Products"), col("o_pid") == col("p_id")
    )
    df = query.to_spark()  # to Spark's no-op sink: a memory sink would grow by itself
    running = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(root / "checkpoint"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    rows: list[list[Any]] = []
    started = time.perf_counter()
    ttl_s = parse_duration_ms(args.ttl, "--ttl") / 1000
    written: list[tuple[float, int]] = []  # (when, rows added: +I/+U) per batch
    try:
        for b in range(args.batches):
            orders, products = _batch(b)
            _write(root / "Orders", b, orders)
            _write(root / "Products", b, products)
            adds = sum(r["op"] in ("+I", "+U") for r in orders + products)
            written.append((time.perf_counter(), adds))
            running.processAllAvailable()
            if b + 1 in (10, args.batches) or (b + 1) % args.every == 0:
                progress = running.lastProgress
                states = progress.stateOperators if progress else []
                state_rows = sum(s.numRowsTotal or 0 for s in states)
                now = time.perf_counter()
                window = sum(n for t, n in written if t >= now - ttl_s - SLACK_S)
                rss, files = _server_usage(server)
                rows.append([b + 1, state_rows, window, f"{rss:.0f}", files,
                             f"{now - started:.0f}"])  # fmt: skip
                print(f"batch {b + 1}: state rows {state_rows} (written in the last TTL + "
                      f"{SLACK_S:.0f} s: {window}), RSS {rss:.0f} MB, open files {files}",
                      flush=True)  # fmt: skip
    finally:
        running.stop()
        env.close()
        server.stop()
    headers = ["batches", "state rows", "rows written in TTL+slack", "server RSS MB",
               "open files", "seconds"]  # fmt: skip
    print(tableau(headers, rows))
    warm = rows[1:] if len(rows) > 2 else rows
    state = [r[1] for r in warm]
    rss_values = [float(r[3]) for r in warm]
    files = [r[4] for r in warm]
    flat = (
        all(r[1] <= r[2] for r in warm)
        and max(rss_values) <= 1.25 * min(rss_values)
        and max(files) <= min(files) + 50
    )
    verdict = "BOUNDED" if flat else "GROWING"
    print(
        f"{verdict} after warm-up: state rows {min(state)}-{max(state)} (each within the rows "
        f"written in the last TTL + {SLACK_S:.0f} s: {all(r[1] <= r[2] for r in warm)}), RSS "
        f"{min(rss_values):.0f}-{max(rss_values):.0f} MB, open files {min(files)}-{max(files)}"
    )
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
