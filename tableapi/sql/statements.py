"""SQL statements run against a ``TableEnvironment``: what ``execute_sql``, ``sql_query``
and statement sets do with a parsed statement.

DDL becomes the Table API's catalog calls (``CREATE TABLE`` builds a ``TableDescriptor``, so
a table's options are checked by the same rules, with the same messages); a query becomes a
``Table`` (:mod:`.planner`); ``INSERT INTO`` is that table's ``execute_insert``. A statement is
planned whole before anything runs: a statement set whose third INSERT is invalid runs none.

Example::

    >>> env = TableEnvironment.create()
    >>> env.execute_sql('''
    ...     CREATE TABLE Orders (
    ...       id BIGINT, amount INT, ts TIMESTAMP(3),
    ...       WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
    ...     ) WITH ('connector' = 'filesystem', 'path' = '/data/orders', 'format' = 'json')
    ... ''').print()
    OK
    >>> env.execute_sql("SHOW TABLES").print()
    +------------+
    | table name |
    +------------+
    |     Orders |
    +------------+
    1 row in set
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tableapi.catalog import CatalogTable, CatalogView, Kind, ObjectIdentifier
from tableapi.descriptor import TableDescriptor
from tableapi.errors import SqlValidationError, ValidationError
from tableapi.execution.printing import sql_client_tableau
from tableapi.expressions import Call, Cast, Column, Expression, col, lit
from tableapi.functions import FUNCTIONS
from tableapi.result import CollectedRows, Row, RowKind, StreamingTableResult, TableResult
from tableapi.schema import ComputedColumn, Schema
from tableapi.sql import syntax as S
from tableapi.sql.parser import parse_query, parse_statement
from tableapi.sql.planner import Relation, Scope, SqlPlanner
from tableapi.table import check_sink_columns
from tableapi.types import DataType, Field, RowType, TimeKind

if TYPE_CHECKING:
    from tableapi.environment import TableEnvironment
    from tableapi.table import Table

_STRING = DataType("STRING")
# Built-ins of the expression trees that SQL writes as syntax, not as function calls.
_NOT_SQL_FUNCTIONS = frozenset(
    {"asc", "desc", "between", "not_between", "in", "is_null", "is_not_null", "negate", "not"}
)


class LocalTableResult(TableResult):
    """The result of a statement that runs no query (DDL, SHOW, DESCRIBE, EXPLAIN, SET):
    rows computed on the client.

    >>> result = LocalTableResult(RowType.of(("result", _STRING)), [("OK",)])
    >>> result.collect()
    [+I[OK]]
    """

    def __init__(self, row_type: RowType, rows: Sequence[tuple[Any, ...]], raw: bool = False):
        super().__init__(None, row_type)
        self._rows = [tuple(r) for r in rows]
        self._raw = raw  # EXPLAIN: print the text as it is, as Flink does

    def collect(self) -> CollectedRows:
        return CollectedRows(Row.of(RowKind.INSERT, self.row_type.names, r) for r in self._rows)

    def print(self) -> None:
        """As Flink prints it: ``OK`` for a DDL statement, the text of an EXPLAIN, a tableau
        as wide as its values for SHOW and DESCRIBE."""
        if self._raw or self._rows == [("OK",)]:
            for r in self._rows:
                print(r[0])
            return
        rows = [(RowKind.INSERT, r) for r in self._rows]
        print(sql_client_tableau(self.row_type, rows, kinds=False, by_content=True))

    def materialize(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self._rows, columns=list(self.row_type.names))

    to_pandas = materialize


def _ok() -> LocalTableResult:
    return LocalTableResult(RowType.of(("result", _STRING)), [("OK",)])


class StatementSetResult(TableResult):
    """The result of a statement set: its inserts, run together; ``wait()`` waits for all,
    ``cancel()`` stops all."""

    def __init__(self, results: Sequence[TableResult], sinks: Sequence[ObjectIdentifier]) -> None:
        fields = tuple(Field(str(s), DataType("BIGINT")) for s in sinks)
        super().__init__(None, RowType(fields))
        self.results = list(results)

    def wait(self, timeout_s: float | None = None) -> None:
        for r in self.results:
            r.wait(timeout_s)

    def cancel(self) -> None:
        for r in self.results:
            r.cancel()


def execute_sql(env: TableEnvironment, text: str) -> TableResult:
    """Run one statement (see ``TableEnvironment.execute_sql``)."""
    stmt = parse_statement(text)
    return _Runner(env, text).run(stmt)


def sql_query(env: TableEnvironment, text: str) -> Table:
    """A query as a Table (see ``TableEnvironment.sql_query``)."""
    query = parse_query(text)
    return SqlPlanner(env, text).query(query)


class _Runner:
    def __init__(self, env: TableEnvironment, text: str) -> None:
        self.env = env
        self.text = text
        self.planner = SqlPlanner(env, text)

    def error(self, span: S.Span, message: str) -> SqlValidationError:
        return self.planner.error(span, message)

    def identifier(self, parts: tuple[str, ...], span: S.Span) -> ObjectIdentifier:
        return self.planner.identifier(parts, span)

    def run(self, stmt: S.Statement) -> TableResult:
        env = self.env
        if isinstance(stmt, S.QueryStatement):
            table = self.planner.query(stmt.query)
            with self.planner.at(stmt.span):
                table.explain()  # what the optimizer refuses, refused at the statement
            result = table.execute()
            result.printer = _print_as_sql_client
            return result
        if isinstance(stmt, S.Insert):
            return self.insert(stmt)()
        if isinstance(stmt, S.StatementSet):
            runs = [self.insert(i) for i in stmt.inserts]  # all planned before any runs
            sinks = [self.identifier(i.table, i.span) for i in stmt.inserts]
            return StatementSetResult([run() for run in runs], sinks)
        if isinstance(stmt, S.CreateTable):
            return self.create_table(stmt)
        if isinstance(stmt, S.CreateView):
            return self.create_view(stmt)
        if isinstance(stmt, S.Drop):
            return self.drop(stmt)
        if isinstance(stmt, S.Show):
            return self.show(stmt)
        if isinstance(stmt, S.Describe):
            return self.describe(stmt)
        if isinstance(stmt, S.Explain):
            return LocalTableResult(
                RowType.of(("result", _STRING)), [(self.explain(stmt.statement),)], raw=True
            )
        if isinstance(stmt, S.SetOption):
            if stmt.key is None:
                rows = sorted(env.config.to_dict().items())
                return LocalTableResult(RowType.of(("key", _STRING), ("value", _STRING)), rows)
            with self.planner.at(stmt.span):
                env.config.set(stmt.key, stmt.value)
            return _ok()
        if isinstance(stmt, S.Use):
            with self.planner.at(stmt.span):
                self.use(stmt)
            return _ok()
        if isinstance(stmt, S.ResetOption):
            env.config.reset(stmt.key)
            return _ok()
        raise AssertionError(f"unknown statement {stmt!r}")

    # -- INSERT -----------------------------------------------------------------------------
    def insert(self, stmt: S.Insert) -> Any:
        """Plan an INSERT; returns the call that runs it (``execute_insert``)."""
        identifier = self.identifier(stmt.table, stmt.span)
        found = self.env.catalog.lookup(identifier.parts)
        if found is None:
            raise self.error(
                stmt.span,
                f"Table {identifier.quoted()} does not exist. Tables: "
                f"{', '.join(self.env.list_tables()) or '(none)'}.",
            )
        name = identifier.name
        if found.kind == "view":
            raise self.error(
                stmt.span, f"'{name}' is a view: INSERT INTO a table with a connector."
            )
        table = self.planner.query(stmt.query)
        if stmt.columns:
            table = self.target_columns(table, name, stmt)
        physical = self.env.descriptor(name).table_schema.physical_row_type
        with self.planner.at(stmt.span):
            check_sink_columns(name, table.row_type, physical)
            table.explain()  # the plan is valid in this mode (streaming checks included)

        def run() -> TableResult:
            with self.planner.at(stmt.span):
                return table.execute_insert(name, overwrite=stmt.overwrite)

        return run

    def target_columns(self, table: Table, name: str, stmt: S.Insert) -> Table:
        """``INSERT INTO t (b, a) SELECT ..``: the query's columns in the sink's order, NULL
        for the sink's columns not listed."""
        physical = self.env.descriptor(name).table_schema.physical_row_type
        with self.planner.at(stmt.span):
            unknown = [c for c in stmt.columns if c not in physical]
            if unknown:
                raise ValidationError(
                    f"Unknown target column(s) {unknown} of '{name}'; its physical columns are "
                    f"[{', '.join(physical.names)}]."
                )
            if len(stmt.columns) != len(table.column_names):
                raise ValidationError(
                    f"The target column list has {len(stmt.columns)} columns and the query "
                    f"{len(table.column_names)} [{', '.join(table.column_names)}]."
                )
            source = dict(zip(stmt.columns, table.column_names, strict=True))
            fields = [
                col(source[f.name]).alias(f.name)
                if f.name in source
                else lit(None).cast(f.type.plain()).alias(f.name)
                for f in physical
            ]
            return table.select(*fields)

    # -- DDL --------------------------------------------------------------------------------
    def exists(
        self, identifier: ObjectIdentifier, stmt: S.CreateTable | S.CreateView, what: str
    ) -> bool:
        """Whether a temporary (or a permanent) table or view of that identifier exists
        already, as the statement would create (with IF NOT EXISTS: nothing to do; without:
        Flink's error). A temporary object may shadow a permanent one and the other way."""
        found = self.env.catalog.lookup(identifier.parts, temporary=stmt.temporary)
        if found is None:
            return False
        if stmt.if_not_exists:
            return True
        kind = f"{'temporary ' if found.temporary else ''}{found.kind}"
        raise self.error(
            stmt.span,
            f"Could not execute {what} in path {identifier.quoted()}: a {kind} of that name "
            f"exists already; DROP {kind.upper()} {identifier.name} first or write IF NOT "
            "EXISTS.",
        )

    def create_table(self, stmt: S.CreateTable) -> TableResult:
        identifier = self.identifier(stmt.name, stmt.span)
        if self.exists(identifier, stmt, "CreateTable"):
            return _ok()
        if stmt.like is not None:
            raise self.planner.refuse(stmt.span, "CREATE TABLE ... LIKE")
        if stmt.partitioned_by:
            raise self.planner.refuse(stmt.span, "PARTITIONED BY")
        options = {k: v for k, v, _ in stmt.options}
        connector = options.pop("connector", None)
        if connector is None:
            raise self.error(
                stmt.span,
                "Table options do not contain an option key "
                "'connector' for discovering a connector: add WITH ('connector' "
                "= 'filesystem', ...).",
            )
        if stmt.as_query is not None:
            return self.create_table_as(stmt, identifier, connector, options)
        schema = self.schema(stmt)
        descriptor = self.descriptor(stmt, connector, schema, options)
        self.register(stmt, identifier, CatalogTable(descriptor, stmt.comment))
        return _ok()

    def create_view(self, stmt: S.CreateView) -> TableResult:
        identifier = self.identifier(stmt.name, stmt.span)
        if self.exists(identifier, stmt, "CreateView"):
            return _ok()
        table = self.planner.query(stmt.query)
        if stmt.column_aliases:
            table = self.planner.rename_all(table, stmt.column_aliases, stmt.span)
        query = self.text[stmt.query.span.start : stmt.query.span.end]
        self.register(stmt, identifier, CatalogView(table, query))
        return _ok()

    def register(
        self,
        stmt: S.CreateTable | S.CreateView,
        identifier: ObjectIdentifier,
        definition: CatalogTable | CatalogView,
    ) -> None:
        with self.planner.at(stmt.span):
            self.env.catalog.create(identifier.parts, definition, stmt.temporary)

    def schema(self, stmt: S.CreateTable) -> Schema:
        builder = Schema.new_builder()
        scope = Scope(free=True)
        inline_pk = [c.name for c in stmt.columns if c.primary_key]
        for c in stmt.columns:
            with self.planner.at(c.span):
                if c.metadata:
                    raise ValidationError("METADATA columns are not supported by this product.")
                if c.expr is not None:
                    expr = c.expr
                    if _bare_proctime(expr, stmt):  # FLIP-70 writes ``d AS PROCTIME``
                        expr = S.Func("PROCTIME", (), expr.span)
                    builder.column_by_expression(c.name, self.planner.expr(expr, scope))
                else:
                    assert c.type is not None
                    builder.column(c.name, c.type)
        if stmt.watermark is not None:
            wm = stmt.watermark
            with self.planner.at(wm.span):
                builder.watermark(wm.column, self.planner.expr(wm.expr, scope))
        if inline_pk and stmt.primary_key:
            raise self.error(
                stmt.span,
                "A table has one PRIMARY KEY: declare it inline or as a constraint, not both.",
            )
        pk = stmt.primary_key or tuple(inline_pk)
        if pk:
            builder.primary_key(*pk)
        try:
            return builder.build()
        except ValidationError as e:
            raise self.error(_schema_error_span(stmt, str(e)), str(e)) from None

    def descriptor(
        self, stmt: S.CreateTable, connector: str, schema: Schema, options: dict[str, str]
    ) -> TableDescriptor:
        try:
            builder = TableDescriptor.for_connector(connector).schema(schema)
            for key, value in options.items():
                builder.option(key, value)
            return builder.build()
        except ValidationError as e:
            message = str(e)
            span = stmt.span
            head = message.split("Supported options:")[0]  # (Flink's list of all follows)
            for key, _, option_span in stmt.options:
                if key == "connector":
                    if message.startswith("Unknown connector"):
                        span = option_span
                        break
                elif f"'{key}'" in head or f"\n{key}\n" in f"\n{head}\n":
                    span = option_span
                    break
            raise self.error(span, message) from None

    def create_table_as(
        self,
        stmt: S.CreateTable,
        identifier: ObjectIdentifier,
        connector: str,
        options: dict[str, str],
    ) -> TableResult:
        """``CREATE TABLE t WITH (..) AS SELECT ..``: a table of the query's columns, then
        the query inserted into it."""
        if stmt.columns or stmt.watermark is not None or stmt.primary_key:
            raise self.planner.refuse(
                stmt.span, "Columns, watermarks or keys declared with CREATE TABLE ... AS SELECT"
            )
        assert stmt.as_query is not None
        table = self.planner.query(stmt.as_query)
        schema = Schema.new_builder().from_row_type(table.row_type).build()
        descriptor = self.descriptor(stmt, connector, schema, options)
        with self.planner.at(stmt.span):
            table.explain()
        self.register(stmt, identifier, CatalogTable(descriptor, stmt.comment))
        with self.planner.at(stmt.span):
            return table.execute_insert(identifier.quoted())

    def drop(self, stmt: S.Drop) -> TableResult:
        """``DROP [TEMPORARY] TABLE|VIEW``: the temporary or the permanent object, as
        written (Flink's rules: ``DROP TABLE`` of a name a temporary table shadows is
        refused until ``DROP TEMPORARY TABLE``)."""
        if stmt.what.endswith("FUNCTION"):
            return self.drop_function(stmt)
        parts = self.identifier(stmt.name, stmt.span).parts
        kind: Kind = "table" if stmt.what == "TABLE" else "view"
        with self.planner.at(stmt.span):
            self.env.catalog.drop(parts, kind, stmt.temporary, stmt.if_exists)
        return _ok()

    def drop_function(self, stmt: S.Drop) -> TableResult:
        """``DROP TEMPORARY [SYSTEM] FUNCTION``; ``DROP FUNCTION`` (a catalog function: the
        product has none) with Flink's messages."""
        catalog = self.env.catalog
        if stmt.what == "SYSTEM FUNCTION":
            if len(stmt.name) != 1:
                raise self.error(stmt.span, "A system function has a bare name, no catalog.")
            if catalog.drop_temporary_system_function(stmt.name[0]) or stmt.if_exists:
                return _ok()
            problem = (
                "Could not drop temporary system function. A function named "
                f"'{stmt.name[0]}' doesn't exist."
            )
        else:
            identifier = self.identifier(stmt.name, stmt.span)
            if stmt.temporary and catalog.drop_temporary_function(identifier.quoted()):
                return _ok()
            if stmt.if_exists:
                return _ok()
            problem = (
                f"Temporary catalog function {identifier.quoted()} doesn't exist."
                if stmt.temporary
                else f"Function {identifier.database}.{identifier.name} does not exist in "
                f"Catalog {identifier.catalog} (the product's functions are temporary)."
            )
        names = ", ".join(catalog.list_user_defined_functions()) or "(none)"
        raise self.error(stmt.span, f"{problem} User functions: {names}.")

    def use(self, stmt: S.Use) -> None:
        """``USE CATALOG c``, ``USE db``, ``USE c.db``."""
        catalog = self.env.catalog
        if stmt.catalog:
            if len(stmt.name) != 1:
                raise ValidationError("USE CATALOG takes a catalog's name: USE CATALOG c.")
            catalog.use_catalog(stmt.name[0])
        elif len(stmt.name) == 2:
            catalog.use_catalog(stmt.name[0])
            catalog.use_database(stmt.name[1])
        elif len(stmt.name) == 1:
            catalog.use_database(stmt.name[0])
        else:
            raise ValidationError("USE takes a database: USE db or USE catalog.db.")

    # -- SHOW, DESCRIBE, EXPLAIN ----------------------------------------------------------------
    def show(self, stmt: S.Show) -> TableResult:
        env = self.env
        if stmt.what == "TABLES":
            return LocalTableResult(
                RowType.of(("table name", _STRING)), [(t,) for t in env.list_tables()]
            )
        if stmt.what == "VIEWS":
            return LocalTableResult(
                RowType.of(("view name", _STRING)), [(t,) for t in env.list_views()]
            )
        listed = {
            "CATALOGS": ("catalog name", env.list_catalogs()),
            "DATABASES": ("database name", env.list_databases()),
            "CURRENT CATALOG": ("current catalog name", [env.get_current_catalog()]),
            "CURRENT DATABASE": ("current database name", [env.get_current_database()]),
            "USER FUNCTIONS": ("function name", env.list_user_defined_functions()),
        }
        if stmt.what in listed:
            column, names = listed[stmt.what]
            return LocalTableResult(RowType.of((column, _STRING)), [(n,) for n in names])
        if stmt.what == "FUNCTIONS":
            builtin = {n for n, f in FUNCTIONS.items() if f.infix is None} - _NOT_SQL_FUNCTIONS
            names = sorted(
                {n for n in builtin if not n.endswith("_distinct")}
                | set(env.list_user_defined_functions())
            )
            return LocalTableResult(RowType.of(("function name", _STRING)), [(n,) for n in names])
        identifier = self.identifier(stmt.name, stmt.span)
        return LocalTableResult(
            RowType.of(("result", _STRING)), [(self.show_create(stmt, identifier),)], raw=True
        )

    def show_create(self, stmt: S.Show, identifier: ObjectIdentifier) -> str:
        """``SHOW CREATE TABLE|VIEW``: the DDL as Flink 2.3 prints it (TEMPORARY only for a
        temporary object; a view's query as written, where Flink prints it expanded)."""
        found = self.env.catalog.lookup(identifier.parts)
        kind = stmt.what.split()[1]
        if found is None:
            existing = self.env.list_views() if kind == "VIEW" else self.env.list_tables()
            raise self.error(
                stmt.span,
                f"Could not execute SHOW CREATE {kind}. {kind.capitalize()} with identifier "
                f"{identifier.quoted()} does not exist. {kind.capitalize()}s: "
                f"{', '.join(existing) or '(none)'}.",
            )
        if found.kind.upper() != kind:
            other = found.kind.upper()
            raise self.error(
                stmt.span,
                f"SHOW CREATE {kind} is only supported for {kind.lower()}s, but "
                f"{identifier.quoted()} is a {found.kind}. Please use SHOW CREATE {other} "
                "instead.",
            )
        definition = found.definition
        if isinstance(definition, CatalogView):
            if definition.query is None:
                raise self.planner.refuse(
                    stmt.span, "SHOW CREATE VIEW of a view defined by a Table API program"
                )
            columns = ",\n".join(f"  {_quoted(c)}" for c in definition.table.column_names)
            return (
                f"CREATE {'TEMPORARY ' if found.temporary else ''}VIEW {identifier.quoted()} "
                f"(\n{columns}\n)\nAS {definition.query}\n"
            )
        return _show_create_table(found.identifier, definition, found.temporary)

    def describe(self, stmt: S.Describe) -> TableResult:
        env = self.env
        identifier = self.identifier(stmt.name, stmt.span)
        found = env.catalog.lookup(identifier.parts)
        if found is None:
            raise self.error(
                stmt.span,
                f"Tables or views with the identifier '{identifier}' doesn't exist. Tables "
                f"and views: {', '.join(env.list_tables()) or '(none)'}.",
            )
        columns = ("name", "type", "null", "key", "extras", "watermark")
        row_type = RowType(tuple(Field(c, _STRING) for c in columns))
        rows: list[tuple[Any, ...]] = []
        if isinstance(found.definition, CatalogView):
            for f in found.definition.table.row_type:
                rows.append((f.name, _describe_type(f.type), _bool(f.type.nullable), "", "", ""))
            return LocalTableResult(row_type, rows)
        schema = found.definition.descriptor.table_schema
        pk = f"PRI({', '.join(schema.primary_key)})" if schema.primary_key else ""
        for c, f in zip(schema.columns, schema.row_type, strict=True):
            extras = f"AS {c.expr}" if isinstance(c, ComputedColumn) else ""
            watermark = ""
            if schema.watermark is not None and schema.watermark.column == c.name:
                watermark = str(schema.watermark.expr)
            key = pk if c.name in schema.primary_key else ""
            rows.append(
                (c.name, _describe_type(f.type), _bool(f.type.nullable), key, extras, watermark)
            )
        return LocalTableResult(row_type, rows)

    def explain(self, stmt: S.Statement) -> str:
        if isinstance(stmt, S.QueryStatement):
            table = self.planner.query(stmt.query)
            with self.planner.at(stmt.span):
                return table.explain()
        inserts = stmt.inserts if isinstance(stmt, S.StatementSet) else (stmt,)
        texts = []
        for ins in inserts:
            assert isinstance(ins, S.Insert)
            identifier = self.identifier(ins.table, ins.span)
            name = identifier.name
            self.insert(ins)  # checks the insert as running it would
            table = self.planner.query(ins.query)
            if ins.columns:
                table = self.target_columns(table, name, ins)
            with self.planner.at(ins.span):
                texts.append(
                    _sink_explain(table.explain(sink=name), identifier, table.column_names)
                )
        return "\n\n".join(texts)


def _show_create_table(identifier: ObjectIdentifier, table: CatalogTable, temporary: bool) -> str:
    """A table's DDL as Flink 2.3's SHOW CREATE TABLE prints it: types and expressions in
    Flink's serializable form, the options sorted by key.

    >>> print(_show_create_table(ObjectIdentifier.of("Orders"),
    ...                          CatalogTable(env.descriptor("Orders")), temporary=False))
    CREATE TABLE `default_catalog`.`default_database`.`Orders` (
      `order_id` BIGINT NOT NULL,
      `product_id` BIGINT,
      `amount` INT,
      `currency` VARCHAR(2147483647),
      `o_rowtime` TIMESTAMP(3),
      `o_proctime` AS PROCTIME(),
      WATERMARK FOR `o_rowtime` AS `o_rowtime` - INTERVAL '5' SECOND,
      CONSTRAINT `PK_order_id` PRIMARY KEY (`order_id`) NOT ENFORCED
    )
    WITH (
      'connector' = 'filesystem',
      'format' = 'json',
      'path' = '/data/orders'
    )
    <BLANKLINE>
    """
    d = table.descriptor
    schema = d.table_schema
    lines = []
    for c, f in zip(schema.columns, schema.row_type, strict=True):
        if isinstance(c, ComputedColumn):
            lines.append(f"{_quoted(c.name)} AS {_flink_sql(c.expr)}")
        else:
            lines.append(f"{_quoted(c.name)} {_flink_type(f.type)}")
    if schema.watermark is not None:
        wm = schema.watermark
        lines.append(f"WATERMARK FOR {_quoted(wm.column)} AS {_flink_sql(wm.expr)}")
    if schema.primary_key:
        keys = ", ".join(_quoted(k) for k in schema.primary_key)
        name = _quoted("PK_" + "_".join(schema.primary_key))
        lines.append(f"CONSTRAINT {name} PRIMARY KEY ({keys}) NOT ENFORCED")
    options = {"connector": d.connector, **d.options}
    with_ = ",\n".join(f"  '{k}' = '{options[k]}'" for k in sorted(options))
    comment = "" if table.comment is None else f"COMMENT '{table.comment}'\n"
    body = ",\n".join("  " + line for line in lines)
    return (
        f"CREATE {'TEMPORARY ' if temporary else ''}TABLE {identifier.quoted()} (\n{body}\n)\n"
        f"{comment}WITH (\n{with_}\n)\n"
    )


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# Flink's serializable names of the types whose SQL names are shorthands.
_FLINK_TYPE_NAMES = {"STRING": "VARCHAR(2147483647)", "BYTES": "VARBINARY(2147483647)"}
# Binding strength of the operators (Calcite's order): a weaker operand is parenthesized.
_PRECEDENCE = {"OR": 1, "AND": 2, "NOT": 3, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6, "||": 6}
_COMPARISON = 4  # =, <, IS NULL, LIKE ...
_PREFIX = 8  # unary minus


def _flink_type(t: DataType) -> str:
    """A column type as Flink serializes it: ``VARCHAR(2147483647)`` for STRING, no time
    attribute mark."""
    plain = t.plain()
    text = _FLINK_TYPE_NAMES.get(plain.name, str(plain.with_nullable(True)))
    return text + ("" if t.nullable else " NOT NULL")


def _flink_sql(e: Expression, outer: int = 0) -> str:
    """An expression as Flink prints a computed column or watermark (Calcite's unparse of
    what was written): columns in backquotes, no redundant parentheses.

    >>> from tableapi import col
    >>> _flink_sql((col("a") + col("b")) * 2), _flink_sql(call("upper", col("s")))
    ('(`a` + `b`) * 2', 'UPPER(`s`)')
    >>> _flink_sql(-col("a")), _flink_sql(col("s").cast("INT").is_null)
    ('- `a`', 'CAST(`s` AS INTEGER) IS NULL')
    """

    def wrap(text: str, strength: int) -> str:
        return f"({text})" if strength < outer else text

    if isinstance(e, Column):
        return _quoted(e.name)
    if isinstance(e, Cast):
        to = str(e.to.plain().with_nullable(True))
        return f"CAST({_flink_sql(e.expr)} AS {'INTEGER' if to == 'INT' else to})"
    if not isinstance(e, Call):
        return str(e)
    if e.function.infix and len(e.args) == 2:
        op = e.function.infix
        strength = _PRECEDENCE.get(op, _COMPARISON)
        left, right = _flink_sql(e.args[0], strength), _flink_sql(e.args[1], strength + 1)
        return wrap(f"{left} {op} {right}", strength)
    if e.name in ("is_null", "is_not_null"):
        test = "IS NULL" if e.name == "is_null" else "IS NOT NULL"
        return wrap(f"{_flink_sql(e.args[0], _COMPARISON + 1)} {test}", _COMPARISON)
    if e.name == "negate":
        return wrap(f"- {_flink_sql(e.args[0], _PREFIX)}", _PREFIX)
    if e.name == "not":
        return wrap(f"NOT {_flink_sql(e.args[0], _PRECEDENCE['NOT'])}", _PRECEDENCE["NOT"])
    if e.name in _NOT_SQL_FUNCTIONS | {"if"} or e.name.endswith("_distinct"):
        return str(e)
    return f"{e.name.upper()}({', '.join(_flink_sql(a) for a in e.args)})"


def _bare_proctime(e: S.Expr, stmt: S.CreateTable) -> bool:
    """``PROCTIME`` without parentheses where the table has no such column."""
    return (
        isinstance(e, S.Name)
        and len(e.parts) == 1
        and e.parts[0].upper() == "PROCTIME"
        and all(c.name != e.parts[0] for c in stmt.columns)
    )


def _schema_error_span(stmt: S.CreateTable, message: str) -> S.Span:
    """Where in CREATE TABLE a schema error is: the column it names first, else the
    watermark or the primary key it concerns."""
    if message.startswith("Primary key") and stmt.primary_key_span is not None:
        return stmt.primary_key_span
    if "watermark" in message.lower() and stmt.watermark is not None:
        return stmt.watermark.span
    named = [(message.find(f"'{c.name}'"), c.span) for c in stmt.columns]
    found = sorted((at, span.start, span) for at, span in named if at >= 0)
    return found[0][2] if found else stmt.span


def _print_as_sql_client(result: TableResult) -> None:
    """A query's result as Flink's SQL client prints it: a tableau with an ``op`` column
    in streaming mode, ``Empty set`` when there is no row."""
    rows = [(r.kind, tuple(r)) for r in result.collect()]
    print(sql_client_tableau(result.row_type, rows, isinstance(result, StreamingTableResult)))


def _sink_explain(text: str, sink: ObjectIdentifier, fields: tuple[str, ...]) -> str:
    """The query's plans under a sink node, as Flink explains an INSERT."""
    head = f"Sink(table=[{sink}], fields=[{', '.join(fields)}])"
    out = []
    for section in text.split("\n\n"):
        title, _, body = section.partition("\n")
        if title in ("== Abstract Syntax Tree ==", "== Optimized Physical Plan =="):
            node = ("Logical" if title.startswith("== Abstract") else "") + head
            lines = body.splitlines()
            body = "\n".join(
                [node, *(("+- " if i == 0 else "   ") + ln for i, ln in enumerate(lines))]
            )
        out.append(f"{title}\n{body}")
    return "\n\n".join(out)


def _describe_type(t: DataType) -> str:
    """A column's type as DESCRIBE shows it: no NULL mark, no rowtime mark (Flink's)."""
    shown = t.with_nullable(True)
    if shown.time_kind in (TimeKind.ROWTIME, TimeKind.MATERIALIZED_ROWTIME):
        shown = shown.plain()
    return str(shown)


def _bool(value: bool) -> str:
    return "TRUE" if value else "FALSE"


class StatementSet:
    """Several INSERTs run together (``env.create_statement_set()``); nothing runs until
    :meth:`execute`, and every insert is planned before the first runs.

    >>> s = env.create_statement_set()
    >>> s = s.add_insert_sql("INSERT INTO Expensive SELECT * FROM Products WHERE price > 5")
    >>> s = s.add_insert("Printed", products)
    >>> print(s.explain().splitlines()[1])
    LogicalSink(table=[default_catalog.default_database.Expensive], fields=[id, name, price])
    """

    def __init__(self, env: TableEnvironment) -> None:
        self._env = env
        self._inserts: list[tuple[str, Table, bool, str]] = []

    def add_insert_sql(self, statement: str) -> StatementSet:
        """Add ``INSERT INTO t SELECT ...`` (planned now: an invalid one fails here)."""
        stmt = parse_statement(statement)
        if not isinstance(stmt, S.Insert):
            raise ValidationError(
                f"add_insert_sql() takes an INSERT INTO ... statement; got {type(stmt).__name__}."
            )
        runner = _Runner(self._env, statement)
        name = runner.identifier(stmt.table, stmt.span).name
        runner.insert(stmt)
        table = runner.planner.query(stmt.query)
        if stmt.columns:
            table = runner.target_columns(table, name, stmt)
        self._inserts.append((name, table, stmt.overwrite, statement))
        return self

    def add_insert(self, target_path: str, table: Table, overwrite: bool = False) -> StatementSet:
        """Add ``table.execute_insert(target_path, overwrite)`` to the set."""
        self._inserts.append((target_path, table, overwrite, ""))
        return self

    def explain(self) -> str:
        """The plans of the inserts, each under its sink."""
        return "\n\n".join(
            _sink_explain(t.explain(sink=name), self._identifier(name), t.column_names)
            for name, t, _, _ in self._inserts
        )

    def _identifier(self, path: str) -> ObjectIdentifier:
        return self._env.catalog.qualify(path)

    def execute(self) -> TableResult:
        """Run every insert; ``wait()`` on the result waits for all of them."""
        if not self._inserts:
            raise ValidationError("No INSERT in this statement set: add_insert_sql() first.")
        for name, table, _, _ in self._inserts:  # plan every insert before any runs
            physical = self._env.descriptor(name).table_schema.physical_row_type
            check_sink_columns(name, table.row_type, physical)
            table.explain()
        results = [t.execute_insert(n, overwrite=o) for n, t, o, _ in self._inserts]
        return StatementSetResult(results, [self._identifier(n) for n, _, _, _ in self._inserts])


__all__ = ["LocalTableResult", "Relation", "StatementSet", "execute_sql", "sql_query"]
