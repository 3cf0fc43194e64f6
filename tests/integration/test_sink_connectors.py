"""Inserts into ``print`` and ``blackhole`` tables, in batch and streaming mode, on the test
server. The client prints a print table's rows (Flink's format); a blackhole discards them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment, col
from tests.integration.changelog_files import ChangelogTable

pytestmark = pytest.mark.integration

ITEMS = [("id", "BIGINT"), ("name", "STRING"), ("price", "DOUBLE")]


def sink(env: TableEnvironment, name: str, connector: str, columns, **options: str) -> None:
    schema = Schema.new_builder()
    for n, t in columns:
        schema.column(n, t)
    builder = TableDescriptor.for_connector(connector).schema(schema.build())
    for k, v in options.items():
        builder.option(k, v)
    env.create_temporary_table(name, builder.build())


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def test_batch_print_writes_flinks_lines(env: TableEnvironment, capsys) -> None:
    items = env.from_elements([(2, "ink", 7.0), (1, None, 1e7)], ["id", "name", "price"])
    sink(env, "Out", "print", ITEMS, **{"print-identifier": "items"})
    sink(env, "Err", "print", ITEMS, **{"standard-error": "true"})
    items.order_by(col("id")).execute_insert("Out").wait()
    items.where(col("id") == 2).execute_insert("Err").wait()
    out = capsys.readouterr()
    assert lines(out.out) == ["items> +I[1, null, 1.0E7]", "items> +I[2, ink, 7.0]"]
    assert lines(out.err) == ["+I[2, ink, 7.0]"]


def test_batch_blackhole_runs_the_job_and_prints_nothing(env: TableEnvironment, capsys) -> None:
    items = env.from_elements([(1, "pen", 2.5)], ["id", "name", "price"])
    sink(env, "Nothing", "blackhole", ITEMS)
    result = items.execute_insert("Nothing")
    result.wait()
    assert result.collect() == []
    assert capsys.readouterr().out == ""


def test_streaming_print_shows_every_change_kind_in_order(
    senv: TableEnvironment, shared_dir: Path, capsys
) -> None:
    columns = [("id", "BIGINT"), ("name", "STRING"), ("qty", "INT")]
    table = ChangelogTable(senv, shared_dir, "Stock", columns, bounded=True)
    table.append([("+I", (1, "pen", 3)), ("+I", (2, "ink", 5)), ("-U", (1, "pen", 3))])
    table.append([("+U", (1, "pen", 4)), ("-D", (2, "ink", 5)), ("+I", (3, "cap", 1))])
    sink(senv, "Out", "print", columns, **{"print-identifier": "stock"})
    result = senv.from_path("Stock").execute_insert("Out")
    assert result.finished  # bounded: run to the end, everything printed
    assert lines(capsys.readouterr().out) == [
        "stock> +I[1, pen, 3]",
        "stock> +I[2, ink, 5]",
        "stock> -U[1, pen, 3]",
        "stock> +U[1, pen, 4]",
        "stock> -D[2, ink, 5]",
        "stock> +I[3, cap, 1]",
    ]


class Printed:
    """The lines a running print insert has printed so far (capsys's standard output)."""

    def __init__(self, capsys) -> None:
        self.capsys = capsys
        self.lines: list[str] = []

    def until(self, n: int) -> list[str]:
        """Wait (up to a minute) until ``n`` lines have been printed."""
        deadline = time.monotonic() + 60
        while len(self.lines) < n and time.monotonic() < deadline:
            time.sleep(0.2)
            self.lines.extend(lines(self.capsys.readouterr().out))
        return self.lines


def test_streaming_print_of_a_join_prints_its_changelog(
    senv: TableEnvironment, shared_dir: Path, capsys
) -> None:
    orders = ChangelogTable(senv, shared_dir, "Orders", [("o_id", "BIGINT"), ("p_id", "BIGINT")])
    products = ChangelogTable(senv, shared_dir, "Products", [("id", "BIGINT"), ("name", "STRING")])
    columns = [("o_id", "BIGINT"), ("p_id", "BIGINT"), ("id", "BIGINT"), ("name", "STRING")]
    sink(senv, "Out", "print", columns, **{"print-identifier": "join"})
    orders.append([("+I", (1, 10))])
    query = senv.from_path("Orders").left_outer_join(
        senv.from_path("Products"), col("p_id") == col("id")
    )
    result = query.execute_insert("Out")
    printed = Printed(capsys)
    try:
        assert printed.until(1) == ["join> +I[1, 10, null, null]"]
        products.append([("+I", (10, "pen"))])  # the padded row is retracted
        assert printed.until(3)[1:] == ["join> -D[1, 10, null, null]", "join> +I[1, 10, 10, pen]"]
        products.append([("-D", (10, "pen"))])  # and padded again
        assert printed.until(5)[3:] == ["join> -D[1, 10, 10, pen]", "join> +I[1, 10, null, null]"]
    finally:
        result.cancel()


def test_streaming_print_prints_new_changes_as_they_come(
    senv: TableEnvironment, shared_dir: Path, capsys
) -> None:
    columns = [("id", "BIGINT"), ("name", "STRING")]
    table = ChangelogTable(senv, shared_dir, "Live", columns)  # watched: unbounded
    sink(senv, "Out", "print", columns)
    table.append([("+I", (1, "a"))])
    result = senv.from_path("Live").execute_insert("Out")
    printed = Printed(capsys)
    try:
        assert printed.until(1) == ["+I[1, a]"]
        assert not result.finished
        table.append([("-U", (1, "a")), ("+U", (1, "b"))])
        assert printed.until(3) == ["+I[1, a]", "-U[1, a]", "+U[1, b]"]
    finally:
        result.cancel()
    assert lines(capsys.readouterr().out) == []  # nothing printed twice


def test_streaming_blackhole_takes_a_changelog(
    senv: TableEnvironment, shared_dir: Path, capsys
) -> None:
    orders = ChangelogTable(
        senv, shared_dir, "Orders", [("o_id", "BIGINT"), ("p_id", "BIGINT")], bounded=True
    )
    products = ChangelogTable(
        senv, shared_dir, "Products", [("id", "BIGINT"), ("name", "STRING")], bounded=True
    )
    orders.append([("+I", (1, 10)), ("+I", (2, 20))])
    products.append([("+I", (10, "pen")), ("-D", (10, "pen"))])
    query = senv.from_path("Orders").left_outer_join(
        senv.from_path("Products"), col("p_id") == col("id")
    )
    columns = [("o_id", "BIGINT"), ("p_id", "BIGINT"), ("id", "BIGINT"), ("name", "STRING")]
    sink(senv, "Nothing", "blackhole", columns)
    result = query.execute_insert("Nothing")
    assert result.finished
    progress = result.query.recentProgress
    assert sum(p.numInputRows for p in progress) == 4
    # Two result rows, plus the retractions the arrival order made (none to two).
    assert 2 <= sum(p.sink.numOutputRows for p in progress if p.sink.numOutputRows > 0) <= 6
    assert capsys.readouterr().out == ""
