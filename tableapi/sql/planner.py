"""SQL queries to Table API programs: the syntax tree of :mod:`.parser` becomes the same
``Table`` calls a user of the fluent API would write (``from_path``, ``join``, ``where``,
``group_by(...).select(...)``, ``temporal_join``, ``join_lateral``, ``with_hint``...), so a
SQL query and its Table API twin build the same plan nodes, take one path into the
optimizer and explain alike.

Names are resolved here, Flink's way: identifiers are case-sensitive; ``t.c`` names column
``c`` of the FROM item aliased (or named) ``t``; an unqualified name must be unique among
the FROM items in scope (a correlated subquery also sees the enclosing query's). Two FROM
items with a column of the same name are joined with the later one's column renamed
internally (``id`` -> ``id0``, as Calcite names the second), and ``SELECT *`` shows both, as
Flink does (``id``, ``id0``). Every error names the span of SQL it concerns
(:class:`SqlValidationError`: ``From line 1, column 8 to line 1, column 10: ...``) and, for
an unknown name, the names in scope.

Example::

    >>> q = env.sql_query("SELECT name, price * 2 AS p2 FROM Products WHERE price > 5")
    >>> same = products.where(col("price") > 5).select(col("name"),
    ...                                                (col("price") * 2).alias("p2"))
    >>> q.explain() == same.explain()
    True
"""

from __future__ import annotations

import datetime as dt
import decimal
import difflib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import attrs

from tableapi import functions
from tableapi.catalog import ObjectIdentifier
from tableapi.errors import SqlParserError, SqlValidationError, ValidationError
from tableapi.expressions import (
    Call,
    Cast,
    Column,
    Expression,
    Literal,
    and_,
    call,
    coalesce,
    col,
    contains_aggregate,
    if_then_else,
    is_aggregate,
    lit,
    row,
    strip_alias,
)
from tableapi.plan.window_rank import WindowRank, windowed_input
from tableapi.plan.windows import Window, WindowKind, WindowTableFunction
from tableapi.sql import syntax as S
from tableapi.sql.parser import line_col
from tableapi.types import DataType, RowType, common_type

if TYPE_CHECKING:
    from tableapi.environment import TableEnvironment
    from tableapi.table import Table

#: Join hints a SQL query may give (Flink's and, as in the Table API, Spark's spellings).
_JOIN_HINTS = ("BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "MERGE", "SHUFFLE_REPLICATE_NL")
_HINTS = (*_JOIN_HINTS, "STATE_TTL", "LOOKUP", "OPTIONS")
_WINDOW_FUNCTIONS = ("TUMBLE", "HOP", "SESSION", "CUMULATE")
#: The legacy group window functions (``GROUP BY TUMBLE(ts, size)``), their parameters after
#: the time column, and their auxiliary functions' columns (``TUMBLE_START`` ...).
_GROUP_WINDOWS = {"TUMBLE": ("size",), "HOP": ("slide", "size"), "SESSION": ("gap",)}
_AUXILIARY = {"START": "window_start", "END": "window_end", "ROWTIME": "window_time"}
#: The window TVFs the product runs, with their parameters in positional order.
_WINDOW_TVFS = {
    "TUMBLE": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
    "HOP": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
    "CUMULATE": ("DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"),
    "SESSION": ("DATA", "TIMECOL", "GAP"),
}
_INTERVAL_FIELDS = {
    "DAY": "days",
    "HOUR": "hours",
    "MINUTE": "minutes",
    "SECOND": "seconds",
    "MILLISECOND": "milliseconds",
}
_UNIT_ORDER = ("DAY", "HOUR", "MINUTE", "SECOND")
_BINARY = {
    "=": "equals",
    "<>": "not_equals",
    "<": "less_than",
    "<=": "less_than_or_equal",
    ">": "greater_than",
    ">=": "greater_than_or_equal",
    "+": "plus",
    "-": "minus",
    "*": "times",
    "/": "divide",
    "%": "mod",
    "and": "and",
    "or": "or",
    "is_distinct": "is_distinct_from",
    "is_not_distinct": "is_not_distinct_from",
}


@attrs.frozen
class Relation:
    """One FROM item as SQL sees it: its qualifier (alias, or the table's name), its columns'
    SQL names and their names in the table being built (they differ after a rename), and
    the catalog table behind it (hints name it)."""

    name: str | None
    columns: tuple[str, ...]
    internal: tuple[str, ...]
    table: str | None = None

    def renamed(self, mapping: dict[str, str]) -> Relation:
        return attrs.evolve(self, internal=tuple(mapping.get(c, c) for c in self.internal))


@attrs.frozen
class Scope:
    """The relations a name may refer to; ``outer`` is the enclosing query's (correlation).
    ``free``: any unqualified name is a column (a DDL expression, checked by the schema)."""

    relations: tuple[Relation, ...] = ()
    outer: Scope | None = None
    free: bool = False

    def names(self) -> list[str]:
        return [f"{r.name}.{c}" if r.name else c for r in self.relations for c in r.columns]


@attrs.frozen
class Source:
    """A FROM item being built: the Table and the relations visible in it."""

    table: Table
    relations: tuple[Relation, ...]


class SqlPlanner:
    """Translates the syntax tree of one statement into Table API calls on ``env``."""

    def __init__(self, env: TableEnvironment | None, text: str) -> None:
        self.env = env  # None: a lone expression (a computed column's), no catalog
        self.text = text
        self._ctes: list[dict[str, Table]] = []
        # the GROUP BY's legacy group window being planned: (function, its arguments' keys)
        self._group_window: tuple[str, tuple[Any, ...]] | None = None
        # the column holding each planned ROW_NUMBER() OVER (...) call's value, by id
        self._over_column: dict[int, str] = {}

    @property
    def catalog(self) -> TableEnvironment:
        """The environment whose tables and functions a query reads."""
        if self.env is None:
            raise ValidationError(f"{self.text!r} is an expression: it reads no table.")
        return self.env

    # -- errors ---------------------------------------------------------------------------------
    def error(self, span: S.Span, message: str) -> SqlValidationError:
        line, column = line_col(self.text, span.start)
        end_line, end_column = line_col(self.text, max(span.start, span.end - 1))
        return SqlValidationError(
            f"SQL validation failed. From line {line}, column {column} to line {end_line}, "
            f"column {end_column}: {message}",
            line,
            column,
            end_line,
            end_column,
        )

    @contextmanager
    def at(self, span: S.Span) -> Iterator[None]:
        """Errors of the Table API inside become errors at ``span`` of the statement."""
        try:
            yield
        except (SqlValidationError, SqlParserError):
            raise
        except ValidationError as e:
            raise self.error(span, str(e)) from None

    def refuse(self, span: S.Span, what: str, advice: str = "") -> SqlValidationError:
        return self.error(
            span, f"{what} is not supported by this product.{' ' + advice if advice else ''}"
        )

    # -- queries --------------------------------------------------------------------------------
    def query(self, q: S.Query, outer: Scope | None = None) -> Table:
        """A query as a Table whose columns are the query's output columns."""
        self._ctes.append({})
        try:
            for name, columns, sub in q.with_:
                table = self.query(sub, outer)
                if columns:
                    table = self.rename_all(table, columns, sub.span)
                self._ctes[-1][name] = table
            if isinstance(q.body, S.Select):
                return self.select(q.body, outer, q)
            table = self.body(q.body, outer)
            return self.order_and_limit(table, q)
        finally:
            self._ctes.pop()

    def body(self, b: S.QueryBody, outer: Scope | None) -> Table:
        if isinstance(b, S.Query):
            return self.query(b, outer)
        if isinstance(b, S.Select):
            return self.select(b, outer, None)
        if isinstance(b, S.Values):
            return self.values(b)
        if b.op != "union":
            raise self.refuse(b.span, b.op.upper(), "UNION [ALL] is.")
        left, right = self.body(b.left, outer), self.body(b.right, outer)
        with self.at(b.span):
            return left.union_all(right) if b.all else left.union(right)

    def order_and_limit(self, table: Table, q: S.Query) -> Table:
        """ORDER BY output columns (by name or position) and LIMIT/OFFSET of a set
        operation or VALUES."""
        if q.order_by:
            out = Scope((Relation(None, table.column_names, table.column_names),))
            keys = []
            for item in q.order_by:
                key = self.ordinal(item.expr, table.column_names) or self.expr(item.expr, out)
                keys.append(self.direction(item, key))
            with self.at(q.span):
                table = table.order_by(*keys)
        return self.limit(table, q)

    def direction(self, item: S.OrderItem, key: Expression) -> Expression:
        if item.nulls is not None:
            raise self.refuse(
                item.span,
                f"NULLS {item.nulls}",
                "Rows sort NULLs first when ascending and last when descending.",
            )
        return key.desc if item.descending else key.asc

    def ordinal(self, e: S.Expr, names: tuple[str, ...]) -> Expression | None:
        if isinstance(e, S.Lit) and e.kind == "number" and e.text.isdigit():
            n = int(e.text)
            if not 1 <= n <= len(names):
                raise self.error(
                    e.span, f"Ordinal out of range: {n} (the query has {len(names)} columns)."
                )
            return col(names[n - 1])
        return None

    def limit(self, table: Table, q: S.Query) -> Table:
        fetch = self.count(q.limit) if q.limit is not None else None
        offset = self.count(q.offset) if q.offset is not None else 0
        if q.limit is None and q.offset is None:
            return table
        with self.at(q.span):
            return table.limit(fetch, offset) if fetch is not None else table.offset(offset)

    def count(self, e: S.Expr) -> int:
        if isinstance(e, S.Lit) and e.kind == "number" and e.text.isdigit():
            return int(e.text)
        raise self.error(e.span, "LIMIT, FETCH and OFFSET take a whole number of rows.")

    def values(self, v: S.Values) -> Table:
        """``VALUES (..), (..)``: a table of literal rows (columns EXPR$0, EXPR$1, ...)."""
        width = len(v.rows[0])
        rows: list[tuple[Any, ...]] = []
        types: list[Any] = [None] * width
        for r in v.rows:
            if len(r) != width:
                raise self.error(
                    v.span,
                    f"VALUES rows have {width} and {len(r)} values: "
                    "give every row the same number.",
                )
            values = []
            for i, item in enumerate(r):
                e = self.expr(item, Scope())
                if not isinstance(e, Literal):
                    raise self.error(item.span, "VALUES takes literal values here.")
                t = e.type if types[i] is None else common_type(types[i], e.type)
                if t is None:
                    raise self.error(
                        item.span, f"VALUES column {i} mixes {types[i]} and {e.type}: cast one."
                    )
                types[i] = t
                values.append(e.value)
            rows.append(tuple(values))
        names = [f"EXPR${i}" for i in range(width)]
        fields = list(zip(names, types, strict=True))
        with self.at(v.span):
            return self.catalog.from_elements(rows, RowType.of(*fields))

    def select(self, sel: S.Select, outer: Scope | None, q: S.Query | None) -> Table:
        """One SELECT block (with its query's ORDER BY and LIMIT, which may name input
        columns): FROM, WHERE, GROUP BY/HAVING, the SELECT list, DISTINCT, hints."""
        conjuncts = _conjuncts(sel.where) if sel.where is not None else []
        consumed: set[int] = set()
        if sel.from_ is None:
            with self.at(sel.span):
                dual = self.catalog.from_elements([(0,)], "ZERO INT")
            source = Source(dual, ())
        else:
            source = self.from_item(sel.from_, outer, conjuncts, consumed)
        scope = Scope(source.relations, outer)
        table = self.where(source, scope, [c for c in conjuncts if id(c) not in consumed], outer)
        items = self.expand(sel.items, source.relations)
        aggregating = (
            bool(sel.group_by)
            or sel.having is not None
            or any(_has_aggregate(e) for e, _, _ in items if not isinstance(e, Expression))
        )
        order = q.order_by if q is not None else ()
        overs = [e for e, _, _ in items if isinstance(e, S.Func) and e.over]
        if overs and not aggregating:
            table = self.window_rank(table, scope, overs)
        if aggregating:
            table, names, sort = self.aggregate(table, scope, sel, items, order)
        else:
            table, names, sort = self.project(table, scope, items, order)
        hidden = [n for n in sort if n.startswith("$order")]
        if sel.distinct:
            if hidden:
                raise self.error(
                    order[0].span,
                    "Expression in ORDER BY must be in the SELECT list of a SELECT DISTINCT.",
                )
            with self.at(sel.span):
                table = table.distinct()
        table = self.hints(table, sel.hints, source.relations)
        if order:
            keys = [self.direction(item, col(n)) for item, n in zip(order, sort, strict=True)]
            with self.at(q.span if q is not None else sel.span):
                table = table.order_by(*keys)
                if hidden:
                    table = table.select(*(col(n) for n in names))
        return self.limit(table, q) if q is not None else table

    def window_rank(self, table: Table, scope: Scope, overs: list[S.Func]) -> Table:
        """``ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, k ..] ORDER BY ..)``
        in a SELECT list over a window TVF's or a window aggregation's rows: a
        :class:`WindowRank` whose row number the SELECT item reads (an outer ``WHERE rn <= N``
        becomes its range, ``tableapi/rules/window_ranks.py``). Any other OVER is refused."""
        e = overs[0]
        refused = self.refuse(
            e.span,
            "OVER aggregation (... OVER (PARTITION BY ...))",
            "Window Top-N is: ROW_NUMBER() OVER (PARTITION BY window_start, window_end, ... "
            "ORDER BY ...) over a window TVF or a window aggregation, filtered by rn <= N.",
        )
        w = e.window
        if len(overs) > 1 or e.name.upper() != "ROW_NUMBER" or e.args or w is None:
            raise refused
        found = windowed_input(table._plan)
        partition = [
            self.expr(x, scope, aggregates=False, clause="PARTITION BY") for x in w.partition
        ]
        bounds = {found[1].get(getattr(p, "name", "")) for p in partition} if found else set()
        if not {"window_start", "window_end"} <= bounds:
            raise refused
        order = []
        for item in w.order:
            key = self.expr(item.expr, scope, aggregates=False, clause="ORDER BY")
            if not isinstance(key, Column):
                raise self.refuse(
                    item.span,
                    f"A window Top-N ordered by the expression {key}",
                    "Order by columns: compute it in a subquery first.",
                )
            if item.nulls is not None:
                raise self.refuse(item.span, f"NULLS {item.nulls} in a window Top-N's ORDER BY")
            order.append((key.name, not item.descending))
        for p in partition:
            if not isinstance(p, Column):
                raise self.refuse(
                    e.span, f"A window Top-N partitioned by the expression {p}", "Use columns."
                )
        with self.at(e.span):
            node = WindowRank(
                table._plan,
                tuple(p.name for p in partition if isinstance(p, Column)),
                tuple(order),
            )
        self._over_column[id(e)] = node.rank_name
        return table._new(node)

    # -- SELECT lists -----------------------------------------------------------------------
    def expand(
        self, items: tuple[S.SelectItem, ...], relations: tuple[Relation, ...]
    ) -> list[tuple[Any, str | None, S.Span]]:
        """The SELECT list with stars expanded: (expression or internal Column, alias, span).
        A star's columns come as already resolved :class:`Column` objects with their SQL
        names as aliases."""
        out: list[tuple[Any, str | None, S.Span]] = []
        for item in items:
            if not isinstance(item.expr, S.Star):
                out.append((item.expr, item.alias, item.span))
                continue
            qualifier = item.expr.qualifier
            rels = relations
            if qualifier:
                rels = tuple(r for r in relations if r.name == _last(qualifier))
                if not rels:
                    raise self.error(
                        item.span,
                        f"Unknown identifier '{'.'.join(qualifier)}'. "
                        f"Tables in scope: {_qualifiers(relations)}.",
                    )
            if not rels:
                raise self.error(item.span, "SELECT * needs a FROM clause.")
            for r in rels:
                for name, internal in zip(r.columns, r.internal, strict=True):
                    out.append((Column(internal), name, item.span))
        return out

    def project(
        self,
        table: Table,
        scope: Scope,
        items: list[tuple[Any, str | None, S.Span]],
        order: tuple[S.OrderItem, ...],
    ) -> tuple[Table, list[str], list[str]]:
        exprs = [self.item_expr(e, scope, aggregates=False) for e, _, _ in items]
        names = _unique_names([self.output_name(e, a, i) for i, (e, a, _) in enumerate(items)])
        stars = all(isinstance(e, Expression) for e, _, _ in items)
        sort, hidden = self.order_keys(order, exprs, names, scope, aggregates=False)
        if stars and not hidden and tuple(names) == table.column_names:
            return table, names, sort  # SELECT *: no projection
        fields = _aliased(exprs, names)
        span = items[0][2].to(items[-1][2])
        with self.at(span):
            return table.select(*fields, *hidden), names, sort

    def item_expr(self, e: Any, scope: Scope, aggregates: bool) -> Expression:
        if isinstance(e, Expression):  # a star's column
            return e
        return self.expr(e, scope, aggregates=aggregates)

    @staticmethod
    def output_name(e: Any, alias: str | None, position: int) -> str:
        if alias is not None:
            return alias
        if isinstance(e, S.Name):
            return e.parts[-1]
        return f"EXPR${position}"

    def order_key(
        self,
        i: int,
        item: S.OrderItem,
        exprs: list[Expression],
        names: list[str],
        scope: Scope,
        aggregates: bool,
    ) -> tuple[str | None, Expression]:
        """An ORDER BY key: the output column it is (by position, by alias or as a SELECT
        item's expression) and the key over the input."""
        by_position = self.ordinal(item.expr, tuple(names))
        if isinstance(by_position, Column):
            return by_position.name, exprs[names.index(by_position.name)]
        e = item.expr
        if isinstance(e, S.Name) and len(e.parts) == 1 and e.parts[0] in names:
            if not self._resolves(e, scope):  # an alias of the SELECT list
                return e.parts[0], exprs[names.index(e.parts[0])]
        key = self.expr(e, scope, aggregates=aggregates, clause="ORDER BY")
        for x, n in zip(exprs, names, strict=True):
            if strip_alias(x).key() == key.key():
                return n, key
        return None, key

    def order_keys(
        self,
        order: tuple[S.OrderItem, ...],
        exprs: list[Expression],
        names: list[str],
        scope: Scope,
        aggregates: bool,
    ) -> tuple[list[str], list[Expression]]:
        """Each ORDER BY key's output column, and the keys that are no output column as
        hidden columns ``$order<i>`` (the SELECT list computes them; a projection drops
        them after the sort)."""
        sort: list[str] = []
        hidden: list[Expression] = []
        for i, item in enumerate(order):
            name, key = self.order_key(i, item, exprs, names, scope, aggregates)
            if name is None:
                name = f"$order{i}"
                hidden.append(key.alias(name))
            sort.append(name)
        return sort, hidden

    def _resolves(self, name: S.Name, scope: Scope) -> bool:
        try:
            self.resolve(name, scope)
            return True
        except SqlValidationError:
            return False

    def aggregate(
        self,
        table: Table,
        scope: Scope,
        sel: S.Select,
        items: list[tuple[Any, str | None, S.Span]],
        order: tuple[S.OrderItem, ...],
    ) -> tuple[Table, list[str], list[str]]:
        """GROUP BY keys, the SELECT list and HAVING: ``group_by(...).select(...)`` (a
        global aggregate: ``select(...)``), HAVING a ``where`` over it."""
        for e, _, span in items:
            if isinstance(e, Expression):
                raise self.error(
                    span,
                    "SELECT * is not allowed with GROUP BY or aggregates: "
                    "list the group keys and the aggregates.",
                )
        if any(isinstance(g, S.GroupingSets) for g in sel.group_by):
            return self.grouping_sets(table, scope, sel, items, order)
        return self.grouped(table, scope, sel, items, order)

    def grouping_sets(
        self,
        table: Table,
        scope: Scope,
        sel: S.Select,
        items: list[tuple[Any, str | None, S.Span]],
        order: tuple[S.OrderItem, ...],
    ) -> tuple[Table, list[str], list[str]]:
        """``GROUP BY k, GROUPING SETS ((a, b), (a), ())`` (and ROLLUP, CUBE): the UNION ALL
        of one aggregation per set (the plain keys in each), a key outside a set read as a
        NULL of its type in that set's rows (not inside aggregate calls: ``SUM(a)`` still sums
        ``a``). Each set's aggregation is what its GROUP BY alone plans (a window aggregation
        when it groups by ``window_start`` and ``window_end``), so the rows and changelog are
        Flink's (one row per set and group; insert-only over windows)."""
        plain = tuple(g for g in sel.group_by if not isinstance(g, S.GroupingSets))
        combos: list[tuple[S.Expr, ...]] = [plain]
        for g in sel.group_by:
            if isinstance(g, S.GroupingSets):
                combos = [c + s for c in combos for s in g.sets]
        # each key planned once (the combos share the syntax nodes)
        key_of = {
            id(g): strip_alias(self.expr(g, scope, aggregates=False, clause="GROUP BY"))
            for c in combos
            for g in c
            if not _group_window_call(g)
        }
        planned = {e.key(): e for e in key_of.values()}
        result = None
        for combo in combos:
            present = {key_of[id(g)].key() for g in combo if id(g) in key_of}
            with self.at(sel.span):
                nulls: dict[tuple[Any, ...], Expression] = {
                    k: Cast(lit(None, "NULL"), e.type_in(table.row_type).with_nullable(True))
                    for k, e in planned.items()
                    if k not in present
                }
            one, names, sort = self.grouped(
                table, scope, attrs.evolve(sel, group_by=combo), items, order, nulls
            )
            result = one if result is None else result.union_all(one)
        assert result is not None
        return result, names, sort

    def grouped(
        self,
        table: Table,
        scope: Scope,
        sel: S.Select,
        items: list[tuple[Any, str | None, S.Span]],
        order: tuple[S.OrderItem, ...],
        nulls: dict[tuple[Any, ...], Expression] | None = None,
    ) -> tuple[Table, list[str], list[str]]:
        """One GROUP BY (its keys, perhaps a legacy group window); ``nulls``: the keys of
        the query's other grouping sets, NULL in this one's rows."""
        group = [g for g in sel.group_by if not isinstance(g, S.GroupingSets)]
        windows = [g for g in group if _group_window_call(g)]
        if len(windows) > 1:
            raise self.error(windows[1].span, "Only a single window group function may be used "
                             "in GROUP BY.")  # fmt: skip
        others = [g for g in group if not _group_window_call(g)]
        keys = [self.expr(g, scope, aggregates=False, clause="GROUP BY") for g in others]
        outer_window, self._group_window = self._group_window, None  # this block's own
        if windows:
            table, window_keys = self.group_window(table, scope, windows[0], keys, sel)
            keys = [*window_keys, *keys]
        try:
            return self._aggregate(table, scope, sel, items, order, keys, nulls or {})
        finally:
            self._group_window = outer_window

    def group_window(
        self, table: Table, scope: Scope, call: S.Expr, keys: list[Expression], sel: S.Select
    ) -> tuple[Table, list[Expression]]:
        """A legacy group window in GROUP BY (Flink's deprecated ``TUMBLE(ts, size)``,
        ``HOP(ts, slide, size)``, ``SESSION(ts, gap)``, planned by Flink as a
        GroupWindowAggregate): the same window TVF under the same window aggregation (a
        SESSION partitioned by the other keys), whose final rows are the same. Its
        auxiliary functions (``TUMBLE_START(ts, size)`` ...) become the window's columns."""
        assert isinstance(call, S.Func)
        function = call.name.upper()
        params = _GROUP_WINDOWS[function]
        if len(call.args) != 1 + len(params):
            raise self.error(
                call.span,
                f"The group window {function}(time_attr, {', '.join(params)}) takes "
                f"{1 + len(params)} arguments, got {len(call.args)}.",
            )
        time = self.expr(call.args[0], scope, clause="GROUP BY")
        if not isinstance(time, Column):
            raise self.error(
                call.args[0].span,
                f"The group window {function}'s first argument is a time attribute column, "
                f"not {time}.",
            )
        ms = []
        for arg in call.args[1:]:
            value = self.expr(arg, Scope(), clause=function)
            if not isinstance(value, Literal) or not isinstance(value.value, dt.timedelta):
                raise self.error(
                    arg.span,
                    f"The group window {function}'s {', '.join(params)} are INTERVAL "
                    "literals, e.g. INTERVAL '10' SECOND.",
                )
            ms.append(value.value // dt.timedelta(milliseconds=1))
        partition: tuple[str, ...] = ()
        if function == "SESSION":
            plain = [k for k in keys if isinstance(strip_alias(k), Column)]
            if len(plain) != len(keys):
                raise self.error(
                    call.span,
                    "A SESSION group window with GROUP BY expressions is not supported yet; "
                    "group by columns (compute the expressions in a subquery first).",
                )
            partition = tuple(strip_alias(k).name for k in plain)  # type: ignore[attr-defined]
        size, step = (ms[1], ms[0]) if function == "HOP" else (ms[0], None)
        with self.at(call.span):
            window = Window(WindowKind(function), time.name, size, step, 0, partition)
            table = table._new(WindowTableFunction(table._plan, window))
        self._group_window = (function, (time.key(), *ms))
        rowtime = any(
            isinstance(x, S.Func) and x.name.upper() == f"{function}_ROWTIME" for x in _walk(sel)
        )
        bounds = ["window_start", "window_end", *(["window_time"] if rowtime else [])]
        return table, [col(b) for b in bounds]

    def _aggregate(
        self,
        table: Table,
        scope: Scope,
        sel: S.Select,
        items: list[tuple[Any, str | None, S.Span]],
        order: tuple[S.OrderItem, ...],
        keys: list[Expression],
        nulls: dict[tuple[Any, ...], Expression],
    ) -> tuple[Table, list[str], list[str]]:
        exprs = [_nulled(self.expr(e, scope, aggregates=True), nulls) for e, _, _ in items]
        names = _unique_names([self.output_name(e, a, i) for i, (e, a, _) in enumerate(items)])
        fields = _aliased(exprs, names)
        sort, hidden = self.order_keys(order, exprs, names, scope, aggregates=True)
        having = None
        if sel.having is not None:
            having = _nulled(self.expr(sel.having, scope, aggregates=True, clause="HAVING"), nulls)
            over_output = _over_output(having, exprs, names)
            if over_output is None:
                hidden.append(having.alias("$having"))
                having = col("$having")
            else:
                having = over_output
        span = sel.span
        with self.at(span):
            grouped = table.group_by(*keys) if keys else None
            result = grouped.select(*fields, *hidden) if grouped else table.select(*fields, *hidden)
        if having is not None:
            assert sel.having is not None
            with self.at(sel.having.span):
                result = result.where(having)
            if "$having" in result.column_names:
                kept = [n for n in result.column_names if n != "$having"]
                result = result.select(*(col(n) for n in kept))
        return result, names, sort

    # -- hints --------------------------------------------------------------------------------
    def hints(
        self, table: Table, hints: tuple[S.HintCall, ...], rels: tuple[Relation, ...]
    ) -> Table:
        """``SELECT /*+ BROADCAST(t) */``, ``STATE_TTL('t' = '1d')``, ``LOOKUP('table' =
        't', ...)`` as ``with_hint``; table names may be the query's aliases."""
        for h in hints:
            if h.name not in _HINTS:
                raise self.error(
                    h.span,
                    f"Unknown hint {h.name}. Query hints: {[n for n in _HINTS if n != 'OPTIONS']}.",
                )
            with self.at(h.span):
                if h.name == "OPTIONS":
                    raise ValidationError(
                        "OPTIONS is a table hint: write it right after the table's name, "
                        "FROM Orders /*+ OPTIONS('k' = 'v') */."
                    )
                if h.name == "STATE_TTL":
                    if h.args or not h.options:
                        raise ValidationError(
                            "STATE_TTL takes 'table' = 'ttl' pairs: /*+ STATE_TTL('o' = '1d') */."
                        )
                    ttl = {self.hinted_table(k, rels, h): v for k, v in h.options}
                    table = table.with_hint("STATE_TTL", **ttl)
                elif h.name == "LOOKUP":
                    opts = dict(h.options)
                    if "table" in opts:
                        opts["table"] = self.hinted_table(opts["table"], rels, h)
                    table = table.with_hint("LOOKUP", **opts)
                else:
                    if h.options or not h.args:
                        raise ValidationError(f"{h.name} takes table names: /*+ {h.name}(t) */.")
                    names = [self.hinted_table(a, rels, h) for a in h.args]
                    table = table.with_hint(h.name, *names)
        return table

    def hinted_table(self, name: str, rels: tuple[Relation, ...], h: S.HintCall) -> str:
        """A hint's table: an alias of this query maps to its catalog table."""
        for r in rels:
            if r.name == name and r.table is not None:
                return r.table
        return name

    # -- FROM -----------------------------------------------------------------------------------
    def from_item(
        self,
        item: S.FromItem,
        outer: Scope | None,
        conjuncts: list[S.Expr],
        consumed: set[int],
    ) -> Source:
        if isinstance(item, S.TableRef):
            if item.as_of is not None:
                raise self.error(
                    item.span,
                    "Temporal table join only support apply FOR "
                    "SYSTEM_TIME AS OF on the right table of a JOIN.",
                )
            return self.table_ref(item)
        if isinstance(item, S.SubqueryRef):
            table = self.query(item.query)
            if item.column_aliases:
                table = self.rename_all(table, item.column_aliases, item.span)
            names = table.column_names
            return Source(table, (Relation(item.alias, names, names),))
        if isinstance(item, S.WindowRef):
            return self.window_tvf(item)
        if isinstance(item, S.LateralRef):
            raise self.error(
                item.span,
                "LATERAL TABLE(...) joins a FROM item before it: "
                "FROM t, LATERAL TABLE(f(t.ts)) or FROM t JOIN LATERAL TABLE(...) "
                "ON ...",
            )
        return self.join(item, outer, conjuncts, consumed)

    def window_tvf(self, ref: S.WindowRef) -> Source:
        """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))``, HOP (slide, size),
        CUMULATE (step, size) and SESSION (``TABLE t [PARTITION BY k | (k, ..)]``, gap),
        positional or named (``SIZE => ...``): the table's rows with their windows'
        columns."""
        params = _WINDOW_TVFS.get(ref.function)
        if params is None:
            raise self.error(
                ref.span,
                f"No table-valued function {ref.function}; the window TVFs are "
                f"{', '.join(_WINDOW_TVFS)}.",
            )
        args = self.tvf_args(ref, params)
        data, timecol = args["DATA"], args["TIMECOL"]
        if data.table is None:
            raise self.error(data.span, f"{ref.function}'s first argument is TABLE t.")
        if timecol.descriptor is None:
            raise self.error(timecol.span, f"{ref.function}'s time column is DESCRIPTOR(col).")
        if len(timecol.descriptor) != 1:
            raise self.error(timecol.span, "A window's DESCRIPTOR names one time column.")
        name = data.table
        source = self.table_ref(S.TableRef(name, None, (), None, (), data.span))
        if data.partition and ref.function != "SESSION":
            raise self.error(
                data.span, f"PARTITION BY partitions SESSION windows; {ref.function} takes none."
            )
        (rel,) = source.relations
        partition = []
        for k in data.partition:
            if k not in rel.columns:
                raise self.error(
                    data.span,
                    f"SESSION's PARTITION BY names no column {k}; the table has "
                    f"[{', '.join(rel.columns)}].",
                )
            partition.append(rel.internal[rel.columns.index(k)])
        ms = {p: self.interval_ms(args[p], ref.function) for p in params[2:] if p in args}
        step = ms.get("SLIDE", ms.get("STEP"))
        with self.at(ref.span):
            window = Window(
                WindowKind(ref.function),
                timecol.descriptor[0],
                ms.get("SIZE", ms.get("GAP", 0)),
                step,
                ms.get("OFFSET", 0),
                tuple(partition),
            )
            node = WindowTableFunction(source.table._plan, window)
        table = source.table._new(node)
        if ref.column_aliases:
            table = self.rename_all(table, ref.column_aliases, ref.span)
        names = table.column_names
        return Source(table, (Relation(ref.alias or name[-1], names, names),))

    def tvf_args(self, ref: S.WindowRef, params: tuple[str, ...]) -> dict[str, S.TvfArg]:
        """A TVF call's arguments by parameter name: positional ones in ``params`` order,
        then named ones (Flink's rule: once named, all named); OFFSET may be left out."""
        args: dict[str, S.TvfArg] = {}
        for i, a in enumerate(ref.args):
            if a.name is None:
                if args and any(x.name is not None for x in ref.args[:i]):
                    raise self.error(a.span, "A positional argument after a named one.")
                if i >= len(params):
                    raise self.error(
                        a.span,
                        f"{ref.function} takes at most {len(params)} arguments "
                        f"({', '.join(params)}).",
                    )
                args[params[i]] = a
            elif a.name not in params or a.name in args:
                raise self.error(
                    a.span,
                    f"{ref.function} has no parameter {a.name} (or it is given twice); "
                    f"its parameters are {', '.join(params)}.",
                )
            else:
                args[a.name] = a
        missing = [p for p in params if p != "OFFSET" and p not in args]
        if missing:
            raise self.error(
                ref.span, f"{ref.function}({', '.join(params)}) lacks {', '.join(missing)}."
            )
        return args

    def interval_ms(self, arg: S.TvfArg, function: str) -> int:
        """A window's size, slide, step, gap or offset: an INTERVAL literal, in ms."""
        e = None if arg.value is None else self.expr(arg.value, Scope(), clause=function)
        if not isinstance(e, Literal) or not isinstance(e.value, dt.timedelta):
            raise self.error(
                arg.span,
                f"{function}'s sizes and offset are INTERVAL literals, e.g. INTERVAL '10' SECOND.",
            )
        return e.value // dt.timedelta(milliseconds=1)

    def table_ref(self, ref: S.TableRef) -> Source:
        table = None
        if len(ref.name) == 1:
            for ctes in reversed(self._ctes):
                if ref.name[0] in ctes:
                    table = ctes[ref.name[0]]
                    break
        name = ref.name[-1]
        catalog_table = None
        if table is None:
            found = self.catalog.catalog.lookup(ref.name)
            if found is None:
                tables = self.catalog.list_tables()
                similar = [t for t in tables if t.lower() == name.lower()]
                similar = similar or difflib.get_close_matches(name, tables, n=1)
                hint = f" Did you mean '{similar[0]}'?" if similar else ""
                raise self.error(
                    ref.span,
                    f"Object '{'.'.join(ref.name)}' not found in {_current(self.catalog)}. "
                    f"Tables and views: {', '.join(tables) or '(none)'}.{hint}",
                )
            path = found.identifier.quoted()
            with self.at(ref.span):
                options = [o for h in ref.hints for o in self.table_hint(h, name)]
                if options:
                    table = self.catalog.from_path_with_options(path, dict(options))
                else:
                    table = self.catalog.from_path(path)
            if found.kind == "table":
                catalog_table = name
        elif ref.hints:
            raise self.error(
                ref.hints[0].span,
                f"OPTIONS hints apply to catalog tables; '{name}' is a WITH query.",
            )
        if ref.column_aliases:
            table = self.rename_all(table, ref.column_aliases, ref.span)
        names = table.column_names
        return Source(table, (Relation(ref.alias or name, names, names, catalog_table),))

    def table_hint(self, h: S.HintCall, table: str) -> tuple[tuple[str, str], ...]:
        if h.name != "OPTIONS":
            raise ValidationError(
                f"Hint {h.name} after table {table!r}: a table takes only OPTIONS('k' = 'v') "
                f"there; query hints go after SELECT: SELECT /*+ {h.name}(...) */ ..."
            )
        if h.args or not h.options:
            raise ValidationError("OPTIONS takes 'key' = 'value' pairs: OPTIONS('k' = 'v').")
        return h.options

    def identifier(self, parts: tuple[str, ...], span: S.Span) -> ObjectIdentifier:
        """A table's name completed with the current catalog and database (``T`` is
        ``default_catalog.default_database.T``); an unknown catalog or database is an error
        at ``span``."""
        with self.at(span):
            return self.catalog.catalog.qualify(parts)

    def rename_all(self, table: Table, names: tuple[str, ...], span: S.Span) -> Table:
        """``AS t(a, b)``: rename every column by position."""
        with self.at(span):
            if len(names) != len(table.column_names):
                raise ValidationError(
                    f"List of column aliases must have same degree as table; table has "
                    f"{len(table.column_names)} columns {list(table.column_names)}, whereas "
                    f"alias list has {len(names)} columns."
                )
            if tuple(names) == table.column_names:
                return table
            return table.alias(*names)

    def join(
        self, j: S.JoinRef, outer: Scope | None, conjuncts: list[S.Expr], consumed: set[int]
    ) -> Source:
        if j.natural or j.using:
            raise self.refuse(
                j.span,
                "NATURAL JOIN" if j.natural else "JOIN ... USING",
                "Write the condition: JOIN ... ON a.k = b.k.",
            )
        left = self.from_item(j.left, outer, conjuncts, consumed)
        if isinstance(j.right, S.LateralRef):
            return self.lateral(left, j, j.right, outer, conjuncts, consumed)
        if isinstance(j.right, S.TableRef) and j.right.as_of is not None:
            return self.temporal(left, j, j.right, outer)
        right = self.from_item(j.right, outer, conjuncts, consumed)
        left, right = self.disambiguate(left, right, rename_left=False)
        scope = Scope(left.relations + right.relations, outer)
        condition = None
        if j.on is not None and not _is_true(j.on):
            condition = self.expr(j.on, scope, clause="ON")
        elif j.on is not None and j.kind not in ("inner", "cross", "comma"):
            condition = lit(True)
        method = {
            "inner": left.table.join,
            "cross": left.table.join,
            "comma": left.table.join,
            "left": left.table.left_outer_join,
            "right": left.table.right_outer_join,
            "full": left.table.full_outer_join,
        }[j.kind]
        with self.at(j.span):
            joined = method(right.table, condition)
        return Source(joined, scope.relations)

    def temporal(self, left: Source, j: S.JoinRef, ref: S.TableRef, outer: Scope | None) -> Source:
        """``JOIN t FOR SYSTEM_TIME AS OF l.time ON ...``: ``temporal_join`` (a lookup join
        when ``t`` is a lookup table)."""
        if j.kind not in ("inner", "left"):
            raise self.error(
                j.span,
                "Temporal table join currently only support INNER JOIN "
                f"and LEFT JOIN, but was {j.kind.upper()} JOIN.",
            )
        if j.on is None:
            raise self.error(
                j.span,
                "A temporal table join needs an ON condition that "
                "equates the temporal table's key with the left side.",
            )
        right = self.table_ref(attrs.evolve(ref, as_of=None))
        left, right = self.disambiguate(left, right, rename_left=True)
        assert ref.as_of is not None
        as_of = self.expr(ref.as_of, Scope(left.relations, outer), clause="FOR SYSTEM_TIME AS OF")
        if not isinstance(as_of, Column):
            raise self.error(
                ref.as_of.span,
                "FOR SYSTEM_TIME AS OF takes a time attribute "
                "column of the left table, e.g. o.proctime.",
            )
        scope = Scope(left.relations + right.relations, outer)
        condition = self.expr(j.on, scope, clause="ON")
        with self.at(j.span):
            joined = left.table.temporal_join(right.table, condition, as_of=as_of, how=j.kind)
        return Source(joined, scope.relations)

    def lateral(
        self,
        left: Source,
        j: S.JoinRef,
        ref: S.LateralRef,
        outer: Scope | None,
        conjuncts: list[S.Expr],
        consumed: set[int],
    ) -> Source:
        """``LATERAL TABLE(Rates(o.ts))``: a temporal table function join (``join_lateral``).
        In ``FROM o, LATERAL TABLE(..)`` (or ``LEFT JOIN .. ON TRUE``) the WHERE terms on the
        function's columns are the join condition, as Flink plans it."""
        fn_name = ref.call.name
        fn = self.catalog.temporal_function(fn_name)
        if fn is None:
            raise self.error(
                ref.call.span,
                f"No temporal table function '{fn_name}'. "
                "Register one with env.create_temporary_function(name, table."
                "create_temporal_table_function(time, key)); registered: "
                f"{self.catalog.temporal_function_names()}.",
            )
        if len(ref.call.args) != 1:
            raise self.error(
                ref.call.span,
                f"{fn_name}(...) takes one argument: the left table's time attribute.",
            )
        if ref.column_aliases:
            raise self.refuse(ref.span, "A column alias list on LATERAL TABLE")
        names = fn.table.column_names
        rel = Relation(ref.alias or fn_name, names, names)
        probe = Source(fn.table, (rel,))
        left, probe = self.disambiguate(left, probe, rename_left=True)
        time = self.expr(ref.call.args[0], Scope(left.relations, outer), clause="LATERAL TABLE")
        if not isinstance(time, Column):
            raise self.error(
                ref.call.args[0].span,
                f"{fn_name}(...) takes a time attribute column of the left table.",
            )
        scope = Scope((*left.relations, rel), outer)
        terms: list[Expression] = []
        on_true = j.on is None or _is_true(j.on)
        if j.on is not None and not on_true:
            terms.append(self.expr(j.on, scope, clause="ON"))
        kind = j.kind
        if on_true and kind in ("comma", "inner", "cross", "left"):
            for c in conjuncts:  # WHERE terms on the function's columns join it
                if id(c) in consumed:
                    continue
                e = self._try_expr(c, scope)
                if e is not None and e.column_names() & set(names):
                    if kind == "left" and not _null_rejecting(e, set(names)):
                        continue
                    terms.append(e)
                    consumed.add(id(c))
            if kind == "left" and terms:
                kind = "inner"  # WHERE drops the padded rows anyway (Flink's plan too)
        if not terms:
            raise self.error(
                j.span,
                f"The temporal table function join with {fn_name} "
                "needs a condition that equates its primary key "
                f"{list(fn.primary_key)} with the left table (in ON, or in WHERE "
                "for FROM t, LATERAL TABLE(...)).",
            )
        predicate = and_(*terms)
        fn_call = call(fn_name, time)
        with self.at(j.span):
            if kind == "left":
                joined = left.table.left_outer_join_lateral(fn_call, predicate)
            else:
                joined = left.table.join_lateral(fn_call, predicate)
        return Source(joined, scope.relations)

    def _try_expr(self, e: S.Expr, scope: Scope) -> Expression | None:
        if _has_subquery(e):
            return None
        try:
            return self.expr(e, scope)
        except SqlValidationError:
            return None

    def disambiguate(self, left: Source, right: Source, rename_left: bool) -> tuple[Source, Source]:
        """Rename the columns one side shares with the other (``id`` -> ``id0``): the plan's
        columns are unique; SQL still finds them by their own names."""
        lnames, rnames = left.table.column_names, right.table.column_names
        shared = [n for n in rnames if n in lnames]
        if not shared:
            return left, right
        taken = set(lnames) | set(rnames)
        mapping: dict[str, str] = {}
        for n in shared:
            k = 0
            while f"{n}{k}" in taken:
                k += 1
            mapping[n] = f"{n}{k}"
            taken.add(mapping[n])
        side = left if rename_left else right
        renamed = side.table.rename_columns(*(col(n).alias(m) for n, m in mapping.items()))
        moved = Source(renamed, tuple(r.renamed(mapping) for r in side.relations))
        return (moved, right) if rename_left else (left, moved)

    # -- WHERE ----------------------------------------------------------------------------------
    def where(
        self, source: Source, scope: Scope, conjuncts: list[S.Expr], outer: Scope | None
    ) -> Table:
        """WHERE: plain terms (``IN (SELECT ..)`` among them) as ``where``, then ``[NOT]
        EXISTS (SELECT .. WHERE <correlated condition>)`` as a semi (anti) join."""
        table = source.table
        plain = [c for c in conjuncts if _exists_of(c) is None]
        if plain:
            terms = [self.expr(c, scope, clause="WHERE", in_ok=True) for c in plain]
            with self.at(plain[0].span.to(plain[-1].span)):
                table = table.where(and_(*terms))
        for c in conjuncts:
            found = _exists_of(c)
            if found is not None:
                table = self.exists(Source(table, source.relations), *found, outer)
        return table

    def exists(self, source: Source, ex: S.Exists, negated: bool, outer: Scope | None) -> Table:
        q = ex.query
        sub = q.body
        if (
            not isinstance(sub, S.Select)
            or q.with_
            or q.order_by
            or q.limit is not None
            or sub.group_by
            or sub.having is not None
            or sub.distinct
            or sub.from_ is None
            or any(_has_aggregate(i.expr) for i in sub.items if not isinstance(i.expr, S.Star))
        ):
            raise self.refuse(
                ex.span,
                "This EXISTS subquery",
                "EXISTS takes SELECT ... FROM ... [WHERE ...] without GROUP BY, DISTINCT or LIMIT.",
            )
        outer_scope = Scope(source.relations, outer)
        inner_conjuncts = _conjuncts(sub.where) if sub.where is not None else []
        consumed: set[int] = set()
        right = self.from_item(sub.from_, outer_scope, inner_conjuncts, consumed)
        left, right = self.disambiguate(source, right, rename_left=False)
        outer_scope = Scope(left.relations, outer)
        inner_scope = Scope(right.relations, outer_scope)
        inner_only: list[Expression] = []
        terms: list[Expression] = []
        for c in inner_conjuncts:
            if id(c) in consumed:
                continue
            if _has_subquery(c):
                inner_only.append(self.expr(c, Scope(right.relations), clause="WHERE", in_ok=True))
            else:
                terms.append(self.expr(c, inner_scope, clause="WHERE"))
        right_table = right.table
        if inner_only:
            with self.at(ex.span):
                right_table = right_table.where(and_(*inner_only))
        with self.at(ex.span):
            method = left.table.anti_join if negated else left.table.semi_join
            return method(right_table, and_(*terms) if terms else lit(True))

    # -- names and expressions ------------------------------------------------------------------
    def resolve(self, name: S.Name, scope: Scope) -> Expression:
        parts = name.parts
        if scope.free:
            if len(parts) != 1:
                raise self.error(
                    name.span,
                    f"Qualified column '{name}' in {self.text!r}: refer to columns by name only.",
                )
            return col(parts[0])
        if len(parts) > 2:  # catalog.db.T.column: T.column when T is in the current database
            here = tuple(_current(self.env).split(".")) if self.env else ()
            if parts[:-2] == here[4 - len(parts) :]:
                parts = parts[-2:]
        if len(parts) == 1:
            found = [
                (r, i) for r in scope.relations for i, c in enumerate(r.columns) if c == parts[0]
            ]
            if len(found) > 1:
                raise self.error(
                    name.span,
                    f"Column '{parts[0]}' is ambiguous: it is a column "
                    f"of {_qualifiers([r for r, _ in found])}. Qualify it, e.g. "
                    f"{found[0][0].name}.{parts[0]}.",
                )
            if found:
                r, i = found[0]
                return col(r.internal[i])
            if scope.outer is not None and self._resolves(name, scope.outer):
                return self.resolve(name, scope.outer)
            raise self.error(
                name.span,
                f"Column '{parts[0]}' not found in any table." + _in_scope(parts[0], scope),
            )
        if len(parts) == 2:
            rels = [r for r in scope.relations if r.name == parts[0]]
            if not rels:
                if scope.outer is not None and self._resolves(name, scope.outer):
                    return self.resolve(name, scope.outer)
                names = _qualifiers(_all_relations(scope))
                raise self.error(
                    name.span, f"Table '{parts[0]}' not found. Tables in scope: {names}."
                )
            r = rels[0]
            if parts[1] in r.columns:
                return col(r.internal[r.columns.index(parts[1])])
            raise self.error(
                name.span,
                f"Column '{parts[1]}' not found in table "
                f"'{parts[0]}'." + _in_scope(parts[1], Scope((r,))),
            )
        raise self.refuse(name.span, f"The nested field reference '{name}'")

    def expr(
        self,
        e: S.Expr,
        scope: Scope,
        aggregates: bool = False,
        clause: str = "",
        in_ok: bool = False,
    ) -> Expression:
        """An expression of the syntax tree as a Table API expression over ``scope``."""
        return _ExprBuilder(self, scope, aggregates, clause, in_ok).build(e)


class _ExprBuilder:
    """One expression's translation (its scope, and whether aggregates and IN subqueries
    are allowed where it stands)."""

    def __init__(
        self, planner: SqlPlanner, scope: Scope, aggregates: bool, clause: str, in_ok: bool
    ) -> None:
        self.p = planner
        self.scope = scope
        self.aggregates = aggregates
        self.clause = clause
        self.in_ok = in_ok

    def build(self, e: S.Expr) -> Expression:
        out = self._build(e)
        if not self.aggregates and contains_aggregate(out):
            where = f"in {self.clause}" if self.clause else "here"
            raise self.p.error(e.span, f"Aggregate functions are not allowed {where}: {out}.")
        return out

    def _build(self, e: S.Expr) -> Expression:
        p = self.p
        b = self._build
        if self.scope.free and isinstance(e, S.InQuery | S.Exists | S.ScalarQuery):
            raise p.error(e.span, f"Subqueries are not allowed in the expression {p.text!r}.")
        if isinstance(e, S.Name):
            return p.resolve(e, self.scope)
        if isinstance(e, S.Lit):
            return self.literal(e)
        if isinstance(e, S.IntervalLit):
            return self.interval(e)
        if isinstance(e, S.Binary):
            left, right = b(e.left), b(e.right)
            if e.op == "||":
                return call("concat", left, right)
            with p.at(e.span):
                return Call(_BINARY[e.op], (left, right))
        if isinstance(e, S.Unary):
            operand = b(e.operand)
            if e.op == "pos":
                return operand
            if e.op == "neg":
                if isinstance(operand, Literal) and isinstance(
                    operand.value, int | float | decimal.Decimal
                ):
                    if not isinstance(operand.value, bool):
                        return lit(-operand.value)
                return -operand
            return ~operand
        if isinstance(e, S.Func):
            return self.function(e)
        if isinstance(e, S.CastE):
            if e.try_:
                raise p.refuse(e.span, "TRY_CAST", "Use CAST.")
            operand = b(e.operand)
            with p.at(e.span):
                return operand.cast(e.type)
        if isinstance(e, S.CaseE):
            subject = b(e.operand) if e.operand is not None else None
            result: Expression = b(e.default) if e.default is not None else lit(None)
            for when, then in reversed(e.whens):
                cond = b(when) if subject is None else subject == b(when)
                result = if_then_else(cond, b(then), result)
            return result
        if isinstance(e, S.Between):
            operand, low, high = b(e.operand), b(e.low), b(e.high)
            return operand.not_between(low, high) if e.negated else operand.between(low, high)
        if isinstance(e, S.InList):
            operand = b(e.operand)
            test = operand.in_(*(b(i) for i in e.items))
            return ~test if e.negated else test
        if isinstance(e, S.InQuery):
            return self.in_query(e)
        if isinstance(e, S.Is):
            operand = b(e.operand)
            test = {
                "NULL": lambda: operand.is_null,
                "UNKNOWN": lambda: operand.is_null,
                "TRUE": lambda: coalesce(operand, lit(False)),
                "FALSE": lambda: coalesce(~operand, lit(False)),
            }[e.what]()
            if e.what in ("NULL", "UNKNOWN") and e.negated:
                return operand.is_not_null
            return ~test if e.negated else test
        if isinstance(e, S.Like):
            test = b(e.operand).like(b(e.pattern))
            return ~test if e.negated else test
        if isinstance(e, S.RowE):
            raise p.error(
                e.span, "A row of values (a, b) is supported on the left of IN (SELECT ...) only."
            )
        if isinstance(e, S.Exists):
            raise p.refuse(
                e.span,
                "EXISTS inside an expression",
                "Use [NOT] EXISTS (...) as a term of WHERE, ANDed with the others.",
            )
        if isinstance(e, S.ScalarQuery):
            raise p.refuse(e.span, "A scalar subquery", "Join the table instead.")
        if isinstance(e, S.Star):
            raise p.error(e.span, "* is allowed only in the SELECT list and in COUNT(*).")
        raise AssertionError(f"unknown syntax node {e!r}")

    def literal(self, e: S.Lit) -> Expression:
        p = self.p
        if e.kind == "number":
            return _number(e.text)
        if e.kind == "string":
            return lit(e.text)
        if e.kind == "boolean":
            return lit(e.text == "TRUE")
        if e.kind == "null":
            return lit(None)
        try:
            if e.kind == "date":
                return lit(dt.date.fromisoformat(e.text.strip()))
            if e.kind == "timestamp":
                return lit(dt.datetime.fromisoformat(e.text.strip()))
        except ValueError:
            raise p.error(
                e.span,
                f"Illegal {e.kind.upper()} literal '{e.text}': write "
                "DATE 'yyyy-MM-dd' or TIMESTAMP 'yyyy-MM-dd HH:mm:ss[.SSS]'.",
            ) from None
        raise p.refuse(e.span, f"A {e.kind.upper()} literal")

    def interval(self, e: S.IntervalLit) -> Expression:
        p = self.p
        units = [e.unit] if e.to_unit is None else _unit_range(e.unit, e.to_unit)
        if units is None or any(u not in _INTERVAL_FIELDS for u in units):
            raise p.refuse(
                e.span,
                f"An INTERVAL of {e.unit}" + (f" TO {e.to_unit}" if e.to_unit else ""),
                "Day-time intervals (DAY, HOUR, MINUTE, SECOND) are.",
            )
        text = e.text.strip()
        negative = e.negative
        if text.startswith("-"):
            negative, text = not negative, text[1:]
        values = re.split(r"[ :]", text) if len(units) > 1 else [text]
        if len(values) != len(units):
            raise p.error(
                e.span,
                f"Illegal interval literal '{e.text}' for "
                f"{' TO '.join(dict.fromkeys((e.unit, e.to_unit or e.unit)))}.",
            )
        delta = dt.timedelta()
        for unit, value in zip(units, values, strict=True):
            try:
                amount = float(value)
            except ValueError:
                raise p.error(
                    e.span, f"Illegal interval literal '{e.text}': '{value}' is not a number."
                ) from None
            delta += dt.timedelta(**{_INTERVAL_FIELDS[unit]: amount})
        return lit(-delta if negative else delta)

    def function(self, e: S.Func) -> Expression:
        p = self.p
        name = e.name.upper()
        if e.over and id(e) in p._over_column:
            return Column(p._over_column[id(e)])  # a window Top-N's row number
        if e.over:
            raise p.refuse(e.span, "OVER aggregation (... OVER (PARTITION BY ...))")
        if name in _WINDOW_FUNCTIONS or name.split("_")[0] in _WINDOW_FUNCTIONS:
            return self.auxiliary(e, name)
        env = self.p.env
        registered = env.list_user_defined_functions() if env is not None else []
        if functions.unsupported_builtin(name) and name.lower() not in registered:
            # before its arguments: TIMESTAMPDIFF(MINUTE, ..)'s unit is no column
            raise p.error(e.span, str(functions.unknown_function(e.name)))
        if e.star:
            if name != "COUNT":
                raise p.error(e.span, f"{name}(*) is not a function: COUNT(*) is.")
            self._aggregate_allowed(e)
            return Call("count", ())
        args = [self._build(a) for a in e.args]
        if functions.is_function(name) and functions.lookup(name).aggregate:
            self._aggregate_allowed(e)
            for a, arg in zip(args, e.args, strict=True):
                if contains_aggregate(a):
                    raise p.error(
                        arg.span, f"An aggregate inside an aggregate: {e.name}(...) contains {a}."
                    )
            with p.at(e.span):
                out = call(name, *args)
                return out.distinct if e.distinct else out
        if e.distinct:
            raise p.error(
                e.span, f"DISTINCT is allowed in aggregate functions only; {name} is not one."
            )
        if env is not None and env.temporal_function(e.name) is not None:
            raise p.error(
                e.span,
                f"{e.name} is a temporal table function: join it with "
                f"LATERAL TABLE({e.name}(t.time)).",
            )
        with p.at(e.span):
            out = call(e.name, *args)
            return env.resolve(out) if env is not None else out

    def auxiliary(self, e: S.Func, name: str) -> Expression:
        """``TUMBLE_START(ts, size)`` and the other auxiliary functions of the GROUP BY's
        legacy group window: its column (``window_start``, ``window_end``, ``window_time``),
        when its function and arguments are the GROUP BY's window's (Flink's rule)."""
        p = self.p
        function, _, part = name.partition("_")
        if function not in _GROUP_WINDOWS or not part:
            raise p.error(
                e.span,
                f"The group window function {name} belongs in GROUP BY (GROUP BY k, "
                f"TUMBLE(ts, INTERVAL '10' SECOND)); {function}_START, {function}_END and "
                f"{function}_ROWTIME in the SELECT list give its bounds."
                if not part
                else f"No function {name}; the group windows' are TUMBLE_, HOP_ and SESSION_"
                "START, END and ROWTIME.",
            )
        if part == "PROCTIME":
            raise p.refuse(e.span, f"{name} (processing-time group windows)")
        if part not in _AUXILIARY:
            raise p.error(
                e.span,
                f"No function {name}; {function}'s auxiliary functions are "
                f"{', '.join(f'{function}_{x}' for x in _AUXILIARY)}.",
            )
        window = p._group_window
        args = [self._build(a) for a in e.args]
        keys = tuple(
            a.key() if not isinstance(a, Literal) or not isinstance(a.value, dt.timedelta)
            else (a.value // dt.timedelta(milliseconds=1)) for a in args
        )  # fmt: skip
        if window is None or window[0] != function or window[1] != keys:
            raise p.error(
                e.span,
                f"Call to auxiliary group function '{name}' must have matching call to group "
                f"function '${function}' in GROUP BY clause.",
            )
        return col(_AUXILIARY[part])

    def _aggregate_allowed(self, e: S.Func) -> None:
        if not self.aggregates:
            where = f"in {self.clause}" if self.clause else "here"
            raise self.p.error(
                e.span, f"Aggregate functions are not allowed {where}: {e.name.upper()}(...)."
            )

    def in_query(self, e: S.InQuery) -> Expression:
        p = self.p
        if not self.in_ok:
            raise p.refuse(
                e.span,
                "IN (SELECT ...) here",
                "IN with a subquery is a term of WHERE, ANDed with the others.",
            )
        try:
            sub = p.query(e.query)
        except SqlValidationError as err:
            if self.scope.relations and "not found" in str(err):
                raise p.refuse(
                    e.query.span,
                    "A correlated IN subquery (it names a column of the enclosing query)",
                    "Write it as EXISTS (SELECT ... WHERE inner.col = outer.col).",
                ) from err
            raise
        if isinstance(e.operand, S.RowE):
            probe = row(*(self._build(i) for i in e.operand.items))
        else:
            probe = self._build(e.operand)
        with p.at(e.span):
            test = probe.in_(sub)
        return ~test if e.negated else test


# -- helpers ---------------------------------------------------------------------------------


def _conjuncts(e: S.Expr) -> list[S.Expr]:
    if isinstance(e, S.Binary) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _exists_of(e: S.Expr) -> tuple[S.Exists, bool] | None:
    if isinstance(e, S.Exists):
        return e, e.negated
    if isinstance(e, S.Unary) and e.op == "not" and isinstance(e.operand, S.Exists):
        return e.operand, not e.operand.negated
    return None


def _walk(e: Any) -> Iterator[Any]:
    yield e
    if attrs.has(type(e)):
        for f in attrs.fields(type(e)):
            v = getattr(e, f.name)
            if isinstance(v, tuple):
                for x in v:
                    if isinstance(x, tuple):
                        for y in x:
                            yield from _walk(y)
                    else:
                        yield from _walk(x)
            elif attrs.has(type(v)) and not isinstance(v, S.Span | S.Query):
                yield from _walk(v)


def _nulled(e: Expression, nulls: dict[tuple[Any, ...], Expression]) -> Expression:
    """``e`` with each key of ``nulls`` (outside aggregate calls) replaced by its NULL."""
    if not nulls or is_aggregate(e):
        return e
    if e.key() in nulls:
        return nulls[e.key()]
    return e.with_children(tuple(_nulled(c, nulls) for c in e.children()))


def _group_window_call(e: S.Expr) -> bool:
    """Is ``e`` a legacy group window (``TUMBLE(ts, INTERVAL ..)``) in a GROUP BY?"""
    return isinstance(e, S.Func) and e.name.upper() in _GROUP_WINDOWS and not e.over


def _has_aggregate(e: S.Expr) -> bool:
    for x in _walk(e):
        if isinstance(x, S.Func) and not x.over:
            if x.star or (functions.is_function(x.name) and functions.lookup(x.name).aggregate):
                return True
    return False


def _has_subquery(e: S.Expr) -> bool:
    return any(isinstance(x, S.InQuery | S.Exists | S.ScalarQuery) for x in _walk(e))


def _is_true(e: S.Expr) -> bool:
    return isinstance(e, S.Lit) and e.kind == "boolean" and e.text == "TRUE"


def _null_rejecting(e: Expression, names: set[str]) -> bool:
    """A comparison of one of ``names``: false on a padded (NULL) row."""
    return (
        isinstance(e, Call)
        and e.name
        in (
            "equals",
            "not_equals",
            "less_than",
            "less_than_or_equal",
            "greater_than",
            "greater_than_or_equal",
        )
        and bool(e.column_names() & names)
    )


def _number(text: str) -> Expression:
    """A numeric literal as Flink types it: ``12`` an INT (BIGINT when larger), ``1.5E3`` a
    DOUBLE, ``0.1`` a DECIMAL of the digits as written (Calcite counts the leading zero:
    DECIMAL(2, 1), where the Table API's ``lit(Decimal("0.1"))`` is DECIMAL(1, 1)).

    >>> [str(_number(t).type).removesuffix(" NOT NULL") for t in ("12", "0.1", "12.30", ".5")]
    ['INT', 'DECIMAL(2, 1)', 'DECIMAL(4, 2)', 'DECIMAL(1, 1)']
    >>> str(_number("1.5E3").type)
    'DOUBLE NOT NULL'
    """
    if re.fullmatch(r"\d+", text):
        return lit(int(text))
    if "e" in text.lower():
        return lit(float(text))
    value = decimal.Decimal(text)
    scale = len(text) - text.index(".") - 1 if "." in text else 0
    precision = max(sum(c.isdigit() for c in text), scale, 1)
    return Literal(value, DataType("DECIMAL", (precision, scale), False))


def _unit_range(first: str, last: str) -> list[str] | None:
    if first not in _UNIT_ORDER or last not in _UNIT_ORDER:
        return None
    i, j = _UNIT_ORDER.index(first), _UNIT_ORDER.index(last)
    return list(_UNIT_ORDER[i : j + 1]) if i < j else None


def _unique_names(names: list[str]) -> list[str]:
    """Calcite's way: a repeated name gets the first free suffix 0, 1, ... (``id``, ``id0``)."""
    out: list[str] = []
    taken = set(names)
    seen: set[str] = set()
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
            continue
        k = 0
        while f"{n}{k}" in taken or f"{n}{k}" in seen:
            k += 1
        seen.add(f"{n}{k}")
        out.append(f"{n}{k}")
    return out


def _aliased(exprs: list[Expression], names: list[str]) -> list[Expression]:
    """Each expression named: an alias only where its own name differs (as a user writes)."""
    out = []
    for i, (e, n) in enumerate(zip(exprs, names, strict=True)):
        own = e.output_name or f"EXPR${i}"
        out.append(e if own == n else strip_alias(e).alias(n))
    return out


def _over_output(
    having: Expression, exprs: list[Expression], names: list[str]
) -> Expression | None:
    """HAVING over the aggregation's output columns (its aggregates and keys replaced by the
    SELECT items that compute them), or None when it needs something not selected."""
    by_key = {strip_alias(e).key(): n for e, n in zip(exprs, names, strict=True)}

    def swap(x: Expression) -> Expression | None:
        name = by_key.get(x.key())
        return Column(name) if name is not None else None

    out = _transform_top_down(having, swap)
    if contains_aggregate(out) or not out.column_names() <= set(names):
        return None
    return out


def _transform_top_down(e: Expression, fn: Callable[[Expression], Expression | None]) -> Expression:
    replaced = fn(e)
    if replaced is not None:
        return replaced
    children = tuple(_transform_top_down(c, fn) for c in e.children())
    return e.with_children(children) if children else e


def _qualifiers(rels: Any) -> list[str]:
    return list(dict.fromkeys(r.name for r in rels if r.name))


def _all_relations(scope: Scope) -> list[Relation]:
    out: list[Relation] = []
    s: Scope | None = scope
    while s is not None:
        out.extend(s.relations)
        s = s.outer
    return out


def _in_scope(name: str, scope: Scope) -> str:
    names = scope.names()
    shown = names if len(names) <= 30 else [*names[:30], "..."]
    text = f" Columns in scope: [{', '.join(shown)}]."
    columns = [c for r in _all_relations(scope) for c in r.columns]
    same = [c for c in columns if c.lower() == name.lower()]
    close = same or difflib.get_close_matches(name, columns, n=1, cutoff=0.6)
    if close:
        text += f" Did you mean '{close[0]}'?"
    return text


def _last(parts: tuple[str, ...]) -> str:
    return parts[-1]


def _current(env: TableEnvironment) -> str:
    """The current catalog and database, ``catalog.database``."""
    return f"{env.get_current_catalog()}.{env.get_current_database()}"
