"""Optimized logical plan -> Spark Connect DataFrame (batch mode).

One function per plan node; each compiles its inputs first, then adds one Spark relation.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

from pyspark.sql.connect import functions as F
from pyspark.sql.connect.dataframe import DataFrame
from pyspark.sql.connect.session import SparkSession

from tableapi.compiler.expressions import ref, to_spark
from tableapi.compiler.local_relation import local_dataframe
from tableapi.errors import ValidationError
from tableapi.expressions import Column
from tableapi.plan.nodes import (
    Aggregate,
    Distinct,
    ElementsSource,
    FileSource,
    Filter,
    Join,
    JoinKind,
    Limit,
    PlanNode,
    Project,
    QueryHints,
    Scan,
    Sort,
    SparkSource,
    TemporalJoin,
    Union,
)
from tableapi.types import RowType, TimeKind

# Table API hint name -> Spark's join strategy hint.
SPARK_JOIN_HINTS = {
    "BROADCAST": "broadcast",
    "SHUFFLE_HASH": "shuffle_hash",
    "SHUFFLE_MERGE": "merge",
    "MERGE": "merge",
    "SHUFFLE_REPLICATE_NL": "shuffle_replicate_nl",
}


def compile_plan(node: PlanNode, spark: SparkSession) -> DataFrame:
    """Compile an optimized plan. Each input is compiled once, even when shared."""
    memo: dict[int, DataFrame] = {}

    def go(n: PlanNode) -> DataFrame:
        if id(n) not in memo:
            memo[id(n)] = _COMPILERS[type(n)](n, go, spark)
        return memo[id(n)]

    return go(node)


Go = Callable[[PlanNode], DataFrame]


def _scan(node: Scan, go: Go, spark: SparkSession) -> DataFrame:
    if not node.physical_only and node.schema and node.schema.computed_columns:
        raise ValidationError("compile the optimized plan: computed columns are not expanded")
    source = node.source
    if isinstance(source, FileSource):
        reader = spark.read.format(source.format).schema(node.row_type.spark_ddl)
        for k, v in source.options:
            reader = reader.option(k, v)
        return reader.load(source.path)
    if isinstance(source, ElementsSource):
        return local_dataframe(source.rows, node.row_type, spark)
    if isinstance(source, SparkSource):
        return source.dataframe
    raise TypeError(f"unknown source {source!r}")


def _project(node: Project, go: Go, spark: SparkSession) -> DataFrame:
    row = node.input.row_type
    cols = [
        ref(n) if isinstance(e, Column) and e.name == n else to_spark(e, row).alias(n)
        for e, n in zip(node.exprs, node.names, strict=True)
    ]
    return go(node.input).select(*cols)


def _filter(node: Filter, go: Go, spark: SparkSession) -> DataFrame:
    return go(node.input).filter(to_spark(node.condition, node.input.row_type))


def _aggregate(node: Aggregate, go: Go, spark: SparkSession) -> DataFrame:
    row = node.input.row_type
    aggs = [to_spark(a, row).alias(n) for n, a in node.aggs]
    grouped = go(node.input).groupBy(*(ref(k) for k in node.group_keys))
    if not aggs:
        return grouped.agg(F.count(F.lit(1)).alias("__n")).select(
            *(ref(k) for k in node.group_keys)
        )
    return grouped.agg(*aggs)


def _join(node: Join, go: Go, spark: SparkSession) -> DataFrame:
    if node.equi_keys is None:
        raise ValidationError("compile the optimized plan: join conditions are not split")
    left, right = go(node.left), go(node.right)
    for hint, side in node.hints:
        if hint.name in SPARK_JOIN_HINTS:
            if side == "left":
                left = left.hint(SPARK_JOIN_HINTS[hint.name])
            else:
                right = right.hint(SPARK_JOIN_HINTS[hint.name])
    combined = node.left.row_type.fields + tuple(
        f for f in node.right.row_type.fields if f.name not in node.left.row_type
    )
    terms = [
        ref(k.left).eqNullSafe(ref(k.right)) if k.null_safe else ref(k.left) == ref(k.right)
        for k in node.equi_keys
    ]
    if node.residual is not None:
        terms.append(to_spark(node.residual, RowType(combined)))
    if not terms:
        if node.kind is JoinKind.INNER:
            return left.crossJoin(right)
        terms = [F.lit(True)]
    condition = reduce(lambda a, b: a & b, terms)
    return left.join(right, on=condition, how=node.kind.spark_how)


def _temporal_join(node: TemporalJoin, go: Go, spark: SparkSession) -> DataFrame:
    """Batch ``FOR SYSTEM_TIME AS OF``: Spark's backward as-of join on the keys (event time),
    or a plain join with the table as it is (processing time: its latest rows)."""
    if node.equi_keys is None:
        raise ValidationError("compile the optimized plan: join conditions are not split")
    left, right = go(node.left), go(node.right)
    how = "inner" if node.kind is JoinKind.INNER else "left"
    on = reduce(lambda a, b: a & b, [ref(k.left) == ref(k.right) for k in node.equi_keys])
    if node.right_time is None:
        rowtime = [f.name for f in node.right.row_type if f.type.time_kind is TimeKind.ROWTIME]
        if rowtime:  # a versioned table: its latest version per key is "the latest row"
            from pyspark.sql.connect.window import Window

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


_AS_OF_LEFT, _AS_OF_RIGHT, _LATEST = "__as_of_left", "__as_of_right", "__latest"


def _distinct(node: Distinct, go: Go, spark: SparkSession) -> DataFrame:
    return go(node.input).distinct()


def _sort(node: Sort, go: Go, spark: SparkSession) -> DataFrame:
    return go(node.input).orderBy(*(to_spark(k, node.input.row_type) for k in node.keys))


def _limit(node: Limit, go: Go, spark: SparkSession) -> DataFrame:
    df = go(node.input)
    if node.offset:
        df = df.offset(node.offset)
    return df if node.fetch is None else df.limit(node.fetch)


def _union(node: Union, go: Go, spark: SparkSession) -> DataFrame:
    df = go(node.left).unionAll(go(node.right))
    return df.distinct() if node.distinct else df


def _query_hints(node: QueryHints, go: Go, spark: SparkSession) -> DataFrame:
    return go(node.input)  # the hint rule has moved the hints onto the joins


_COMPILERS: dict[type, Callable[[Any, Go, SparkSession], DataFrame]] = {
    Scan: _scan,
    Project: _project,
    Filter: _filter,
    Aggregate: _aggregate,
    Join: _join,
    Distinct: _distinct,
    Sort: _sort,
    Limit: _limit,
    Union: _union,
    QueryHints: _query_hints,
    TemporalJoin: _temporal_join,
}
