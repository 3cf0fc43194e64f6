"""Connectors: where a catalog table's rows live, one module per connector.

- ``filesystem`` (:mod:`tableapi.connectors.filesystem`): files read with Spark's readers.
- ``jdbc`` (:mod:`tableapi.connectors.jdbc`): a lookup table in PostgreSQL or SQLite, the
  dimension side of ``temporal_join`` (a lookup join); its LOOKUP hint is
  :mod:`tableapi.connectors.lookup_hint`.
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
['blackhole', 'filesystem', 'jdbc', 'print'].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tableapi.connectors import blackhole, filesystem, jdbc, print_sink
from tableapi.connectors.blackhole import BlackholeOptions, validate_blackhole_options
from tableapi.connectors.filesystem import FilesystemOptions, validate_filesystem_options
from tableapi.connectors.jdbc import JdbcOptions, validate_jdbc_options
from tableapi.connectors.print_sink import PrintOptions, validate_print_options
from tableapi.errors import ValidationError
from tableapi.options import OptionGroup

ConnectorOptions = FilesystemOptions | JdbcOptions | BlackholeOptions | PrintOptions
#: Options of the connectors whose tables are sinks only (Flink: they cannot be read).
SinkOnlyOptions = (BlackholeOptions, PrintOptions)
_VALIDATORS: dict[str, Callable[[Mapping[str, str], str], ConnectorOptions]] = {
    "blackhole": validate_blackhole_options,
    "filesystem": validate_filesystem_options,
    "jdbc": validate_jdbc_options,
    "print": validate_print_options,
}
CONNECTORS = tuple(_VALIDATORS)
#: Each connector's declared options (docs/options.md has a table of each).
CONNECTOR_OPTIONS: dict[str, OptionGroup] = {
    "blackhole": blackhole.OPTIONS,
    "filesystem": filesystem.OPTIONS,
    "jdbc": jdbc.OPTIONS,
    "print": print_sink.OPTIONS,
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


__all__ = [
    "CONNECTORS",
    "CONNECTOR_OPTIONS",
    "BlackholeOptions",
    "ConnectorOptions",
    "FilesystemOptions",
    "JdbcOptions",
    "PrintOptions",
    "SinkOnlyOptions",
    "check_connector",
    "validate_options",
]
