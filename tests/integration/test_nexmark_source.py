"""The ``nexmark`` connector on a real server: its rows, batch and streaming, equal the files
``server_ext.nexmark_files`` writes for the same options (one generator, two ways out).
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from server_ext.jvm.build import find_javac
from server_ext.nexmark_files import write_events
from tableapi import Schema, TableDescriptor, TableEnvironment
from tableapi.connectors.nexmark import COLUMNS, DATA_SOURCE
from tests.reference import as_bag

pytestmark = pytest.mark.skipif(find_javac() is None, reason="needs a JDK 17 to build the jar")

EVENTS = 3000
OPTIONS = {"events.num": str(EVENTS), "first-event.rate": "1000", "bid.hot-ratio.bidders": "3"}


def expected(root: Path, kind: str) -> list[tuple[Any, ...]]:
    """The rows of ``kind``'s files, typed as the table's columns."""
    types = [t for _, t in COLUMNS[kind]]
    rows = []
    with (root / kind / "part-0.csv").open(newline="") as f:
        for line in csv.reader(f):
            rows.append(tuple(_typed(v, t) for v, t in zip(line, types, strict=True)))
    return rows


def _typed(text: str, type_name: str) -> Any:
    if type_name == "BIGINT":
        return int(text)
    if type_name == "TIMESTAMP":
        return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f")
    return text


def ddl(kind: str, watermark: bool = True) -> str:
    columns = ", ".join(
        f"`{n}` {'TIMESTAMP(3)' if t == 'TIMESTAMP' else t}" for n, t in COLUMNS[kind]
    )
    mark = ", WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND" if watermark else ""
    options = ", ".join(f"'{k}' = '{v}'" for k, v in {**OPTIONS, "kind": kind}.items())
    return f"CREATE TABLE {kind} ({columns}{mark}) WITH ('connector' = 'nexmark', {options})"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nexmark-files")
    write_events(out, EVENTS, OPTIONS)
    return out


def test_batch_sql_and_table_api_rows_equal_the_files(env: TableEnvironment, files: Path) -> None:
    env.execute_sql(ddl("bid"))
    bids = env.execute_sql("SELECT * FROM bid").collect()
    assert as_bag(bids) == as_bag(expected(files, "bid"))
    schema = Schema.new_builder()
    for name, type_name in COLUMNS["person"]:
        schema.column(name, "TIMESTAMP(3)" if type_name == "TIMESTAMP" else type_name)
    descriptor = TableDescriptor.for_connector("nexmark").schema(schema.build())
    for key, value in {**OPTIONS, "kind": "person"}.items():
        descriptor.option(key, value)
    env.create_temporary_table("person", descriptor.build())
    persons = env.from_path("person").execute().collect()
    assert [tuple(r) for r in persons] == expected(files, "person")  # one partition: in order


def test_streaming_rows_with_a_watermark_equal_the_files(
    senv: TableEnvironment, files: Path
) -> None:
    senv.execute_sql(ddl("auction"))
    got = senv.execute_sql("SELECT * FROM auction WHERE reserve >= initialBid").collect()
    assert {r.kind.short_string for r in got} == {"+I"}
    assert as_bag(got) == as_bag(expected(files, "auction"))


def test_streaming_interval_join_of_sql_and_table_api_tables(
    senv: TableEnvironment, files: Path
) -> None:
    # Bids within a second of their auction's start: the watermarks drive a stateful join.
    senv.execute_sql(ddl("auction"))
    schema = Schema.new_builder().column("auction", "BIGINT").column("price", "BIGINT")
    schema.column("dateTime", "TIMESTAMP(3)").watermark(
        "dateTime", "`dateTime` - INTERVAL '4' SECOND"
    )
    descriptor = TableDescriptor.for_connector("nexmark").schema(schema.build())
    for key, value in {**OPTIONS, "kind": "bid"}.items():
        descriptor.option(key, value)
    senv.create_temporary_table("bid", descriptor.build())
    got = senv.execute_sql(
        "SELECT b.auction, b.price, a.seller FROM bid AS b JOIN auction AS a "
        "ON b.auction = a.id AND b.`dateTime` BETWEEN a.`dateTime` "
        "AND a.`dateTime` + INTERVAL '1' SECOND"
    ).collect()
    auctions = expected(files, "auction")
    want = [
        (b[0], b[2], a[7])
        for b in expected(files, "bid")
        for a in auctions
        if b[0] == a[0] and a[5] <= b[5] <= a[5] + dt.timedelta(seconds=1)
    ]
    assert len(want) > 50
    assert as_bag(got) == as_bag(want)


def test_a_table_split_into_partitions_equals_the_files(
    env: TableEnvironment, tmp_path: Path
) -> None:
    # 120,000 events: the batch scan cuts them into ranges (one per slot), the file one piece.
    options = {"events.num": "120000", "bid.proportion": "20"}
    write_events(tmp_path, 120_000, options)
    env.execute_sql(
        "CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, url STRING) "
        "WITH ('connector' = 'nexmark', 'kind' = 'bid', 'events.num' = '120000', "
        "'bid.proportion' = '20')"
    )
    got = env.execute_sql(
        "SELECT COUNT(*), SUM(price), SUM(auction * bidder), MAX(url), MIN(url) FROM bid"
    ).collect()
    bids = expected(tmp_path, "bid")
    urls = [b[4] for b in bids]
    want = (len(bids), sum(b[2] for b in bids), sum(b[0] * b[1] for b in bids))
    assert tuple(got[0]) == (*want, max(urls), min(urls))


def test_available_now_reads_a_bounded_table_and_stops(env: TableEnvironment) -> None:
    spark = env.spark
    reader = spark.readStream.format(DATA_SOURCE).option("kind", "person")
    query = (
        reader.option("events.num", "5000")
        .load()
        .writeStream.format("memory")
        .queryName("nexmark_available_now")
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    ids = [r.id for r in spark.table("nexmark_available_now").collect()]
    assert sorted(ids) == list(range(1001, 1101))  # event ids 50, 100, ..., 5000
