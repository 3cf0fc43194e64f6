"""The filesystem connector's reader options: malformed records fail the query (naming the
file) or, with Flink's ``<format>.ignore-parse-errors``, are skipped; never read as NULLs."""

from __future__ import annotations

import pytest

from tableapi.connectors.filesystem import validate_filesystem_options
from tableapi.errors import DataError, ValidationError, malformed_input


def reader(**options: str) -> dict[str, str]:
    return dict(validate_filesystem_options({"path": "/d", **options}).reader_options)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_a_parsed_format_fails_fast_by_default(fmt: str) -> None:
    assert reader(format=fmt)["mode"] == "FAILFAST"


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_ignore_parse_errors_skips_malformed_records(fmt: str) -> None:
    options = reader(format=fmt, **{f"{fmt}.ignore-parse-errors": "TRUE"})
    assert options == {"mode": "DROPMALFORMED"}
    assert reader(format=fmt, **{f"{fmt}.ignore-parse-errors": "false"})["mode"] == "FAILFAST"


def test_parquet_has_no_parse_mode_and_an_explicit_mode_wins() -> None:
    assert "mode" not in reader(format="parquet")
    assert reader(format="json", **{"json.mode": "PERMISSIVE"})["mode"] == "PERMISSIVE"


def test_a_bad_ignore_parse_errors_value_is_refused() -> None:
    with pytest.raises(
        ValidationError, match=r"json.ignore-parse-errors must be 'true' or 'false'"
    ):
        reader(format="json", **{"json.ignore-parse-errors": "yes"})


def test_other_errors_are_not_taken_for_malformed_input() -> None:
    assert malformed_input(RuntimeError("Connection refused")) is None
    error = malformed_input(
        RuntimeError(
            "[STREAM_FAILED] ... [FAILED_READ_FILE.NO_HINT] Encountered error while reading "
            "file file:///t/part-00002.csv. SQLSTATE: KD001\nCaused by: "
            "org.apache.spark.SparkException: [MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION]"
        )
    )
    assert isinstance(error, DataError)
    assert "file:///t/part-00002.csv holds a record that cannot be parsed." in str(error)
