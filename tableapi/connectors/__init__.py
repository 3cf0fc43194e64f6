"""Connectors: where a catalog table's rows live, one module per connector.

- ``filesystem`` (:mod:`tableapi.connectors.filesystem`): files read with Spark's readers.
- ``jdbc`` (:mod:`tableapi.connectors.jdbc`): a lookup table in PostgreSQL or SQLite, the
  dimension side of ``temporal_join`` (a lookup join); its LOOKUP hint is
  :mod:`tableapi.connectors.lookup_hint`.
- ``nexmark`` (:mod:`tableapi.connectors.nexmark`): Nexmark's events of one kind (person,
  auction or bid), generated on the server.
- ``blackhole`` (:mod:`tableapi.connectors.blackhole`): a sink that discards every row.
- ``print`` (:mod:`tableapi.connectors.print_sink`): a sink whose rows the client prints,
  ``+I[...]`` lines as Flink's print connector writes them.

Each connector declares its options (:data:`CONNECTOR_OPTIONS`, as
:class:`~tableapi.options.ConfigOption`) and validates them when the table is created
(``TableDescriptor.build()``), with Flink's messages where Flink has the option.

Example::

    >>> validate_options("jdbc", {"url": "jdbc:sqlite:/data/shop.db",
    ...                           "table-name": "customers"}).cache.kind
    'NONE'
    >>> validate_options("kafka", {})
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Unknown connector 'kafka'. Available connectors: \
['blackhole', 'filesystem', 'jdbc', 'nexmark', 'print'].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tableapi.connectors import blackhole, filesystem, jdbc, nexmark, print_sink
from tableapi.connectors.blackhole import BlackholeOptions, validate_blackhole_options
from tableapi.connectors.filesystem import FilesystemOptions, validate_filesystem_options
from tableapi.connectors.jdbc import JdbcOptions, validate_jdbc_options
from tableapi.connectors.nexmark import (
    NexmarkOptions,
    check_nexmark_schema,
    validate_nexmark_options,
)
from tableapi.connectors.print_sink import PrintOptions, validate_print_options
from tableapi.errors import ValidationError
from tableapi.options import OptionGroup
from tableapi.schema import Schema

ConnectorOptions = (
    FilesystemOptions | JdbcOptions | NexmarkOptions | BlackholeOptions | PrintOptions
)
#: Options of the connectors whose tables are sinks only (Flink: they cannot be read).
SinkOnlyOptions = (BlackholeOptions, PrintOptions)
_VALIDATORS: dict[str, Callable[[Mapping[str, str], str], ConnectorOptions]] = {
    "blackhole": validate_blackhole_options,
    "filesystem": validate_filesystem_options,
    "jdbc": validate_jdbc_options,
    "nexmark": validate_nexmark_options,
    "print": validate_print_options,
}
CONNECTORS = tuple(_VALIDATORS)
#: Each connector's declared options (docs/options.md has a table of each).
CONNECTOR_OPTIONS: dict[str, OptionGroup] = {
    "blackhole": blackhole.OPTIONS,
    "filesystem": filesystem.OPTIONS,
    "jdbc": jdbc.OPTIONS,
    "nexmark": nexmark.OPTIONS,
    "print": print_sink.OPTIONS,
}
# Connectors whose columns are given (not read from files): a check of the declared schema.
_SCHEMA_CHECKS: dict[type, Callable[[Any, Schema, str], None]] = {
    NexmarkOptions: check_nexmark_schema,
}


def check_connector(connector: str) -> None:
    """Raise a clear error for a connector this product does not have."""
    if connector not in _VALIDATORS:
        raise ValidationError(
            f"Unknown connector {connector!r}. Available connectors: {list(CONNECTORS)}."
        )


def validate_options(
    connector: str, options: Mapping[str, str], table: str = ""
) -> ConnectorOptions:
    """A connector's options, checked and typed (``table`` names the table in errors)."""
    check_connector(connector)
    return _VALIDATORS[connector](options, table)


def check_schema(options: ConnectorOptions, schema: Schema, table: str = "") -> None:
    """Refuse a schema the connector cannot fill (a column a nexmark table does not have).

    >>> bids = validate_options("nexmark", {"kind": "bid"})
    >>> check_schema(bids, Schema.new_builder().column("price", "STRING").build())
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Column 'price' is STRING but Nexmark's bid events have \
price BIGINT: declare it so.
    """
    check = _SCHEMA_CHECKS.get(type(options))
    if check is not None:
        check(options, schema, table)


__all__ = [
    "CONNECTORS",
    "CONNECTOR_OPTIONS",
    "BlackholeOptions",
    "ConnectorOptions",
    "FilesystemOptions",
    "JdbcOptions",
    "NexmarkOptions",
    "PrintOptions",
    "SinkOnlyOptions",
    "check_connector",
    "check_schema",
    "validate_options",
]
