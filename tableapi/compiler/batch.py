"""Optimized plan -> Spark Connect DataFrame, batch mode: Spark's own operators throughout.

Example::

    df = compile_plan(table.optimized().plan, spark)   # what Table.to_spark() does in batch
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.observation import Observation
from pyspark.sql.connect.session import SparkSession
from pyspark.sql.connect.window import Window

from tableapi.compiler.base import Compiler
from tableapi.compiler.expressions import ref, to_spark
from tableapi.compiler.local_relation import local_dataframe
from tableapi.compiler.nexmark import read_nexmark
from tableapi.errors import ValidationError
from tableapi.plan import (
    Aggregate,
    Distinct,
    ElementsSource,
    Exchange,
    FileSource,
    Filter,
    JdbcSource,
    Join,
    JoinKind,
    Limit,
    LookupJoin,
    NexmarkSource,
    PlanNode,
    Project,
    QueryHints,
    Scan,
    Sort,
    SparkSource,
    TemporalJoin,
    Union,
)
from tableapi.plan.lookup import lookup_table_misuse
from tableapi.plan.window_rank import WindowRank
from tableapi.plan.windows import WindowAggregate, WindowKind, WindowTableFunction
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
        if not node.physical_only and node.schema and node.schema.computed_columns:
            raise ValidationError("compile the optimized plan: computed columns are not expanded")
        return _READERS[type(node.source)](self, node)

    def visit_Project(self, node: Project) -> DataFrame:
        columns = tuple(zip(node.exprs, node.names, strict=True))
        return self.project(columns, node.input.row_type, self.compile(node.input), [])

    def visit_Filter(self, node: Filter) -> DataFrame:
        return self.filter(node.condition, node.input.row_type, self.compile(node.input))

    def visit_Exchange(self, node: Exchange) -> DataFrame:
        return self.exchange(node.keys, node.input.row_type, self.compile(node.input))

    def visit_LookupJoin(self, node: LookupJoin) -> DataFrame:
        return self.lookup(node, self.compile(node.input), [])

    def visit_QueryHints(self, node: QueryHints) -> DataFrame:
        return self.compile(node.input)  # the hint rule has moved the hints onto the joins

    def visit_Aggregate(self, node: Aggregate) -> DataFrame:
        row = node.input.row_type
        aggs = [to_spark(a, row).alias(n) for n, a in node.aggs]
        grouped = self.compile(node.input).groupBy(*(ref(k) for k in node.group_keys))
        if not aggs:
            return grouped.agg(F.count(F.lit(1)).alias("__n")).select(
                *(ref(k) for k in node.group_keys)
            )
        return grouped.agg(*aggs)

    def visit_WindowTableFunction(self, node: WindowTableFunction) -> DataFrame:
        """Each row once per window that holds its time (Flink's assigners, as
        ``Window.assign``: TUMBLE one, HOP and CUMULATE several), with the window's columns;
        a row without a time is in no window. SESSION: see :meth:`_sessions`."""
        w = node.window
        if w.kind is WindowKind.SESSION:
            return self._sessions(node)
        ms = F.unix_millis(ref(w.time_col))

        def start(size: int) -> SparkColumn:  # TimeWindow.getWindowStartWithOffset
            return ms - F.pmod(ms - F.lit(w.offset_ms), F.lit(size))

        def bounds(s: SparkColumn, e: SparkColumn) -> SparkColumn:
            return F.struct(s.alias("s"), e.alias("e"))

        step = w.step_ms or w.size_ms
        if w.kind is WindowKind.TUMBLE:
            windows = F.array(bounds(start(w.size_ms), start(w.size_ms) + w.size_ms))
        elif w.kind is WindowKind.HOP:  # starts from the latest down, while start > ts - size
            last = start(step)
            starts = F.sequence(last, last - F.lit(-(-w.size_ms // step) * step), F.lit(-step))
            windows = F.transform(
                F.filter(starts, lambda x: x > ms - w.size_ms), lambda x: bounds(x, x + w.size_ms)
            )
        else:  # CUMULATE: one start, ends from the first after ts up to the max size
            first = start(w.size_ms) + (F.floor((ms - start(w.size_ms)) / step) + 1) * step
            ends = F.sequence(first.cast("long"), start(w.size_ms) + w.size_ms, F.lit(step))
            windows = F.transform(ends, lambda x: bounds(start(w.size_ms), x))
        row = node.input.row_type
        df = self.compile(node.input).select(
            *(ref(n) for n in row.names), F.explode(windows).alias("__w")
        )
        stamp = F.timestamp_millis
        return df.select(
            *(ref(n) for n in row.names),
            stamp(F.col("__w.s")).alias("window_start"),
            stamp(F.col("__w.e")).alias("window_end"),
            stamp(F.col("__w.e") - 1).alias("window_time"),
        )

    def _sessions(self, node: WindowTableFunction) -> DataFrame:
        """SESSION windows: per partition, rows in time order; a row more than ``gap`` after
        the previous one starts a session (the merged windows ``[ts, ts + gap)`` of the rows
        before it end at the previous time plus the gap, and touching bounds merge, as
        Flink's ``TimeWindow.intersects``); a session spans its first time to its last plus
        the gap."""
        w = node.window
        row = node.input.row_type
        ms = "__ms"
        df = self.compile(node.input).filter(ref(w.time_col).isNotNull())
        df = df.withColumn(ms, F.unix_millis(ref(w.time_col)))
        # no PARTITION BY: one sequence over every row (a constant key, as streaming's)
        partition = [ref(k) for k in w.partition] or [F.lit(0)]
        ordered = Window.partitionBy(*partition).orderBy(F.col(ms))
        previous = F.lag(F.col(ms)).over(ordered)
        starts = F.when(previous.isNull() | (F.col(ms) - previous > w.size_ms), 1).otherwise(0)
        running = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
        df = df.withColumn("__new", starts).withColumn("__sid", F.sum("__new").over(running))
        session = Window.partitionBy(*partition, F.col("__sid"))
        stamp = F.timestamp_millis
        end = F.max(F.col(ms)).over(session) + w.size_ms
        return df.select(
            *(ref(n) for n in row.names),
            stamp(F.min(F.col(ms)).over(session)).alias("window_start"),
            stamp(end).alias("window_end"),
            stamp(end - 1).alias("window_time"),
        )

    def visit_WindowAggregate(self, node: WindowAggregate) -> DataFrame:
        return self.compile(node.as_aggregate())  # Spark groups the TVF's rows

    def visit_WindowRank(self, node: WindowRank) -> DataFrame:
        """``ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)`` with Spark's window function
        (NULLs first ascending, last descending, as Flink sorts them), kept to the range."""
        keys = [ref(c).asc() if asc else ref(c).desc() for c, asc in node.order]
        over = Window.partitionBy(*(ref(c) for c in node.partition)).orderBy(*keys)
        number = F.row_number().over(over).cast("long")  # Flink's BIGINT
        df = self.compile(node.input).withColumn(node.rank_name, number)
        rank = ref(node.rank_name)
        if node.rank_start > 1:
            df = df.filter(rank >= node.rank_start)
        if node.rank_end is not None:
            df = df.filter(rank <= node.rank_end)
        return df if node.output_rank else df.drop(node.rank_name)

    def visit_Join(self, node: Join) -> DataFrame:
        return self.spark_join(node, self.compile(node.left), self.compile(node.right))

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


def _read_file(compiler: BatchCompiler, node: Scan) -> DataFrame:
    source = node.source
    assert isinstance(source, FileSource)
    compiler.check_path(node.table_name, source)
    reader = compiler.spark.read.format(source.format).schema(node.row_type.spark_ddl)
    for k, v in source.options:
        reader = reader.option(k, v)
    return reader.load(source.path)


def _read_elements(compiler: BatchCompiler, node: Scan) -> DataFrame:
    source = node.source
    assert isinstance(source, ElementsSource)
    return local_dataframe(source.rows, node.row_type, compiler.spark)


def _read_dataframe(compiler: BatchCompiler, node: Scan) -> DataFrame:
    source = node.source
    assert isinstance(source, SparkSource)
    return source.dataframe


def _read_nexmark(compiler: BatchCompiler, node: Scan) -> DataFrame:
    return read_nexmark(compiler.spark, node, streaming=False)


def _refuse_lookup_table(compiler: BatchCompiler, node: Scan) -> DataFrame:
    raise ValidationError(lookup_table_misuse(node.table_name))


#: Source type -> how a batch job reads it (a lookup-only table is refused).
_READERS: dict[type, Callable[[BatchCompiler, Scan], DataFrame]] = {
    FileSource: _read_file,
    ElementsSource: _read_elements,
    SparkSource: _read_dataframe,
    JdbcSource: _refuse_lookup_table,
    NexmarkSource: _read_nexmark,
}
