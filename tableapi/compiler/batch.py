"""Optimized plan -> Spark Connect DataFrame, batch mode: Spark's own operators throughout.

Example::

    df = compile_plan(table.optimized().plan, spark)   # what Table.to_spark() does in batch
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.observation import Observation
from pyspark.sql.connect.session import SparkSession
from pyspark.sql.connect.window import Window

from tableapi.compiler.base import Compiler
from tableapi.compiler.expressions import ref, to_spark
from tableapi.compiler.local_relation import local_dataframe
from tableapi.errors import ValidationError
from tableapi.plan import (
    Aggregate,
    Distinct,
    ElementsSource,
    FileSource,
    JdbcSource,
    Join,
    JoinKind,
    Limit,
    PlanNode,
    Scan,
    Sort,
    SparkSource,
    TemporalJoin,
    Union,
)
from tableapi.plan.lookup import lookup_table_misuse
from tableapi.types import RowType, TimeKind

_AS_OF_LEFT, _AS_OF_RIGHT, _LATEST = "__as_of_left", "__as_of_right", "__latest"


def compile_plan(node: PlanNode, spark: SparkSession, local_files: bool = False) -> DataFrame:
    """Compile an optimized plan for batch mode. Each input is compiled once, even when
    shared. ``local_files``: the server reads this machine's files (a missing path is
    refused before anything runs)."""
    return BatchCompiler(spark, local_files).compile(node)


class BatchCompiler(Compiler):
    """Batch mode: every node becomes Spark relations over bounded inputs."""

    mode = "batch"

    def observation(self, name: str) -> Any:
        return Observation(name)

    def visit_Scan(self, node: Scan) -> DataFrame:
        if isinstance(node.source, JdbcSource):
            raise ValidationError(lookup_table_misuse(node.table_name))
        if not node.physical_only and node.schema and node.schema.computed_columns:
            raise ValidationError("compile the optimized plan: computed columns are not expanded")
        source = node.source
        if isinstance(source, FileSource):
            reader = self.spark.read.format(source.format).schema(node.row_type.spark_ddl)
            for k, v in source.options:
                reader = reader.option(k, v)
            return reader.load(source.path)
        if isinstance(source, ElementsSource):
            return local_dataframe(source.rows, node.row_type, self.spark)
        if isinstance(source, SparkSource):
            return source.dataframe
        raise TypeError(f"unknown source {source!r}")

    def visit_Aggregate(self, node: Aggregate) -> DataFrame:
        row = node.input.row_type
        aggs = [to_spark(a, row).alias(n) for n, a in node.aggs]
        grouped = self.compile(node.input).groupBy(*(ref(k) for k in node.group_keys))
        if not aggs:
            return grouped.agg(F.count(F.lit(1)).alias("__n")).select(
                *(ref(k) for k in node.group_keys)
            )
        return grouped.agg(*aggs)

    def visit_Join(self, node: Join) -> DataFrame:
        return self.spark_join(node)

    def visit_TemporalJoin(self, node: TemporalJoin) -> DataFrame:
        """Batch ``FOR SYSTEM_TIME AS OF``: Spark's backward as-of join on the keys (event
        time), or a plain join with the table as it is (processing time: its latest rows)."""
        if node.equi_keys is None:
            raise ValidationError("compile the optimized plan: join conditions are not split")
        left, right = self.compile(node.left), self.compile(node.right)
        how = "inner" if node.kind is JoinKind.INNER else "left"
        on = reduce(lambda a, b: a & b, [ref(k.left) == ref(k.right) for k in node.equi_keys])
        if node.right_time is None:
            rowtime = [f.name for f in node.right.row_type if f.type.time_kind is TimeKind.ROWTIME]
            if rowtime:  # a versioned table: its latest version per key is "the latest row"
                latest = Window.partitionBy(*(ref(k) for k in node.right_key)).orderBy(
                    ref(rowtime[0]).desc()
                )
                right = right.withColumn(_LATEST, F.row_number().over(latest)).filter(
                    F.col(_LATEST) == 1
                )
            joined = left.join(right, on=on, how=how)
        else:
            # Spark's sort-merge as-of join (spark.sql.join.sortMergeAsOfJoin.enabled, set by
            # server_ext) needs integral as-of keys: epoch milliseconds.
            left = left.withColumn(_AS_OF_LEFT, F.unix_millis(ref(node.as_of)))
            right = right.withColumn(_AS_OF_RIGHT, F.unix_millis(ref(node.right_time)))
            joined = left._joinAsOf(
                right, _AS_OF_LEFT, _AS_OF_RIGHT, on=on, how=how, direction="backward"
            )
        names = node.row_type.names
        if node.residual is None:
            return joined.select(*(ref(n) for n in names))
        combined = RowType(node.left.row_type.fields + node.right.row_type.fields)
        ok = to_spark(node.residual, combined)
        if node.kind is JoinKind.INNER:
            return joined.filter(ok).select(*(ref(n) for n in names))
        # Left join: a version that fails the residual leaves the row unmatched (null-padded).
        right_names = set(node.right.row_type.names)
        return joined.select(
            *(F.when(ok, ref(n)).alias(n) if n in right_names else ref(n) for n in names)
        )

    def visit_Distinct(self, node: Distinct) -> DataFrame:
        return self.compile(node.input).distinct()

    def visit_Sort(self, node: Sort) -> DataFrame:
        return self.compile(node.input).orderBy(
            *(to_spark(k, node.input.row_type) for k in node.keys)
        )

    def visit_Limit(self, node: Limit) -> DataFrame:
        df = self.compile(node.input)
        if node.offset:
            df = df.offset(node.offset)
        return df if node.fetch is None else df.limit(node.fetch)

    def visit_Union(self, node: Union) -> DataFrame:
        df = self.compile(node.left).unionAll(self.compile(node.right))
        return df.distinct() if node.distinct else df
