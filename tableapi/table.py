"""``Table``: the fluent API (PyFlink names). Every call validates at once.

Example::

    orders.join(products, col("product_id") == col("id")) \\
          .where(col("amount") > 10) \\
          .select(col("order_id"), col("name"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

from tableapi.catalog import qualified
from tableapi.connectors import BlackholeOptions, JdbcOptions, PrintOptions
from tableapi.connectors.lookup_hint import parse_lookup_hint
from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.execution import BlackholeSink, FileSink, JdbcSink, PrintSink, Sink
from tableapi.expressions import (
    Call,
    Column,
    Expression,
    WindowProperty,
    and_,
    is_aggregate,
    strip_alias,
    to_expression,
)
from tableapi.physical import StreamingOptions, plan_stream
from tableapi.plan import (
    Aggregate,
    Distinct,
    Filter,
    Hint,
    Join,
    JoinKind,
    Limit,
    LookupJoin,
    PlanNode,
    Project,
    QueryHints,
    Sort,
    TemporalJoin,
    Union,
)
from tableapi.plan import explain as plan_explain
from tableapi.plan.lookup import lookup_table_scan
from tableapi.plan.windows import WINDOW_END, WINDOW_START, WINDOW_TIME, WindowTableFunction
from tableapi.result import TableResult
from tableapi.rules import OptimizedPlan
from tableapi.types import RowType, TimeKind, implicit_cast
from tableapi.window import GroupWindow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from tableapi.descriptor import TableDescriptor
    from tableapi.execution import Executor

#: Join strategy hints Spark understands; the Table API takes the same names.
JOIN_HINTS = ("BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "MERGE", "SHUFFLE_REPLICATE_NL")

Field = Expression | str


class TableContext(Protocol):
    """What a :class:`Table` asks of the environment that made it (``TableEnvironment``)."""

    @property
    def mode(self) -> str:
        """'batch' or 'streaming': the mode the next statement runs in."""
        ...

    def resolve(self, expr: Expression) -> Expression:
        """``expr`` with registered functions resolved."""
        ...

    def temporal_function(self, name: str) -> TemporalTableFunction | None: ...

    def temporal_function_names(self) -> list[str]: ...

    def optimize(self, plan: PlanNode) -> OptimizedPlan:
        """The optimizer rules, with the environment's options."""
        ...

    def streaming_options(self) -> StreamingOptions | None:
        """Streaming planning options; None in batch mode."""
        ...

    def descriptor(self, path: str) -> TableDescriptor: ...

    @property
    def executor(self) -> Executor:
        """Runs optimized plans."""
        ...


class Table:
    """A table program; nothing runs until :meth:`execute` (or :meth:`to_spark`).

    >>> expensive = products.where(col("price") > 5).select(col("name"), col("price"))
    >>> expensive.row_type
    RowType(name STRING, price DOUBLE)
    """

    def __init__(self, plan: PlanNode, env: TableContext) -> None:
        self._plan = plan
        self._env = env

    # -- schema ----------------------------------------------------------------------------
    @property
    def row_type(self) -> RowType:
        """The table's columns and their types.

        >>> products.row_type
        RowType(id BIGINT NOT NULL, name STRING, price DOUBLE)
        """
        return self._plan.row_type

    def get_schema(self) -> RowType:
        """The table's columns and their types (PyFlink's name for :attr:`row_type`).

        >>> products.get_schema().names
        ('id', 'name', 'price')
        """
        return self._plan.row_type

    @property
    def column_names(self) -> tuple[str, ...]:
        """The names of the table's columns.

        >>> orders.column_names
        ('order_id', 'product_id', 'amount', 'currency', 'o_rowtime', 'o_proctime')
        """
        return self._plan.row_type.names

    def print_schema(self) -> None:
        """Print the columns and their types, one per line.

        >>> products.print_schema()
        (
          `id` BIGINT NOT NULL,
          `name` STRING,
          `price` DOUBLE
        )
        """
        print("(\n  " + ",\n  ".join(f"`{f.name}` {f.type}" for f in self.row_type) + "\n)")

    # -- relational operations ----------------------------------------------------------------
    def _fields(self, fields: tuple[Field, ...]) -> list[Expression]:
        return [self._env.resolve(to_expression(f)) for f in fields]

    def _new(self, plan: PlanNode) -> Table:
        return Table(plan, self._env)

    def select(self, *fields: Field) -> Table:
        """The given expressions, one column each; aggregates alone give one row.

        >>> products.select(col("name"), (col("price") * 2).alias("double_price")).column_names
        ('name', 'double_price')
        >>> products.select(col("price").max.alias("top")).column_names
        ('top',)
        """
        exprs = self._fields(fields)
        if not exprs:
            raise ValidationError("select() needs at least one expression.")
        if any(is_aggregate(e) for x in exprs for e in x.walk()):
            return GroupedTable(self, ()).select(*exprs)
        # The names carry the aliases; bare expressions let renamed keys stay unique keys.
        return self._new(Project(self._plan, tuple(strip_alias(e) for e in exprs), _names(exprs)))

    def where(self, predicate: Expression) -> Table:
        """Keep rows where ``predicate`` holds; ``col("x").in_(t)`` makes a semi join.

        >>> print(products.where(col("price") > 10).explain().splitlines()[1])
        LogicalFilter(condition=[(price > 10)])
        """
        return self._new(Filter(self._plan, self._env.resolve(to_expression(predicate))))

    filter = where

    def add_columns(self, *fields: Field) -> Table:
        """Add computed columns after the existing ones (new names only).

        >>> products.add_columns((col("price") * 2).alias("p2")).column_names
        ('id', 'name', 'price', 'p2')
        """
        exprs = self._fields(fields)
        existing = [n for n in _names(exprs) if n in self.row_type]
        if existing:
            raise ValidationError(
                f"add_columns(): column(s) {existing} exist already; use "
                "add_or_replace_columns() to replace them."
            )
        return self.add_or_replace_columns(*exprs)

    def add_or_replace_columns(self, *fields: Field) -> Table:
        """Add columns, replacing those with the same name in place.

        >>> products.add_or_replace_columns(col("name").upper_case.alias("name")).column_names
        ('id', 'name', 'price')
        """
        exprs = self._fields(fields)
        new = dict(zip(_names(exprs), exprs, strict=True))
        cols: list[Expression] = [new.pop(n, Column(n)) for n in self.row_type.names]
        cols += list(new.values())
        names = [*self.row_type.names, *new.keys()]
        return self._new(Project(self._plan, tuple(strip_alias(c) for c in cols), tuple(names)))

    def rename_columns(self, *fields: Expression) -> Table:
        """Rename columns: ``col("old").alias("new")`` terms.

        >>> products.rename_columns(col("id").alias("p_id")).column_names
        ('p_id', 'name', 'price')
        """
        renames: dict[str, str] = {}
        for f in fields:
            inner = strip_alias(f)
            if not (f.output_name and isinstance(inner, Column) and f is not inner):
                raise ValidationError(
                    f"rename_columns() takes col('old').alias('new') terms; got {f}."
                )
            self.row_type.field(inner.name, "rename_columns()")
            renames[inner.name] = f.output_name
        names = tuple(renames.get(n, n) for n in self.row_type.names)
        return self._new(Project(self._plan, tuple(Column(n) for n in self.row_type.names), names))

    def drop_columns(self, *fields: Field) -> Table:
        """The table without the given columns.

        >>> products.drop_columns(col("price")).column_names
        ('id', 'name')
        """
        drop = set()
        for f in self._fields(fields):
            if not isinstance(f, Column):
                raise ValidationError(f"drop_columns() takes column references; got {f}.")
            self.row_type.field(f.name, "drop_columns()")
            drop.add(f.name)
        keep = [n for n in self.row_type.names if n not in drop]
        return self._new(Project(self._plan, tuple(Column(n) for n in keep), tuple(keep)))

    def alias(self, field: str, *fields: str) -> Table:
        """Rename all columns by position.

        >>> products.alias("a", "b", "c").column_names
        ('a', 'b', 'c')
        """
        names = (field, *fields)
        if len(names) != len(self.row_type):
            raise ValidationError(
                f"alias() needs {len(self.row_type)} names for columns "
                f"[{', '.join(self.row_type.names)}], got {len(names)}."
            )
        return self._new(Project(self._plan, tuple(Column(n) for n in self.row_type.names), names))

    def distinct(self) -> Table:
        """The distinct rows.

        >>> print(products.select(col("name")).distinct().explain().splitlines()[1])
        LogicalAggregate(group=[{name}])
        """
        return self._new(Distinct(self._plan))

    def group_by(self, *fields: Field) -> GroupedTable:
        """Group rows; :meth:`GroupedTable.select` takes the keys and aggregates.

        >>> orders.group_by(col("currency")).select(
        ...     col("currency"), col("amount").sum.alias("total")).column_names
        ('currency', 'total')
        """
        return GroupedTable(self, tuple(self._fields(fields)))

    def window(self, window: GroupWindow) -> GroupWindowedTable:
        """Rows in group windows (``tableapi.window``'s Tumble, Slide, Session); then
        ``group_by`` the window's alias and keys, and ``select`` (PyFlink's group windows).

        >>> from tableapi.window import Tumble
        >>> w = Tumble.over(lit(1).hours).on(col("o_rowtime")).alias("w")
        >>> orders.window(w).group_by(col("w"), col("currency")).select(
        ...     col("currency"), col("w").start.alias("hour"), col("amount").sum.alias("total")
        ... ).row_type
        RowType(currency STRING, hour TIMESTAMP(3) NOT NULL, total INT)
        """
        if not isinstance(window, GroupWindow):
            raise ValidationError(
                "window() takes a group window such as "
                "Tumble.over(lit(10).minutes).on(col('ts')).alias('w') (tableapi.window); "
                f"got {window!r}."
            )
        return GroupWindowedTable(self, window)

    def order_by(self, *fields: Field) -> Table:
        """Sort rows (ascending unless ``.desc``).

        >>> print(products.order_by(col("price").desc).explain().splitlines()[1])
        LogicalSort(sort=[price DESC])
        """
        keys = tuple(
            k if isinstance(k, Call) and k.name in ("asc", "desc") else k.asc
            for k in self._fields(fields)
        )
        return self._new(Sort(self._plan, keys))

    def limit(self, fetch: int, offset: int = 0) -> Table:
        """The first ``fetch`` rows after skipping ``offset``.

        >>> print(products.order_by(col("price")).limit(3).explain().splitlines()[1])
        LogicalSort(offset=[0], fetch=[3])
        """
        return self._new(Limit(self._plan, fetch, offset))

    def fetch(self, fetch: int) -> Table:
        """The first ``fetch`` rows (Flink's name for ``limit``).

        >>> print(products.order_by(col("id")).fetch(5).explain().splitlines()[1])
        LogicalSort(offset=[0], fetch=[5])
        """
        return self.limit(fetch)

    def offset(self, offset: int) -> Table:
        """Skip the first ``offset`` rows.

        >>> print(products.order_by(col("id")).offset(2).explain().splitlines()[1])
        LogicalSort(offset=[2], fetch=[None])
        """
        return self._new(Limit(self._plan, None, offset))

    def union_all(self, right: Table) -> Table:
        """The rows of both tables (columns matched by position), duplicates kept.

        >>> cheap = products.where(col("price") < 1)
        >>> products.union_all(cheap).column_names
        ('id', 'name', 'price')
        """
        return self._new(Union(self._plan, self._same_env(right)._plan, distinct=False))

    def union(self, right: Table) -> Table:
        """The distinct rows of both tables (columns matched by position).

        >>> print(products.union(products).explain().splitlines()[1])
        LogicalUnion(all=[false])
        """
        return self._new(Union(self._plan, self._same_env(right)._plan, distinct=True))

    # -- joins ---------------------------------------------------------------------------------
    def _join(self, right: Table, predicate: Expression | None, kind: JoinKind) -> Table:
        condition = None if predicate is None else self._env.resolve(to_expression(predicate))
        return self._new(Join(self._plan, self._same_env(right)._plan, kind, condition))

    def join(self, right: Table, join_predicate: Expression | None = None) -> Table:
        """Inner join; without a predicate a cross join (filter it with where()).

        >>> orders.join(products, col("product_id") == col("id")).column_names[-3:]
        ('id', 'name', 'price')
        """
        return self._join(right, join_predicate, JoinKind.INNER)

    def left_outer_join(self, right: Table, join_predicate: Expression | None = None) -> Table:
        """Left outer join: every left row, null-padded where nothing matches.

        >>> joined = orders.left_outer_join(products, col("product_id") == col("id"))
        >>> joined.row_type.field("name").type.nullable
        True
        """
        return self._join(right, join_predicate, JoinKind.LEFT)

    def right_outer_join(self, right: Table, join_predicate: Expression | None = None) -> Table:
        """Right outer join: every right row, null-padded where nothing matches.

        >>> joined = orders.right_outer_join(products, col("product_id") == col("id"))
        >>> joined.row_type.field("order_id").type.nullable
        True
        """
        return self._join(right, join_predicate, JoinKind.RIGHT)

    def full_outer_join(self, right: Table, join_predicate: Expression | None = None) -> Table:
        """Full outer join: every row of both sides, null-padded where nothing matches.

        >>> joined = orders.full_outer_join(products, col("product_id") == col("id"))
        >>> [f.type.nullable for f in joined.row_type][:2]
        [True, True]
        """
        return self._join(right, join_predicate, JoinKind.FULL)

    def semi_join(self, right: Table, join_predicate: Expression) -> Table:
        """Rows of this table that have at least one match in ``right``.

        >>> orders.semi_join(products, col("product_id") == col("id")).column_names[:2]
        ('order_id', 'product_id')
        """
        return self._join(right, join_predicate, JoinKind.SEMI)

    def anti_join(self, right: Table, join_predicate: Expression) -> Table:
        """Rows of this table that have no match in ``right``.

        >>> products.anti_join(orders, col("id") == col("product_id")).column_names
        ('id', 'name', 'price')
        """
        return self._join(right, join_predicate, JoinKind.ANTI)

    # -- temporal joins --------------------------------------------------------------------------
    def create_temporal_table_function(
        self, time_attribute: Expression | str, primary_key: Expression | str
    ) -> TemporalTableFunction:
        """A function of time returning this table's versions valid at that time; register it
        with ``env.create_temporary_function("Rates", fn)`` and use it in ``join_lateral``.

        >>> fn = rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
        >>> fn.time_attribute, fn.primary_key
        ('r_rowtime', ('r_currency',))
        """
        time_name, key_name = _column_name(time_attribute), _column_name(primary_key)
        self.row_type.field(time_name, "create_temporal_table_function's time attribute")
        self.row_type.field(key_name, "create_temporal_table_function's primary key")
        return TemporalTableFunction(self, time_name, (key_name,))

    def join_lateral(self, function_call: Expression, join_predicate: Expression) -> Table:
        """Join each row with the temporal table function's version at the row's time.

        >>> senv.create_temporary_function("RatesAt", senv.from_path("Rates")
        ...     .create_temporal_table_function(col("r_rowtime"), col("r_currency")))
        >>> senv_orders = senv.from_path("Orders")
        >>> joined = senv_orders.join_lateral(
        ...     call("RatesAt", col("o_rowtime")), col("currency") == col("r_currency"))
        >>> joined.column_names[-3:]
        ('r_currency', 'rate', 'r_rowtime')
        """
        return self._lateral(function_call, join_predicate, JoinKind.INNER)

    def left_outer_join_lateral(
        self, function_call: Expression, join_predicate: Expression
    ) -> Table:
        """As :meth:`join_lateral`, keeping rows without a version (null-padded).

        >>> senv.create_temporary_function("Rates", senv.from_path("Rates")
        ...     .create_temporal_table_function(col("r_rowtime"), col("r_currency")))
        >>> joined = senv.from_path("Orders").left_outer_join_lateral(
        ...     call("Rates", col("o_rowtime")), col("currency") == col("r_currency"))
        >>> joined.row_type.field("rate").type.nullable
        True
        """
        return self._lateral(function_call, join_predicate, JoinKind.LEFT)

    def _lateral(self, function_call: Expression, predicate: Expression, kind: JoinKind) -> Table:
        from tableapi.expressions import UnresolvedCall

        call_ = to_expression(function_call)
        fn = None
        if isinstance(call_, UnresolvedCall) and len(call_.args) == 1:
            fn = self._env.temporal_function(call_.name)
            time = call_.args[0]
        if fn is None or not isinstance(time, Column):
            raise ValidationError(
                f"join_lateral() takes call(<temporal table function>, col(<time attribute>)); "
                f"got {function_call}. Registered temporal table functions: "
                f"{self._env.temporal_function_names()}."
            )
        return self._temporal(fn.table, predicate, time.name, kind, fn)

    def temporal_join(
        self, right: Table, join_predicate: Expression, as_of: Expression | str, how: str = "inner"
    ) -> Table:
        """``FOR SYSTEM_TIME AS OF``: join each row with the version of ``right`` (a table
        with a primary key; with a watermark for event time) valid at ``as_of``.

        >>> joined = orders.temporal_join(rates, col("currency") == col("r_currency"),
        ...                               as_of=col("o_rowtime"), how="left")
        >>> plan = joined.explain().split("== Optimized Physical Plan ==")[1]
        >>> print(plan.splitlines()[1])  # doctest: +NORMALIZE_WHITESPACE
        TemporalJoin(joinType=[LeftOuterJoin], where=[(currency = r_currency)],
        select=[order_id, product_id, amount, currency, o_rowtime, o_proctime, r_currency,
        rate, r_rowtime], leftTimeAttribute=[o_rowtime], rightTimeAttribute=[r_rowtime],
        rightPrimaryKey=[r_currency])

        Against a lookup table (connector ``jdbc``) AS OF a processing-time attribute, it is
        a lookup join: each row looks its keys up in the database when it is processed.

        >>> enriched = orders.temporal_join(
        ...     customers, (col("product_id") == col("c_id")) & (col("c_age") > 20),
        ...     as_of=col("o_proctime"), how="left").with_hint("SHUFFLE_HASH", "Customers")
        >>> plan = enriched.explain().split("== Optimized Physical Plan ==")[1]
        >>> print(plan.splitlines()[1])  # doctest: +NORMALIZE_WHITESPACE
        LookupJoin(table=[default_catalog.default_database.Customers],
        joinType=[LeftOuterJoin], lookup=[c_id=product_id], where=[(c_age > 20)],
        select=[order_id, product_id, amount, currency, o_rowtime, o_proctime, c_id, c_name,
        c_age], shuffle=[true], cache=[PARTIAL, maxRows=10000, cacheMissingKey=true])
        >>> print(plan.splitlines()[2])
        +- Exchange(distribution=[hash[product_id]])
        """
        if how not in ("inner", "left"):
            raise ValidationError(
                "Temporal table join currently only support INNER JOIN and LEFT JOIN, but was "
                f"{str(how).upper()} JOIN: use how='inner' or how='left'."
            )
        right = self._same_env(right)
        kind = JoinKind.INNER if how == "inner" else JoinKind.LEFT
        lookup_table = lookup_table_scan(right._plan)
        if lookup_table is not None:
            condition = self._env.resolve(to_expression(join_predicate))
            lookup = LookupJoin(self._plan, lookup_table, kind, condition, _column_name(as_of))
            return self._new(lookup)
        self._refuse_wrapped_lookup_table(right._plan)
        key = right._plan.unique_keys
        if not key:
            raise ValidationError(
                "temporal_join() needs a versioned table: the right table has no primary key. "
                "Declare one with Schema.new_builder()...primary_key(...)."
            )
        fn = TemporalTableFunction(right, _rowtime_of(right), key[0])
        return self._temporal(right, join_predicate, _column_name(as_of), kind, fn)

    @staticmethod
    def _refuse_wrapped_lookup_table(plan: PlanNode) -> None:
        """A lookup table is looked up as it is: not under a projection or a filter."""
        for node in plan.walk():
            scan = lookup_table_scan(node)
            if scan is not None:
                raise ValidationError(
                    f"The right side of this temporal join reads the lookup table "
                    f"{scan.table_name} through other operations; a lookup join looks the "
                    f"table up as it is: pass env.from_path({scan.table_name!r}) itself and "
                    "put filters in the join condition (they are pushed into the lookup)."
                )

    def _temporal(
        self,
        right: Table,
        predicate: Expression,
        as_of: str,
        kind: JoinKind,
        fn: TemporalTableFunction,
    ) -> Table:
        condition = self._env.resolve(to_expression(predicate))
        as_of_type = self.row_type.field(as_of, "the temporal join's as_of").type
        # Processing time (PROCTIME): the right table's latest row, whatever its time column.
        right_time = fn.time_attribute if as_of_type.time_kind is TimeKind.ROWTIME else None
        if right_time is not None and right_time not in right.row_type:
            tables = ", ".join(sorted(right._plan.table_names()))
            raise ValidationError(
                f"An event-time temporal join needs a versioned table with a rowtime attribute "
                f"(a watermark); [{tables}] has none. Declare .watermark(...) on its schema, or "
                "join AS OF a PROCTIME() column."
            )
        node = TemporalJoin(
            self._plan, right._plan, kind, condition, as_of, right_time, fn.primary_key
        )
        return self._new(node)

    def with_hint(self, name: str, *tables: str | Table, **options: Any) -> Table:
        """Attach a join hint for the joins of this query that read ``tables`` (names, or
        Table objects that read one table); ``STATE_TTL`` takes a TTL per table name.

        >>> q = orders.join(products, col("product_id") == col("id"))
        >>> "hints=[[BROADCAST right:Products]]" in q.with_hint("BROADCAST", "Products").explain()
        True
        """
        upper = name.upper()
        if upper == "STATE_TTL":
            return self._state_ttl_hint(tables, options)
        if upper == "LOOKUP":
            return self._lookup_hint(tables, options)
        if upper not in JOIN_HINTS:
            raise ValidationError(
                f"Unknown hint {name!r}. Known hints: {[*JOIN_HINTS, 'STATE_TTL', 'LOOKUP']}."
            )
        if not tables:
            raise ValidationError(f"Hint {upper} needs the name of the table it applies to.")
        names = tuple(self._hinted_name(upper, t) for t in tables)
        read = self._plan.table_names()
        for t in names:
            if t not in read:
                raise ValidationError(
                    f"Hint {upper} names table {t!r}, but this query reads only "
                    f"[{', '.join(sorted(read))}]."
                )
        hint = Hint(upper, names, tuple(sorted((k, str(v)) for k, v in options.items())))
        return self._new(QueryHints(self._plan, (hint,)))

    def _state_ttl_hint(self, tables: tuple[Any, ...], options: dict[str, Any]) -> Table:
        """``with_hint("STATE_TTL", Orders="1d", Product="12h")``: state retention per input
        table of the joins that read it (Flink's STATE_TTL hint; ``0`` keeps state forever)."""
        if tables or not options:
            raise ValidationError(
                "STATE_TTL takes a TTL per table name as keyword arguments, e.g. "
                'with_hint("STATE_TTL", Orders="1d", Product="12h").'
            )
        read = self._plan.table_names()
        for table, ttl in options.items():
            if table not in read:
                raise ValidationError(
                    f"Hint STATE_TTL names table {table!r}, but this query reads only "
                    f"[{', '.join(sorted(read))}]."
                )
            parse_duration_ms(ttl, f"STATE_TTL of {table}")
        hint = Hint(
            "STATE_TTL",
            tuple(sorted(options)),
            tuple(sorted((k, str(v)) for k, v in options.items())),
        )
        return self._new(QueryHints(self._plan, (hint,)))

    def _lookup_hint(self, tables: tuple[Any, ...], options: dict[str, Any]) -> Table:
        """``with_hint("LOOKUP", **{"table": "Customers", "retry-predicate": "lookup_miss",
        ...})``: Flink's LOOKUP hint (FLIP-234, FLIP-462) for the lookup joins of the table;
        its options are checked now, with Flink's messages."""
        if tables:
            raise ValidationError(
                "LOOKUP takes its options as keyword arguments, the table among them: "
                'with_hint("LOOKUP", **{"table": "Customers", "shuffle": "true"}).'
            )
        opts = {str(k): str(v) for k, v in options.items()}
        table = parse_lookup_hint(opts).table
        read = self._plan.table_names()
        if table not in read:
            raise ValidationError(
                f"Hint LOOKUP names table {table!r}, but this query reads only "
                f"[{', '.join(sorted(read))}]."
            )
        hint = Hint("LOOKUP", (table,), tuple(sorted(opts.items())))
        return self._new(QueryHints(self._plan, (hint,)))

    @staticmethod
    def _hinted_name(hint: str, table: str | Table) -> str:
        if isinstance(table, str):
            return table
        if isinstance(table, Table):
            names = table._plan.table_names()
            if len(names) == 1:
                return next(iter(names))
            raise ValidationError(
                f"Hint {hint} got a Table that reads [{', '.join(sorted(names))}]; name the one "
                "table the hint applies to."
            )
        raise ValidationError(f"Hint {hint} needs table names, got {type(table).__name__}.")

    def _same_env(self, other: Table) -> Table:
        if not isinstance(other, Table):
            raise ValidationError(f"Expected a Table, got {type(other).__name__}.")
        if other._env is not self._env:
            raise ValidationError("Both tables must come from the same TableEnvironment.")
        return other

    # -- planning and running ------------------------------------------------------------------
    def optimized(self) -> OptimizedPlan:
        """The plan after the optimizer rules (what runs), with planner notes.

        >>> q = orders.join(products).where(col("product_id") == col("id"))
        >>> type(q.optimized().plan).__name__
        'Join'
        """
        return self._env.optimize(self._plan)

    def explain(self, physical: bool = False, *, sink: str | None = None) -> str:
        """The logical and optimized plans, Flink style; with ``physical=True`` also Spark's
        physical plan (needs the server). ``sink``: as an insert into that catalog table
        runs them (an upsert sink, a ``jdbc`` table with a primary key, takes no -U rows:
        ``changelogMode=[I,UA,D]`` where the upsert key is within its key).

        >>> print(products.where(col("price") > 10).explain())  # doctest: +ELLIPSIS
        == Abstract Syntax Tree ==
        LogicalFilter(condition=[(price > 10)])
        +- LogicalTableScan(table=[[default_catalog, default_database, Products]])
        <BLANKLINE>
        == Optimized Physical Plan ==
        Calc(select=[id, name, price], where=[(price > 10)])
        +- TableSourceScan(table=[[...Products]], fields=[id, name, price])
        """
        opt = self.optimized()
        streaming = self._env.streaming_options()
        if streaming is None:
            optimized = plan_explain.render(opt.plan, optimized=True)
        else:  # the exec nodes, with what streaming decides for each
            optimized = plan_stream(opt.plan, streaming, _upsert_keys(self._env, sink)).explain()
        parts = [
            "== Abstract Syntax Tree ==",
            plan_explain.render(self._plan, optimized=False),
            "",
            "== Optimized Physical Plan ==",
            optimized,
        ]
        if opt.notes:
            parts += ["", "== Planner Notes ==", *opt.notes]
        if physical:
            parts += ["", "== Spark Physical Plan ==", self.spark_physical_plan()]
        return "\n".join(parts)

    def spark_physical_plan(self) -> str:
        """Spark's physical plan for this table (needs the server).

        >>> print(products.spark_physical_plan())  # doctest: +SERVER +ELLIPSIS
        == Physical Plan ==
        ...FileScan json...
        """
        df: Any = self.to_spark()  # (a Connect DataFrame: the base class types lack the method)
        return str(df._explain_string(mode="simple"))

    def to_spark(self) -> DataFrame:
        """The Spark Connect DataFrame this table compiles to. In streaming mode it is a
        streaming DataFrame; a changelog carries each row's kind in a last column ``__kind``
        (0 = +I, 1 = -U, 2 = +U, 3 = -D).

        >>> products.select(col("name")).to_spark().columns  # doctest: +SERVER
        ['name']
        """
        return self._env.executor.to_spark(self.optimized().plan)

    def execute(self) -> TableResult:
        """Run the query; returns a :class:`TableResult` to collect, print or materialize.

        >>> products.where(col("id") == 1).execute().print()  # doctest: +SERVER
        +----+------+-------+
        | id | name | price |
        +----+------+-------+
        |  1 | pen  |   2.5 |
        +----+------+-------+
        1 row in set
        """
        return self._env.executor.execute(self.optimized().plan, self.row_type)

    def execute_insert(self, table_path: str, overwrite: bool = False) -> TableResult:
        """Write into a catalog table (its physical columns, by position): a filesystem
        table's files, a ``jdbc`` table (a PostgreSQL or SQLite table: upsert mode with a
        primary key, append mode without), a ``print`` table (the client prints each row,
        Flink's print format) or a ``blackhole`` table (the rows are discarded). In
        streaming mode it returns the running insert (run to the end when every input is
        bounded); print, blackhole and jdbc tables with a primary key take changelogs.

        >>> expensive = products.where(col("price") > 5)
        >>> expensive.execute_insert("Expensive").wait()  # doctest: +SERVER
        >>> products.order_by(col("id")).execute_insert("Printed").wait()  # doctest: +SERVER
        items> +I[1, pen, 2.5]
        items> +I[2, ink, 7.0]
        >>> products.execute_insert("Discarded").wait()  # doctest: +SERVER
        """
        sink = self._env.descriptor(table_path)
        physical = sink.table_schema.physical_row_type
        source = self.row_type
        check_sink_columns(table_path, source, physical)
        projected = self.select(
            *(
                Column(s.name).cast(p.type.plain()).alias(p.name)
                for s, p in zip(source, physical, strict=True)
            )
        )
        target = _sink_of(table_path, sink, physical, overwrite)
        return self._env.executor.insert(projected.optimized().plan, target, overwrite)


def _upsert_keys(env: TableContext, sink: str | None) -> tuple[str, ...] | None:
    """The key an insert into ``sink`` upserts by (a ``jdbc`` table's primary key), or None
    (a result, or a sink that takes the whole changelog)."""
    if sink is None:
        return None
    table = env.descriptor(sink)
    key = table.table_schema.primary_key
    return tuple(key) if isinstance(table.connector_options, JdbcOptions) and key else None


def _sink_of(name: str, table: TableDescriptor, row_type: RowType, overwrite: bool) -> Sink:
    """Where ``execute_insert`` writes, for a catalog table's connector."""
    opts = table.connector_options
    if isinstance(opts, PrintOptions | BlackholeOptions | JdbcOptions) and overwrite:
        raise ValidationError(
            f"INSERT OVERWRITE requires that the underlying DynamicTableSink of table {name!r} "
            f"implements the SupportsOverwrite interface: a {table.connector!r} table cannot "
            "be overwritten; insert with overwrite=False."
        )
    if isinstance(opts, PrintOptions):
        return PrintSink(name, row_type, opts.prefix, opts.standard_error)
    if isinstance(opts, BlackholeOptions):
        return BlackholeSink(name, row_type)
    if isinstance(opts, JdbcOptions):
        return JdbcSink(name, row_type, table.table_schema.primary_key, opts)
    return FileSink(name, table.path, table.format, row_type)


def check_sink_columns(table_path: str, query: RowType, sink: RowType) -> None:
    """Refuse an insert of ``query``'s columns into ``sink``'s physical columns (by position)
    when their number differs or a column's type has no implicit cast to the sink's (Flink's
    check and message, when the statement is planned); the allowed casts are inserted by
    ``execute_insert``.

    >>> from tableapi.types import INT, STRING
    >>> check_sink_columns("Out", RowType.of(("k", STRING)), RowType.of(("n", INT)))
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Column types of query result and sink for \
'default_catalog.default_database.Out' do not match.
    Cause: Incompatible types for sink column 'n' at position 1.
    <BLANKLINE>
    Query schema: [k: STRING]
    Sink schema:  [n: INT]
    <BLANKLINE>
    Cast the query's column to the sink's type, e.g. CAST(k AS INT), or change the sink \
column's type.
    """
    if len(query) == len(sink):
        bad = [
            (i, q, s)
            for i, (q, s) in enumerate(zip(query, sink, strict=True))
            if not implicit_cast(q.type, s.type)
        ]
        if not bad:
            return
        i, q, s = bad[0]
        cause = f"Incompatible types for sink column '{s.name}' at position {i + 1}."
        fix = (
            f"Cast the query's column to the sink's type, e.g. CAST({q.name} AS "
            f"{s.type.plain().with_nullable(True)}), or change the sink column's type."
        )
    else:
        cause = "Different number of columns."
        fix = (
            "Select the sink's physical columns, in its order (computed columns are not "
            "written), or name the columns written: INSERT INTO t (a, b) SELECT .."
        )
    path = qualified(table_path)

    def schema(row: RowType) -> str:
        return "[" + ", ".join(f"{f.name}: {f.type}" for f in row) + "]"

    raise ValidationError(
        f"Column types of query result and sink for '{path}' do not match.\nCause: {cause}"
        f"\n\nQuery schema: {schema(query)}\nSink schema:  {schema(sink)}\n\n{fix}"
    )


@attrs.frozen(eq=False)
class TemporalTableFunction:
    """A versioned view of a table (``create_temporal_table_function``): called with a time
    in ``join_lateral``, it gives the rows valid at that time, one per primary key."""

    table: Table
    time_attribute: str
    primary_key: tuple[str, ...]


def _column_name(e: Expression | str) -> str:
    if isinstance(e, str):
        return e
    if isinstance(e, Column):
        return e.name
    raise ValidationError(f"Expected a column, got {e}; pass col('name').")


def _rowtime_of(table: Table) -> str:
    rowtime = [f.name for f in table.row_type if f.type.time_kind is TimeKind.ROWTIME]
    return rowtime[0] if rowtime else ""


class GroupedTable:
    """The result of ``group_by``; call :meth:`select` with keys and aggregates.

    >>> by_currency = orders.group_by(col("currency"))
    >>> by_currency.select(col("currency"), col("order_id").count.alias("orders")).row_type
    RowType(currency STRING, orders BIGINT NOT NULL)
    """

    def __init__(self, table: Table, keys: tuple[Expression, ...]) -> None:
        self._table = table
        self._keys = keys

    def select(self, *fields: Field) -> Table:
        """One row per group: group keys (a key may be an expression with an alias) and
        aggregates; any other column is an error.

        >>> day = col("o_rowtime").date_format("yyyy-MM-dd").alias("day")
        >>> orders.group_by(day).select(col("day"), col("amount").sum.alias("total")).row_type
        RowType(day STRING, total INT)
        >>> orders.group_by(col("currency")).select(col("amount"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Column(s) ['amount'] in amount are neither grouped ...
        """
        t = self._table
        exprs = t._fields(fields)
        plan = t._plan
        # Group keys that are expressions are computed in a projection first.
        key_names = _names(self._keys, prefix="$g")
        computed = [
            (k, n) for k, n in zip(self._keys, key_names, strict=True) if not isinstance(k, Column)
        ]
        if computed:
            cols = [Column(n) for n in plan.row_type.names]
            plan = Project(
                plan,
                tuple(cols) + tuple(strip_alias(k) for k, _ in computed),
                plan.row_type.names + tuple(n for _, n in computed),
            )
        key_of = {strip_alias(k).key(): n for k, n in zip(self._keys, key_names, strict=True)}
        aggs: dict[tuple[Any, ...], tuple[str, Expression]] = {}

        def lift(e: Expression) -> Expression | None:
            if is_aggregate(e):
                name = aggs.setdefault(e.key(), (f"$agg{len(aggs)}", e))[0]
                return Column(name)
            if e.key() in key_of:
                return Column(key_of[e.key()])
            return None

        finals = [e.transform(lift) for e in exprs]
        for orig, final in zip(exprs, finals, strict=True):
            stray = final.column_names() - set(key_names) - {n for n, _ in aggs.values()}
            if stray:
                raise ValidationError(
                    f"Column(s) {sorted(stray)} in {orig} are neither grouped nor aggregated; "
                    f"add them to group_by() or wrap them in an aggregate such as .max. "
                    f"Group keys: [{', '.join(key_names)}]."
                )
        agg = Aggregate(plan, tuple(key_names), tuple(aggs.values()))
        out_names = _names(exprs)
        return t._new(Project(agg, tuple(strip_alias(f) for f in finals), out_names))


class GroupWindowedTable:
    """A table in group windows (:meth:`Table.window`); ``group_by`` the window's alias.

    >>> from tableapi.window import Tumble
    >>> w = Tumble.over(lit(1).hours).on(col("o_rowtime")).alias("w")
    >>> type(orders.window(w).group_by(col("w"))).__name__
    'WindowGroupedTable'
    """

    def __init__(self, table: Table, window: GroupWindow) -> None:
        self._table = table
        self._window = window

    def group_by(self, *fields: Field) -> WindowGroupedTable:
        """Group by the window's alias and, optionally, keys.

        >>> from tableapi.window import Tumble
        >>> w = Tumble.over(lit(1).hours).on(col("o_rowtime")).alias("w")
        >>> orders.window(w).group_by(col("currency"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: GroupBy must contain exactly one window alias: ...
        """
        exprs = self._table._fields(fields)
        alias = self._window.alias_name
        is_alias = [isinstance(e, Column) and e.name == alias for e in exprs]
        if sum(is_alias) != 1:
            raise ValidationError(
                "GroupBy must contain exactly one window alias: group by the window's alias "
                f"{alias!r} once, besides keys (group_by(col({alias!r}), ...)); got "
                f"[{', '.join(map(str, exprs))}]."
            )
        keys = tuple(e for e, a in zip(exprs, is_alias, strict=True) if not a)
        return WindowGroupedTable(self._table, self._window, keys)


class WindowGroupedTable:
    """A windowed table grouped by its window and keys; :meth:`select` the keys, the window's
    properties (``col("w").start``, ``.end``, ``.rowtime``, ``.proctime``) and aggregates.

    >>> from tableapi.window import Slide
    >>> w = Slide.over(lit(2).hours).every(lit(1).hours).on(col("o_rowtime")).alias("w")
    >>> orders.window(w).group_by(col("w")).select(
    ...     col("w").end.alias("until"), col("order_id").count.alias("n")).column_names
    ('until', 'n')
    """

    def __init__(self, table: Table, window: GroupWindow, keys: tuple[Expression, ...]) -> None:
        self._table = table
        self._window = window
        self._keys = keys

    def select(self, *fields: Field) -> Table:
        """One row per window and key, once the window ends: the window TVF of the group
        window's kind under the window aggregation (a Session partitioned by the keys).

        >>> from tableapi.window import Tumble
        >>> w = Tumble.over(lit(1).hours).on(col("o_rowtime")).alias("w")
        >>> print(orders.window(w).group_by(col("w")).select(
        ...     col("w").rowtime.alias("t"), col("amount").max.alias("m")).explain())
        ... # doctest: +ELLIPSIS
        == Abstract Syntax Tree ==
        ...TUMBLE(time_col=[o_rowtime], size=[1 h])...
        """
        t, w = self._table, self._window
        exprs = t._fields(fields)
        if w.time_field not in t.row_type:
            raise ValidationError(
                f"The group window is on {w.time_field!r}, which names no column; the table "
                f"has [{', '.join(t.row_type.names)}]."
            )
        kind = t.row_type.field(w.time_field).type.time_kind
        columns = {"start": WINDOW_START, "end": WINDOW_END}
        columns["rowtime" if kind is TimeKind.ROWTIME else "proctime"] = WINDOW_TIME
        used: set[str] = set()

        def replace(e: Expression) -> Expression | None:
            if not isinstance(e, WindowProperty):
                return None
            if e.window != w.alias_name:
                raise ValidationError(
                    f"{e} names no window; this table's group window is {w.alias_name!r}."
                )
            if e.name not in columns:
                fix = "rowtime" if e.name == "proctime" else "proctime"
                raise ValidationError(
                    f"{e}: the window on {w.time_field} is not a {e.name} window; its time "
                    f"attribute is col({w.alias_name!r}).{fix}."
                )
            used.add(e.name)
            return Column(columns[e.name])

        finals = [e.transform(replace) for e in exprs]
        finals = [
            f.alias(f"EXPR${i}") if isinstance(e, WindowProperty) else f
            for i, (e, f) in enumerate(zip(exprs, finals, strict=True))
        ]
        partition: tuple[str, ...] = ()
        if w.kind.value == "SESSION":
            plain = [strip_alias(k) for k in self._keys]
            if not all(isinstance(k, Column) for k in plain):
                raise ValidationError(
                    "A Session group window with group_by expressions is not supported yet; "
                    "group by columns (compute the expressions in a select() first)."
                )
            partition = tuple(k.name for k in plain)  # type: ignore[attr-defined]
        tvf = t._new(WindowTableFunction(t._plan, w.window(partition)))
        bounds = [Column(WINDOW_START), Column(WINDOW_END)]
        if used - {"start", "end"}:
            bounds.append(Column(WINDOW_TIME))
        return tvf.group_by(*bounds, *self._keys).select(*finals)


def _names(
    exprs: list[Expression] | tuple[Expression, ...], prefix: str = "EXPR$"
) -> tuple[str, ...]:
    """Output names: the alias or column name, else Flink's ``EXPR$<position>``."""
    return tuple(e.output_name or f"{prefix}{i}" for i, e in enumerate(exprs))


__all__ = [
    "JOIN_HINTS",
    "GroupWindowedTable",
    "GroupedTable",
    "Table",
    "WindowGroupedTable",
    "and_",
    "check_sink_columns",
]
