"""The ``blackhole`` and ``print`` connectors: their options (Flink's names and messages) and
the print format (Flink's ``Row.toString``)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment
from tableapi.connectors import BlackholeOptions, PrintOptions
from tableapi.connectors.blackhole import validate_blackhole_options
from tableapi.connectors.print_sink import validate_print_options
from tableapi.errors import ValidationError
from tableapi.execution.printing import flink_string, print_line
from tableapi.result import RowKind
from tableapi.types import DataType, RowType


def sink(connector: str, **options: str) -> TableDescriptor:
    builder = TableDescriptor.for_connector(connector).schema(
        Schema.new_builder().column("id", "BIGINT").column("name", "STRING").build()
    )
    for k, v in options.items():
        builder.option(k, v)
    return builder.build()


def test_blackhole_takes_no_options() -> None:
    assert isinstance(sink("blackhole").connector_options, BlackholeOptions)
    assert validate_blackhole_options({"property-version": "1"}) == BlackholeOptions()


def test_an_unknown_blackhole_option_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValidationError) as e:
        validate_blackhole_options({"path": "/tmp/x", "format": "csv"}, "Sink")
    assert str(e.value) == (
        "Unsupported options found for 'blackhole' of table 'Sink'.\n\n"
        "Unsupported options:\n\nformat\npath\n\n"
        "Supported options:\n\nconnector\nproperty-version"
    )


def test_print_options_are_flinks() -> None:
    opts = sink(
        "print", **{"print-identifier": "out", "standard-error": "true", "sink.parallelism": "4"}
    ).connector_options
    assert opts == PrintOptions("out", True, 4)
    assert opts.prefix == "out> "
    assert sink("print").connector_options == PrintOptions()
    assert PrintOptions().prefix == ""


def test_an_unknown_print_option_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValidationError) as e:
        sink("print", **{"print.identifier": "x"})
    assert "Unsupported options found for 'print'.\n\nUnsupported options:\n\nprint.identifier" in (
        str(e.value)
    )
    assert str(e.value).endswith(
        "Supported options:\n\nconnector\nprint-identifier\nproperty-version\n"
        "sink.parallelism\nstandard-error\n\n"
        "print.identifier: did you mean 'print-identifier'?"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"standard-error": "yes"},
            r"^Could not parse value 'yes' for key 'standard-error' of table 'P': "
            r"it must be true or false\.$",
        ),
        (
            {"sink.parallelism": "two"},
            r"^Could not parse value 'two' for key 'sink.parallelism' of table 'P': "
            r"it must be a whole number\.$",
        ),
        ({"sink.parallelism": "0"}, r"Invalid configured parallelism 0 for table 'P'\."),
    ],
)
def test_bad_print_option_values_are_refused(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        validate_print_options(options, "P")


def test_standard_error_is_a_case_insensitive_boolean() -> None:
    assert validate_print_options({"standard-error": "FALSE"}).standard_error is False
    assert validate_print_options({"standard-error": " True "}).standard_error is True


@pytest.mark.parametrize("connector", ["print", "blackhole"])
def test_sink_only_tables_cannot_be_read(connector: str) -> None:
    env = TableEnvironment.create()
    env.create_temporary_table("S", sink(connector))
    with pytest.raises(
        ValidationError,
        match=rf"Connector '{connector}' can only be used as a sink\. It cannot be used as a "
        r"source\.",
    ):
        env.from_path("S")


@pytest.mark.parametrize("connector", ["print", "blackhole"])
def test_sink_only_tables_cannot_be_overwritten(connector: str) -> None:
    env = TableEnvironment.create()
    env.create_temporary_table("S", sink(connector))
    rows = env.from_elements([(1, "a")], ["id", "name"])
    with pytest.raises(ValidationError, match=r"INSERT OVERWRITE requires .* table 'S'"):
        rows.execute_insert("S", overwrite=True)


def test_a_sink_only_table_has_no_path() -> None:
    with pytest.raises(ValidationError, match=r"This is a 'print' table, not a filesystem"):
        _ = sink("print").path


# Java's toString of each external type, as Flink's print connector shows them (checked
# against Flink 2.3's print sink).
@pytest.mark.parametrize(
    ("value", "type_", "text"),
    [
        (None, "STRING", "null"),
        (False, "BOOLEAN", "false"),
        (-7, "BIGINT", "-7"),
        (2.5, "DOUBLE", "2.5"),
        (1.0, "DOUBLE", "1.0"),
        (100.0, "DOUBLE", "100.0"),
        (0.001, "DOUBLE", "0.001"),
        (0.0001, "DOUBLE", "1.0E-4"),
        (1234567.0, "DOUBLE", "1234567.0"),
        (12345678.0, "DOUBLE", "1.2345678E7"),
        (-1e21, "DOUBLE", "-1.0E21"),
        (-0.0, "DOUBLE", "-0.0"),
        (float("nan"), "DOUBLE", "NaN"),
        (float("-inf"), "DOUBLE", "-Infinity"),
        (0.10000000149011612, "FLOAT", "0.1"),
        (3.4028234663852886e38, "FLOAT", "3.4028235E38"),
        (decimal.Decimal("1.250"), "DECIMAL(10, 3)", "1.250"),
        (decimal.Decimal("2.000"), "DECIMAL(10, 3)", "2.000"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 120000), "TIMESTAMP(3)", "2024-01-02T03:04:05.120"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "TIMESTAMP(3)", "2024-01-02T03:04:05"),
        (dt.datetime(2024, 1, 2, 3, 4), "TIMESTAMP(3)", "2024-01-02T03:04"),
        (dt.datetime(2024, 1, 2, 3, 4, 0, 1), "TIMESTAMP(6)", "2024-01-02T03:04:00.000001"),
        (dt.datetime(2024, 1, 2, 3, 4), "TIMESTAMP_LTZ(3)", "2024-01-02T03:04:00Z"),
        (
            dt.datetime(2024, 1, 2, 4, 4, tzinfo=dt.timezone(dt.timedelta(hours=1))),
            "TIMESTAMP_LTZ(3)",
            "2024-01-02T03:04:00Z",
        ),
        (dt.date(2024, 1, 3), "DATE", "2024-01-03"),
        (b"xy", "BYTES", "[120, 121]"),
        (dt.timedelta(0), "INTERVAL", "PT0S"),
        (dt.timedelta(minutes=61), "INTERVAL", "PT1H1M"),
        (dt.timedelta(seconds=-1.5), "INTERVAL", "PT-1.5S"),
        (dt.timedelta(seconds=-0.5), "INTERVAL", "PT-0.5S"),
        ("a, b", "STRING", "a, b"),
    ],
)
def test_fields_print_as_in_flink(value: object, type_: str, text: str) -> None:
    assert flink_string(value, DataType.parse(type_)) == text


def test_lines_carry_the_row_kind_and_the_identifier() -> None:
    row_type = RowType.of(("b", DataType.parse("STRING")), ("n", DataType.parse("BIGINT")))
    lines = [
        print_line(kind, ("x", n), row_type, "cnt> ")
        for kind, n in [
            (RowKind.INSERT, 1),
            (RowKind.UPDATE_BEFORE, 1),
            (RowKind.UPDATE_AFTER, 2),
            (RowKind.DELETE, 2),
        ]
    ]
    assert lines == ["cnt> +I[x, 1]", "cnt> -U[x, 1]", "cnt> +U[x, 2]", "cnt> -D[x, 2]"]
