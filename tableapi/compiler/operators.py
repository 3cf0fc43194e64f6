"""server_ext's stateful operators as the streaming compiler builds them: the wire specs, the
tagged input union, and the seam that hands an operator to the server's JVM plugin.

Every operator reads one union of its inputs, each row tagged with its input (``__side``),
its row kind and arrival order, and the row itself in its input's struct column; grouped by
the join key ``__k0..`` (see ``server_ext/joins/spec.py``). :func:`run_operator` is the one
place an operator is handed to Spark: the plugin's relation (``jvm_operators.py``).

Example::

    >>> from tableapi.plan import FileSource, Join, JoinKind, Scan
    >>> from tableapi.types import BIGINT, STRING, RowType
    >>> from tableapi.expressions import col
    >>> from tableapi.rules import optimize
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> a = Scan("A", FileSource("/a", "json"), RowType.of(("a_k", BIGINT), ("a_v", STRING)))
    >>> b = Scan("B", FileSource("/b", "json"), RowType.of(("b_k", BIGINT),))
    >>> join = optimize(Join(a, b, JoinKind.FULL, col("a_k") == col("b_k"))).plan
    >>> spec = join_spec(plan_stream(join, StreamingOptions()).root)
    >>> spec.kind, spec.left.input_spec.value, spec.output_names
    ('full', 'NoUniqueKey', ('a_k', 'a_v', 'b_k'))
"""

from __future__ import annotations

from typing import Any, cast

import attrs
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

from server_ext.aggregate_spec import ACC, AggCall, AggregateSpec
from server_ext.joins import interval_spec as iw
from server_ext.joins import multi_spec as mw
from server_ext.joins import spec as wire
from server_ext.joins import temporal_spec as tw
from server_ext.operators import OperatorSpec
from tableapi.compiler.expressions import ref
from tableapi.compiler.jvm_operators import jvm_local_aggregate, jvm_operator
from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, Expression, Literal
from tableapi.physical import ExecNode, JoinInput, StreamExecGroupAggregate
from tableapi.plan import Join, JoinKind, PlanNode
from tableapi.plan.changelog import is_changelog
from tableapi.types import DataType, RowType, common_type, to_spark_struct
from tableapi.types import to_spark as spark_type

# Join kind -> the operators' name for it (the wire contract owns the names).
WIRE_KINDS = {
    JoinKind.INNER: wire.INNER,
    JoinKind.LEFT: wire.LEFT_OUTER,
    JoinKind.RIGHT: wire.RIGHT_OUTER,
    JoinKind.FULL: wire.FULL_OUTER,
    JoinKind.SEMI: wire.SEMI,
    JoinKind.ANTI: wire.ANTI,
}


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


def partials_union(partials: DataFrame, key_count: int) -> TaggedUnion:
    """The local phase's output (:func:`local_aggregate`) as the global phase's input."""
    return TaggedUnion(partials, partials.schema, key_count, insert_only=True)


def operator_time_mode(spec: OperatorSpec) -> str:
    """The operator's ``transformWithState`` time mode (``ProcessingTime`` for state TTL)."""
    return spec.time_mode


def join_spec(exec_node: ExecNode) -> wire.JoinSpec:
    """The server_ext operator's view of a regular join's exec node (see
    ``server_ext.joins.spec``): its inputs' state layouts and TTLs as the node holds them."""
    node = cast(Join, exec_node.logical)
    keys = node.equi_keys or ()
    lrow, rrow = node.left.row_type, node.right.row_type

    def side(row: RowType, decided: JoinInput) -> wire.SideSpec:
        return wire.SideSpec(
            fields=fields_of(row),
            input_spec=wire.InputSpec(decided.input_spec),
            unique_key=tuple(row.index(c) for c in decided.unique_key),
            ttl_ms=decided.ttl_ms,
        )

    return wire.JoinSpec(
        kind=WIRE_KINDS[node.kind],
        left=side(lrow, exec_node.left),  # type: ignore[attr-defined]
        right=side(rrow, exec_node.right),  # type: ignore[attr-defined]
        null_safe=tuple(k.null_safe for k in keys),
        residual=None if node.residual is None else condition_tree(node.residual, lrow, rrow),
        output_names=node.row_type.names,
    )


def interval_join_spec(node: Join) -> iw.IntervalSpec:
    """The server_ext operator's view of an interval join (see
    ``server_ext.joins.interval_spec``). The residual keeps the time bounds: the operator
    checks them on the epoch millis, the residual on the rows (the same answer).

    >>> from tableapi.plan import ElementsSource, Scan
    >>> from tableapi.types import BIGINT, DataType, TimeKind
    >>> from tableapi.expressions import col, lit
    >>> from tableapi.rules import optimize
    >>> rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    >>> o = Scan("O", ElementsSource(()), RowType.of(("o_id", BIGINT), ("o_t", rowtime)))
    >>> s = Scan("S", ElementsSource(()), RowType.of(("s_id", BIGINT), ("s_t", rowtime)))
    >>> bound = col("o_t").between(col("s_t") - lit(4).hours, col("s_t"))
    >>> join = optimize(Join(o, s, JoinKind.LEFT, (col("o_id") == col("s_id")) & bound)).plan
    >>> spec = interval_join_spec(join)
    >>> spec.kind, spec.lower_ms, spec.upper_ms, spec.null_safe
    ('left', -14400000, 0, (False,))
    """
    if node.interval is None or node.equi_keys is None:
        raise ValidationError("internal: interval_join_spec needs an optimized interval join")
    lrow, rrow = node.left.row_type, node.right.row_type
    return iw.IntervalSpec(
        kind=WIRE_KINDS[node.kind],
        left=wire.SideSpec(fields_of(lrow)),
        right=wire.SideSpec(fields_of(rrow)),
        lower_ms=node.interval.lower_ms,
        upper_ms=node.interval.upper_ms,
        null_safe=tuple(k.null_safe for k in node.equi_keys),
        residual=None if node.residual is None else condition_tree(node.residual, lrow, rrow),
        output_names=node.row_type.names,
    )


#: The aggregate calls of the plan -> the operator's functions (``server_ext.aggregate_spec``).
_AGG_FUNCTIONS = {"count": "count", "sum": "sum", "avg": "avg", "min": "min", "max": "max"}


def aggregate_spec(
    exec_node: StreamExecGroupAggregate,
) -> tuple[AggregateSpec, list[tuple[str, Expression, DataType]]]:
    """The group aggregate operator's spec for an aggregation's exec node (one phase, or
    either of two), and the columns of the operator's input row: the group keys, then each
    distinct aggregate argument once, as (name, expression over the input, type). COUNT(*)
    and COUNT of a non-NULL literal count rows.

    >>> from tableapi.plan import Aggregate, FileSource, Scan
    >>> from tableapi.types import INT, STRING
    >>> from tableapi.expressions import col, lit
    >>> from tableapi.physical import StreamingOptions, plan_stream
    >>> t = Scan("T", FileSource("/t", "json"), RowType.of(("k", STRING), ("v", INT)))
    >>> aggs = (("n", lit(1).count), ("s", col("v").sum), ("d", col("v").count.distinct))
    >>> spec, columns = aggregate_spec(plan_stream(Aggregate(t, ("k",), aggs),
    ...                                            StreamingOptions()).root)
    >>> [(a.function, a.arg, a.distinct, a.result_type) for a in spec.aggs]
    [('count_star', None, False, 'BIGINT'), ('sum', 1, False, 'INT'), ('count', 1, True, 'BIGINT')]
    >>> [name for name, _, _ in columns], spec.key
    (['k', '__a1'], (0,))
    """
    node, group_keys, aggs = exec_node.logical, exec_node.group_keys, exec_node.aggs
    row = node.inputs[0].row_type
    columns: list[tuple[str, Expression, DataType]] = [
        (k, Column(k), row.field(k).type) for k in group_keys
    ]
    index_of: dict[tuple[Any, ...], int] = {}
    calls = []
    for name, expr in aggs:
        if not isinstance(expr, Call) or not expr.function.aggregate:
            raise ValidationError(f"internal: {expr} is not an aggregate call")
        function = expr.name.removesuffix("_distinct")
        distinct = expr.name.endswith("_distinct")
        arg = expr.args[0] if expr.args else None
        result = node.row_type.field(name).type.spark_ddl
        if function == "count" and not distinct and _counts_rows(arg):
            calls.append(AggCall("count_star", None, False, "BIGINT"))
            continue
        assert arg is not None
        at = index_of.get(arg.key())
        if at is None:
            at = index_of[arg.key()] = len(columns)
            columns.append((f"__a{at}", arg, arg.type_in(row)))
        calls.append(AggCall(_AGG_FUNCTIONS[function], at, distinct, result))
    state = exec_node.state
    spec = AggregateSpec(
        input=tuple((n, t.spark_ddl) for n, _, t in columns),
        key=tuple(range(len(group_keys))),
        aggs=tuple(calls),
        output_names=node.row_type.names,
        update_before=state.update_before,
        mini_batch=state.mini_batch_ms is not None,
        bundle_size=state.bundle_size,
        two_phase=exec_node.two_phase,
        retractions=is_changelog(node.inputs[0]),
        ttl_ms=state.ttl_ms,
    )
    return spec, columns


def _counts_rows(arg: Expression | None) -> bool:
    """COUNT(*), or COUNT of a literal that is not NULL: every row counts."""
    return arg is None or (isinstance(arg, Literal) and arg.value is not None)


def fields_of(row: RowType) -> tuple[tuple[str, str], ...]:
    """A row type as the operators see it: (name, Spark DDL type) per field."""
    return tuple((f.name, f.type.spark_ddl) for f in row)


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


def tag_columns(index: int, child: PlanNode, rows: list[RowType]) -> list[SparkColumn]:
    """``__side`` (the input's index), ``__kind``, ``__seq``, then one struct column per
    input (``rows``): ``child``'s row in its own, nulls in the others."""
    changelog = is_changelog(child)
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
    evaluate is an error at plan time.

    >>> from tableapi.expressions import col
    >>> from tableapi.types import INT
    >>> condition_tree(col("a") < col("b") + 1, RowType.of(("a", INT)), RowType.of(("b", INT)))
    ('call', '<', ('col', 'l', 0), ('call', '+', ('col', 'r', 0), ('lit', 1)))
    """
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
        f"yet. It supports {OPERATOR_EXPRESSIONS}; compute the value in a select() before the "
        "join instead."
    )


#: What :func:`condition_tree` turns into an operator's tree, for error messages.
OPERATOR_EXPRESSIONS = (
    "columns, literals, comparisons, AND/OR/NOT, IS [NOT] NULL, arithmetic, BETWEEN, IN and "
    f"{sorted(set(_TREE_CALLS) - {'and', 'or', 'not'})}"
)
