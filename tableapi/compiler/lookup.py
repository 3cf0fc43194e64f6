"""Lookup joins -> server_ext's lookup operator (``server_ext/lookup``), in both modes.

The probe input gets one column per varying lookup key (``__lk0..``: the probe expression
cast to the dimension column's type: the lookup receives keys in the dimension types), then
runs through ``mapInArrow`` with the operator; the operator's metrics marker rows are summed
by ``DataFrame.observe`` (an ``Observation`` in batch mode, a named observation in streaming:
see ``server_ext/lookup/metrics.py``) and dropped. A hash lookup join's probe input has been
hash-partitioned by the ``Exchange`` below the join (the lookup rule placed it).

Example::

    >>> from tableapi.expressions import col
    >>> from tableapi.plan import ElementsSource, JdbcSource, JoinKind, LookupJoin, Scan
    >>> from tableapi.schema import Schema
    >>> from tableapi.types import BIGINT, INT, DataType, RowType, TimeKind
    >>> from server_ext.lookup.spec import CacheSpec, SourceSpec
    >>> pt = DataType.parse("TIMESTAMP_LTZ(3)").with_time_kind(TimeKind.PROCTIME)
    >>> orders = Scan("O", ElementsSource(()), RowType.of(("c_id", INT), ("pt", pt)))
    >>> dim = Schema.new_builder().column("id", "BIGINT").column("age", "INT").build()
    >>> table = Scan("C", JdbcSource(SourceSpec("sqlite", "c", "/d.db"), CacheSpec()), dim)
    >>> join = LookupJoin(orders, table, JoinKind.LEFT, col("c_id") == col("id"), "pt")
    >>> spec = lookup_spec(join, probe_fields(join, []), "q1")
    >>> spec.probe_fields[-1], spec.keys, spec.kind
    (('__lk0', 'BIGINT'), (LookupKey(column=0, probe=2, value=None),), 'left')
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F

from server_ext.lookup.metrics import aggregate_exprs
from server_ext.lookup.operator import LookupJoinFunction
from server_ext.lookup.spec import METRICS, LookupKey, LookupSpec
from tableapi.compiler.expressions import ref, to_spark
from tableapi.errors import ValidationError
from tableapi.expressions import Expression
from tableapi.physical.specs import OPERATOR_EXPRESSIONS, condition_tree, fields_of
from tableapi.plan import JoinKind, LookupJoin
from tableapi.types import Field, RowType

#: The probe's lookup-key columns: ``__lk0``, ``__lk1``, ...
KEY_PREFIX = "__lk"

Observe = Callable[[DataFrame, list], DataFrame]


def probe_fields(node: LookupJoin, carried: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The operator's input columns: the probe row, the carried columns (a changelog's row
    kind), then the lookup-key columns."""
    physical = node.physical_row
    keys = [
        (f"{KEY_PREFIX}{i}", physical.field(k.column).type.spark_ddl)
        for i, k in enumerate(node.lookup.probe_keys)
    ]
    return fields_of(node.input.row_type) + tuple(carried) + tuple(keys)


def dim_rows(node: LookupJoin) -> tuple[RowType, RowType]:
    """The physical dimension row and the row the operator's trees read: the physical
    columns, then the computed ones."""
    physical = node.physical_row
    computed = tuple(
        Field(c.name, node.dim_row.field(c.name).type)
        for c in (node.table.schema.computed_columns if node.table.schema else ())
    )
    return physical, RowType(physical.fields + computed)


def lookup_spec(
    node: LookupJoin,
    fields: tuple[tuple[str, str], ...],
    cache_id: str,
    kind_column: str | None = None,
) -> LookupSpec:
    """The operator's view of ``node`` (``fields``: :func:`probe_fields`)."""
    lookup, source = node.lookup, node.source
    probe = node.input.row_type
    physical, all_dim = dim_rows(node)
    empty = RowType(())
    names = [n for n, _ in fields]
    keys, varying = [], 0
    for k in lookup.keys:
        column = physical.index(k.column)
        if k.probe is None:
            keys.append(LookupKey(column, None, k.value))
        else:
            keys.append(LookupKey(column, names.index(f"{KEY_PREFIX}{varying}")))
            varying += 1
    schema = node.table.schema
    computed = tuple(
        (c.name, all_dim.field(c.name).type.spark_ddl, _computed_tree(node, c.name, c.expr))
        for c in (schema.computed_columns if schema else ())
    )
    hint = node.lookup_hint
    retry = hint.retry_spec() if hint is not None else None

    def tree(expr: Expression | None, left: RowType, right: RowType) -> tuple | None:
        return None if expr is None else condition_tree(expr, left, right)

    return LookupSpec(
        table=node.table_name,
        source=source.source,
        kind="inner" if node.kind is JoinKind.INNER else "left",
        probe_fields=fields,
        dim_fields=fields_of(physical),
        keys=tuple(keys),
        computed=computed,
        dim_filter=tree(lookup.dim_filter, empty, all_dim),
        pre_filter=tree(lookup.pre_filter, probe, empty),
        residual=tree(lookup.residual, probe, all_dim),
        dim_output=tuple(all_dim.index(n) for n in node.dim_row.names),
        output_names=node.dim_row.names,
        cache=source.cache,
        max_retries=source.max_retries,
        retry=retry,
        async_lookup=bool(hint is not None and hint.async_lookup),
        capacity=hint.capacity if hint is not None else 100,
        timeout_ms=hint.timeout_ms if hint is not None else 180_000,
        shuffle=node.shuffle,
        push_filters=source.push_filters,
        kind_column=kind_column,
        cache_id=cache_id,
    )


def compile_lookup(
    node: LookupJoin,
    probe: DataFrame,
    carried: list[tuple[str, str]],
    cache_id: str,
    observe: Observe,
) -> DataFrame:
    """The lookup join over ``probe`` (the compiled input, with ``carried`` columns):
    ``observe(df, aggregates)`` attaches the metrics observation."""
    fields = probe_fields(node, carried)
    kind_column = carried[0][0] if carried else None
    spec = lookup_spec(node, fields, cache_id, kind_column)
    row = node.input.row_type
    keys = [
        to_spark(k.probe, row).cast(ddl).alias(name)
        for k, (name, ddl) in zip(
            node.lookup.probe_keys, fields[len(row) + len(carried) :], strict=True
        )
        if k.probe is not None
    ]
    # The operator's output schema is declared: every probe column in its declared type.
    cols = [ref(f.name).cast(f.type.spark_ddl).alias(f.name) for f in row]
    df = probe.select(*cols, *(ref(n) for n, _ in carried), *keys)
    out = df.mapInArrow(LookupJoinFunction(spec), spec.output_ddl())
    out = observe(out, [F.expr(e).alias(a) for a, e in aggregate_exprs()])
    out = out.where(F.col(METRICS).isNull())
    return out.select(*(ref(n) for n in node.row_type.names), *(ref(n) for n, _ in carried))


def _computed_tree(node: LookupJoin, name: str, expr: Expression) -> tuple:
    """A computed column the join condition reads, as the operator's tree: the operator
    computes it on each fetched row, before the dimension filter and the residual (the lookup
    rule computes the others after the join)."""
    try:
        return condition_tree(expr, RowType(()), node.physical_row)
    except ValidationError:
        raise ValidationError(
            f"The lookup join on {node.table_name} cannot evaluate its computed column "
            f"{name} AS {expr} in the join condition yet: the lookup operator computes the "
            f"computed columns the condition reads on the fetched rows and supports "
            f"{OPERATOR_EXPRESSIONS}. Filter on {name} in a where() after the join instead (for "
            "an inner join that is the same result); a computed column the condition does not "
            "read may use any expression."
        ) from None
