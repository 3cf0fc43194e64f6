"""Nexmark's queries on the product against Apache Flink 2.3, over the same event files.

    uptime; flock /tmp/tableapi-bench.lock .venv/bin/python bench/nexmark.py
    .venv/bin/python bench/nexmark.py --events 1000000 --events 10000000 --query q0 --query q4
    .venv/bin/python bench/nexmark.py --events 20000 --runs 1 --query q0 --query q3  # smoke run
    .venv/bin/python bench/nexmark.py --source --events 10000000   # the product alone, events/s

Each query is Nexmark's own SQL text (tests/nexmark/queries: its ``CREATE TABLE nexmark_qN``,
a blackhole sink, and its ``INSERT INTO nexmark_qN``) over three CSV tables, ``person``,
``auction`` and ``bid`` (``tables.sql``, Nexmark's watermark on each), which both systems read
from the same files: ``--events`` events (1,000,000; repeat the option for several sizes) of
the port of Nexmark's generator (``server_ext.nexmark_files``, deterministic), written once per
size under ``--data-dir`` (two files per kind, one per core of the product's local[2] server
and of Flink's parallelism 2: Flink reads a CSV file in one reader; the product's state is
split in 2 partitions too, ``table.exec.resource.default-parallelism``) and reused while its
marker file (``_nexmark.json``: the events, options, files and the generator sources' hash)
matches. The event mix is Nexmark's default: person:auction:bid 1:3:46 at 10,000 events a
second of event time. The conformance suite (tests/nexmark) uses another, 20:6:24, because
Nexmark's generator makes a bid's bidder a person only once there are over 1,000 persons:
with the default mix q23 (bids of persons who also sell) joins nothing below about 50,000
events; a query without rows at a size is marked in the table.

The queries (``--query``, repeatable): by default every query the product supports
(tests/nexmark/known.py); the product's unsupported ones (``UNSUPPORTED``), those Flink refuses
(``FLINK_REFUSES``) and those whose answer is the wall clock's (``CLOCK_DEPENDENT``: q12's
processing-time windows, no equal counts to assert) are skipped and named. Each side prepares a
query as the conformance does (the product: ``conformance.prepare_product``, q13's side input a
SQLite ``jdbc`` table, q14's ``count_char`` a Python udf; Flink, in its own virtualenv through
``flink_nexmark.py``: ``flink_runner.flink_statements`` and ``flink_jars``, q13's side input the
conformance suite's lookup source, q14 Nexmark's Java UDF), then runs its INSERT once to warm up
and ``--runs`` (5) timed runs, timed as every Flink comparison here (README, tiers.py). q13 on
Flink measures that lookup source, a test fixture that scans its 10,000 rows on every lookup
(tests/conformance/flink_lookup), not a Flink connector: Flink's q13 is slower than Flink is
(the table says so under it), and at 10,000,000 events it alone takes hours.

- end to end: ``execute_sql`` of the INSERT (parsing, planning, submitting) to the end of the
  bounded job (the product: ``wait()`` on its query; Flink: ``wait()``, a MiniCluster per job);
- engine: Spark's ``triggerExecution`` summed over the query's micro-batches; Flink's job net
  runtime;
- median and spread (fastest-slowest) of the timed runs; events/s is all the events of the
  size (the three kinds, as Nexmark counts them) over the median of a window;
- rows: each system counts the result's rows (the changelog applied) in one more, untimed run,
  ``SELECT COUNT(*)`` over the query's SELECT on both (materializing millions of rows into the
  product's client would time the client); the benchmark fails if they differ.

The last row is the geometric mean of the ratios (product / Flink). The machine's cores and
its load (``os.getloadavg()``) before and after are printed with the table: other work on the
machine shows in the figures.

``--source``: the product alone (no files, no Flink) on its own ``nexmark`` connector, the
same three tables (columns, watermarks) with ``'connector' = 'nexmark'``, ``'events.num'`` the
size: the same events, generated on the server where they are read. Timed the same way, with
events/s and events/s per core (the cores of the server's ``local[N]``), Nexmark's usual
figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.nexmark

from noop_run import engine_seconds
from tiers import Windows, add_flink_option, server_url

from server_ext.nexmark_files import write_events
from tableapi import TableEnvironment, udf
from tableapi.result import tableau
from tests.conformance.flink_env import VENV_DIR
from tests.nexmark.conformance import (
    count_char,
    prepare_product,
    product_side_input_options,
    write_side_input,
)
from tests.nexmark.known import CLOCK_DEPENDENT, FLINK_REFUSES, UNSUPPORTED
from tests.nexmark.queries import QUERY_NAMES, load, substitute, table_ddl

ROOT = Path(__file__).resolve().parent.parent
FLINK_SCRIPT = Path(__file__).resolve().parent / "flink_nexmark.py"
GENERATOR_SOURCES = ROOT / "server_ext/jvm/src/main/java/tableapi/serverext/nexmark"
#: Nexmark's generator options: none, its defaults (1:3:46, 10,000 events/s).
EVENT_OPTIONS: dict[str, str] = {}
#: Files per kind: one per core of the product's local[2] and of Flink's parallelism 2.
PARTS = 2
PARALLELISM = 2
MARKER = "_nexmark.json"
Q13_NOTE = (
    "q13: Flink's side input is the conformance suite's lookup source (a test fixture that "
    "scans its 10,000 rows on every lookup), not a Flink connector: Flink's q13 times are that "
    "fixture's."
)


# -- the events ---------------------------------------------------------------------------------


def generator_hash() -> str:
    """A hash of the generator port's Java sources: files written by another generator are
    written again."""
    digest = hashlib.sha256()
    for path in sorted(GENERATOR_SOURCES.rglob("*.java")):
        digest.update(path.relative_to(GENERATOR_SOURCES).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def ensure_events(data_dir: Path, events: int) -> Path:
    """``data_dir/events-N``: the first ``events`` events (EVENT_OPTIONS, PARTS files per
    kind), written unless its marker says they already are."""
    out = data_dir / f"events-{events}"
    marker = {"events": events, "options": EVENT_OPTIONS, "parts": PARTS}
    marker["generator"] = generator_hash()
    path = out / MARKER
    if path.exists() and json.loads(path.read_text()) == marker:
        return out
    path.unlink(missing_ok=True)  # a half-written directory is never taken for a whole one
    start = time.perf_counter()
    summary = write_events(out, events, EVENT_OPTIONS, PARTS)
    path.write_text(json.dumps(marker, sort_keys=True) + "\n")
    print(f"{summary} ({time.perf_counter() - start:.1f} s)", flush=True)
    return out


def selected(asked: list[str] | None) -> tuple[list[str], dict[str, str]]:
    """The queries to run (in Nexmark's order) and those skipped, with why.

    Example:
        >>> run, skipped = selected(["q6", "q4", "q0", "q12"])
        >>> run, list(skipped)
        (['q0', 'q4'], ['q6', 'q12'])
    """
    names = set(asked or QUERY_NAMES)
    unknown = names - set(QUERY_NAMES)
    if unknown:
        raise SystemExit(f"no Nexmark query {sorted(unknown)}: q0 .. q23")
    run, skipped = [], {}
    for name in QUERY_NAMES:
        if name not in names:
            continue
        if name in UNSUPPORTED:
            skipped[name] = f"the product does not support it: {UNSUPPORTED[name]}"
        elif name in FLINK_REFUSES:
            skipped[name] = f"Flink 2.3 refuses it: {FLINK_REFUSES[name]}"
        elif name in CLOCK_DEPENDENT:  # the two systems' counts cannot be asserted equal
            skipped[name] = f"its answer depends on the wall clock: {CLOCK_DEPENDENT[name]}"
        else:
            run.append(name)
    return run, skipped


# -- the product --------------------------------------------------------------------------------


def count_rows(env: TableEnvironment, select: str) -> int:
    """The rows of ``select``'s result, the changelog applied, as Flink's side counts them:
    the last value of a streaming ``COUNT(*)`` over it (none: no rows). With mini-batch on,
    the count changes once per micro-batch, not once per row (9.2M changes of one count
    stalled a 6g server at 10M events)."""
    mini_batch = {
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "1 s",
        "table.exec.mini-batch.size": "1000000",
    }
    for key, value in mini_batch.items():
        env.config.set(key, value)
    try:
        counted = env.sql_query(f"SELECT COUNT(*) FROM ({select})").execute()
        frame = counted.materialize()
        counted.cancel()
    finally:
        for key in mini_batch:
            env.config.reset(key)
    return int(frame.to_numpy()[0, 0]) if len(frame) else 0


def product_runs(
    url: str, name: str, prepare: Callable[[TableEnvironment], None], runs: int
) -> Windows:
    """Query ``name``'s INSERT into its blackhole sink on the product, its tables made by
    ``prepare``: once to warm up then ``runs`` timed runs (both windows), and its rows counted
    in one more run."""
    query = load(name)
    env = TableEnvironment.create(mode="streaming", remote=url)
    # Flink's parallelism on both: the product's state in PARALLELISM partitions (the server's
    # default is 4; on 2 cores, 2 took half the time of q3's micro-batch).
    env.config.set("table.exec.resource.default-parallelism", str(PARALLELISM))
    try:
        prepare(env)
        env.execute_sql(query.sink)
        end_to_end, engine = [], []
        for i in range(runs + 1):  # the first run warms up
            start = time.perf_counter()
            result = env.execute_sql(query.insert)
            result.wait()
            seconds = time.perf_counter() - start
            if i:
                end_to_end.append(seconds)
                engine.append(engine_seconds(result.query))  # type: ignore[attr-defined]
        return Windows(end_to_end, engine, count_rows(env, query.select))
    finally:
        env.close()


def source_ddl(events: int) -> list[str]:
    """tables.sql's three tables (columns, watermarks) on the product's own ``nexmark``
    connector: the first ``events`` events of Nexmark's generator, the rows the files hold.

    Example:
        >>> print(source_ddl(100)[2].split(")")[-2].strip())  # doctest: +NORMALIZE_WHITESPACE
        WITH ('connector' = 'nexmark', 'kind' = 'bid', 'events.num' = '100'
    """
    out = []
    for statement in table_ddl(Path("unused")):
        kind = statement.split()[2]  # CREATE TABLE <kind>
        columns = statement[: statement.rindex("WITH")]
        options = {"connector": "nexmark", "kind": kind, "events.num": str(events)}
        options |= EVENT_OPTIONS
        listed = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
        out.append(f"{columns}WITH ({listed})")
    return out


def prepare_source(env: TableEnvironment, name: str, events: int, side_db: Path) -> None:
    """As ``conformance.prepare_product``, the event tables on the ``nexmark`` connector."""
    query = load(name)
    values = {"SIDE_INPUT_OPTIONS": product_side_input_options(side_db)}
    for statement in [*source_ddl(events), *query.setup]:
        env.execute_sql(substitute(statement, values))
    if query.functions:  # q14: the product has no CREATE FUNCTION of a Java class
        function = udf(count_char, result_type="BIGINT NOT NULL")
        env.create_temporary_system_function("count_char", function)


def server_cores(env: TableEnvironment) -> int:
    """The cores of the product's server: N of its ``local[N]`` master (``local``: 1,
    ``local[*]``: this machine's, the server being on it), else Spark's default parallelism.

    Example:
        >>> class Conf:
        ...     def get(self, key: str, default: str | None = None) -> str: return "local[3]"
        >>> class Env:
        ...     spark = type("S", (), {"conf": Conf()})()
        >>> server_cores(Env())  # type: ignore[arg-type]
        3
    """
    master = str(env.spark.conf.get("spark.master", "") or "")
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master)
    if m and m.group(1) is None:
        return 1
    if m and m.group(1) != "*":
        return int(m.group(1))
    default = env.spark.conf.get("spark.default.parallelism", "0") or 0
    return int(default) or (os.cpu_count() or 1)


def source_report(todo: list[tuple[str, int]], runs: dict[str, Windows | str], cores: int) -> str:
    """The ``--source`` table: per query and size both windows, events/s and per core."""
    headers = [
        "query",
        "events",
        "e2e s",
        "engine s",
        "events/s engine, e2e",
        f"events/s per core ({cores}) engine, e2e",
        "rows",
    ]
    rows: list[tuple[Any, ...]] = []
    for name, n in todo:
        w = runs[f"{name}@{n}"]
        if isinstance(w, str):
            rows.append((name, f"{n:,}", "", "", "", "", f"failed: {w[:120]}"))
            continue
        engine, e2e = w.median("engine"), w.median("end_to_end")
        rows.append(
            (
                name,
                f"{n:,}",
                w.show("end_to_end"),
                w.show("engine"),
                f"{rate(n, engine)}, {rate(n, e2e)}",
                f"{rate(n, engine * cores)}, {rate(n, e2e * cores)}",
                f"{w.rows:,}" + (" (no rows at this size)" if w.rows == 0 else ""),
            )
        )
    return tableau(headers, rows)


# -- Flink --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One query at one size."""

    query: str
    events: int
    events_dir: Path

    @property
    def label(self) -> str:
        return f"{self.query}@{self.events}"


def flink_nexmark_runs(
    flink_python: str, todo: list[Run], runs: int, data_dir: Path, side_tsv: Path
) -> dict[str, Windows | str]:
    """Flink's side (``flink_nexmark.py`` in Flink's virtualenv, one process): per run label,
    its windows, or Flink's error."""
    job = {
        "runs": runs,
        "parallelism": PARALLELISM,
        "jar_dir": str(data_dir / "flink-jars"),
        "side_input": str(side_tsv),
        "queries": [
            {"label": r.label, "query": r.query, "events_dir": str(r.events_dir)} for r in todo
        ],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(job, f)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for key in ("VIRTUAL_ENV", "SPARK_HOME", "PYSPARK_PYTHON", "SPARK_REMOTE"):
        env.pop(key, None)  # the project's, which PyFlink must not pick up
    print(f"Apache Flink: {len(todo)} queries x {runs + 1} runs ...", flush=True)
    out: dict[str, Windows | str] = {}
    # Flink's log goes to a file: a pipe nobody reads while stdout is read could fill and block.
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(
            [flink_python, str(FLINK_SCRIPT), f.name],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert proc.stdout is not None
        for line in proc.stdout:  # a JSON line per query, as it ends
            if line.startswith("{"):
                r = json.loads(line)
                out[r["label"]] = (
                    r["error"] if "error" in r else Windows(r["end_to_end"], r["engine"], r["rows"])
                )
                print(f"  Flink: {r['label']} {r['seconds']:.0f} s", flush=True)
        code = proc.wait()
        Path(f.name).unlink()
        if code != 0 or len(out) < len(todo):
            log.seek(0)
            print(log.read()[-6000:], file=sys.stderr)
            for r in todo:
                out.setdefault(r.label, f"the Flink process exited {code} before it")
    return out


# -- the report ---------------------------------------------------------------------------------


def rate(events: int, seconds: float) -> str:
    """Events per second, short.

    Example:
        >>> rate(1_000_000, 0.8), rate(20_000, 2.0), rate(10, 4.0)
        ('1.25M', '10.0k', '2')
    """
    per_s = events / seconds if seconds > 0 else math.inf
    if per_s >= 1e6:
        return f"{per_s / 1e6:.2f}M"
    if per_s >= 1e3:
        return f"{per_s / 1e3:.1f}k"
    return f"{per_s:.0f}"


def geomean(values: list[float]) -> float:
    """The geometric mean (of ratios).

    Example:
        >>> round(geomean([0.5, 2.0, 1.0]), 6)
        1.0
    """
    return math.exp(statistics.fmean(math.log(v) for v in values))


def report(
    todo: list[Run], product: dict[str, Windows | str], flink: dict[str, Windows | str]
) -> str:
    """The table: per query and size both windows of both systems, the ratios, events/s, rows;
    the last row the geometric mean of the ratios. Raises if the row counts differ."""
    headers = [
        "query",
        "events",
        "product e2e s",
        "Flink e2e s",
        "e2e ratio",
        "product engine s",
        "Flink engine s",
        "engine ratio",
        "product events/s engine, e2e",
        "Flink events/s engine, e2e",
        "rows (product = Flink)",
    ]
    rows: list[tuple[Any, ...]] = []
    ratios: dict[str, list[float]] = {"end_to_end": [], "engine": []}
    differ = []
    for r in todo:
        p, f = product[r.label], flink[r.label]
        if isinstance(p, str) or isinstance(f, str):
            failed = "; ".join(
                f"{who} failed: {e[:120]}"
                for who, e in (("product", p), ("Flink", f))
                if isinstance(e, str)
            )
            rows.append((r.query, f"{r.events:,}", *[""] * 8, failed))
            differ.append(r.label)
            continue
        ratio = {w: p.median(w) / f.median(w) for w in ratios}
        for w, value in ratio.items():
            ratios[w].append(value)
        if p.rows != f.rows:
            differ.append(r.label)
            counted = f"{p.rows:,} != {f.rows:,}"
        else:
            counted = f"{p.rows:,}" + (" (no rows at this size)" if p.rows == 0 else "")
        rows.append(
            (
                r.query,
                f"{r.events:,}",
                p.show("end_to_end"),
                f.show("end_to_end"),
                f"{ratio['end_to_end']:.2f}x",
                p.show("engine"),
                f.show("engine"),
                f"{ratio['engine']:.2f}x",
                f"{rate(r.events, p.median('engine'))}, {rate(r.events, p.median('end_to_end'))}",
                f"{rate(r.events, f.median('engine'))}, {rate(r.events, f.median('end_to_end'))}",
                counted,
            )
        )
    if ratios["engine"]:
        e2e, engine = geomean(ratios["end_to_end"]), geomean(ratios["engine"])
        n = len(ratios["engine"])
        rows.append(
            (f"geomean of {n}", "", "", "", f"{e2e:.2f}x", "", "", f"{engine:.2f}x", "", "", "")
        )
    table = tableau(headers, rows)
    if differ:
        raise AssertionError(f"{table}\nthe two systems differ (rows or a failure) on {differ}")
    return table


# -- the command --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--events",
        type=int,
        action="append",
        help="events per run (repeat for several sizes; default 1,000,000)",
    )
    parser.add_argument(
        "--query",
        action="append",
        help="q0 .. q23 (repeat; default: every query the product supports)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "tableapi-nexmark-bench",
        help="where the event files are written once per size and reused (default: %(default)s; "
        "with --remote, a path the server reads at the same name)",
    )
    parser.add_argument("--remote", help="sc://host:port (default: an embedded local[2] server)")
    parser.add_argument(
        "--source",
        action="store_true",
        help="the product alone on its own 'nexmark' connector (no files, no Flink): events/s "
        "per core",
    )
    add_flink_option(parser)
    if (VENV_DIR / "bin" / "python").exists():
        parser.set_defaults(flink_python=str(VENV_DIR / "bin" / "python"))
    args = parser.parse_args()
    if not args.flink_python and not args.source:
        parser.error(f"Nexmark runs against Flink 2.3: pass --flink-python (none at {VENV_DIR})")
    sizes = args.events or [1_000_000]
    names, skipped = selected(args.query)
    load_before = os.getloadavg()
    against = (
        "alone, on its nexmark source"
        if args.source
        else f"and Flink 2.3 at parallelism {PARALLELISM}"
    )
    print(
        f"machine: {os.cpu_count()} cores, load average {fmt_load(load_before)}; the product on "
        f"{args.remote or 'an embedded local[2] server'} {against}",
        flush=True,
    )
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    args.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        return (source_main if args.source else files_main)(args, names, sizes)
    finally:
        print(
            f"machine: {os.cpu_count()} cores; load average before {fmt_load(load_before)}, "
            f"after {fmt_load(os.getloadavg())}"
        )
        if skipped:
            print(f"skipped: {', '.join(skipped)} (see above)")


def files_main(args: Any, names: list[str], sizes: list[int]) -> int:
    """The product and Flink over the same event files."""
    todo = [Run(name, n, ensure_events(args.data_dir, n)) for n in sizes for name in names]
    side_tsv, side_db = write_side_input(args.data_dir / "side-input")  # q13's (10,000 rows)
    url = server_url(args)
    product: dict[str, Windows | str] = {}
    for r in todo:
        files = partial(prepare_product, name=r.query, events_dir=r.events_dir, side_db=side_db)
        product[r.label] = timed_product_runs(url, r.label, r.query, files, args.runs)
    start = time.perf_counter()
    flink = flink_nexmark_runs(args.flink_python, todo, args.runs, args.data_dir, side_tsv)
    print(f"Flink: {time.perf_counter() - start:.0f} s", flush=True)
    print()
    print(
        f"Nexmark (Nexmark's mix 1:3:46), the product against Flink 2.3: median (fastest-slowest) "
        f"of {args.runs} timed runs after one warm-up, seconds; events/s = events / median"
    )
    try:
        print(report(todo, product, flink))
    except AssertionError as e:
        print(e)
        return 1
    if any(r.query == "q13" for r in todo):
        print(Q13_NOTE)
    return 0


def source_main(args: Any, names: list[str], sizes: list[int]) -> int:
    """The product alone on its own ``nexmark`` source: events/s per core."""
    _, side_db = write_side_input(args.data_dir / "side-input")  # q13's (10,000 rows)
    url = server_url(args)
    env = TableEnvironment.create(mode="streaming", remote=url)
    cores = server_cores(env)
    env.close()
    todo = [(name, n) for n in sizes for name in names]
    runs: dict[str, Windows | str] = {}
    for name, n in todo:
        source = partial(prepare_source, name=name, events=n, side_db=side_db)
        runs[f"{name}@{n}"] = timed_product_runs(url, f"{name}@{n}", name, source, args.runs)
    print()
    print(
        f"Nexmark (Nexmark's mix 1:3:46) on the product's nexmark source, {cores} cores: median "
        f"(fastest-slowest) of {args.runs} timed runs after one warm-up, seconds; events/s = "
        f"events / median, per core / {cores}"
    )
    print(source_report(todo, runs, cores))
    return 1 if any(isinstance(w, str) for w in runs.values()) else 0


def timed_product_runs(
    url: str, label: str, name: str, prepare: Callable[[TableEnvironment], None], runs: int
) -> Windows | str:
    """`product_runs` with a progress line; an error as its text (the other queries run)."""
    print(f"the product: {label} ({runs + 1} runs and a count) ...", end="", flush=True)
    start = time.perf_counter()
    try:
        out: Windows | str = product_runs(url, name, prepare, runs)
    except Exception as e:  # reported in the table; the others still run
        out = f"{type(e).__name__}: {str(e)[:500]}"
        print(f" failed: {out}", file=sys.stderr, flush=True)
    print(f" {time.perf_counter() - start:.0f} s", flush=True)
    return out


def fmt_load(load: tuple[float, float, float]) -> str:
    """``os.getloadavg()`` as ``1-min 5-min 15-min``."""
    return " ".join(f"{v:.2f}" for v in load)


if __name__ == "__main__":
    sys.exit(main())
