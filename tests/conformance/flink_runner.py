"""Runs many cases on Apache Flink in one process (one JVM): run it in Flink's virtualenv.

    .flink-venv/bin/python -m tests.conformance.flink_runner CASES.jsonl RESULTS.jsonl
    .flink-venv/bin/python -m tests.conformance.flink_runner --serve   # stdin -> stdout

Reads one case per line, writes one result per line (flushed as each finishes):
``{"id", "columns", "types", "changelog": [[kind, row], ...], "error", "seconds", "sql"}``
(``types``: the result schema's column types as Flink writes them). Values
that JSON lacks are tagged: ``{"$ts": "2024-01-01 00:00:01.000000"}``, ``{"$dec": "1.50"}``.

Every case runs in streaming mode with parallelism 1: each table is one file, one split, so
a changelog table is read in its one total order (Debezium JSON), and a bounded source ends
with a watermark of +infinity, as the product's bounded tables do. The final table of a
streaming run over bounded inputs is the batch answer too, so batch cases compare with it.
A lookup table (``"lookup": true``) is a file of rows read by the ``conformance-lookup``
connector (tests/conformance/flink_lookup), whose jar is built on first use and loaded with
``pipeline.jars``.

Standard library and PyFlink only (no tableapi here; the lookup jar is built by
server_ext.jvm.build, which is standard library only too).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from tests.conformance.flink_env import ensure_lookup_jar
from tests.conformance.flink_sql import case_statements
from tests.conformance.model import Case, apply_changelog, write_flink_file, write_lookup_file


def encode(v: Any) -> Any:
    """A Flink result value as JSON (tagged where JSON has no type for it).

    Example:
        >>> encode(decimal.Decimal("1.50")), encode(dt.datetime(2024, 1, 1, 0, 0, 1))
        ({'$dec': '1.50'}, {'$ts': '2024-01-01 00:00:01.000000'})
    """
    if isinstance(v, dt.datetime):
        return {"$ts": v.strftime("%Y-%m-%d %H:%M:%S.%f")}
    if isinstance(v, decimal.Decimal):
        return {"$dec": str(v)}
    if isinstance(v, (dt.date, dt.time)):
        return {"$ts": v.isoformat()}
    return v


class FlinkRunner:
    """One PyFlink gateway (JVM); a fresh TableEnvironment per case."""

    def __init__(self) -> None:
        from pyflink.table import EnvironmentSettings, TableEnvironment

        self._settings = EnvironmentSettings.in_streaming_mode()
        self._create = TableEnvironment.create
        self._lookup_jar: str | None = None

    def lookup_jar_url(self) -> str:
        """The conformance-lookup connector's jar as a file:// URL (built on first use)."""
        if self._lookup_jar is None:
            import pyflink

            lib = Path(pyflink.__file__).resolve().parent / "lib"
            self._lookup_jar = ensure_lookup_jar(lib).resolve().as_uri()
        return self._lookup_jar

    def run(self, case: Case, workdir: Path) -> dict[str, Any]:
        from pyflink.table.expressions import col

        started = time.monotonic()
        out: dict[str, Any] = {
            "id": case["id"],
            "columns": [],
            "types": [],
            "changelog": [],
            "error": None,
        }
        sql = ""
        try:
            env = self._create(self._settings)
            config = env.get_config()
            config.set("parallelism.default", "1")
            config.set("table.exec.resource.default-parallelism", "1")
            paths = {}
            for t in case["tables"]:
                directory = workdir / t["name"]
                if t.get("lookup"):
                    config.set("pipeline.jars", self.lookup_jar_url())
                    paths[t["name"]] = str(write_lookup_file(t, directory))
                else:
                    write_flink_file(t, directory)
                    paths[t["name"]] = str(directory)
            ddls, sql = case_statements(case, paths)
            for statement in ddls:
                env.execute_sql(statement)
            for fn in case.get("functions", []):
                # PyFlink's Table lacks create_temporal_table_function: Java's, via py4j.
                j_table = env.from_path(fn["table"])._j_table
                function = j_table.createTemporalTableFunction(
                    col(fn["time"])._j_expr, col(fn["key"])._j_expr
                )
                env._j_tenv.createTemporarySystemFunction(fn["name"], function)
            result = env.execute_sql(sql)
            schema = result.get_resolved_schema()
            out["columns"] = list(schema.get_column_names())
            # Java's DataType.toString(): Flink's own spelling ("INT NOT NULL", "STRING",
            # "TIMESTAMP(3) *ROWTIME*"); compare.normalize_type reads it.
            out["types"] = [
                str(t.toString()) for t in schema._j_resolved_schema.getColumnDataTypes()
            ]
            with result.collect() as rows:
                for row in rows:
                    kind = str(row.get_row_kind())
                    out["changelog"].append([kind, [encode(v) for v in row]])
        except Exception as e:  # reported per case; the run goes on
            out["error"] = f"{type(e).__name__}: {_short(e)}"
            out["traceback"] = traceback.format_exc()[-4000:]
        # The final table: the changelog applied (rows as JSON text, so tagged values count).
        final, _ = apply_changelog([(k, [json.dumps(r)]) for k, r in out["changelog"]])
        out["final"] = [json.loads(row[0]) for row in final.elements()]
        out["sql"] = sql
        out["seconds"] = round(time.monotonic() - started, 3)
        return out


def _short(e: Exception) -> str:
    """Py4J errors carry the whole Java stack: keep the message lines that say what failed."""
    text = str(e)
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
    return " | ".join(lines[:6])[:1500]


RESULT_PREFIX = "@@flink-result "


def serve() -> int:
    """One case per stdin line, one ``RESULT_PREFIX``-marked result line on stdout each (the
    JVM may print to stdout too): the minimizer's long-lived Flink."""
    runner = FlinkRunner()
    with tempfile.TemporaryDirectory(prefix="flink-cases-") as tmp:
        for i, line in enumerate(sys.stdin):
            if not line.strip():
                continue
            result = runner.run(json.loads(line), Path(tmp) / f"c{i}")
            sys.stdout.write(RESULT_PREFIX + json.dumps(result) + "\n")
            sys.stdout.flush()
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--serve"]:
        return serve()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cases_path, results_path = map(Path, argv)
    runner = FlinkRunner()
    cases = [json.loads(line) for line in cases_path.read_text().splitlines() if line.strip()]
    with open(results_path, "a") as out, tempfile.TemporaryDirectory(prefix="flink-cases-") as tmp:
        for i, case in enumerate(cases, 1):
            result = runner.run(case, Path(tmp) / f"c{i}")
            out.write(json.dumps(result) + "\n")
            out.flush()
            status = "error" if result["error"] else f"{len(result['changelog'])} changes"
            print(
                f"[flink {i}/{len(cases)}] {case['id']} ({case['family']}): {status} "
                f"in {result['seconds']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
