"""``TableEnvironment``: the catalog, the configuration and the connection to Spark.

Example::

    env = TableEnvironment.create()                      # embedded local server
    env = TableEnvironment.create(remote="sc://localhost:15002")
    t = env.from_elements([(1, "Euro", 114)], ["id", "currency", "rate"])
    t.where(col("rate") > 100).execute().print()
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import re
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from tableapi import session
from tableapi.catalog import CatalogManager, CatalogTable, CatalogView
from tableapi.config import TableConfig
from tableapi.connectors import JdbcOptions, NexmarkOptions, SinkOnlyOptions
from tableapi.descriptor import TableDescriptor
from tableapi.errors import ValidationError
from tableapi.execution import Executor, Server, executor_for
from tableapi.expressions import Call, Expression, UnresolvedCall, UserFunction
from tableapi.functions import unknown_function
from tableapi.physical.options import StreamingOptions
from tableapi.plan import (
    ElementsSource,
    FileSource,
    JdbcSource,
    NexmarkSource,
    PlanNode,
    Scan,
    Source,
    SparkSource,
)
from tableapi.rules import OptimizedPlan, optimize
from tableapi.schema import Schema
from tableapi.table import Table, TemporalTableFunction
from tableapi.types import DataType, Field, RowType, from_spark, type_of_value

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.connect.session import SparkSession

    from tableapi.result import TableResult
    from tableapi.sql.statements import StatementSet

MODES = ("batch", "streaming")
_embedded: session.EmbeddedServer | None = None
_embedded_lock = threading.Lock()
_anonymous = itertools.count()


class TableEnvironment:
    """Entry point: defines tables and functions, and runs queries on Spark.

    >>> env.mode, env.list_tables()  # doctest: +NORMALIZE_WHITESPACE
    ('batch', ['Customers', 'Discarded', 'Expensive', 'Orders', 'Printed', 'Products', 'Rates',
               'Shipments'])
    """

    def __init__(self, mode: str, remote: str | None, master: str) -> None:
        if mode not in MODES:
            raise ValidationError(f"Unknown mode {mode!r}; use one of {list(MODES)}.")
        self._mode = mode
        self.config = TableConfig()
        self._remote = remote
        self._master = master
        self._spark: SparkSession | None = None
        self._url: str | None = None
        self._catalog = CatalogManager()
        self._server = Server(lambda: self.spark, lambda: session.redacted(self._url or "?"))
        self._executors = {mode: executor_for(mode, self._server, self.config)}

    @classmethod
    def create(
        cls, mode: str = "batch", remote: str | None = None, master: str = "local[2]"
    ) -> TableEnvironment:
        """A new environment. Without ``remote`` the first query starts an embedded server
        (``python -m server_ext serve`` on a free port) shared by this process.

        >>> TableEnvironment.create(mode="streaming").mode
        'streaming'
        """
        return cls(mode, remote, master)

    @property
    def mode(self) -> str:
        """``'batch'`` or ``'streaming'``: the mode given to :meth:`create`, unless
        ``execution.runtime-mode`` is set (SQL's ``SET``, as in Flink's SQL client: the next
        statements run in that mode; ``RESET`` returns to the environment's own).

        >>> scratch = TableEnvironment.create(mode="streaming")
        >>> scratch.execute_sql("SET 'execution.runtime-mode' = 'batch'").collect()
        [+I[OK]]
        >>> scratch.mode, type(scratch.executor).__name__
        ('batch', 'BatchExecutor')
        >>> scratch.execute_sql("RESET 'execution.runtime-mode'").collect()
        [+I[OK]]
        >>> scratch.mode
        'streaming'
        """
        return self.config.runtime_mode(self._mode)

    @property
    def remote(self) -> str | None:
        """The Spark Connect URL given to ``create()``; None: the embedded server.

        >>> TableEnvironment.create(remote="sc://localhost:15002").remote
        'sc://localhost:15002'
        >>> TableEnvironment.create().remote is None
        True
        """
        return self._remote

    # -- connection ----------------------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        """The Spark Connect session (connects, or starts the embedded server, on first use).

        >>> env.spark.range(3).count()  # doctest: +SERVER
        3
        """
        if self._spark is None:
            url = self._remote or _embedded_server(self._master).url
            self._spark = session.connect(url)
            self._url = url
        return self._spark

    def close(self) -> None:
        """End the Spark Connect session (the embedded server stops when the process exits).

        >>> scratch = TableEnvironment.create(remote=env.remote)
        >>> scratch.spark.range(2).count()  # doctest: +SERVER
        2
        >>> scratch.close()  # doctest: +SERVER
        """
        if self._spark is not None:
            session.close(self._spark)
            self._spark = None

    # -- catalog ---------------------------------------------------------------------------------
    @property
    def catalog(self) -> CatalogManager:
        """The tables, views and functions of this environment (:mod:`tableapi.catalog`),
        which SQL statements and the methods below read and change.

        >>> env.catalog.lookup("Orders").identifier.quoted()
        '`default_catalog`.`default_database`.`Orders`'
        """
        return self._catalog

    def create_temporary_table(self, path: str, descriptor: TableDescriptor) -> None:
        """Register a temporary table backed by a connector (it shadows a permanent table
        of the same path until dropped with ``drop_temporary_table``).

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_table("Orders", TableDescriptor.for_connector("filesystem")
        ...     .schema(Schema.new_builder().column("id", "BIGINT").build())
        ...     .option("path", "/data/orders").option("format", "json").build())
        >>> env.list_tables(), env.list_temporary_tables()
        (['Orders'], ['Orders'])
        """
        self._catalog.create(path, _catalog_table(descriptor, "create_temporary_table"), True)

    def create_table(
        self, path: str, descriptor: TableDescriptor, ignore_if_exists: bool = False
    ) -> None:
        """Register a permanent table backed by a connector (SQL's ``CREATE TABLE``).

        >>> env = TableEnvironment.create()
        >>> env.create_table("Out", TableDescriptor.for_connector("blackhole")
        ...     .schema(Schema.new_builder().column("id", "BIGINT").build()).build())
        >>> env.list_tables(), env.list_temporary_tables()
        (['Out'], [])
        """
        definition = _catalog_table(descriptor, "create_table")
        self._catalog.create(path, definition, False, ignore_if_exists)

    def create_temporary_view(self, path: str, table: Table) -> None:
        """Register a table program under a name, for ``from_path`` and SQL, as a temporary
        view.

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_view("Rates", env.from_elements([(1, 2.0)], ["id", "rate"]))
        >>> env.from_path("Rates").column_names
        ('id', 'rate')
        """
        self._catalog.create(path, _catalog_view(table, "create_temporary_view"), True)

    def create_view(self, path: str, table: Table, ignore_if_exists: bool = False) -> None:
        """Register a table program as a permanent view (SQL's ``CREATE VIEW``).

        >>> env = TableEnvironment.create()
        >>> env.create_view("Ids", env.from_elements([(1,)], ["id"]))
        >>> env.list_views(), env.list_temporary_views()
        (['Ids'], [])
        """
        self._catalog.create(path, _catalog_view(table, "create_view"), False, ignore_if_exists)

    def drop_temporary_table(self, path: str) -> bool:
        """Forget a temporary table; False when there was none (a permanent table is
        dropped with ``drop_table``).

        >>> TableEnvironment.create().drop_temporary_table("Nope")
        False
        """
        return self._catalog.drop(path, "table", temporary=True, ignore_if_not_exists=True)

    def drop_temporary_view(self, path: str) -> bool:
        """Forget a temporary view; False when there was none.

        >>> scratch = TableEnvironment.create()
        >>> scratch.create_temporary_view("V", scratch.from_elements([(1,)], ["id"]))
        >>> scratch.drop_temporary_view("V"), scratch.drop_temporary_view("V")
        (True, False)
        """
        return self._catalog.drop(path, "view", temporary=True, ignore_if_not_exists=True)

    def drop_table(self, path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop a permanent table; False when there was none (an error instead when
        ``ignore_if_not_exists`` is False). A temporary table of the same path must be
        dropped first, as in Flink.

        >>> TableEnvironment.create().drop_table("Nope", ignore_if_not_exists=False)
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Table with identifier \
'default_catalog.default_database.Nope' does not exist. Tables: (none).
        """
        return self._catalog.drop(path, "table", False, ignore_if_not_exists)

    def drop_view(self, path: str, ignore_if_not_exists: bool = True) -> bool:
        """Drop a permanent view; False when there was none.

        >>> TableEnvironment.create().drop_view("Nope")
        False
        """
        return self._catalog.drop(path, "view", False, ignore_if_not_exists)

    def list_tables(self) -> list[str]:
        """The tables and views of the current database, temporary or not, sorted.

        >>> TableEnvironment.create().list_tables()
        []
        """
        return self._catalog.list_tables()

    def list_views(self) -> list[str]:
        """The views of the current database (``create_view``, ``create_temporary_view``,
        ``CREATE VIEW``), sorted.

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_view("Ids", env.from_elements([(1,)], ["id"]))
        >>> env.list_views()
        ['Ids']
        """
        return self._catalog.list_views()

    def list_temporary_tables(self) -> list[str]:
        """The temporary tables and views of the current database, sorted.

        >>> TableEnvironment.create().list_temporary_tables()
        []
        """
        return self._catalog.list_temporary_tables()

    def list_temporary_views(self) -> list[str]:
        """The temporary views of the current database, sorted.

        >>> TableEnvironment.create().list_temporary_views()
        []
        """
        return self._catalog.list_temporary_views()

    def list_catalogs(self) -> list[str]:
        """The catalogs: the one, ``default_catalog``.

        >>> TableEnvironment.create().list_catalogs()
        ['default_catalog']
        """
        return self._catalog.list_catalogs()

    def list_databases(self) -> list[str]:
        """The databases of the current catalog: the one, ``default_database``.

        >>> TableEnvironment.create().list_databases()
        ['default_database']
        """
        return self._catalog.list_databases()

    def get_current_catalog(self) -> str:
        """The catalog a one- or two-part name is in (SQL's ``USE CATALOG``).

        >>> TableEnvironment.create().get_current_catalog()
        'default_catalog'
        """
        return self._catalog.current_catalog

    def get_current_database(self) -> str:
        """The database a one-part name is in (SQL's ``USE``).

        >>> TableEnvironment.create().get_current_database()
        'default_database'
        """
        return self._catalog.current_database

    def use_catalog(self, name: str) -> None:
        """Make ``name`` the current catalog (it must exist).

        >>> TableEnvironment.create().use_catalog("default_catalog")
        """
        self._catalog.use_catalog(name)

    def use_database(self, name: str) -> None:
        """Make ``name`` the current database (a database of the current catalog).

        >>> TableEnvironment.create().use_database("default_database")
        """
        self._catalog.use_database(name)

    def from_path(self, path: str) -> Table:
        """The table or view registered as ``path`` (``T``, ``db.T`` or ``catalog.db.T``;
        a temporary one before a permanent one).

        >>> TableEnvironment.create().from_path("Orders")
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Table 'Orders' not found in \
default_catalog.default_database; tables and views: (none). Create it with CREATE TABLE, \
create_table() or create_temporary_table().
        """
        found = self._catalog.get(path)
        if isinstance(found.definition, CatalogView):
            return found.definition.table
        descriptor = found.definition.descriptor
        return Table(
            Scan(found.identifier.name, _source_of(descriptor), descriptor.table_schema), self
        )

    def from_path_with_options(self, path: str, options: dict[str, str]) -> Table:
        """The connector table ``path`` read with some options changed (SQL's dynamic table
        options, ``FROM Orders /*+ OPTIONS('k' = 'v') */``), checked as the table's own are.

        >>> watched = env.from_path_with_options("Orders", {"source.monitor-interval": "1 s"})
        >>> watched.explain().splitlines()[1]
        'LogicalTableScan(table=[[default_catalog, default_database, Orders]])'
        """
        found = self._catalog.get(path, "table")
        assert isinstance(found.definition, CatalogTable)
        entry = found.definition.descriptor
        builder = TableDescriptor.for_connector(entry.connector).schema(entry.table_schema)
        for key, value in {**entry.options, **options}.items():
            builder.option(key, value)
        changed = builder.build()
        return Table(Scan(found.identifier.name, _source_of(changed), changed.table_schema), self)

    def descriptor(self, path: str) -> TableDescriptor:
        """The descriptor of a table with a connector (``create_table``,
        ``create_temporary_table``, ``CREATE TABLE``).

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_table("T", TableDescriptor.for_connector("filesystem")
        ...     .schema(Schema.new_builder().column("id", "BIGINT").build())
        ...     .option("path", "/data/t").option("format", "csv").build())
        >>> env.descriptor("T").format
        'csv'
        """
        definition = self._catalog.get(path, "table").definition
        assert isinstance(definition, CatalogTable)
        return definition.descriptor

    def from_elements(
        self,
        elements: Iterable[Sequence[Any]],
        schema: Sequence[str] | str | RowType | Schema | None = None,
    ) -> Table:
        """A table from Python rows. ``schema`` is column names (types inferred), a DDL string
        such as ``"id BIGINT, name STRING"``, or a Schema.

        >>> env = TableEnvironment.create()
        >>> env.from_elements([(1, "Euro", 114)], ["id", "currency", "rate"]).row_type
        RowType(id BIGINT, currency STRING, rate BIGINT)
        """
        rows = tuple(tuple(r) for r in elements)
        row_type = _elements_row_type(rows, schema)
        for i, r in enumerate(rows):
            if len(r) != len(row_type):
                raise ValidationError(
                    f"Row {i} has {len(r)} values but the schema has {len(row_type)} columns "
                    f"[{', '.join(row_type.names)}]."
                )
        declared: RowType | Schema = schema if isinstance(schema, Schema) else row_type
        name = f"Values${next(_anonymous)}"
        return Table(Scan(name, ElementsSource(rows), declared), self)

    def from_spark(self, dataframe: DataFrame, name: str | None = None) -> Table:
        """Wrap a Spark Connect DataFrame as a table (reads its schema from the server):
        ``env.from_spark(env.spark.range(3))``.

        >>> numbers = env.from_spark(env.spark.range(3))  # doctest: +SERVER
        >>> numbers.row_type  # doctest: +SERVER
        RowType(id BIGINT NOT NULL)
        >>> numbers.where(col("id") > 0).execute().collect()  # doctest: +SERVER
        [+I[1], +I[2]]
        """
        row = RowType(
            tuple(
                Field(f.name, from_spark(f.dataType).with_nullable(f.nullable))
                for f in dataframe.schema.fields
            )
        )
        return Table(Scan(name or f"Spark${next(_anonymous)}", SparkSource(dataframe), row), self)

    def create_temporary_system_function(
        self, name: str, function: UserFunction | TemporalTableFunction
    ) -> None:
        """Register a temporary system function for ``call(name, ...)`` and SQL: a bare
        name, found before a catalog function of that name. ``function`` is
        ``udf(f, result_type="INT")``, or a temporal table function for ``join_lateral``.

        >>> from tableapi import call, col, udf
        >>> env = TableEnvironment.create()
        >>> twice = udf(lambda x: 2 * x, result_type="BIGINT")
        >>> env.create_temporary_system_function("twice", twice)
        >>> t = env.from_elements([(1,)], ["a"])
        >>> t.select(call("twice", col("a")).alias("b")).row_type
        RowType(b BIGINT)
        """
        self._catalog.create_temporary_system_function(name, _function(function))

    def create_temporary_function(
        self, path: str, function: UserFunction | TemporalTableFunction
    ) -> None:
        """Register a temporary catalog function: ``path`` names it in a database (the
        current one unless qualified), as Flink's ``createTemporaryFunction``.

        >>> from tableapi import udf
        >>> env = TableEnvironment.create()
        >>> env.create_temporary_function("Twice", udf(lambda x: 2 * x, result_type="BIGINT"))
        >>> env.create_temporary_function("twice", udf(lambda x: x, result_type="BIGINT"))
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Could not register temporary catalog function. A \
function 'default_catalog.default_database.twice' does already exist: \
drop_temporary_function('twice') first.
        """
        self._catalog.create_temporary_function(path, _function(function))

    def drop_temporary_system_function(self, name: str) -> bool:
        """Forget a temporary system function; False when there was none.

        >>> TableEnvironment.create().drop_temporary_system_function("nope")
        False
        """
        return self._catalog.drop_temporary_system_function(name)

    def drop_temporary_function(self, path: str) -> bool:
        """Forget a temporary catalog function; False when there was none.

        >>> from tableapi import udf
        >>> env = TableEnvironment.create()
        >>> env.create_temporary_function("twice", udf(lambda x: 2 * x, result_type="BIGINT"))
        >>> env.drop_temporary_function("Twice"), env.drop_temporary_function("twice")
        (True, False)
        """
        return self._catalog.drop_temporary_function(path)

    def list_user_defined_functions(self) -> list[str]:
        """The user functions (scalar and temporal table functions) callable by a bare name
        here, lower case, sorted.

        >>> from tableapi import udf
        >>> env = TableEnvironment.create()
        >>> env.create_temporary_function("Twice", udf(lambda x: 2 * x, result_type="BIGINT"))
        >>> env.list_user_defined_functions()
        ['twice']
        """
        return self._catalog.list_user_defined_functions()

    # -- SQL --------------------------------------------------------------------------------------
    def execute_sql(self, statement: str) -> TableResult:
        """Run one SQL statement: ``CREATE [TEMPORARY] TABLE|VIEW``, ``DROP``, ``SHOW``,
        ``DESCRIBE``, ``EXPLAIN``, ``SET``/``RESET``, ``INSERT INTO``, ``EXECUTE STATEMENT SET``
        or a query (run as ``sql_query(q).execute()``). DDL returns an ``OK`` result.

        >>> env = TableEnvironment.create()
        >>> env.execute_sql("CREATE TABLE T (id BIGINT, name STRING) WITH ("
        ...                 "'connector' = 'filesystem', 'path' = '/data/t', 'format' = 'csv')"
        ...                 ).collect()
        [+I[OK]]
        >>> env.execute_sql("DESCRIBE T").collect()[0]
        +I[id, BIGINT, TRUE, , , ]
        """
        from tableapi.sql.statements import execute_sql  # the SQL layer sits on this API

        return execute_sql(self, statement)

    def sql_query(self, query: str) -> Table:
        """A SQL query as a Table: the same plan the Table API builds, to ``explain()``,
        ``execute()`` or go on with in the Table API (and registered tables and views, Table
        API ones too, are queryable).

        >>> cheap = env.sql_query("SELECT id, name FROM Products WHERE price < 5")
        >>> cheap.join(orders, col("id") == col("product_id")).column_names[:3]
        ('id', 'name', 'order_id')
        """
        from tableapi.sql.statements import sql_query

        return sql_query(self, query)

    def create_statement_set(self) -> StatementSet:
        """A statement set: several INSERTs planned together and run by ``execute()``.

        >>> type(env.create_statement_set()).__name__
        'StatementSet'
        """
        from tableapi.sql.statements import StatementSet

        return StatementSet(self)

    # -- what a Table asks of its environment (table.TableContext) ---------------------------------
    def resolve(self, expr: Expression) -> Expression:
        """``expr`` with calls of registered functions replaced by their definitions: by
        name, a temporary system function, a built-in, then a temporary catalog function.

        >>> from tableapi import udf
        >>> env.create_temporary_function("twice", udf(lambda x: 2 * x, result_type="BIGINT"))
        >>> env.resolve(call("twice", col("id"))).type_in(products.row_type)
        DataType('BIGINT')
        """

        def fix(e: Expression) -> Expression | None:
            if isinstance(e, UnresolvedCall):
                fn = self._catalog.function(e.name)
                if not isinstance(fn, UserFunction):
                    raise unknown_function(e.name, self._scalar_function_names())
                return fn(*e.args)
            if isinstance(e, Call) and not (e.function.infix or e.function.aggregate):
                # a temporary system function shadows a built-in of its name (Flink's order)
                system = self._catalog.system_function(e.name)
                if isinstance(system, UserFunction):
                    return system(*e.args)
            return None

        return expr.transform(fix)

    def temporal_function(self, name: str) -> TemporalTableFunction | None:
        """The temporal table function registered as ``name`` (any case), or None.

        >>> rates_at = rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
        >>> env.create_temporary_function("RatesAt", rates_at)
        >>> env.temporal_function("ratesat").primary_key, env.temporal_function("nope")
        (('r_currency',), None)
        >>> env.drop_temporary_function("RatesAt")  # a name is registered once (Flink's rule)
        True
        """
        fn = self._catalog.function(name)
        return fn if isinstance(fn, TemporalTableFunction) else None

    def temporal_function_names(self) -> list[str]:
        """The registered temporal table functions' names, lower case, sorted.

        >>> rates_at = rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
        >>> env.create_temporary_function("RatesAt", rates_at)
        >>> env.temporal_function_names()
        ['ratesat']
        >>> env.drop_temporary_function("RatesAt")
        True
        """
        names = self._catalog.list_user_defined_functions()
        return [n for n in names if self.temporal_function(n) is not None]

    def _scalar_function_names(self) -> list[str]:
        names = self._catalog.list_user_defined_functions()
        return [n for n in names if self.temporal_function(n) is None]

    def optimize(self, plan: PlanNode) -> OptimizedPlan:
        """The rules applied to ``plan`` with this environment's options (what
        ``Table.optimized()`` gives): here the filter is merged into the join.

        >>> q = orders.join(products).where(col("product_id") == col("id"))
        >>> type(env.optimize(q._plan).plan).__name__
        'Join'
        """
        max_tables = self.config.multi_join_max_tables(streaming=self.mode == "streaming")
        return optimize(plan, max_tables)

    def streaming_options(self) -> StreamingOptions | None:
        """What streaming planning reads from the options; None in batch mode. Once
        connected, also whether the server has the JVM operator plugin (the streaming
        executor's options: asked once per session); before, explain takes it as there.

        >>> env = TableEnvironment.create(mode="streaming")
        >>> env.config.set("table.exec.state.ttl", "1 h").get("table.exec.state.ttl")
        '1 h'
        >>> env.streaming_options().default_ttl_ms, env.streaming_options().jvm_plugin
        (3600000, None)
        """
        if self.mode != "streaming":
            return None
        if self._spark is None:
            return self.config.streaming_options()
        from tableapi.execution.streaming import server_options

        return server_options(self.config, self._spark)

    @property
    def executor(self) -> Executor:
        """Runs this environment's optimized plans (batch or streaming, by its mode).

        >>> type(env.executor).__name__, type(senv.executor).__name__
        ('BatchExecutor', 'StreamingExecutor')
        """
        mode = self.mode
        if mode not in self._executors:
            self._executors[mode] = executor_for(mode, self._server, self.config)
        return self._executors[mode]


def _catalog_table(descriptor: TableDescriptor, method: str) -> CatalogTable:
    if not isinstance(descriptor, TableDescriptor):
        raise ValidationError(f"{method}() needs a TableDescriptor (.build()).")
    return CatalogTable(descriptor)


def _catalog_view(table: Table, method: str) -> CatalogView:
    if not isinstance(table, Table):
        raise ValidationError(f"{method}() takes a Table: env.from_path(..), env.sql_query(..).")
    return CatalogView(table)


def _function(function: object) -> UserFunction | TemporalTableFunction:
    if not isinstance(function, UserFunction | TemporalTableFunction):
        raise ValidationError(
            "create_temporary_function() takes udf(python_function, result_type=...) or "
            "table.create_temporal_table_function(time_attribute, primary_key)."
        )
    return function


def _source_of(descriptor: TableDescriptor) -> Source:
    """The plan source of a connector table."""
    opts = descriptor.connector_options
    if isinstance(opts, SinkOnlyOptions):
        raise ValidationError(
            f"Connector {descriptor.connector!r} can only be used as a sink. It cannot be used "
            "as a source."
        )
    if isinstance(opts, JdbcOptions):
        return JdbcSource(opts.source, opts.cache, opts.max_retries, opts.push_filters)
    if isinstance(opts, NexmarkOptions):
        return NexmarkSource(opts.kind, opts.events_num, opts.reader_options)
    return FileSource(
        opts.path,
        opts.format,
        opts.reader_options,
        opts.op_column,
        opts.monitor_interval_ms,
        opts.file_order,
    )


def _embedded_server(master: str) -> session.EmbeddedServer:
    global _embedded
    with _embedded_lock:
        if _embedded is None or _embedded.process.poll() is not None:
            _embedded = session.EmbeddedServer.start(master=master)
        return _embedded


_PY_TYPES: list[tuple[type, DataType]] = [
    (bool, DataType("BOOLEAN")),
    (int, DataType("BIGINT")),
    (float, DataType("DOUBLE")),
    (decimal.Decimal, DataType("DECIMAL", (38, 18))),
    (str, DataType("STRING")),
    (dt.datetime, DataType("TIMESTAMP", (3,))),
    (dt.date, DataType("DATE")),
]


def _elements_row_type(
    rows: tuple[tuple[Any, ...], ...], schema: Sequence[str] | str | RowType | Schema | None
) -> RowType:
    if isinstance(schema, Schema):
        if schema.computed_columns:
            raise ValidationError("from_elements() takes physical columns only.")
        return schema.physical_row_type
    if isinstance(schema, RowType):
        return schema
    if isinstance(schema, str):
        fields = []
        for part in re.split(r",(?![^(]*\))", schema):  # not the comma of DECIMAL(10, 2)
            bits = part.strip().split(None, 1)
            if len(bits) != 2:
                raise ValidationError(
                    f"Cannot read {part.strip()!r} in schema {schema!r}: write 'name TYPE'."
                )
            fields.append(Field(bits[0].strip("`"), DataType.parse(bits[1])))
        return RowType(tuple(fields))
    width = len(rows[0]) if rows else 0
    names = list(schema) if schema is not None else [f"f{i}" for i in range(width)]
    fields = []
    for i, name in enumerate(names):
        values = [r[i] for r in rows if i < len(r) and r[i] is not None]
        if not values:
            raise ValidationError(
                f"Cannot infer the type of column {name!r}: it has no non-NULL value. Give a "
                "schema such as 'id BIGINT, name STRING'."
            )
        fields.append(Field(name, _python_type(values[0], name)))
    return RowType(tuple(fields))


def _python_type(value: Any, name: str) -> DataType:
    for cls, t in _PY_TYPES:
        if isinstance(value, cls):
            return t
    type_of_value(value)  # raises a clear error for unsupported values
    raise ValidationError(f"Cannot infer a type for column {name!r} from {value!r}.")
