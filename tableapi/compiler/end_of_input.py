"""The end of a bounded input, in a streaming query: event time moves to +infinity.

Flink's bounded sources end, and their end sends a final watermark of +infinity: every
held row is emitted (temporal joins), every outer row padded (interval joins). Spark's file
streams never end, so the end is a signal: a small table on the server (the *end-of-input
table*) that each bounded, watermarked scan also reads. It starts empty. Once the query has
read the bounded files, the client inserts one row holding the largest timestamp; each scan
turns it into a row whose rowtime is that timestamp, just under its ``withWatermark``, and
filters it out just above. The watermark operator has seen the timestamp, so the next
micro-batch runs with the watermark at +infinity; nothing downstream sees the row.

Example (what ``TableEnvironment`` does for a query over bounded tables)::

    end = EndOfInput.new()
    end.create(spark)
    query = compile_stream(plan_stream(plan, options), spark, end).dataframe.writeStream....start()
    query.processAllAvailable()   # the bounded files
    end.signal(spark)             # their end
    query.processAllAvailable()   # held rows emitted
    query.stop(); end.drop(spark)

When every input is read whole by the first micro-batch (``read_at_once``), the table is
created with its row (``EndOfInput.new(at_start=True)``): the first micro-batch reads the end
with the rows, and the one after it runs at +infinity; two micro-batches, not four.
"""

from __future__ import annotations

import uuid

import attrs
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.session import SparkSession

# The end-of-input table's columns, and the marker column scans carry between union and filter.
TIME, FLAG = "end_time", "end_flag"
MARK = "__end_of_input"
# Spark's largest TIMESTAMP (Flink's watermark of Long.MAX_VALUE plays the same part).
END_OF_TIME = "9999-12-31 23:59:59.999"


@attrs.frozen
class EndOfInput:
    """The end-of-input table of one streaming query (a managed table in the server's
    warehouse, named uniquely, dropped when the query ends)."""

    table: str
    at_start: bool = False  # created signalled: the query reads the end with its inputs

    @classmethod
    def new(cls, at_start: bool = False) -> EndOfInput:
        """A new end-of-input table; ``at_start``: it holds the end from its creation on.

        >>> EndOfInput.new(at_start=True).at_start
        True
        """
        return cls(f"tableapi_end_of_input_{uuid.uuid4().hex[:16]}", at_start)

    def create(self, spark: SparkSession) -> None:
        if self.at_start:  # one command, not a CREATE and an INSERT
            spark.sql(
                f"CREATE TABLE `{self.table}` USING parquet AS SELECT TIMESTAMP "
                f"'{END_OF_TIME}' AS {TIME}, true AS {FLAG}"
            )
            return
        spark.sql(f"CREATE TABLE `{self.table}` ({TIME} TIMESTAMP, {FLAG} BOOLEAN) USING parquet")

    def signal(self, spark: SparkSession) -> None:
        """Every bounded input has ended: the next micro-batches move their watermarks to
        +infinity."""
        spark.sql(f"INSERT INTO `{self.table}` VALUES (TIMESTAMP '{END_OF_TIME}', true)")

    def drop(self, spark: SparkSession) -> None:
        spark.sql(f"DROP TABLE IF EXISTS `{self.table}`")

    def with_watermark(
        self, df: DataFrame, spark: SparkSession, rowtime: str, rowtime_type: T.DataType, delay: str
    ) -> DataFrame:
        """``df.withWatermark(rowtime, delay)``, with the end-of-input row passing through the
        watermark operator only."""
        # The row's values come from the table, not from literals: Spark would fold literal
        # values into the filter and push it below the watermark, which would never see it.
        end = spark.readStream.table(self.table).select(
            F.col(TIME).cast(rowtime_type).alias(rowtime), F.col(FLAG).alias(MARK)
        )
        # The filter names the rowtime, so Spark keeps it above the watermark.
        keep = F.col(MARK).isNull() | F.col(rowtime).isNull()
        return (
            df.unionByName(end, allowMissingColumns=True)
            .withWatermark(rowtime, delay)
            .filter(keep)
            .drop(MARK)
        )
