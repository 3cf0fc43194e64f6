"""Optimized plan -> streaming Spark Connect DataFrame (streaming mode).

A node whose changelog mode is not insert-only carries two extra columns: ``__kind``, the
row kind (Flink's RowKind byte, see ``server_ext.joins.spec``), and ``__seq``, the order of
the change (the modification time and name of the file it came from, as sortable text:
Spark reads new files oldest first, and keeps the order of rows within a file). Operators
process the changes of one key in that order; the result drops ``__seq``. Joins compile
either to Spark's native stream-stream join (where its semantics are Flink's) or to the
server_ext join processor: both inputs tagged by side, unioned, grouped by the join key and
handed to ``transformWithState``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import attrs
from pyspark.sql import types as T
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.column import Column as SparkColumn
from pyspark.sql.connect.dataframe import DataFrame
from pyspark.sql.connect.session import SparkSession

from server_ext.joins import spec as wire
from tableapi.compiler import spark as batch
from tableapi.compiler.end_of_input import EndOfInput
from tableapi.compiler.expressions import ref, to_spark
from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, Expression, Literal
from tableapi.plan.nodes import (
    FileSource,
    Filter,
    Join,
    JoinKind,
    MultiJoin,
    PlanNode,
    Project,
    QueryHints,
    Scan,
    SparkSource,
    TemporalJoin,
    Union,
)
from tableapi.plan.streaming import (
    ChangelogMode,
    StreamingOptions,
    all_bounded,
    changelog_mode,
    input_spec,
    is_bounded,
    join_strategy,
    monitor_interval_ms,
    state_ttl_ms,
    unique_key_for_state,
)
from tableapi.types import DataType, RowType, common_type
from tableapi.types import to_spark as spark_type

KIND = wire.KIND
SEQ = wire.SEQ
# changelog.op-column values -> RowKind byte (Flink's short strings and its long names).
OP_VALUES = {"+I": 0, "I": 0, "-U": 1, "UB": 1, "+U": 2, "UA": 2, "-D": 3, "D": 3}


@attrs.frozen(eq=False)
class CompiledStream:
    """A streaming DataFrame and what running it needs."""

    dataframe: DataFrame
    mode: ChangelogMode
    uses_operator: bool  # some join runs in server_ext (needs the RocksDB state store)
    processing_time: bool  # some operator needs timeMode ProcessingTime (state TTL)
    bounded: bool = False  # every input ends: the query runs to the end and stops
    trigger_ms: int | None = None  # the micro-batch interval (source.monitor-interval)
    end_of_input: EndOfInput | None = None  # read by bounded tables with watermarks


def compile_stream(
    node: PlanNode,
    spark: SparkSession,
    options: StreamingOptions | None = None,
    end_of_input: EndOfInput | None = None,
) -> CompiledStream:
    """Compile an optimized, streaming-checked plan. With ``end_of_input`` the bounded
    tables' watermarks move to +infinity when it is signalled (see ``end_of_input.py``);
    without it they stay where their data leaves them."""
    options = options or StreamingOptions()
    memo: dict[int, DataFrame] = {}
    flags = {"operator": False, "processing_time": False}

    def go(n: PlanNode) -> DataFrame:
        if id(n) not in memo:
            if isinstance(n, Join):
                memo[id(n)] = _join(n, go, spark, options, flags)
            elif isinstance(n, TemporalJoin):
                memo[id(n)] = _temporal_join(n, go, spark, flags)
            elif isinstance(n, Scan):
                memo[id(n)] = _scan(n, spark, end_of_input)
            elif isinstance(n, MultiJoin):
                memo[id(n)] = _multi_join(n, go, options, flags)
            else:
                memo[id(n)] = _COMPILERS[type(n)](n, go, spark)
        return memo[id(n)]

    df = go(node)
    mode = changelog_mode(node)
    if mode is ChangelogMode.ALL:
        df = df.select(*(ref(n) for n in node.row_type.names), ref(KIND))
    return CompiledStream(
        df,
        mode,
        flags["operator"],
        flags["processing_time"],
        all_bounded(node),
        monitor_interval_ms(node),
        end_of_input,
    )


Go = Callable[[PlanNode], DataFrame]


def _has_kind(node: PlanNode) -> bool:
    return changelog_mode(node) is ChangelogMode.ALL


def _scan(node: Scan, spark: SparkSession, end: EndOfInput | None) -> DataFrame:
    source = node.source
    if isinstance(source, SparkSource):
        return source.dataframe
    if not isinstance(source, FileSource):
        raise ValidationError(f"Table {node.table_name} cannot be read as a stream.")
    ddl = node.row_type.spark_ddl
    op = source.op_column
    if op:
        if op in node.row_type:
            raise ValidationError(
                f"changelog.op-column {op!r} of table {node.table_name} is also a column of "
                "its schema; the op column is not part of the table: remove it from the schema."
            )
        # CSV is positional: the op column comes first (Flink's changelog-csv); JSON and
        # Parquet read it by name.
        ddl = f"`{op}` STRING, {ddl}" if source.format == "csv" else f"{ddl}, `{op}` STRING"
    reader = spark.readStream.format(source.format).schema(ddl)
    for k, v in source.options:
        reader = reader.option(k, v)
    df = reader.load(source.path)
    if op:
        # File times are coarse (kernel ticks): files written together tie, so the name breaks
        # the tie. Zero-padded micros + name sort as text in the order Spark lists new files.
        micros = F.unix_micros(F.col("_metadata.file_modification_time")).cast("string")
        seq = F.concat(F.lpad(micros, 20, "0"), F.lit("/"), F.col("_metadata.file_name"))
        df = df.select(
            *(ref(n) for n in node.row_type.names), _kind_of(ref(op), op), seq.alias(SEQ)
        )
    return _with_watermark(df, node, spark, end if is_bounded(node) else None)


def _with_watermark(
    df: DataFrame,
    node: Scan,
    spark: SparkSession,
    end: EndOfInput | None,
) -> DataFrame:
    """The schema's ``WATERMARK FOR t AS t - INTERVAL ...`` as Spark's ``withWatermark``; on a
    bounded table with ``end``, the end of the input moves it to +infinity."""
    spec = node.schema.watermark if node.schema else None
    if spec is None:
        return df

    def is_rowtime(e: Expression) -> bool:  # (Expression's == builds an expression)
        return isinstance(e, Column) and e.name == spec.column

    expr = spec.expr
    delay_ms = 0
    if isinstance(expr, Call) and expr.name == "minus" and isinstance(expr.args[1], Literal):
        value = expr.args[1].value
        if isinstance(value, dt.timedelta) and is_rowtime(expr.args[0]):
            delay_ms = int(value.total_seconds() * 1000)
            expr = expr.args[0]
    if not is_rowtime(expr):
        raise ValidationError(
            f"Table {node.table_name}: streaming mode supports watermarks of the form "
            f"'{spec.column} - INTERVAL ...' (a bounded delay); got {spec.expr}."
        )
    delay = f"{delay_ms} milliseconds"
    if end is None:
        return df.withWatermark(spec.column, delay)
    rowtime_type = spark_type(node.row_type.field(spec.column).type)
    return end.with_watermark(df, spark, spec.column, rowtime_type, delay)


def _kind_of(op: SparkColumn, name: str) -> SparkColumn:
    """The RowKind byte of an op-column value; an unknown value fails the query (no row is
    silently dropped)."""
    kind = None
    for value, byte in OP_VALUES.items():
        kind = (F if kind is None else kind).when(op == value, F.lit(byte))
    assert kind is not None
    error = F.raise_error(
        F.concat(
            F.lit(f"changelog.op-column {name!r} holds the unknown value '"),
            F.coalesce(op, F.lit("NULL")),
            F.lit("'; use +I, -U, +U, -D (or I, UB, UA, D)."),
        )
    )
    return kind.otherwise(error).cast("tinyint").alias(KIND)


def _project(node: Project, go: Go, spark: SparkSession) -> DataFrame:
    row = node.input.row_type
    cols = [
        ref(n) if isinstance(e, Column) and e.name == n else to_spark(e, row).alias(n)
        for e, n in zip(node.exprs, node.names, strict=True)
    ]
    if _has_kind(node.input):  # a changelog keeps its row kinds through projections
        cols += [ref(KIND), ref(SEQ)]
    return go(node.input).select(*cols)


def _filter(node: Filter, go: Go, spark: SparkSession) -> DataFrame:
    return go(node.input).filter(to_spark(node.condition, node.input.row_type))


def _union(node: Union, go: Go, spark: SparkSession) -> DataFrame:
    if node.distinct:
        raise ValidationError("union (distinct) is not supported in streaming mode; use union_all.")
    left, right = go(node.left), go(node.right)
    if _has_kind(node) and not _has_kind(node.left):
        left = _as_changelog(left)
    if _has_kind(node) and not _has_kind(node.right):
        right = _as_changelog(right)
    return left.unionAll(right)


def _as_changelog(df: DataFrame) -> DataFrame:
    """An insert-only stream as a changelog: every row +I, in no particular order."""
    return df.select("*", F.lit(wire.INSERT).cast("tinyint").alias(KIND), F.lit("").alias(SEQ))


def _query_hints(node: QueryHints, go: Go, spark: SparkSession) -> DataFrame:
    return go(node.input)


_COMPILERS: dict[type, Callable[[Any, Go, SparkSession], DataFrame]] = {
    Project: _project,
    Filter: _filter,
    Union: _union,
    QueryHints: _query_hints,
}


# -- joins ----------------------------------------------------------------------------------------
_KINDS = {
    JoinKind.INNER: "inner",
    JoinKind.LEFT: "left",
    JoinKind.RIGHT: "right",
    JoinKind.FULL: "full",
    JoinKind.SEMI: "semi",
    JoinKind.ANTI: "anti",
}


def _join(
    node: Join, go: Go, spark: SparkSession, options: StreamingOptions, flags: dict[str, bool]
) -> DataFrame:
    if join_strategy(node, options) in ("native", "interval"):
        # Interval joins: the time bounds are in the condition and both inputs carry their
        # schemas' watermarks, so Spark keeps state only within the bounds and emits outer
        # rows once the watermark passes them, as Flink does.
        return batch._join(node, go, spark)
    from server_ext.joins import join_processor

    spec = join_spec(node, options.default_ttl_ms)
    flags["operator"] = True
    time_mode = wire.time_mode(spec)
    flags["processing_time"] = flags["processing_time"] or time_mode == "ProcessingTime"
    keys = node.equi_keys or ()
    lrow, rrow = node.left.row_type, node.right.row_type
    key_types = [
        common_type(lrow.field(k.left).type, rrow.field(k.right).type).spark_ddl for k in keys
    ]
    left_struct = _struct_ddl(lrow)
    right_struct = _struct_ddl(rrow)

    def tagged(side: int, child: PlanNode, names: list[str]) -> DataFrame:
        if keys:
            key_cols = _key_columns(names, key_types)
        else:  # no equi key: one group, so one partition joins every row (as Flink does)
            key_cols = [F.lit(0).alias(f"{wire.KEY_PREFIX}0")]
        return go(child).select(*key_cols, *_side_columns(side, child, left_struct, right_struct))

    union = tagged(wire.LEFT, node.left, [k.left for k in keys]).unionAll(
        tagged(wire.RIGHT, node.right, [k.right for k in keys])
    )
    key_names = [f"{wire.KEY_PREFIX}{i}" for i in range(max(len(keys), 1))]
    out = union.groupBy(*(F.col(k) for k in key_names)).transformWithState(
        join_processor(spec), _output_schema(node.row_type), "Append", time_mode
    )
    # Changes of one output row come from one key, in order; across keys order is free.
    seq = F.lit("").alias(SEQ)
    return out.select(*(ref(n) for n in node.row_type.names), ref(KIND), seq)


def _multi_join(
    node: MultiJoin, go: Go, options: StreamingOptions, flags: dict[str, bool]
) -> DataFrame:
    """The server_ext multi-way join processor over every input, each tagged with its index
    and carried in its own struct column, grouped by the common key."""
    from server_ext.joins import multi_join_processor
    from server_ext.joins import multi_spec as mw

    flags["operator"] = True
    spec = mw.MultiJoinSpec(
        inputs=tuple(tuple((f.name, f.type.spark_ddl) for f in r.row_type) for r in node.relations),
        kinds=tuple(_KINDS[j.kind] for j in node.joins),
        conditions=tuple(
            condition_tree(j.condition, j.left.row_type, j.right.row_type)
            for j in node.joins
            if j.condition is not None
        ),
        ttl_ms=options.default_ttl_ms,
    )
    flags["processing_time"] = flags["processing_time"] or spec.time_mode == "ProcessingTime"
    key_types = [
        _common_type(
            [
                r.row_type.field(cols[p]).type
                for r, cols in zip(node.relations, node.common_key, strict=True)
            ]
        ).spark_ddl
        for p in range(len(node.common_key[0]))
    ]
    structs = [(mw.input_column(i), _struct_ddl(r.row_type)) for i, r in enumerate(node.relations)]

    def tagged(index: int, child: PlanNode) -> DataFrame:
        keys = _key_columns(list(node.common_key[index]), key_types)
        return go(child).select(*keys, *_tag_columns(index, child, structs))

    union = tagged(0, node.relations[0])
    for i, child in enumerate(node.relations[1:], start=1):
        union = union.unionAll(tagged(i, child))
    key_names = [f"{wire.KEY_PREFIX}{i}" for i in range(len(key_types))]
    out = union.groupBy(*(F.col(k) for k in key_names)).transformWithState(
        multi_join_processor(spec), _output_schema(node.row_type), "Append", spec.time_mode
    )
    return out.select(*(ref(n) for n in node.row_type.names), ref(KIND), F.lit("").alias(SEQ))


def _common_type(types: list[DataType]) -> DataType:
    """The type every input's key column widens to (they are compared pairwise already)."""
    result: DataType | None = types[0]
    for t in types[1:]:
        result = common_type(result, t) if result is not None else None
    if result is None:
        raise ValidationError(
            f"The common join key has types {[str(t) for t in types]} with no common type; "
            "cast the key columns to one type."
        )
    return result


def _temporal_join(
    node: TemporalJoin, go: Go, spark: SparkSession, flags: dict[str, bool]
) -> DataFrame:
    """The server_ext temporal join processor over both inputs tagged by side; probe rows
    that arrive behind the watermark are counted (observed metric ``late_rows``) and dropped."""
    from server_ext.joins import temporal_join_processor
    from server_ext.joins import temporal_spec as tw

    if node.equi_keys is None:
        raise ValidationError("compile the optimized plan: join conditions are not split")
    flags["operator"] = True
    keys = node.equi_keys
    lrow, rrow = node.left.row_type, node.right.row_type
    spec = tw.TemporalSpec(
        kind="inner" if node.kind is JoinKind.INNER else "left",
        time=node.time,
        left=wire.SideSpec(tuple((f.name, f.type.spark_ddl) for f in lrow)),
        right=wire.SideSpec(
            tuple((f.name, f.type.spark_ddl) for f in rrow),
            wire.InputSpec.JOIN_KEY_CONTAINS_UNIQUE_KEY,  # TemporalJoin checked the PK is keyed
            tuple(rrow.index(k) for k in node.right_key),
        ),
        residual=None if node.residual is None else condition_tree(node.residual, lrow, rrow),
        output_names=node.row_type.names,
    )
    key_types = [
        common_type(lrow.field(k.left).type, rrow.field(k.right).type).spark_ddl for k in keys
    ]
    left_struct, right_struct = _struct_ddl(lrow), _struct_ddl(rrow)

    def tagged(side: int, child: PlanNode, names: list[str], time: str | None) -> DataFrame:
        df = go(child)
        if _has_kind(child) and side == wire.RIGHT:
            # A versioned table is an upsert stream: +U opens the new version; -U (stamped
            # with the old version's time) would wrongly close the old one.
            df = df.filter(ref(KIND) != F.lit(wire.UPDATE_BEFORE))
        stamp = ref(time) if time else F.lit(None).cast("timestamp")
        return df.select(
            *_key_columns(names, key_types),
            *_side_columns(side, child, left_struct, right_struct),
            # Epoch millis only: a timestamp copy of the rowtime would carry its watermark
            # marker, and Spark would then drop rows behind the watermark before the
            # processor could count them as late (or keep a late version).
            F.unix_millis(stamp).alias(tw.TIME),
        )

    event = node.time == "event"
    union = tagged(wire.LEFT, node.left, [k.left for k in keys], node.as_of).unionAll(
        tagged(wire.RIGHT, node.right, [k.right for k in keys], node.right_time if event else None)
    )
    output = _output_schema(node.row_type)
    out = union.groupBy(
        *(F.col(f"{wire.KEY_PREFIX}{i}") for i in range(len(keys)))
    ).transformWithState(
        temporal_join_processor(spec), output, "Append", tw.temporal_time_mode(spec)
    )
    late = F.col(KIND) == F.lit(tw.LATE)
    out = out.observe(tw.LATE_ROWS_METRIC, F.sum(F.when(late, 1).otherwise(0)).alias("late_rows"))
    # Insert-only probe rows give insert-only output: no kind column downstream.
    return out.filter(~late).select(*(ref(n) for n in node.row_type.names))


def _key_columns(names: list[str], types: list[str]) -> list[SparkColumn]:
    """The join key as the grouping columns ``__k0..``, cast to the two sides' common type."""
    return [
        ref(n).cast(t).alias(f"{wire.KEY_PREFIX}{i}")
        for i, (n, t) in enumerate(zip(names, types, strict=True))
    ]


def _side_columns(
    side: int, child: PlanNode, left_struct: str, right_struct: str
) -> list[SparkColumn]:
    """``__side``, ``__kind``, ``__seq`` and the row as ``__l`` or ``__r`` (the other null)."""
    return _tag_columns(side, child, [(wire.LEFT_ROW, left_struct), (wire.RIGHT_ROW, right_struct)])


def _tag_columns(index: int, child: PlanNode, structs: list[tuple[str, str]]) -> list[SparkColumn]:
    """``__side`` (the input's index), ``__kind``, ``__seq``, then one struct column per
    input (name, struct DDL): ``child``'s row in its own, nulls in the others."""
    changelog = _has_kind(child)
    own = F.struct(*(ref(n) for n in child.row_type.names))
    return [
        F.lit(index).cast("tinyint").alias(wire.SIDE),
        (ref(KIND) if changelog else F.lit(wire.INSERT).cast("tinyint")).alias(wire.KIND),
        (ref(SEQ) if changelog else F.lit("")).alias(wire.SEQ),
        *(
            (own if i == index else F.lit(None).cast(ddl)).alias(name)
            for i, (name, ddl) in enumerate(structs)
        ),
    ]


def _output_schema(row: RowType) -> T.StructType:
    """``__kind`` + the join's columns, as a type object (a DDL string costs a round trip)."""
    return T.StructType(
        [T.StructField(KIND, T.ByteType(), False)]
        + [T.StructField(f.name, spark_type(f.type), True) for f in row]
    )


def _struct_ddl(row: RowType) -> str:
    return "struct<" + ", ".join(f"`{f.name}`: {f.type.spark_ddl}" for f in row) + ">"


def join_spec(node: Join, default_ttl_ms: int | None = None) -> wire.JoinSpec:
    """The server_ext operator's view of a join (see ``server_ext.joins.spec``)."""
    keys = node.equi_keys or ()
    lrow, rrow = node.left.row_type, node.right.row_type

    def side(child: PlanNode, row: RowType, join_keys: tuple[str, ...], name: str) -> Any:
        layout = wire.InputSpec(input_spec(child, join_keys))
        unique = unique_key_for_state(child) if layout is not wire.InputSpec.NO_UNIQUE_KEY else ()
        return wire.SideSpec(
            fields=tuple((f.name, f.type.spark_ddl) for f in row),
            input_spec=layout,
            unique_key=tuple(row.index(c) for c in unique),
            ttl_ms=state_ttl_ms(node, name, default_ttl_ms),
        )

    return wire.JoinSpec(
        kind=_KINDS[node.kind],
        left=side(node.left, lrow, tuple(k.left for k in keys), "left"),
        right=side(node.right, rrow, tuple(k.right for k in keys), "right"),
        null_safe=tuple(k.null_safe for k in keys),
        residual=None if node.residual is None else condition_tree(node.residual, lrow, rrow),
        output_names=node.row_type.names,
    )


# Table API function name -> the operator's condition-tree name.
_TREE_CALLS = {
    "plus": "+",
    "minus": "-",
    "times": "*",
    "divide": "/",
    "mod": "mod",
    "negate": "neg",
    "equals": "=",
    "not_equals": "<>",
    "less_than": "<",
    "less_than_or_equal": "<=",
    "greater_than": ">",
    "greater_than_or_equal": ">=",
    "is_not_distinct_from": "is_not_distinct_from",
    "and": "and",
    "or": "or",
    "not": "not",
    "is_null": "is_null",
    "is_not_null": "is_not_null",
    "abs": "abs",
    "upper": "upper",
    "lower": "lower",
    "coalesce": "coalesce",
    "if": "if",
}


def condition_tree(expr: Expression, left: RowType, right: RowType) -> tuple:
    """A residual join condition as the operator's tuple tree; an expression it cannot
    evaluate is an error at plan time."""
    if isinstance(expr, Column):
        if expr.name in left:
            return ("col", "l", left.index(expr.name))
        return ("col", "r", right.index(expr.name))
    if isinstance(expr, Literal):
        return ("lit", expr.value)
    if isinstance(expr, Call):
        name, args = expr.function.name, expr.args
        tree = [condition_tree(a, left, right) for a in args]
        if name == "between":
            return (
                "call",
                "and",
                ("call", ">=", tree[0], tree[1]),
                ("call", "<=", tree[0], tree[2]),
            )
        if name == "not_between":
            low, high = ("call", ">=", tree[0], tree[1]), ("call", "<=", tree[0], tree[2])
            return ("call", "not", ("call", "and", low, high))
        if name == "is_distinct_from":
            return ("call", "not", ("call", "is_not_distinct_from", *tree))
        if name == "in":
            terms = [("call", "=", tree[0], t) for t in tree[1:]]
            out = terms[0]
            for t in terms[1:]:
                out = ("call", "or", out, t)
            return out
        if name in _TREE_CALLS:
            return ("call", _TREE_CALLS[name], *tree)
    raise ValidationError(
        f"The streaming join operator cannot evaluate {expr} in the non-equi join condition "
        f"yet. It supports columns, literals, comparisons, AND/OR/NOT, IS [NOT] NULL, "
        f"arithmetic, BETWEEN, IN and {sorted(set(_TREE_CALLS) - {'and', 'or', 'not'})}; "
        "compute the value in a select() before the join instead."
    )
