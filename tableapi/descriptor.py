"""``TableDescriptor``: how a catalog table is stored (connector, options) and its schema.

The connector's options are validated when the descriptor is built (one module per
connector in :mod:`tableapi.connectors`).

Example::

    >>> d = (TableDescriptor.for_connector("filesystem")
    ...      .schema(Schema.new_builder().column("id", "BIGINT").build())
    ...      .option("path", "/data/orders").option("format", "json").build())
    >>> d.options["format"]
    'json'
    >>> lookup = (TableDescriptor.for_connector("jdbc")
    ...      .schema(Schema.new_builder().column("id", "BIGINT").build())
    ...      .option("url", "jdbc:sqlite:/data/shop.db").option("table-name", "customers")
    ...      .option("lookup.cache", "PARTIAL").option("lookup.partial-cache.max-rows", "100")
    ...      .build())
    >>> lookup.jdbc.cache.max_rows
    100
"""

from __future__ import annotations

from typing import Any

import attrs

from tableapi.connectors import (
    ConnectorOptions,
    FilesystemOptions,
    JdbcOptions,
    check_connector,
    check_schema,
    validate_options,
)
from tableapi.errors import ValidationError
from tableapi.schema import Schema


@attrs.frozen(eq=False)
class TableDescriptor:
    """How a catalog table is stored: its connector, schema and (validated) options.
    Build one with :meth:`for_connector`.

    >>> products_table = env.descriptor("Products")
    >>> products_table.connector, products_table.options
    ('filesystem', {'path': '/data/products', 'format': 'json'})
    """

    connector: str
    table_schema: Schema
    options: dict[str, str]
    connector_options: ConnectorOptions  # the options, validated by the connector

    @staticmethod
    def for_connector(connector: str) -> TableDescriptorBuilder:
        """A builder for a table of ``connector``: ``filesystem``, ``jdbc`` (a lookup table),
        ``nexmark`` (generated events), or the sinks ``blackhole`` and ``print``.

        >>> (TableDescriptor.for_connector("filesystem")
        ...     .schema(Schema.new_builder().column("id", "BIGINT").build())
        ...     .option("path", "/data/ids").format("csv").build().options)
        {'path': '/data/ids', 'format': 'csv'}
        >>> TableDescriptor.for_connector("kafka")
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Unknown connector 'kafka'. Available connectors: \
['blackhole', 'filesystem', 'jdbc', 'nexmark', 'print'].
        """
        check_connector(connector)
        return TableDescriptorBuilder(connector)

    @property
    def filesystem(self) -> FilesystemOptions:
        """The options of a ``filesystem`` table (an error for another connector).

        >>> env.descriptor("Orders").filesystem.path
        '/data/orders'
        >>> env.descriptor("Customers").filesystem  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: This is a 'jdbc' table, not a filesystem table: ...
        """
        opts = self.connector_options
        if not isinstance(opts, FilesystemOptions):
            raise ValidationError(
                f"This is a {self.connector!r} table, not a filesystem table: it has no files "
                "to read or write."
            )
        return opts

    @property
    def jdbc(self) -> JdbcOptions:
        """The options of a ``jdbc`` lookup table (an error for another connector).

        >>> cache = env.descriptor("Customers").jdbc.cache
        >>> cache.kind, cache.max_rows
        ('PARTIAL', 10000)
        """
        opts = self.connector_options
        if not isinstance(opts, JdbcOptions):
            raise ValidationError(f"This is a {self.connector!r} table, not a jdbc table.")
        return opts

    @property
    def path(self) -> str:
        """A filesystem table's directory (or file).

        >>> env.descriptor("Orders").path
        '/data/orders'
        """
        return self.filesystem.path

    @property
    def format(self) -> str:
        """A filesystem table's file format (``json``, ``csv``, ``parquet``...).

        >>> env.descriptor("Orders").format
        'json'
        """
        return self.filesystem.format

    @property
    def monitor_interval_ms(self) -> int | None:
        """``source.monitor-interval``: how often the directory is listed for new files.
        Without it the table is bounded, as in Flink: a streaming query reads the files
        present at its start, and their end moves event time to +infinity.

        >>> env.descriptor("Orders").monitor_interval_ms is None  # bounded
        True
        >>> (TableDescriptor.for_connector("filesystem")
        ...     .schema(env.descriptor("Orders").table_schema)
        ...     .option("path", "/data/in").format("json")
        ...     .option("source.monitor-interval", "10 s").build().monitor_interval_ms)
        10000
        """
        return self.filesystem.monitor_interval_ms

    @property
    def reader_options(self) -> tuple[tuple[str, str], ...]:
        """Options passed through to Spark's reader (``csv.header`` -> ``header``).

        >>> (TableDescriptor.for_connector("filesystem")
        ...     .schema(env.descriptor("Orders").table_schema)
        ...     .option("path", "/data/in").format("csv").option("csv.header", "true")
        ...     .build().reader_options)
        (('header', 'true'), ('mode', 'FAILFAST'))
        """
        return self.filesystem.reader_options

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form a catalog can persist.

        >>> env.descriptor("Products").to_dict()["options"]
        {'path': '/data/products', 'format': 'json'}
        """
        return {
            "connector": self.connector,
            "schema": self.table_schema.to_dict(),
            "options": dict(self.options),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableDescriptor:
        """The descriptor :meth:`to_dict` gave (its options validated again).

        >>> copy = TableDescriptor.from_dict(env.descriptor("Products").to_dict())
        >>> copy.table_schema.row_type
        RowType(id BIGINT NOT NULL, name STRING, price DOUBLE)
        """
        builder = cls.for_connector(data["connector"]).schema(Schema.from_dict(data["schema"]))
        for k, v in data["options"].items():
            builder.option(k, v)
        return builder.build()


class TableDescriptorBuilder:
    def __init__(self, connector: str) -> None:
        self._connector = connector
        self._schema: Schema | None = None
        self._options: dict[str, str] = {}

    def schema(self, schema: Schema) -> TableDescriptorBuilder:
        if not isinstance(schema, Schema):
            raise ValidationError("schema() needs a Schema built with Schema.new_builder().")
        self._schema = schema
        return self

    def option(self, key: str, value: object) -> TableDescriptorBuilder:
        self._options[key] = str(value)
        return self

    def format(self, fmt: str) -> TableDescriptorBuilder:
        return self.option("format", fmt)

    def build(self) -> TableDescriptor:
        if self._schema is None:
            raise ValidationError("A TableDescriptor needs a schema: call .schema(...) first.")
        validated = validate_options(self._connector, self._options)
        check_schema(validated, self._schema)
        return TableDescriptor(self._connector, self._schema, dict(self._options), validated)
