"""The ``nexmark`` connector's options and schema checks, and its plan (no server)."""

from __future__ import annotations

import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment
from tableapi.compiler.nexmark import read_nexmark
from tableapi.connectors.nexmark import validate_nexmark_options
from tableapi.errors import ValidationError
from tableapi.physical import StreamExecTableSourceScan, StreamingOptions, plan_stream
from tableapi.plan import NexmarkSource, Scan
from tableapi.plan.changelog import is_bounded
from tableapi.types import BIGINT, RowType


def reader(**options: str) -> dict[str, str]:
    return dict(validate_nexmark_options({"kind": "bid", **options}).reader_options)


def test_the_server_gets_normalized_options() -> None:
    got = reader(**{"bid.avg-size": "1kb", "base-time": "2030-01-01 00:00:00.250"})
    assert got["bid.avg-size"] == "1024" and got["person.avg-size"] == "200"
    assert got["base-time"] == "1893456000250" and got["kind"] == "bid"
    assert got["events.num"] == "0" and got["max-emit-speed"] == "true"
    assert reader(**{"rate.shape": "sine", "rate.limited": "TRUE"})["rate.shape"] == "SINE"
    assert "rate.period" not in got  # nothing on the server reads it


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, r"needs the option 'kind'.*e.g. WITH \('connector' = 'nexmark', 'kind' = 'bid'\)"),
        ({"kind": "bids"}, r"Option 'kind' of table 'T' is 'bids': .* \['person', 'auction'"),
        ({"kind": "bid", "event.num": "5"}, r"event.num: did you mean 'events.num'\?"),
        (
            {"kind": "bid", "events.num": "-1"},
            r"events.num of table .T. must be a whole number of at least 0",
        ),
        (
            {"kind": "bid", "auction.proportion": "0"},
            r"auction.proportion of table .T. must be .* from 1 to",
        ),
        (
            {"kind": "bid", "bid.avg-size": "big"},
            r"bid.avg-size of table .T. must be a size such as '200b'",
        ),
        (
            {"kind": "bid", "base-time": "noon"},
            r"base-time of table .T. must be a UTC time 'yyyy-MM-dd",
        ),
        ({"kind": "bid", "keep-alive": "true"}, r"'keep-alive' of table 'T' = 'true' is not"),
        (
            {"kind": "bid", "stop-at": "10"},
            r"stop-at of table .T. must be -1 \(not supported .* 'events.num'",
        ),
        ({"kind": "bid", "rate.shape": "SAW"}, r"'SAW' for key 'rate.shape'.*\['SQUARE', 'SINE'"),
    ],
)
def test_a_bad_option_is_named_with_its_fix(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        validate_nexmark_options(options, "T")


def table(*columns: tuple[str, str], **options: str) -> TableDescriptor:
    schema = Schema.new_builder()
    for name, type_name in columns:
        schema.column(name, type_name)
    builder = TableDescriptor.for_connector("nexmark").schema(schema.build())
    for key, value in {"kind": "bid", **options}.items():
        builder.option(key, value)
    return builder.build()


def test_the_columns_are_the_kinds_by_name_and_type() -> None:
    assert table(("price", "BIGINT"), ("dateTime", "TIMESTAMP(3)")).connector == "nexmark"
    with pytest.raises(ValidationError, match=r"Column 'datetime' is not a column of Nexmark's"):
        table(("datetime", "TIMESTAMP(3)"))
    with pytest.raises(ValidationError, match=r"'price' is INT but .* have price BIGINT"):
        table(("price", "INT"))


def test_sql_ddl_is_checked_at_creation(env: TableEnvironment) -> None:
    with pytest.raises(ValidationError, match=r"Column 'nam' is not a column of Nexmark's person"):
        env.execute_sql("CREATE TABLE p (nam STRING) WITH ('connector'='nexmark', 'kind'='person')")


def test_boundedness_and_the_streaming_plan() -> None:
    row = RowType.of(("price", BIGINT))
    bounded = Scan("B", NexmarkSource("bid", 1000), row)
    unbounded = Scan("U", NexmarkSource("bid", 0), row)
    assert is_bounded(bounded) and not is_bounded(unbounded)
    node = plan_stream(unbounded, StreamingOptions()).root
    assert isinstance(node, StreamExecTableSourceScan) and not node.bounded
    with pytest.raises(ValidationError, match=r"unbounded table 'U' in batch mode .*'events.num'"):
        read_nexmark(None, unbounded, streaming=False)
