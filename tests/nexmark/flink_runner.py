"""Nexmark's queries on Apache Flink, all in one process (one JVM): run in Flink's virtualenv.

    .flink-venv/bin/python -m tests.nexmark.flink_runner JOB.json RESULTS.jsonl

``JOB.json``: ``{"events_dir": DIR, "side_input": FILE, "jar_dir": JARS, "queries": ["q0",
...]}`` (DIR holds ``person/``, ``auction/``, ``bid/`` CSV files; FILE is q13's side input as
the ``conformance-lookup`` connector reads it; JARS where the jars are compiled). Writes one
JSON line per query (flushed as each finishes): ``{"query", "columns", "types", "changelog",
"final", "error", "seconds"}``, values tagged as tests/conformance/flink_runner tags them.

As the conformance suite runs Flink: streaming mode, parallelism 1, a fresh TableEnvironment
per query, the query's own statements (view, side input, ``CREATE FUNCTION``) and then its
SELECT (the INSERT's query), collected with its changelog. q14's ``count_char`` is Nexmark's
own Java class (``flink_udf/``, compiled on first use), q13's side input is read by the
conformance suite's lookup source (``tests/conformance/flink_lookup``); both are loaded with
``pipeline.jars``. Standard library and PyFlink only.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from tests.conformance.flink_env import ensure_flink_jar, ensure_lookup_jar
from tests.conformance.flink_runner import _short, encode
from tests.conformance.model import apply_changelog
from tests.nexmark.queries import load, substitute, table_ddl

UDF_SOURCE_DIR = Path(__file__).resolve().parent / "flink_udf"


def flink_side_input_options(path: str) -> str:
    """q13's side-input table's WITH options on Flink: the conformance suite's lookup source
    (Flink's filesystem connector is no lookup source; Nexmark's legacy CSV source was).

    Example:
        >>> flink_side_input_options("/d/side.tsv")
        "'connector' = 'conformance-lookup', 'path' = '/d/side.tsv'"
    """
    return f"'connector' = 'conformance-lookup', 'path' = '{path}'"


def flink_statements(name: str, events_dir: Path, side_input: str) -> list[str]:
    """What query ``name`` reads, as Flink statements: the event tables, the query's own
    statements, its ``CREATE FUNCTION`` (q14: needs `flink_jars` in ``pipeline.jars``). Then
    its ``select`` is its answer and its ``sink`` and ``insert`` its benchmark.

    Example:
        >>> [s.split("(")[0].strip() for s in flink_statements("q14", Path("/e"), "/s.tsv")]
        ... # doctest: +NORMALIZE_WHITESPACE
        ['CREATE TABLE person', 'CREATE TABLE auction', 'CREATE TABLE bid',
         "CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar'"]
    """
    query = load(name)
    values = {"SIDE_INPUT_OPTIONS": flink_side_input_options(side_input)}
    statements = [*table_ddl(events_dir), *query.setup, *query.functions]
    return [substitute(s, values) for s in statements]


def flink_jars(flink_lib: Path, jar_dir: Path) -> list[Path]:
    """The jars Nexmark's queries need on Flink (``pipeline.jars``), compiled into
    ``jar_dir`` against PyFlink's ``flink_lib`` when missing: q13's lookup source and q14's
    ``CountChar``."""
    return [
        ensure_lookup_jar(flink_lib, jar_dir),
        ensure_flink_jar(flink_lib, UDF_SOURCE_DIR, "nexmark-udf", jar_dir),
    ]


class NexmarkFlink:
    """One PyFlink gateway (JVM); a fresh TableEnvironment per query."""

    def __init__(self, jar_dir: Path) -> None:
        import pyflink  # type: ignore[import-not-found]  # (Flink's virtualenv only)

        lib = Path(pyflink.__file__).resolve().parent / "lib"
        self.jars = ";".join(j.resolve().as_uri() for j in flink_jars(lib, jar_dir))

    def run(self, name: str, events_dir: Path, side_input: str) -> dict[str, Any]:
        """Query ``name`` over the events in ``events_dir``: its changelog and final table."""
        from pyflink.table import EnvironmentSettings, TableEnvironment  # type: ignore[import-not-found]

        started = time.monotonic()
        out: dict[str, Any] = {"query": name, "columns": [], "types": [], "changelog": []}
        out["error"] = None
        try:
            env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
            config = env.get_config()
            config.set("parallelism.default", "1")
            config.set("table.exec.resource.default-parallelism", "1")
            config.set("pipeline.jars", self.jars)
            for statement in flink_statements(name, events_dir, side_input):
                env.execute_sql(statement)
            result = env.execute_sql(load(name).select)
            schema = result.get_resolved_schema()
            out["columns"] = list(schema.get_column_names())
            out["types"] = [
                str(t.toString()) for t in schema._j_resolved_schema.getColumnDataTypes()
            ]
            with result.collect() as rows:
                for row in rows:
                    kind = str(row.get_row_kind())
                    out["changelog"].append([kind, [encode(v) for v in row]])
        except Exception as e:  # reported per query; the run goes on
            out["error"] = f"{type(e).__name__}: {_short(e)}"
            out["traceback"] = traceback.format_exc()[-4000:]
        final, _ = apply_changelog([(k, [json.dumps(r)]) for k, r in out["changelog"]])
        out["final"] = [json.loads(row[0]) for row in final.elements()]
        out["seconds"] = round(time.monotonic() - started, 3)
        return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text())
    flink = NexmarkFlink(Path(job["jar_dir"]))
    with open(argv[1], "a") as out:
        for name in job["queries"]:
            result = flink.run(name, Path(job["events_dir"]), job["side_input"])
            out.write(json.dumps(result) + "\n")
            out.flush()
            status = result["error"] or f"{len(result['final'])} rows"
            print(f"[flink] {name}: {status[:300]} in {result['seconds']:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
