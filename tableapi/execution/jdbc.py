"""Inserts into ``jdbc`` tables: the check against the database table, then the writes.

Before anything runs, the server reads the database table's columns and keys
(``server_ext.sink.describe``, a one-row job: the database is where the server is) and
``connectors/jdbc_sink.py`` compares them with the sink table's schema. The rows go through
server_ext's jdbc sink, a Python data source (``server_ext/sink/writer.py``): write tasks
stage their rows, and the driver commits each batch (each micro-batch of a streaming query,
with its id) in one transaction.

Example::

    prepared = prepare(spark, sink, changelog=False, job=new_job(), checkpoint=None)
    write_batch(dataframe, sink, prepared.spec)
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs
from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.session import SparkSession

from server_ext.joins.spec import KIND, UPDATE_BEFORE
from server_ext.sink.describe import DESCRIPTION_DDL, SCRATCH_DIR, DescribeTable
from server_ext.sink.spec import DATA_SOURCE, SinkSpec
from server_ext.sink.writer import JdbcSinkSource
from tableapi.connectors.jdbc_sink import check_sink_table
from tableapi.errors import ValidationError
from tableapi.execution.base import JdbcSink

#: Flink's message for a changelog into a jdbc table without a primary key (its
#: JdbcDynamicTableSink refuses it when the planner asks for its changelog mode).
NO_PRIMARY_KEY = (
    "please declare primary key for sink table when query contains update/delete record."
)


def refuse_changelog_without_key(sink: JdbcSink, producer: str) -> None:
    """Append mode takes inserts only: Flink's error, with the node that produces updates.

    >>> from tableapi.connectors import validate_options
    >>> from tableapi.types import RowType
    >>> opts = validate_options("jdbc", {"url": "jdbc:sqlite:/d.db", "table-name": "t"})
    >>> refuse_changelog_without_key(JdbcSink("T", RowType(()), (), opts), "GroupAggregate")
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Table sink 'T': please declare primary key for sink \
table when query contains update/delete record. The query's updates come from GroupAggregate. \
Declare the table's primary key (Schema.new_builder()...primary_key(...)): a jdbc table with \
one is written in upsert mode.
    """
    raise ValidationError(
        f"Table sink {sink.name!r}: {NO_PRIMARY_KEY} The query's updates come from "
        f"{producer}. Declare the table's primary key (Schema.new_builder()...primary_key(...)):"
        " a jdbc table with one is written in upsert mode."
    )


def new_job() -> str:
    """A fresh job id: a batch insert's, or a streaming insert's without a checkpoint."""
    return f"run-{uuid.uuid4().hex}"


@attrs.frozen
class Prepared:
    """A jdbc sink ready to be written: its spec, and the server's directory for scratch
    files (the checkpoint of a streaming insert without ``execution.checkpointing.dir``)."""

    spec: SinkSpec
    scratch_dir: str

    def scratch_checkpoint(self) -> str:
        """A fresh checkpoint location (Spark's streaming writers need one; the query
        starts over when re-submitted, as a query without a checkpoint does)."""
        return f"{self.scratch_dir.rstrip('/')}/tableapi-jdbc-sink/{self.spec.job}"


def prepare(
    spark: SparkSession,
    sink: JdbcSink,
    *,
    changelog: bool,
    job: str,
    checkpoint: str | None,
) -> Prepared:
    """The sink's spec, once its database table was read and found to fit (else a
    :class:`ValidationError` listing both tables); this session knows the sink's data source
    afterwards (its first write makes the staging and commits tables)."""
    opts = sink.options.sink
    spec = SinkSpec(
        source=sink.options.source,
        table=sink.name,
        columns=sink.row_type.names,
        types=tuple(f.type.spark_ddl for f in sink.row_type),
        key=sink.key,
        changelog=changelog,
        max_rows=opts.max_rows,
        flush_interval_ms=opts.flush_interval_ms,
        max_retries=opts.max_retries,
        job=job,
        checkpoint=checkpoint,
    )
    (row,) = _on_server(spark, DescribeTable(spec))
    description = json.loads(row)
    source = spec.source
    check_sink_table(
        sink.name,
        sink.row_type,
        sink.key,
        source.dialect,
        source.table_name,
        source.location(),
        description,
    )
    spark.dataSource.register(JdbcSinkSource)
    return Prepared(spec, description[SCRATCH_DIR])


def _on_server(spark: SparkSession, function: Any) -> list[str]:
    """Run a one-row ``mapInArrow`` function of ``server_ext.sink.describe`` on the server."""
    rows = spark.range(1, numPartitions=1).mapInArrow(function, DESCRIPTION_DDL).collect()
    return [r[0] for r in rows]


def rows_to_write(df: DataFrame, sink: JdbcSink, spec: SinkSpec) -> DataFrame:
    """What the sink's data source receives: a changelog without its ``-U`` rows (upsert
    mode replaces a row by its ``+U``), spread over ``sink.parallelism`` write tasks (by
    the key in upsert mode, so that a key's changes stay in one task, in order)."""
    if spec.changelog:
        df = df.where(F.col(KIND) != F.lit(UPDATE_BEFORE))
    parallelism = sink.options.sink.parallelism
    if parallelism is not None:
        keys = [F.col(k) for k in sink.key]
        df = df.repartition(parallelism, *keys) if keys else df.repartition(parallelism)
    return df


def write_batch(df: DataFrame, sink: JdbcSink, spec: SinkSpec) -> None:
    """A batch job's rows into the sink, in one transaction."""
    frame = rows_to_write(df, sink, spec)
    frame.write.format(DATA_SOURCE).options(**spec.to_options()).mode("append").save()


def stream_writer(df: DataFrame, sink: JdbcSink, spec: SinkSpec) -> Any:
    """A streaming query's writer into the sink (the caller sets the checkpoint, trigger
    and starts it)."""
    frame = rows_to_write(df, sink, spec)
    return frame.writeStream.format(DATA_SOURCE).options(**spec.to_options())


__all__ = [
    "NO_PRIMARY_KEY",
    "Prepared",
    "new_job",
    "prepare",
    "refuse_changelog_without_key",
    "rows_to_write",
    "stream_writer",
    "write_batch",
]
