"""The operators' specs of the physical plan: what each server_ext operator is told, built
from its exec node's decisions (the wire contract's spec classes are ``server_ext``'s), and
the condition trees the operators evaluate.

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

from typing import TYPE_CHECKING, Any, cast

from server_ext.aggregate_spec import AggCall, AggregateSpec
from server_ext.joins import interval_spec as iw
from server_ext.joins import multi_spec as mw
from server_ext.joins import spec as wire
from server_ext.joins import temporal_spec as tw
from tableapi.errors import ValidationError
from tableapi.expressions import Call, Column, Expression, Literal
from tableapi.plan import Join, JoinKind, MultiJoin, PlanNode, TemporalJoin
from tableapi.plan.changelog import is_changelog
from tableapi.types import DataType, RowType

if TYPE_CHECKING:
    from tableapi.physical.aggregates import StreamExecGroupAggregate
    from tableapi.physical.joins import JoinInput, StreamExecJoin

# Join kind -> the operators' name for it (the wire contract owns the names).
WIRE_KINDS = {
    JoinKind.INNER: wire.INNER,
    JoinKind.LEFT: wire.LEFT_OUTER,
    JoinKind.RIGHT: wire.RIGHT_OUTER,
    JoinKind.FULL: wire.FULL_OUTER,
    JoinKind.SEMI: wire.SEMI,
    JoinKind.ANTI: wire.ANTI,
}


def join_spec(exec_node: StreamExecJoin) -> wire.JoinSpec:
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
        left=side(lrow, exec_node.left),
        right=side(rrow, exec_node.right),
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


def temporal_join_spec(join: TemporalJoin) -> tw.TemporalSpec:
    """The temporal join operator's spec: the versioned (right) side keeps its versions by
    its primary key (``TemporalJoin`` checked it is there)."""
    lrow, rrow = join.left.row_type, join.right.row_type
    return tw.TemporalSpec(
        kind=WIRE_KINDS[join.kind],
        time=join.time,
        left=wire.SideSpec(fields_of(lrow)),
        right=wire.SideSpec(
            fields_of(rrow),
            wire.InputSpec.JOIN_KEY_CONTAINS_UNIQUE_KEY,
            tuple(rrow.index(k) for k in join.right_key),
        ),
        residual=None if join.residual is None else condition_tree(join.residual, lrow, rrow),
        output_names=join.row_type.names,
    )


def multi_join_spec(join: MultiJoin, ttl_ms: int | None) -> mw.MultiJoinSpec:
    """The multi-way join operator's spec: each input's fields, each level's kind and
    condition, the state TTL of every input."""
    return mw.MultiJoinSpec(
        inputs=tuple(fields_of(r.row_type) for r in join.relations),
        kinds=tuple(WIRE_KINDS[j.kind] for j in join.joins),
        conditions=tuple(
            condition_tree(j.condition, j.left.row_type, j.right.row_type)
            for j in join.joins
            if j.condition is not None
        ),
        ttl_ms=ttl_ms,
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
    node, group_keys = exec_node.logical, exec_node.group_keys
    columns, calls = aggregate_calls(node, group_keys, exec_node.aggs)
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


def aggregate_calls(
    node: PlanNode, group_keys: tuple[str, ...], aggs: tuple[tuple[str, Expression], ...]
) -> tuple[list[tuple[str, Expression, DataType]], list[AggCall]]:
    """The columns of an aggregate operator's input row (the group keys, then each distinct
    aggregate argument once, as (name, expression over ``node``'s input, type)) and its
    calls, each result typed as ``node``'s output field of its name: what the group and the
    window aggregates share.

    >>> from tableapi.plan import Aggregate, FileSource, Scan
    >>> from tableapi.types import INT
    >>> from tableapi.expressions import col
    >>> t = Scan("T", FileSource("/t", "json"), RowType.of(("k", INT), ("v", INT)))
    >>> columns, calls = aggregate_calls(Aggregate(t, ("k",), (("s", col("v").sum),)), ("k",),
    ...                                  (("s", col("v").sum),))
    >>> [c[0] for c in columns], [(a.function, a.arg) for a in calls]
    (['k', '__a1'], [('sum', 1)])
    """
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
    return columns, calls


def _counts_rows(arg: Expression | None) -> bool:
    """COUNT(*), or COUNT of a literal that is not NULL: every row counts."""
    return arg is None or (isinstance(arg, Literal) and arg.value is not None)


def fields_of(row: RowType) -> tuple[tuple[str, str], ...]:
    """A row type as the operators see it: (name, Spark DDL type) per field."""
    return tuple((f.name, f.type.spark_ddl) for f in row)


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
