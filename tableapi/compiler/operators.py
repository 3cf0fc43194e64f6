"""server_ext's stateful operators as the streaming compiler builds them: the tagged input
union, and the seam that hands an operator to the server's JVM plugin.

Every operator reads one union of its inputs, each row tagged with its input (``__side``),
its row kind and arrival order, and the row itself in its input's struct column; grouped by
the join key ``__k0..`` (see ``server_ext/joins/spec.py``). :func:`run_operator` is the one
place an operator is handed to Spark: the plugin's relation (``jvm_operators.py``).

The operator's spec comes from its exec node (``tableapi.physical.specs``), and its union
from the node's ``operator_inputs()`` (``StreamingCompiler.visit_StreamExecOperator``).

Example::

    >>> from tableapi.types import BIGINT, INT
    >>> [str(t) for t in key_types([[INT, BIGINT]])]
    ['BIGINT']
"""

from __future__ import annotations

from typing import cast

import attrs
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

from server_ext.aggregate_spec import ACC, AggregateSpec
from server_ext.joins import multi_spec as mw
from server_ext.joins import spec as wire
from server_ext.joins import temporal_spec as tw
from server_ext.operators import OperatorSpec
from server_ext.window_spec import WindowAggregateSpec
from tableapi.compiler.expressions import ref
from tableapi.compiler.jvm_operators import jvm_local_aggregate, jvm_operator
from tableapi.errors import ValidationError
from tableapi.plan import PlanNode
from tableapi.plan.changelog import is_changelog
from tableapi.types import DataType, RowType, common_type, to_spark_struct
from tableapi.types import to_spark as spark_type


@attrs.frozen(eq=False)
class TaggedUnion:
    """An operator's input: the union of its tagged inputs, and that union's schema (known
    here, so Spark is never asked for it)."""

    dataframe: DataFrame
    schema: T.StructType
    key_count: int  # the grouping columns __k0.. come first
    insert_only: bool = False  # no input is a changelog: every __kind is +I, every __seq ''


def tagged_union(
    inputs: list[DataFrame],
    keys: list[DataType],
    children: list[PlanNode],
    time: bool = False,
    rows: list[RowType] | None = None,
) -> TaggedUnion:
    """The union of ``inputs`` (``children`` compiled, each selected as ``key_columns`` +
    ``tag_columns`` [+ the time]) with its schema: the keys, ``__side``, ``__kind``,
    ``__seq``, one struct per child's row (named by :func:`struct_names`; ``rows`` when the
    structs hold other rows than the children's) and, with ``time``, ``__t``."""
    rows = rows or [c.row_type for c in children]
    insert_only = not any(is_changelog(c) for c in children)
    union = inputs[0]
    for df in inputs[1:]:
        union = union.unionAll(df)
    fields = [T.StructField(f"{wire.KEY_PREFIX}{i}", spark_type(t)) for i, t in enumerate(keys)]
    if not keys:  # no equi key: the constant key of ``constant_key``
        fields = [T.StructField(f"{wire.KEY_PREFIX}0", T.IntegerType(), False)]
    fields += [
        T.StructField(wire.SIDE, T.ByteType()),
        T.StructField(wire.KIND, T.ByteType()),
        T.StructField(wire.SEQ, T.StringType()),
    ]
    fields += [
        T.StructField(name, to_spark_struct(row))
        for name, row in zip(struct_names(len(rows)), rows, strict=True)
    ]
    if time:
        fields.append(T.StructField(tw.TIME, T.LongType()))
    return TaggedUnion(union, T.StructType(fields), max(len(keys), 1), insert_only)


def run_operator(union: TaggedUnion, spec: OperatorSpec, output: T.StructType) -> DataFrame:
    """Group ``union`` by its key columns and run ``spec``'s JVM operator; the rows come out
    as ``output`` (``__kind`` then the operator's columns)."""
    df, schema = union.dataframe, union.schema
    if union.insert_only:
        # The JVM operators read a union without __kind and __seq as all +I in arrival order:
        # the constant columns are pruned from every input, and each row is spared a string
        # and each key a sort (measured).
        schema = T.StructType([f for f in schema.fields if f.name not in (wire.KIND, wire.SEQ)])
        df = df.select(*(F.col(f.name) for f in schema.fields))
    # The operator's relation reads the input's column names: without a cached schema that
    # is an analyze round trip to the server per operator.
    df._cached_schema = schema  # type: ignore[attr-defined]
    names = [f"{wire.KEY_PREFIX}{i}" for i in range(union.key_count)]
    return jvm_operator(cast(ConnectDataFrame, df), names, spec, output)


def local_aggregate(union: TaggedUnion, spec: AggregateSpec, output: T.StructType) -> DataFrame:
    """The local phase of a two-phase aggregation: each task folds its rows of ``union``
    into one partial accumulator per group key (and bundle) before the shuffle; the result
    (its schema known: :func:`partials_union`) is the input of the operator (of output
    ``output``), partials in any order (no ``__kind``/``__seq``)."""
    # Partials merge in any order: no __seq (nor __kind, when every row is +I).
    dropped = (wire.KIND, wire.SEQ) if union.insert_only else (wire.SEQ,)
    schema = T.StructType([f for f in union.schema.fields if f.name not in dropped])
    df = union.dataframe.select(*(F.col(f.name) for f in schema.fields))
    keys = schema.fields[: union.key_count]
    partials = T.StructType(
        [
            *keys,
            T.StructField(wire.SIDE, T.ByteType(), False),
            T.StructField(mw.input_column(0), schema[mw.input_column(0)].dataType, True),
            T.StructField(ACC, T.BinaryType(), False),
        ]
    )
    names = [f.name for f in keys]
    out = jvm_local_aggregate(cast(ConnectDataFrame, df), names, spec, output)
    out._cached_schema = partials  # known here: no analyze round trip for it
    return out


def local_window_aggregate(
    union: TaggedUnion, spec: WindowAggregateSpec, output: T.StructType
) -> DataFrame:
    """The local phase of a two-phase window aggregation: each task folds its rows of
    ``union`` into one partial accumulator per key and slice before the shuffle. The slice is
    a grouping column: ``__t`` moves after the keys, as its slice's last millisecond (Flink's
    ``getWindowStartWithOffset`` by the slice length, plus the slice, minus 1), which the
    operator assigns to the same slice as the rows it folds; a row without a time keeps its
    NULL (the operator drops it)."""
    dropped = (wire.KIND, wire.SEQ, tw.TIME) if union.insert_only else (wire.SEQ, tw.TIME)
    rest = [f for f in union.schema.fields if f.name not in dropped]
    keys = rest[: union.key_count]
    time = T.StructField(tw.TIME, T.LongType(), True)
    t, length = F.col(tw.TIME), F.lit(spec.slice_ms)
    last = t - F.pmod(t - F.lit(spec.offset_ms), length) + F.lit(spec.slice_ms - 1)
    schema = T.StructType([*keys, time, *rest[union.key_count :]])
    df = union.dataframe.select(
        *(last.alias(tw.TIME) if f.name == tw.TIME else F.col(f.name) for f in schema.fields)
    )
    df._cached_schema = schema  # type: ignore[attr-defined]
    partials = T.StructType(
        [
            *keys,
            time,
            T.StructField(wire.SIDE, T.ByteType(), False),
            T.StructField(mw.input_column(0), schema[mw.input_column(0)].dataType, True),
            T.StructField(ACC, T.BinaryType(), False),
        ]
    )
    names = [f.name for f in (*keys, time)]
    out = jvm_local_aggregate(cast(ConnectDataFrame, df), names, spec, output)
    out._cached_schema = partials  # known here: no analyze round trip for it
    return out


def partials_union(partials: DataFrame, key_count: int) -> TaggedUnion:
    """The local phase's output (:func:`local_aggregate`) as the global phase's input."""
    return TaggedUnion(partials, partials.schema, key_count, insert_only=True)


def operator_time_mode(spec: OperatorSpec) -> str:
    """The operator's ``transformWithState`` time mode (``ProcessingTime`` for state TTL)."""
    return spec.time_mode


def key_types(pairs: list[list[DataType]]) -> list[DataType]:
    """Per key position, the type every input's key column widens to."""
    out = []
    for types in pairs:
        result: DataType | None = types[0]
        for t in types[1:]:
            result = common_type(result, t) if result is not None else None
        if result is None:
            raise ValidationError(
                f"The join key has types {[str(t) for t in types]} with no common type; "
                "cast the key columns to one type."
            )
        out.append(result)
    return out


def key_columns(names: list[str], types: list[DataType]) -> list[SparkColumn]:
    """The join key as the grouping columns ``__k0..``, cast to the inputs' common type; no
    key: one constant group, so one partition joins every row (as Flink does)."""
    if not names:
        return [F.lit(0).alias(f"{wire.KEY_PREFIX}0")]
    return [
        ref(n).cast(t.spark_ddl).alias(f"{wire.KEY_PREFIX}{i}")
        for i, (n, t) in enumerate(zip(names, types, strict=True))
    ]


def struct_names(count: int) -> list[str]:
    """The struct columns of an operator's inputs: ``__l`` and ``__r`` for two, else
    ``__in0..`` (the multi-way join's)."""
    return (
        [wire.LEFT_ROW, wire.RIGHT_ROW]
        if count == 2
        else [mw.input_column(i) for i in range(count)]
    )


def tag_columns(
    index: int, child: PlanNode, rows: list[RowType], own: SparkColumn | None = None
) -> list[SparkColumn]:
    """``__side`` (the input's index), ``__kind``, ``__seq``, then one struct column per
    input (``rows``): ``child``'s row (or ``own``, the struct of what it carries instead) in
    its own, nulls in the others."""
    changelog = is_changelog(child)
    if own is None:
        own = F.struct(*(ref(n) for n in child.row_type.names))
    return [
        F.lit(index).cast("tinyint").alias(wire.SIDE),
        (ref(wire.KIND) if changelog else F.lit(wire.INSERT).cast("tinyint")).alias(wire.KIND),
        (ref(wire.SEQ) if changelog else F.lit("")).alias(wire.SEQ),
        *(
            (own if i == index else F.lit(None).cast(struct_ddl(row))).alias(name)
            for i, (name, row) in enumerate(zip(struct_names(len(rows)), rows, strict=True))
        ),
    ]


def output_schema(row: RowType) -> T.StructType:
    """``__kind`` + the operator's columns, as a type object (a DDL string costs a round
    trip)."""
    return T.StructType(
        [T.StructField(wire.KIND, T.ByteType(), False)]
        + [T.StructField(f.name, spark_type(f.type), True) for f in row]
    )


def struct_ddl(row: RowType) -> str:
    return "struct<" + ", ".join(f"`{f.name}`: {f.type.spark_ddl}" for f in row) + ">"
