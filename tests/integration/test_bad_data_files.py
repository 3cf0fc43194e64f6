"""Bad data files on a real server: a record that cannot be parsed fails the query with an
error naming the file (Flink's default), or is skipped with Flink's
``<format>.ignore-parse-errors``; never read as a row of NULLs (Spark's default)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tableapi import DataError, Schema, TableDescriptor, TableEnvironment, col
from tests.integration.changelog_files import ChangelogTable

GOOD = ['{"id": 1, "name": "a"}', '{"id": 2}']  # a missing field is NULL, as in Flink
BAD = ["not json", '{"id": "x", "name": "b"}']  # unparsable; a value of the wrong type


def _table(env: TableEnvironment, root: Path, fmt: str, lines: list[str], **options: str) -> str:
    path = root / f"T_{fmt}_{len(options)}"
    path.mkdir(mode=0o777)
    (path / f"part-1.{fmt}").write_text("\n".join(lines) + "\n")
    builder = (
        TableDescriptor.for_connector("filesystem")
        .schema(Schema.new_builder().column("id", "BIGINT").column("name", "STRING").build())
        .option("path", str(path))
        .option("format", fmt)
    )
    for key, value in options.items():
        builder.option(key, value)
    name = path.name
    env.create_temporary_table(name, builder.build())
    return name


def test_a_malformed_json_record_fails_the_batch_query_naming_the_file(
    env: TableEnvironment, shared_dir: Path
) -> None:
    name = _table(env, shared_dir, "json", [GOOD[0], BAD[0], GOOD[1]])
    with pytest.raises(DataError) as raised:
        env.from_path(name).execute().collect()
    message = str(raised.value)
    assert f"{name}/part-1.json holds a record that cannot be parsed" in message
    assert "'json.ignore-parse-errors'" in message and "JsonParseException" in message


@pytest.mark.parametrize("bad", BAD)
def test_ignore_parse_errors_skips_the_record_as_flink_does(
    env: TableEnvironment, shared_dir: Path, bad: str
) -> None:
    name = _table(
        env, shared_dir, "json", [GOOD[0], bad, GOOD[1]], **{"json.ignore-parse-errors": "true"}
    )
    rows = sorted(tuple(r) for r in env.from_path(name).execute().collect())
    assert rows == [(1, "a"), (2, None)]  # no (None, None) or (None, "b") invented


def test_a_csv_value_of_the_wrong_type_fails_the_query(
    env: TableEnvironment, shared_dir: Path
) -> None:
    name = _table(env, shared_dir, "csv", ["1,a", "two,b"])
    with pytest.raises(DataError, match=r"part-1\.csv holds a record that cannot be parsed"):
        env.from_path(name).where(col("id") > 0).execute().collect()
    skipping = _table(
        env, shared_dir, "csv", ["1,a", "two,b"], **{"csv.ignore-parse-errors": "true"}
    )
    assert [tuple(r) for r in env.from_path(skipping).execute().collect()] == [(1, "a")]


def test_a_malformed_changelog_file_fails_the_streaming_query_naming_it(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    orders = ChangelogTable(senv, shared_dir, "Orders", [("id", "BIGINT"), ("name", "STRING")])
    result = senv.from_path("Orders").execute()
    try:
        orders.append([("+I", (1, "a"))])
        result.process_all_available()
        assert [repr(r) for r in result.collect()] == ["+I[1, a]"]
        (orders.path / "part-99999.json").write_text('{"id": 2, "name": "b", "op": "+I"\n')
        with pytest.raises(DataError, match=r"Orders/part-99999\.json holds a record that"):
            result.process_all_available()
    finally:
        result.cancel()


def test_an_unknown_op_value_names_its_file(senv: TableEnvironment, shared_dir: Path) -> None:
    orders = ChangelogTable(senv, shared_dir, "Orders", [("id", "BIGINT"), ("name", "STRING")])
    result = senv.from_path("Orders").execute()
    try:
        orders.append([("upsert", (1, "a"))])
        with pytest.raises(Exception, match=r"unknown value 'upsert'.*File: .*Orders/part-00001"):
            result.process_all_available()
    finally:
        result.cancel()
