"""Drives the JVM join functions in memory (``Harness.java``, no Spark) from Python.

Many cases run in one JVM process: :func:`run_cases` writes them to a JSON file, runs
``tableapi.serverext.Harness`` once and reads the results back. Values travel as JSON in the
form :func:`to_json` gives; outputs come back in the same form, so a model's (``tests/models``)
output compares after :func:`to_json` too.

Example::

    case = join_case(spec, [(0, [L("+I", 1, "a"), R("+I", 1, "x")])])
    [result] = run_cases([case])
    result["batches"]  # [[["+I", 1, "a", 1, "x"]]]
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from server_ext.joins.spec import JoinSpec
from server_ext.jvm import wire
from server_ext.jvm.build import (
    TEST_SOURCES,
    JarUnavailable,
    build_tests,
    ensure_jar,
    find_javac,
    find_spark_jars,
)
from tests.unit.server_ext.harness import KINDS, Change

_EPOCH = dt.datetime(1970, 1, 1)
# What Spark's own launcher opens for its date-time code (JavaModuleOptions).
_JVM_OPTIONS = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    *(
        f"--add-opens=java.base/{p}=ALL-UNNAMED"
        for p in ("java.lang", "java.nio", "java.util", "sun.nio.ch", "sun.util.calendar")
    ),
]
_EPOCH_DAY = dt.date(1970, 1, 1)


def harness_classpath() -> str:
    """The jar plus the compiled harness (cached by the sources' digest); skips the test
    when there is no JDK to build them."""
    if find_javac() is None:
        pytest.skip("no javac: the JVM operator tests need a JDK 17")
    try:
        jar = ensure_jar()
    except JarUnavailable as e:
        pytest.skip(str(e))
    digest = hashlib.sha256(jar.read_bytes())
    for path in sorted(TEST_SOURCES.rglob("*.java")):
        digest.update(path.read_bytes())
    out = Path(tempfile.gettempdir()) / f"tableapi-jvm-harness-{digest.hexdigest()[:16]}"
    if not (out / "tableapi" / "serverext" / "Harness.class").is_file():
        partial = Path(tempfile.mkdtemp(prefix="tableapi-jvm-harness-"))
        build_tests(partial, jar)
        try:
            os.replace(partial, out)
        except OSError:  # another run built it meanwhile
            shutil.rmtree(partial, ignore_errors=True)
    spark_jars = find_spark_jars()
    assert spark_jars is not None
    return os.pathsep.join([str(jar), str(out), str(spark_jars / "*")])


def run_cases(cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs every case in one JVM; each result has ``batches`` (and ``state_keys``) or
    ``error``."""
    classpath = harness_classpath()
    with tempfile.TemporaryDirectory(prefix="tableapi-jvm-cases-") as tmp:
        cases_file, out_file = Path(tmp) / "cases.json", Path(tmp) / "out.json"
        cases_file.write_text(json.dumps({"cases": list(cases)}))
        home = os.environ.get("JAVA_HOME")
        java = os.path.join(home, "bin", "java") if home else "java"
        proc = subprocess.run(
            [
                java,
                *_JVM_OPTIONS,
                "-cp",
                classpath,
                "tableapi.serverext.Harness",
                str(cases_file),
                str(out_file),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"the JVM harness failed:\n{proc.stdout}{proc.stderr}")
        return json.loads(out_file.read_text())["results"]


def join_case(
    spec: JoinSpec,
    batches: Sequence[tuple[int, Sequence[Change]]],
    left_key: Sequence[int] = (0,),
    right_key: Sequence[int] = (0,),
) -> dict[str, Any]:
    """One case: ``batches`` are ``(processing time ms, changes)``; the grouping key of a row
    is its fields at ``left_key`` / ``right_key`` (typed as the left side's fields)."""
    key_types = [spec.left.fields[i][1] for i in left_key]
    seq = 0
    out_batches = []
    for now, changes in batches:
        rows = []
        for side_name, kind, row in changes:
            seq += 1
            idx = left_key if side_name == "L" else right_key
            rows.append(
                {
                    "key": [to_json(row[i]) for i in idx],
                    "side": 0 if side_name == "L" else 1,
                    "kind": KINDS[kind],
                    "seq": seq,
                    "row": [to_json(v) for v in row],
                }
            )
        out_batches.append({"now": now, "rows": rows})
    return {
        "spec": wire.spec_json(spec, [f"__k{i}" for i in range(len(left_key))], output_json(spec)),
        **side_schemas(spec),
        "keys": struct_json([(f"__k{i}", t) for i, t in enumerate(key_types)]),
        "batches": out_batches,
    }


def side_schemas(spec: JoinSpec) -> dict[str, str]:
    """The ``left`` and ``right`` schemas of a harness case."""
    return {"left": struct_json(spec.left.fields), "right": struct_json(spec.right.fields)}


# Spark's JSON names of the DDL types the tests use (pyspark parses DDL only with a session).
_JSON_TYPES = {
    "BOOLEAN": "boolean",
    "TINYINT": "byte",
    "SMALLINT": "short",
    "INT": "integer",
    "BIGINT": "long",
    "FLOAT": "float",
    "DOUBLE": "double",
    "STRING": "string",
    "BINARY": "binary",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP_NTZ": "timestamp_ntz",
}


def json_type(ddl: str) -> Any:
    """A DDL type (the scalars above, DECIMAL(p,s), ARRAY<>, MAP<>, STRUCT<>) as Spark's JSON."""
    ddl = ddl.strip()
    upper = ddl.upper().replace(" ", "")
    if upper.startswith("DECIMAL"):
        return upper.lower()
    for prefix in ("ARRAY<", "MAP<", "STRUCT<"):
        if upper.startswith(prefix):
            inner = _split(ddl[len(prefix) : -1])
            if prefix == "ARRAY<":
                return {"type": "array", "elementType": json_type(inner[0]), "containsNull": True}
            if prefix == "MAP<":
                key, value = (json_type(t) for t in inner)
                nulls = {"valueContainsNull": True}
                return {"type": "map", "keyType": key, "valueType": value, **nulls}
            fields = [f.split(":", 1) for f in inner]
            return json.loads(struct_json([(n.strip(" `"), t) for n, t in fields]))
    return _JSON_TYPES[upper]


def _split(text: str) -> list[str]:
    """``text`` split at the commas outside ``<>``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def struct_json(fields: Sequence[tuple[str, str]], kind_first: bool = False) -> str:
    """Fields (name, DDL type) as a StructType's JSON; ``kind_first`` puts ``__kind`` first."""

    out = [{"name": "__kind", "type": "byte", "nullable": False, "metadata": {}}] * kind_first
    out += [
        {"name": name, "type": json_type(ddl), "nullable": True, "metadata": {}}
        for name, ddl in fields
    ]
    return json.dumps({"type": "struct", "fields": out})


def output_json(spec: JoinSpec) -> str:
    """The output schema (``__kind`` + the join's fields) as a StructType's JSON."""
    return struct_json(spec.output_fields(), kind_first=True)


def to_json(value: Any) -> Any:
    """A Python value in the harness's JSON form."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        delta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, dt.date):
        return (value - _EPOCH_DAY).days
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return [[to_json(k), to_json(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    raise TypeError(f"no harness JSON form for {value!r}")


def rows_json(rows: Sequence[tuple]) -> list[list]:
    """Changelog tuples ``("+I", *fields)`` in the JSON form the harness returns."""
    return [[r[0], *(to_json(v) for v in r[1:])] for r in rows]
