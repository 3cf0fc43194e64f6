"""The ``nexmark`` connector: Nexmark's auction events (persons, auctions, bids), generated
on the server by the plugin jar's port of Nexmark's generator (the Spark data source
``tableapi.serverext.nexmark.NexmarkDataSource``), as Flink's Nexmark benchmark reads them.

Flink's Nexmark has one table, ``datagen``, of ROW columns, and a view per kind of event
(``person``, ``auction``, ``bid``); here a table holds one kind (``'kind' = 'bid'``), with the
columns of that kind's view (or some of them, by name): ``person``: id, name, emailAddress,
creditCard, city, state, dateTime, extra; ``auction``: id, itemName, description, initialBid,
reserve, dateTime, expires, seller, category, extra; ``bid``: auction, bidder, price, channel,
url, dateTime, extra (ids and prices BIGINT, texts STRING, times TIMESTAMP(3)). The options
are Nexmark's (``events.num``, ``first-event.rate``, the proportions, sizes and hot ratios)
plus ``base-time``, the time of the first event: the same options give the same rows, in
batch and streaming mode, as ``python -m server_ext.nexmark_files`` writes to files. Event
times follow ``first-event.rate`` on one timeline (Nexmark's source at parallelism 1);
``next-event.rate``, ``rate.shape`` and ``rate.period`` are checked and, as in Nexmark's
generator, change no event. ``events.num`` = 0 (the default) is unbounded: a streaming query
gets ``first-event.rate`` events per second of wall clock; a bounded table has all its events
at once (``rate.limited`` = true or ``max-emit-speed`` = false: as the clock reaches their
times) and ends, as Flink's does.

Example::

    >>> opts = validate_nexmark_options({"kind": "bid", "events.num": "1000"})
    >>> opts.kind, opts.bounded, dict(opts.reader_options)["events.num"]
    ('bid', True, '1000')
    >>> validate_nexmark_options({"kind": "bids"}, "B")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Option 'kind' of table 'B' is 'bids': the kind of events ...
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

import attrs

from tableapi.connectors.common import CONNECTOR, PROPERTY_VERSION, check_supported_options, where
from tableapi.errors import ValidationError
from tableapi.options import ConfigOption, ConfigOptions, OptionGroup
from tableapi.schema import Schema

#: The Spark data source in the plugin jar.
DATA_SOURCE = "tableapi.serverext.nexmark.NexmarkDataSource"
KINDS = ("person", "auction", "bid")
_L, _S, _T = "BIGINT", "STRING", "TIMESTAMP"
#: Each kind's columns and type names: Nexmark's views (queries/ddl_views.sql).
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "person": (
        ("id", _L), ("name", _S), ("emailAddress", _S), ("creditCard", _S), ("city", _S),
        ("state", _S), ("dateTime", _T), ("extra", _S),
    ),
    "auction": (
        ("id", _L), ("itemName", _S), ("description", _S), ("initialBid", _L), ("reserve", _L),
        ("dateTime", _T), ("expires", _T), ("seller", _L), ("category", _L), ("extra", _S),
    ),
    "bid": (
        ("auction", _L), ("bidder", _L), ("price", _L), ("channel", _S), ("url", _S),
        ("dateTime", _T), ("extra", _S),
    ),
}  # fmt: skip
DEFAULT_BASE_TIME = "2024-01-01 00:00:00"
_MEMORY = re.compile(r"\s*(\d+)\s*([a-zA-Z]*)\s*")
_UNITS = {"": 0, "b": 0, "bytes": 0, "k": 10, "kb": 10, "kibibytes": 10}
_UNITS |= {"m": 20, "mb": 20, "mebibytes": 20, "g": 30, "gb": 30, "gibibytes": 30}


def memory_bytes(text: str) -> int | None:
    """Flink's MemorySize text in bytes (under 2 GiB, as Nexmark's sizes are ints), or None.

    >>> memory_bytes("200b"), memory_bytes("1 kb"), memory_bytes("5"), memory_bytes("2x")
    (200, 1024, 5, None)
    """
    m = _MEMORY.fullmatch(text)
    if m is None or m.group(2).lower() not in _UNITS:
        return None
    size = int(m.group(1)) << _UNITS[m.group(2).lower()]
    return size if size < 2**31 else None


def base_time_ms(text: str) -> int | None:
    """``base-time``: a UTC time ``yyyy-MM-dd HH:mm:ss[.SSS]`` or epoch milliseconds, as
    epoch milliseconds; None when it is neither.

    >>> base_time_ms("2024-01-01 00:00:00"), base_time_ms("1000"), base_time_ms("today")
    (1704067200000, 1000, None)
    """
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if not re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{3})?", text):
        return None
    try:
        parsed = dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return None
    return int(parsed.timestamp() * 1000)


def _count(key: str, default: int, least: int, description: str) -> ConfigOption[int]:
    return (
        ConfigOptions.key(key)
        .int_type()
        .default_value(default)
        .with_requirement(f"a whole number of at least {least}", lambda n: least <= n < 2**63)
        .with_description(description)
    )


def _int(key: str, default: int, least: int, description: str) -> ConfigOption[int]:
    return _count(key, default, least, description).with_requirement(
        f"a whole number from {least} to {2**31 - 1}", lambda n: least <= n < 2**31
    )


def _size(key: str, default: str, description: str) -> ConfigOption[str]:
    return (
        ConfigOptions.key(key)
        .string_type()
        .default_value(default)
        .with_requirement("a size such as '200b' or '1kb' (under 2gb)", _is_size)
        .with_description(description)
    )


def _is_size(text: str) -> bool:
    return memory_bytes(text) is not None


def _flag(key: str, default: bool, description: str) -> ConfigOption[bool]:
    return (
        ConfigOptions.key(key).boolean_type().default_value(default).with_description(description)
    )


_KIND_FIX = f"the kind of events the table holds is one of {list(KINDS)}, e.g. 'kind' = 'bid'."
KIND = (
    ConfigOptions.key("kind")
    .enum_type(KINDS)
    .no_default_value()
    .with_requirement(lambda key, value: f"Option {key!r} is {value!r}: {_KIND_FIX}")
    .with_description(
        "The kind of events the table holds: 'person', 'auction' or 'bid' (Flink's Nexmark has "
        "one table of ROW columns and a view per kind); required."
    )
)
EVENTS_NUM = _count(
    "events.num", 0, 0, "The number of events (of all kinds) to generate; 0: unbounded."
)
FIRST_EVENT_RATE = _int(
    "first-event.rate",
    10000,
    1,
    "Events per second of event time: event i is at base-time + i/rate.",
)
NEXT_EVENT_RATE = _int(
    "next-event.rate", 10000, 1, "Nexmark's; as in its generator, it changes no event's time."
)
RATE_SHAPE = (
    ConfigOptions.key("rate.shape")
    .enum_type(("SQUARE", "SINE"))
    .default_value("SQUARE")
    .with_description("Nexmark's; as in its generator, it changes no event's time.")
)
RATE_PERIOD = (
    ConfigOptions.key("rate.period")
    .duration_type()
    .default_value(600_000)
    .with_description("Nexmark's; as in its generator, it changes no event's time.")
)
RATE_LIMITED = _flag(
    "rate.limited", False, "A streaming read gets events as the wall clock reaches their times."
)
MAX_EMIT_SPEED = _flag(
    "max-emit-speed", True, "false: as 'rate.limited' = true (events at their times' pace)."
)
PERSON_PROPORTION = _int("person.proportion", 1, 1, "Persons among every total-proportion events.")
AUCTION_PROPORTION = _int(
    "auction.proportion", 3, 1, "Auctions among every total-proportion events."
)
BID_PROPORTION = _int("bid.proportion", 46, 0, "Bids among every total-proportion events.")
PERSON_AVG_SIZE = _size("person.avg-size", "200b", "The average size of a person (its 'extra').")
AUCTION_AVG_SIZE = _size("auction.avg-size", "500b", "The average size of an auction.")
BID_AVG_SIZE = _size("bid.avg-size", "100b", "The average size of a bid.")
HOT_AUCTIONS = _int("bid.hot-ratio.auctions", 2, 1, "Bids on hot auctions per other bid.")
HOT_BIDDERS = _int("bid.hot-ratio.bidders", 4, 1, "Bids by hot bidders per other bid.")
HOT_SELLERS = _int("auction.hot-ratio.sellers", 4, 1, "Auctions by hot sellers per other auction.")
KEEP_ALIVE = _flag("keep-alive", False, "Nexmark's; only false: a bounded table ends.")
STOP_AT = (
    ConfigOptions.key("stop-at")
    .int_type()
    .default_value(-1)
    .with_requirement("-1 (not supported by this product: use 'events.num')", lambda n: n == -1)
    .with_description("Nexmark's; only -1: 'events.num' says where the events end.")
)
BASE_TIME = (
    ConfigOptions.key("base-time")
    .string_type()
    .default_value(DEFAULT_BASE_TIME)
    .with_requirement(
        "a UTC time 'yyyy-MM-dd HH:mm:ss[.SSS]' or epoch milliseconds",
        lambda v: base_time_ms(v) is not None,
    )
    .with_description(
        "The product's: the time of event 0, UTC (Nexmark takes the wall clock at start, so "
        "no two runs agree); with the default the rows are the same in every run."
    )
)
# The generator's options, in the order the reference lists them.
GENERATOR_OPTIONS: tuple[ConfigOption[Any], ...] = (
    EVENTS_NUM, FIRST_EVENT_RATE, NEXT_EVENT_RATE, RATE_SHAPE, RATE_PERIOD, RATE_LIMITED,
    MAX_EMIT_SPEED, PERSON_PROPORTION, AUCTION_PROPORTION, BID_PROPORTION, PERSON_AVG_SIZE,
    AUCTION_AVG_SIZE, BID_AVG_SIZE, HOT_AUCTIONS, HOT_BIDDERS, HOT_SELLERS, KEEP_ALIVE, STOP_AT,
    BASE_TIME,
)  # fmt: skip
#: The connector's options.
OPTIONS = OptionGroup(
    "Connector 'nexmark'",
    "Nexmark's events of one kind, generated on the server (the plugin jar); Nexmark's option "
    "names, plus 'kind' and 'base-time'. The same options give the same rows.",
    (CONNECTOR, PROPERTY_VERSION, KIND, *GENERATOR_OPTIONS),
)


@attrs.frozen
class NexmarkOptions:
    """A validated ``nexmark`` table: its kind, and the generator's options as the server's
    data source reads them (normalized: sizes in bytes, base-time in epoch milliseconds)."""

    kind: str
    events_num: int
    reader_options: tuple[tuple[str, str], ...]

    @property
    def bounded(self) -> bool:
        """A table of ``events.num`` > 0 ends (Flink's Nexmark source ends there too)."""
        return self.events_num > 0


def validate_nexmark_options(options: Mapping[str, str], table: str = "") -> NexmarkOptions:
    """Check a ``nexmark`` table's options; raise :class:`ValidationError` naming the option
    and the fix.

    >>> validate_nexmark_options({"kind": "person", "first-event.rate": "0"})
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: first-event.rate must be a whole number from 1 to \
2147483647, got '0'.
    """
    at = where(table)
    check_supported_options("nexmark", options, OPTIONS.keys(), table)
    raw = KIND.raw(options)
    if raw is not None and raw[1].strip().lower() not in KINDS:  # the message names the table
        raise ValidationError(f"Option 'kind'{at} is {raw[1]!r}: {_KIND_FIX}")
    kind = KIND.read(options, at)
    if kind is None:
        raise ValidationError(
            f"A nexmark table{at} needs the option 'kind', the events it holds: one of "
            f"{list(KINDS)}, e.g. WITH ('connector' = 'nexmark', 'kind' = 'bid')."
        )
    values = {str(o): o.read(options, at) for o in GENERATOR_OPTIONS}
    total = sum(values[f"{k}.proportion"] for k in KINDS)
    if total >= 2**31:
        raise ValidationError(f"The proportions{at} add up to {total}: keep them under 2^31.")
    reader = {"kind": kind}
    for option in GENERATOR_OPTIONS:
        key, value = str(option), values[str(option)]
        if option in (PERSON_AVG_SIZE, AUCTION_AVG_SIZE, BID_AVG_SIZE):
            reader[key] = str(memory_bytes(value))
        elif option is BASE_TIME:
            reader[key] = str(base_time_ms(value))
        elif isinstance(value, bool):
            reader[key] = str(value).lower()
        elif option not in (RATE_PERIOD, STOP_AT, KEEP_ALIVE):  # nothing the server reads
            reader[key] = str(value)
    if values["keep-alive"]:
        raise ValidationError(
            f"Option 'keep-alive'{at} = 'true' is not supported by this product: a bounded "
            "table ends; for events without end leave out 'events.num' (0, unbounded)."
        )
    return NexmarkOptions(kind, values["events.num"], tuple(sorted(reader.items())))


def check_nexmark_schema(options: NexmarkOptions, schema: Schema, table: str = "") -> None:
    """Refuse a physical column that is not one of the kind's columns (by name, Nexmark's
    spelling) or has another type.

    >>> opts = validate_nexmark_options({"kind": "bid"})
    >>> check_nexmark_schema(opts, Schema.new_builder().column("price", "BIGINT").build())
    >>> check_nexmark_schema(opts, Schema.new_builder().column("prize", "BIGINT").build())
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Column 'prize' is not a column of Nexmark's bid events...
    """
    columns = dict(COLUMNS[options.kind])
    shown = ", ".join(f"{n} {t}" + ("(3)" if t == _T else "") for n, t in columns.items())
    for field in schema.physical_row_type:
        wanted = columns.get(field.name)
        if wanted is None:
            raise ValidationError(
                f"Column {field.name!r}{where(table)} is not a column of Nexmark's "
                f"{options.kind} events; they are: {shown} (declare some of them, by name)."
            )
        if field.type.name != wanted:
            raise ValidationError(
                f"Column {field.name!r}{where(table)} is {field.type} but Nexmark's "
                f"{options.kind} events have {field.name} {wanted}: declare it so."
            )


__all__ = [
    "COLUMNS",
    "DATA_SOURCE",
    "KINDS",
    "OPTIONS",
    "NexmarkOptions",
    "check_nexmark_schema",
    "validate_nexmark_options",
]
