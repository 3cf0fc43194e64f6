"""A ``nexmark`` table's scan: the plugin jar's data source
(``tableapi.serverext.nexmark.NexmarkDataSource``) read with the table's options, batch or
streaming; the events are generated on the server's executors, nothing is sent but the
options.

Example::

    df = read_nexmark(spark.readStream, scan)  # scan: a Scan of a NexmarkSource
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from tableapi.compiler.expressions import ref
from tableapi.connectors.nexmark import DATA_SOURCE
from tableapi.errors import ValidationError
from tableapi.plan import NexmarkSource, Scan


def read_nexmark(reader: Any, scan: Scan, streaming: bool) -> DataFrame:
    """The table's declared physical columns, by name, from ``reader`` (``spark.read`` or
    ``spark.readStream``). A batch query of an unbounded table is refused, as in Flink."""
    source = scan.source
    assert isinstance(source, NexmarkSource)
    if not streaming and not source.bounded:
        raise ValidationError(
            f"Querying an unbounded table '{scan.table_name}' in batch mode is not allowed: "
            "set 'events.num' on the nexmark table (its events end there), or run the query "
            "in streaming mode."
        )
    for key, value in source.options:
        reader = reader.option(key, value)
    df: DataFrame = reader.format(DATA_SOURCE).load()
    return df.select(*(ref(name) for name in scan.row_type.names))
