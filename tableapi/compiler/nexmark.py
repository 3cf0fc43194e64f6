"""A ``nexmark`` table's scan: the plugin jar's data source
(``tableapi.serverext.nexmark.NexmarkDataSource``) read with the table's options, batch or
streaming; the events are generated on the server's executors, nothing is sent but the
options.

Example::

    df = read_nexmark(spark, scan, streaming=True)  # scan: a Scan of a NexmarkSource
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from tableapi.compiler.expressions import ref
from tableapi.compiler.jvm_operators import NO_PLUGIN, jvm_plugin_on_server
from tableapi.connectors.nexmark import DATA_SOURCE
from tableapi.errors import ValidationError
from tableapi.plan import NexmarkSource, Scan

# The part of the plugin's message that says how to get it.
HOW_TO_GET_IT = NO_PLUGIN[NO_PLUGIN.index("Start the server") :]


def read_nexmark(spark: Any, scan: Scan, streaming: bool) -> DataFrame:
    """The table's declared physical columns, by name, read by ``spark.readStream`` or
    ``spark.read``. A batch query of an unbounded table is refused, as in Flink; so is a
    server without the plugin jar (one probe per session), naming how to get it."""
    source = scan.source
    assert isinstance(source, NexmarkSource)
    if not streaming and not source.bounded:
        raise ValidationError(
            f"Querying an unbounded table '{scan.table_name}' in batch mode is not allowed: "
            "set 'events.num' on the nexmark table (its events end there), or run the query "
            "in streaming mode."
        )
    if not jvm_plugin_on_server(spark):
        raise ValidationError(
            f"Table '{scan.table_name}' is a nexmark table, whose events the server_ext plugin "
            "jar generates, and this Spark Connect server does not have it. " + HOW_TO_GET_IT
        )
    reader = spark.readStream if streaming else spark.read
    for key, value in source.options:
        reader = reader.option(key, value)
    df: DataFrame = reader.format(DATA_SOURCE).load()
    return df.select(*(ref(name) for name in scan.row_type.names))
