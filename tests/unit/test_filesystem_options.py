"""The filesystem connector's options: Flink's format options read into Spark's reader options
(malformed records fail the query, naming the file, or, with Flink's
``<format>.ignore-parse-errors``, are skipped; never read as NULLs); any other option refused
with Flink's message."""

from __future__ import annotations

import pytest

from tableapi import TableEnvironment
from tableapi.connectors.filesystem import validate_filesystem_options
from tableapi.errors import DataError, SqlValidationError, ValidationError, malformed_input


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


def test_parquet_has_no_parse_mode_and_spark_s_mode_is_not_passed_on() -> None:
    assert "mode" not in reader(format="parquet")
    with pytest.raises(ValidationError, match=r"json\.mode: Spark's reader option 'mode'; write "
                       r"'json\.ignore-parse-errors'"):  # fmt: skip
        reader(format="json", **{"json.mode": "PERMISSIVE"})


def test_a_bad_ignore_parse_errors_value_is_refused() -> None:
    with pytest.raises(
        ValidationError,
        match=r"Could not parse value 'yes' for key 'json.ignore-parse-errors': it must be true",
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


# -- options: Flink's, mapped to Spark's reader; anything else refused ---------------------------
def refused(**options: str) -> str:
    with pytest.raises(ValidationError) as info:
        validate_filesystem_options({"path": "/d", **options}, "T")
    return str(info.value)


def test_a_misspelled_format_option_is_refused_naming_the_nearest() -> None:
    message = refused(format="json", **{"json.ignore-parse-errrors": "true"})
    assert message.startswith(
        "Unsupported options found for 'filesystem' of table 'T'.\n\nUnsupported options:\n\n"
        "json.ignore-parse-errrors\n\nSupported options:\n\nchangelog.file-order\n"
    )
    assert "\njson.ignore-parse-errors\n" in message  # the supported ones, the format's too
    assert message.endswith("json.ignore-parse-errrors: did you mean 'json.ignore-parse-errors'?")


@pytest.mark.parametrize(
    ("options", "note"),
    [
        (  # another connector's option (Kafka's)
            {"format": "json", "scan.startup.mode": "earliest-offset"},
            "scan.startup.mode: a scan option of another connector; a filesystem table reads "
            "the files under 'path'",
        ),
        (  # Flink's, but not the product's (yet)
            {"format": "csv", "sink.rolling-policy.file-size": "1MB"},
            "sink.rolling-policy.file-size: Flink's, not supported by this product (yet)",
        ),
        (
            {"format": "csv", "csv.array-element-delimiter": "|"},
            "csv.array-element-delimiter: Flink's, not supported by this product (yet)",
        ),
        (  # Spark's reader options, passed on before: the Flink option that says it
            {"format": "csv", "csv.sep": ";"},
            "csv.sep: Spark's reader option 'sep'; write 'csv.field-delimiter'.",
        ),
        ({"format": "csv", "header": "true"}, "header: Spark's reader option 'header'; write "),
        (
            {"format": "json", "csv.field-delimiter": ";"},
            "csv.field-delimiter: an option of format 'csv'; this table's is 'json'.",
        ),
        (
            {"format": "parquet", "parquet.compression": "SNAPPY"},
            "parquet.compression: format 'parquet' takes no options here.",
        ),
    ],
)
def test_an_unknown_option_is_refused_saying_why(options: dict[str, str], note: str) -> None:
    message = refused(**options)
    assert message.startswith("Unsupported options found for 'filesystem' of table 'T'.")
    assert note in message, message


def test_flink_s_csv_options_become_spark_s_reader_options() -> None:
    options = {
        "csv.field-delimiter": "\\t",  # Flink reads Java escapes
        "csv.quote-character": "'",
        "csv.escape-character": "\\\\",
        "csv.allow-comments": "true",
        "csv.null-literal": "n/a",
        "csv.trim-spaces": "true",
        "csv.header": "true",  # the product's own (Flink's csv has no header line)
        "sink.parallelism": "2",
        "property-version": "1",
    }
    assert reader(format="csv", **options) == {
        "sep": "\t",
        "quote": "'",
        "escape": "\\",
        "comment": "#",
        "nullValue": "n/a",
        "ignoreLeadingWhiteSpace": "true",
        "ignoreTrailingWhiteSpace": "true",
        "header": "true",
        "mode": "FAILFAST",
    }
    assert reader(format="csv", **{"csv.disable-quote-character": "true"})["quote"] == ""
    assert "comment" not in reader(format="csv", **{"csv.allow-comments": "false"})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"format": "csv", "csv.field-delimiter": ";;"},
            "Option 'csv.field-delimiter' must be a string with single character, but was: ;;",
        ),
        (
            {"format": "csv", "csv.quote-character": "'", "csv.disable-quote-character": "true"},
            "Format cannot define a quote character and disabled quote character",
        ),
        (
            {"format": "csv", "csv.allow-comments": "yes"},
            "Could not parse value 'yes' for key 'csv.allow-comments' of table 'T': "
            "it must be true or false.",
        ),
        (
            {"format": "json", "json.fail-on-missing-field": "true"},
            "json.fail-on-missing-field = 'true' is not supported by this product (yet)",
        ),
        (
            {"format": "json", "json.timestamp-format.standard": "FOO"},
            "Unsupported value 'FOO' for json.timestamp-format.standard. Supported values are "
            "[SQL, ISO-8601].",
        ),
        ({"format": "json", "sink.parallelism": "0"}, "Invalid configured parallelism 0"),
    ],
)
def test_a_bad_option_value_is_refused(options: dict[str, str], message: str) -> None:
    assert message in refused(**options)


def test_flink_s_json_options_that_match_the_reader_are_taken() -> None:
    options = {
        "json.fail-on-missing-field": "false",  # a missing field is NULL
        "json.timestamp-format.standard": "ISO-8601",  # Spark's reader takes both forms
        "json.decode.json-parser.enabled": "true",
        "changelog.op-column": "op",
        "changelog.file-order": "name",
    }
    assert reader(format="json", **options) == {"mode": "FAILFAST"}


def test_a_create_table_with_an_unknown_option_points_at_it() -> None:
    env = TableEnvironment.create()
    with pytest.raises(SqlValidationError) as info:
        env.execute_sql(
            "CREATE TABLE T (a INT) WITH ('connector' = 'filesystem', 'path' = '/d',\n"
            "  'format' = 'json', 'json.ignore-parse-errrors' = 'true')"
        )
    assert (info.value.line, info.value.column) == (2, 22)
    assert "did you mean 'json.ignore-parse-errors'?" in str(info.value)
