"""``TableDescriptor``: how a catalog table is stored (connector, options) and its schema.

Example::

    >>> d = (TableDescriptor.for_connector("filesystem")
    ...      .schema(Schema.new_builder().column("id", "BIGINT").build())
    ...      .option("path", "/data/orders").option("format", "json").build())
    >>> d.options["format"]
    'json'
"""

from __future__ import annotations

from typing import Any

import attrs

from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.schema import Schema

FILE_FORMATS = ("json", "csv", "parquet")
CONNECTORS = ("filesystem",)
# Options the product itself reads; everything else is handed to Spark's reader.
_OWN_OPTIONS = {"connector", "path", "format", "changelog.op-column", "source.monitor-interval"}
MONITOR_INTERVAL = "source.monitor-interval"


@attrs.frozen(eq=False)
class TableDescriptor:
    connector: str
    table_schema: Schema
    options: dict[str, str]

    @staticmethod
    def for_connector(connector: str) -> TableDescriptorBuilder:
        if connector not in CONNECTORS:
            raise ValidationError(
                f"Unknown connector {connector!r}. Available connectors: {list(CONNECTORS)}."
            )
        return TableDescriptorBuilder(connector)

    @property
    def path(self) -> str:
        return self.options["path"]

    @property
    def format(self) -> str:
        return self.options["format"]

    @property
    def monitor_interval_ms(self) -> int | None:
        """``source.monitor-interval``: how often the directory is listed for new files.
        Without it the table is bounded, as in Flink: a streaming query reads the files
        present at its start, and their end moves event time to +infinity."""
        value = self.options.get(MONITOR_INTERVAL)
        return None if value is None else parse_duration_ms(value, MONITOR_INTERVAL)

    @property
    def reader_options(self) -> tuple[tuple[str, str], ...]:
        """Options passed through to Spark's reader (``csv.header`` -> ``header``)."""
        prefix = self.format + "."
        return tuple(
            sorted(
                (k[len(prefix) :] if k.startswith(prefix) else k, v)
                for k, v in self.options.items()
                if k not in _OWN_OPTIONS
            )
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form a catalog can persist."""
        return {
            "connector": self.connector,
            "schema": self.table_schema.to_dict(),
            "options": dict(self.options),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableDescriptor:
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
        missing = [k for k in ("path", "format") if k not in self._options]
        if missing:
            raise ValidationError(
                f"The filesystem connector needs the option(s) {missing}, e.g. "
                ".option('path', '/data/orders').option('format', 'json')."
            )
        if self._options["format"] not in FILE_FORMATS:
            raise ValidationError(
                f"Unknown format {self._options['format']!r}; the filesystem connector reads "
                f"{list(FILE_FORMATS)}."
            )
        descriptor = TableDescriptor(self._connector, self._schema, dict(self._options))
        if descriptor.monitor_interval_ms == 0:
            raise ValidationError(
                f"{MONITOR_INTERVAL} must be positive, e.g. '10 s'; leave it out for a bounded "
                "table (the files present when the query starts)."
            )
        return descriptor
