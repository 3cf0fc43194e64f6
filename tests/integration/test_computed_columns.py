"""Computed columns (FLIP-70) on a real server: computed when read, never written by sinks."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tests.integration.files import write_json

ROWS = [(1, 100, "apple"), (2, None, "pear"), (None, 300, None), (4, 400, "Fig")]


def t2_schema() -> Schema:
    return (
        Schema.new_builder()
        .column("a", "INT")
        .column_by_expression("b", "a + 1")
        .column("c", "BIGINT")
        .column("e", "STRING")
        .column_by_expression("e_upper", col("e").upper_case)
        .column_by_expression("total", "CAST(a AS BIGINT) * 10 + c")
        .column_by_expression("pt", "PROCTIME()")
        .build()
    )


def register(env: TableEnvironment, name: str, path: Path, fmt: str = "json") -> None:
    descriptor = (
        TableDescriptor.for_connector("filesystem")
        .schema(t2_schema())
        .option("path", str(path))
        .option("format", fmt)
    )
    env.create_temporary_table(name, descriptor.build())


def expected(rows: list[tuple]) -> list[tuple]:
    """b, e_upper and total computed in plain Python (SQL null semantics)."""
    out = []
    for a, c, e in rows:
        b = None if a is None else a + 1
        upper = None if e is None else e.upper()
        total = None if a is None or c is None else a * 10 + c
        out.append((a, b, c, e, upper, total))
    return sorted(out, key=repr)


def test_reading_computes_the_columns_above_the_scan(
    env: TableEnvironment, shared_dir: Path
) -> None:
    write_json(shared_dir / "t2", ["a", "c", "e"], ROWS)
    register(env, "T2", shared_dir / "t2")
    t2 = env.from_path("T2")
    assert t2.row_type.names == ("a", "b", "c", "e", "e_upper", "total", "pt")

    before = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    rows = t2.execute().collect()
    after = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)

    assert sorted((tuple(r)[:6] for r in rows), key=repr) == expected(ROWS)
    for r in rows:  # PROCTIME(): the time of the query, in UTC (the session time zone)
        pt = tuple(r)[6]
        assert before - dt.timedelta(seconds=5) <= pt <= after + dt.timedelta(seconds=5)
    plan = t2.explain()
    assert "TableSourceScan(table=[[default_catalog, default_database, T2]], fields=[a, c, e])" in (
        plan
    )


@pytest.mark.parametrize("fmt", ["json", "parquet", "csv"])
def test_sinks_write_physical_columns_only(
    env: TableEnvironment, shared_dir: Path, fmt: str
) -> None:
    write_json(shared_dir / "src", ["a", "c", "e"], ROWS)
    register(env, "Src", shared_dir / "src")
    register(env, "Sink", shared_dir / "sink", fmt)

    env.from_path("Src").select(
        (col("a") * 2).alias("a"), col("c"), col("e_upper").alias("e")
    ).execute_insert("Sink").wait()

    written = _written_columns(shared_dir / "sink", fmt)
    assert written == ["a", "c", "e"] or (fmt == "csv" and written == 3)

    back = env.from_path("Sink").select(
        col("a"), col("b"), col("c"), col("e"), col("e_upper"), col("total")
    )
    doubled = [
        (None if a is None else 2 * a, c, None if e is None else e.upper()) for a, c, e in ROWS
    ]
    assert sorted((tuple(r) for r in back.execute().collect()), key=repr) == expected(doubled)


def test_insert_with_the_wrong_columns_names_the_physical_ones(
    env: TableEnvironment, shared_dir: Path
) -> None:
    write_json(shared_dir / "src", ["a", "c", "e"], ROWS)
    register(env, "Src", shared_dir / "src")
    register(env, "Sink", shared_dir / "sink")
    with pytest.raises(Exception, match=r"Sink schema:  \[a: INT, c: BIGINT, e: STRING\]"):
        env.from_path("Src").execute_insert("Sink")  # Flink's message, the physical columns
    assert not (shared_dir / "sink").exists()


def _written_columns(path: Path, fmt: str) -> list[str] | int:
    files = [p for p in path.iterdir() if p.name.startswith("part-")]
    assert files, f"no part files in {path}"
    if fmt == "json":
        keys: set[str] = set()
        for p in files:
            for line in p.read_text().splitlines():
                keys.update(json.loads(line))
        return sorted(keys)
    if fmt == "parquet":
        return pq.read_schema(files[0]).names
    # csv without a header: count the fields of a non-empty line
    lines = [line for p in files for line in p.read_text().splitlines() if line]
    return len(lines[0].split(","))


def flink_text(value: object, precision: int | None = None) -> str | None:
    """``CAST(value AS STRING)`` as Flink writes it: TRUE/FALSE, a timestamp with exactly its
    precision's fraction digits, a DOUBLE as Java's Double.toString (Python's repr for the
    plain decimals used here)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).upper()
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S.%f")
        return text[: len(text) - 6 + (precision or 0)] if precision else text[:-7]
    if isinstance(value, float):
        assert 1e-3 <= abs(value) < 1e7, "Java writes this one in E notation"
        return repr(value)
    return str(value)


def test_cast_to_string_writes_booleans_and_timestamps_as_flink_does(
    env: TableEnvironment, shared_dir: Path
) -> None:
    """Spark writes 'true' and drops a timestamp's trailing zeros ('10:00:00', '10:00:00.5');
    Flink writes 'TRUE' and p fraction digits for a TIMESTAMP(p) ('10:00:00.000')."""
    t = dt.datetime(2024, 1, 1, 10, 0, 0)
    rows = [
        (True, t, 1.5),
        (False, t + dt.timedelta(milliseconds=500), 0.25),
        (None, t + dt.timedelta(milliseconds=123), None),
    ]
    write_json(shared_dir / "flags", ["flag", "ts", "d"], rows)
    schema = (
        Schema.new_builder()
        .column("flag", "BOOLEAN")
        .column("ts", "TIMESTAMP(3)")
        .column("d", "DOUBLE")
        .column_by_expression("flag_s", "CAST(flag AS STRING)")
        .column_by_expression("ts_s", "CAST(ts AS STRING)")
        .build()
    )
    env.create_temporary_table(
        "Flags",
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", str(shared_dir / "flags"))
        .option("format", "json")
        .build(),
    )
    q = env.from_path("Flags").select(
        col("flag_s"),
        col("ts_s"),
        col("d").cast("STRING"),
        col("ts").cast("TIMESTAMP(0)").cast("STRING"),
        col("flag").cast("VARCHAR(5)"),
    )
    got = sorted((tuple(r) for r in q.execute().collect()), key=repr)
    want = [
        (flink_text(f), flink_text(ts, 3), flink_text(d), flink_text(ts, 0), flink_text(f))
        for f, ts, d in rows
    ]
    assert got == sorted(want, key=repr)
