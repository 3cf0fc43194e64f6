"""Computed columns (FLIP-70): virtual columns computed when rows are read, never stored.

    CREATE TABLE T2 (
      a INT,
      b AS a + 1,
      c BIGINT,
      e STRING,
      e_upper AS UPPER(e),
      pt AS PROCTIME()
    ) WITH ('connector' = 'filesystem', 'format' = 'json', ...)

Reading T2 puts a projection that computes b, e_upper and pt right above a scan of the
physical columns a, c, e. Writing into a table with computed columns writes the physical
columns only.

Run it with ``python examples/computed_columns.py`` (starts an embedded Spark Connect server)
or ``python examples/computed_columns.py sc://host:port``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tableapi import Schema, TableDescriptor, TableEnvironment, col

ROWS = [(1, 100, "apple"), (2, 200, "pear"), (3, 300, "fig")]  # a, c, e: the physical columns


def t2_schema() -> Schema:
    """T2's columns: three physical ones and three computed ones, in declaration order."""
    return (
        Schema.new_builder()
        .column("a", "INT")
        .column_by_expression("b", "a + 1")  # SQL text, as in Flink's DDL
        .column("c", "BIGINT")
        .column("e", "STRING")
        .column_by_expression("e_upper", col("e").upper_case)  # or a Table API expression
        .column_by_expression("pt", "PROCTIME()")  # a processing-time attribute
        .build()
    )


def file_table(path: Path) -> TableDescriptor:
    return (
        TableDescriptor.for_connector("filesystem")
        .schema(t2_schema())
        .option("path", str(path))
        .option("format", "json")
        .build()
    )


def main(env: TableEnvironment | None = None) -> None:
    own_env = env is None
    env = env or TableEnvironment.create()
    with tempfile.TemporaryDirectory(prefix="computed_columns_") as tmp:
        root = Path(tmp)
        # The source files hold the physical columns only.
        (root / "t2").mkdir()
        with open(root / "t2" / "part-0.json", "w") as f:
            for a, c, e in ROWS:
                f.write(json.dumps({"a": a, "c": c, "e": e}) + "\n")
        env.create_temporary_table("T2", file_table(root / "t2"))
        env.create_temporary_table("T2_sink", file_table(root / "t2_sink"))  # same schema
        try:
            run_queries(env, root / "t2_sink")
        finally:
            env.drop_temporary_table("T2")
            env.drop_temporary_table("T2_sink")
    if own_env:
        env.close()


def run_queries(env: TableEnvironment, sink_dir: Path) -> None:
    t2 = env.from_path("T2")

    print("-- The declared schema (computed columns keep their expressions)")
    print(env.descriptor("T2").table_schema)
    print("\n-- The schema a query sees: types derived from the expressions")
    t2.print_schema()

    print(
        "\n-- explain(): a Calc (projection) computes b, e_upper and pt above the scan of a, c, e"
    )
    print(t2.explain(physical=True).rstrip())

    print("\n-- Reading T2 (b = a + 1, e_upper = UPPER(e), pt = the time of the query)")
    t2.order_by(col("a")).execute().print()

    # Insert into T2_sink: give its physical columns (a, c, e), in order. The sink's own
    # computed columns are not written; they are computed again whenever it is read.
    t2.select((col("a") * 10).alias("a"), col("c"), col("e_upper").alias("e")).execute_insert(
        "T2_sink"
    ).wait()

    keys = set()
    for part in sorted(sink_dir.glob("part-*.json")):
        for line in part.read_text().splitlines():
            keys.update(json.loads(line))
    print(f"\n-- The written JSON files hold the keys {sorted(keys)} (no b, e_upper, pt)")

    print("\n-- Reading T2_sink: its computed columns come back, computed from what was written")
    env.from_path("T2_sink").select(
        col("a"), col("b"), col("c"), col("e"), col("e_upper")
    ).order_by(col("a")).execute().print()


if __name__ == "__main__":  # an optional sc://host:port: else an embedded server
    main(TableEnvironment.create(remote=sys.argv[1]) if len(sys.argv) > 1 else None)
