"""Nexmark's queries on Flink 2.3 and on this product over the same event files.

Flink's answers are kept in ``answers/qN.json`` (Flink's collect() of a changelog costs about
2 ms a row: too slow for CI), each with the key it was made from (`answer_key`: hashes of the
query's text, of the tables' DDL and of the events' options). Regenerate them on Flink:

    .venv/bin/python -m tests.nexmark.conformance            # every query
    .venv/bin/python -m tests.nexmark.conformance q3 q4      # some
    .venv/bin/python -m tests.nexmark.conformance --compare --remote sc://localhost:15002

(``--compare``: also run each query on the product at ``--remote``, or on an embedded server,
and print the per-query table.) test_nexmark runs the product against the stored answers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from pyspark import cloudpickle

from tableapi import TableEnvironment, udf
from tests.conformance.compare import compare
from tests.conformance.flink_env import FLINK_VERSION, REPO_ROOT, ensure_flink_venv
from tests.nexmark.known import DIFFERENT, FLINK_REFUSES, UNSUPPORTED
from tests.nexmark.queries import QUERY_NAMES, load, substitute, table_ddl, tables_text

ANSWERS_DIR = Path(__file__).resolve().parent / "answers"
#: The events every answer is made from: the first EVENTS events of Nexmark's generator with
#: these options (Flink's Nexmark option names). 100 events a second of event time (3,000
#: events span 30 s: three 10-s windows, auctions that expire within it). Two persons in five
#: events (Nexmark: 1 in 50): Nexmark's generator adds FIRST_PERSON_ID (1000) to a bidder
#: twice (kept by the port), so a bid's bidder is a person only once there are over 1,000
#: persons, and q23 (bids of persons who also sell) joins nothing before: 1,200 persons give
#: it 47 rows (1,440 bids, 360 auctions).
EVENTS = 3000
EVENT_OPTIONS = {
    "first-event.rate": "100",
    "next-event.rate": "100",
    "person.proportion": "20",
    "auction.proportion": "6",
    "bid.proportion": "24",
}
#: q13's side input: Nexmark's SideInputGenerator writes "i,i" for i < 10000.
SIDE_INPUT_ROWS = 10_000
#: Answers that may be empty: q12's processing-time windows never fire on bounded input (the
#: job ends first), whatever the events.
MAY_BE_EMPTY = {"q12"}


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def answer_key(name: str) -> dict[str, str]:
    """What an answer was made from: the query's text, the tables' DDL, the events' options
    (an answer whose key is not the current one must be regenerated).

    Example:
        >>> sorted(answer_key("q3"))
        ['events', 'flink', 'query', 'tables']
    """
    events = json.dumps({"events": EVENTS, "options": EVENT_OPTIONS}, sort_keys=True)
    return {
        "query": load(name).text_hash,
        "tables": _hash(tables_text()),
        "events": _hash(events),
        "flink": FLINK_VERSION,
    }


def write_events(directory: Path) -> Path:
    """The events (EVENTS, EVENT_OPTIONS) as CSV files in ``directory``/person, /auction and
    /bid, written by the port of Nexmark's generator (server_ext.nexmark_files)."""
    from server_ext.nexmark_files import write_events as generate

    generate(directory, EVENTS, EVENT_OPTIONS)
    return directory


def write_side_input(directory: Path) -> tuple[Path, Path]:
    """q13's side input (Nexmark's: ``i, 'i'`` for i < SIDE_INPUT_ROWS) twice: a tab-separated
    file for Flink's lookup source and a SQLite table for the product's ``jdbc`` one.

    Example:
        >>> tsv, db = write_side_input(Path(tempfile.mkdtemp()))
        >>> tsv.read_text().splitlines()[2], sqlite3.connect(db).execute(
        ...     "SELECT * FROM side_input WHERE key = 2").fetchall()
        ('2\\t2', [(2, '2')])
    """
    directory.mkdir(parents=True, exist_ok=True)
    rows = [(i, str(i)) for i in range(SIDE_INPUT_ROWS)]
    tsv = directory / "side_input.tsv"
    tsv.write_text("".join(f"{k}\t{v}\n" for k, v in rows))
    db = directory / "side_input.db"
    db.unlink(missing_ok=True)
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE side_input (key INTEGER, value TEXT)")
        conn.executemany("INSERT INTO side_input VALUES (?, ?)", rows)
    conn.close()
    db.chmod(0o666)  # the server's workers may run as another user
    return tsv, db


def product_side_input_options(db: Path) -> str:
    """q13's side-input table's WITH options on the product: a ``jdbc`` lookup table.

    Example:
        >>> product_side_input_options(Path("/d/side_input.db"))
        "'connector' = 'jdbc', 'url' = 'jdbc:sqlite:/d/side_input.db', 'table-name' = 'side_input'"
    """
    return f"'connector' = 'jdbc', 'url' = 'jdbc:sqlite:{db}', 'table-name' = 'side_input'"


def count_char(s: str | None, character: str) -> int:
    """q14's ``count_char`` on the product, as Nexmark's CountChar (a Java UDF, which Flink runs):
    how many of the UTF-8 bytes of ``s`` are the first byte of ``character`` (0 for NULL).

    Example:
        >>> count_char("c-ccx", "c"), count_char(None, "c")
        (3, 0)
    """
    if s is None:
        return 0
    return s.encode().count(character.encode()[:1])


# -- Flink -------------------------------------------------------------------------------------


def run_flink(names: list[str], events_dir: Path, side_input: Path) -> dict[str, dict[str, Any]]:
    """Flink's results of ``names`` (one Flink process, tests/nexmark/flink_runner), by name."""
    python = ensure_flink_venv()
    with tempfile.TemporaryDirectory(prefix="nexmark-flink-") as tmp:
        job, results = Path(tmp) / "job.json", Path(tmp) / "results.jsonl"
        job.write_text(
            json.dumps(
                {
                    "events_dir": str(events_dir),
                    "side_input": str(side_input),
                    "jar_dir": tmp,  # compiled per run (a few seconds), cached nowhere
                    "queries": names,
                }
            )
        )
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        for key in ("VIRTUAL_ENV", "SPARK_HOME", "PYSPARK_PYTHON", "SPARK_REMOTE"):
            env.pop(key, None)
        cmd = [str(python), "-m", "tests.nexmark.flink_runner", str(job), str(results)]
        subprocess.run(cmd, cwd=REPO_ROOT, env=env, check=False, timeout=600 * len(names))
        lines = results.read_text().splitlines() if results.exists() else []
    answers = {r["query"]: r for r in map(json.loads, lines)}
    for name in names:
        answers.setdefault(name, {"query": name, "error": "the Flink process died before it"})
    return answers


def write_answer(name: str, result: dict[str, Any]) -> Path:
    """Keep Flink's result of ``name`` as ``answers/<name>.json``: its key, columns, types,
    final rows (sorted, one a line), error; the changelog's length and Flink's seconds."""
    record = {
        "query": name,
        "key": answer_key(name),
        "columns": result.get("columns", []),
        "types": result.get("types", []),
        "error": result.get("error"),
        "changes": len(result.get("changelog", [])),
        "seconds": result.get("seconds"),
    }
    rows = sorted(json.dumps(r) for r in result.get("final", []))
    head = json.dumps(record, indent=1)[:-2]  # without the closing "\n}"
    text = head + ',\n "rows": [' + (("\n  " + ",\n  ".join(rows) + "\n ") if rows else "")
    path = ANSWERS_DIR / f"{name}.json"
    ANSWERS_DIR.mkdir(exist_ok=True)
    path.write_text(text + "]\n}\n")
    return path


def load_answer(name: str) -> dict[str, Any]:
    """A stored answer as compare() reads Flink's results (its rows as +I changes).

    Example:
        >>> answer = load_answer("q3")
        >>> answer["columns"], answer["changelog"][0][0]
        (['name', 'city', 'state', 'id'], '+I')
    """
    record = json.loads((ANSWERS_DIR / f"{name}.json").read_text())
    record["changelog"] = [["+I", row] for row in record["rows"]]
    return record


# -- the product -------------------------------------------------------------------------------


def prepare_product(env: TableEnvironment, name: str, events_dir: Path, side_db: Path) -> None:
    """Everything query ``name`` reads, in ``env``: the event tables over ``events_dir``, the
    query's own statements (q13's side input a ``jdbc`` table over ``side_db``), q14's
    ``count_char`` as a Python udf. Then ``env.sql_query(load(name).select)`` is its answer,
    and ``execute_sql`` of its ``sink`` and ``insert`` its benchmark (a blackhole sink).

    Example:
        >>> from tableapi import TableEnvironment
        >>> env = TableEnvironment.create(mode="streaming")
        >>> prepare_product(env, "q14", Path("/data/events"), Path("/data/side_input.db"))
        >>> env.sql_query(load("q14").select).column_names[-1]
        'c_counts'
    """
    query = load(name)
    values = {"SIDE_INPUT_OPTIONS": product_side_input_options(side_db)}
    for statement in [*table_ddl(events_dir), *query.setup]:
        env.execute_sql(substitute(statement, values))
    if query.functions:  # q14: the product has no CREATE FUNCTION of a Java class
        # By value: a server's Python (a container's) cannot import this test module.
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        function = udf(count_char, result_type="BIGINT NOT NULL")
        env.create_temporary_system_function("count_char", function)


def run_product(name: str, remote: str, events_dir: Path, side_db: Path) -> dict[str, Any]:
    """Query ``name`` (its SELECT) on the product at ``remote`` in streaming mode, as Flink
    runs it: ``changelog``, ``columns``, ``types``; an error as ``error`` and ``exception``
    (the exception itself), never raised."""
    from tests.conformance.product import encode

    started = time.monotonic()
    out: dict[str, Any] = {"query": name, "columns": [], "types": [], "changelog": []}
    out["error"], out["exception"] = None, None
    env = TableEnvironment.create(mode="streaming", remote=remote)
    try:
        prepare_product(env, name, events_dir, side_db)
        table = env.sql_query(load(name).select)
        out["columns"] = list(table.column_names)
        result = table.execute()
        out["types"] = [str(f.type) for f in result.row_type]
        rows = result.collect()
        out["changelog"] = [[r.kind.short_string, [encode(v) for v in r]] for r in rows]
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {str(e)[:1500]}"
        out["exception"] = e
        out["traceback"] = traceback.format_exc()[-3000:]
    finally:
        for active in env.spark.streams.active:
            active.stop()
        env.close()
    out["seconds"] = round(time.monotonic() - started, 3)
    return out


# -- the command -------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.nexmark.conformance")
    parser.add_argument("queries", nargs="*", help="q0 .. q23 (default: all)")
    parser.add_argument("--compare", action="store_true", help="also run on the product")
    parser.add_argument("--remote", help="the product's server (default: an embedded one)")
    parser.add_argument("--no-flink", action="store_true", help="compare with stored answers")
    args = parser.parse_args(argv)
    names = args.queries or list(QUERY_NAMES)
    with tempfile.TemporaryDirectory(prefix="nexmark-") as tmp:
        events_dir = write_events(Path(tmp) / "events")
        tsv, db = write_side_input(Path(tmp) / "side")
        if not args.no_flink:
            for name, result in run_flink(names, events_dir, tsv).items():
                path = write_answer(name, result)
                status = result.get("error") or f"{len(result.get('final', []))} rows"
                print(f"[flink] {name}: {status[:200]} -> {path}")
                if not result.get("error") and not result.get("final"):
                    if name not in MAY_BE_EMPTY:
                        print(f"[flink] {name}: NO ROWS: more events? (EVENTS = {EVENTS})")
        if args.compare:
            _compare_all(names, args.remote, events_dir, db)
    return 0


def _compare_all(names: list[str], remote: str | None, events_dir: Path, db: Path) -> None:
    server = None
    if remote is None:
        from tableapi.session import EmbeddedServer

        server = EmbeddedServer.start(master="local[2]")
        remote = server.url
    try:
        print(f"{'query':<6} {'status':<26} {'Flink rows':>10} {'Flink s':>8} {'product s':>9}")
        for name in names:
            answer = load_answer(name)
            product = run_product(name, remote, events_dir, db)
            if name in UNSUPPORTED or name in FLINK_REFUSES:
                status = "refused" if product["error"] else "RUNS (listed as refused)"
            else:
                c = compare(answer, product)
                status = c.status + (" (listed)" if name in DIFFERENT else "")
                if not c.same:
                    print(c.report()[:3000])
            print(
                f"{name:<6} {status:<26} {len(answer['rows']):>10} "
                f"{answer.get('seconds') or 0:>8.1f} {product['seconds']:>9.1f}",
                flush=True,
            )
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
