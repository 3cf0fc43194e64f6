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
from tableapi.config import TableConfig
from tableapi.connectors import JdbcOptions, SinkOnlyOptions
from tableapi.descriptor import TableDescriptor
from tableapi.errors import ValidationError
from tableapi.execution import Executor, Server, executor_for
from tableapi.expressions import Expression, UnresolvedCall, UserFunction
from tableapi.functions import unknown_function
from tableapi.plan import (
    ElementsSource,
    FileSource,
    JdbcSource,
    PlanNode,
    Scan,
    Source,
    SparkSource,
)
from tableapi.plan.changelog import StreamingOptions
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
        self._tables: dict[str, TableDescriptor | Table] = {}
        self._functions: dict[str, UserFunction] = {}
        self._temporal_functions: dict[str, TemporalTableFunction] = {}
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
    def create_temporary_table(self, path: str, descriptor: TableDescriptor) -> None:
        """Register a table backed by a connector.

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_table("Orders", TableDescriptor.for_connector("filesystem")
        ...     .schema(Schema.new_builder().column("id", "BIGINT").build())
        ...     .option("path", "/data/orders").option("format", "json").build())
        >>> env.list_tables()
        ['Orders']
        """
        if not isinstance(descriptor, TableDescriptor):
            raise ValidationError("create_temporary_table() needs a TableDescriptor (.build()).")
        self._register(path, descriptor)

    def create_temporary_view(self, path: str, table: Table) -> None:
        """Register a table program under a name, for ``from_path``.

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_view("Rates", env.from_elements([(1, 2.0)], ["id", "rate"]))
        >>> env.from_path("Rates").column_names
        ('id', 'rate')
        """
        self._register(path, table)

    def _register(self, path: str, obj: TableDescriptor | Table) -> None:
        if path in self._tables:
            raise ValidationError(
                f"Table {path!r} exists already; drop it first with drop_temporary_table({path!r})."
            )
        self._tables[path] = obj

    def drop_temporary_table(self, path: str) -> bool:
        """Forget a table or view; False when there was none.

        >>> TableEnvironment.create().drop_temporary_table("Nope")
        False
        """
        return self._tables.pop(path, None) is not None

    drop_temporary_view = drop_temporary_table

    def list_tables(self) -> list[str]:
        """The registered tables and views, sorted.

        >>> TableEnvironment.create().list_tables()
        []
        """
        return sorted(self._tables)

    def list_views(self) -> list[str]:
        """The registered views (``create_temporary_view``, ``CREATE VIEW``), sorted.

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_view("Ids", env.from_elements([(1,)], ["id"]))
        >>> env.list_views()
        ['Ids']
        """
        return sorted(n for n, t in self._tables.items() if isinstance(t, Table))

    def from_path(self, path: str) -> Table:
        """The table registered as ``path``.

        >>> TableEnvironment.create().from_path("Orders")
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Table 'Orders' not found. Registered tables: []. \
Register it with create_temporary_table().
        """
        entry = self._tables.get(path)
        if entry is None:
            raise ValidationError(
                f"Table {path!r} not found. Registered tables: {self.list_tables()}. "
                "Register it with create_temporary_table()."
            )
        if isinstance(entry, Table):
            return entry
        return Table(Scan(path, _source_of(entry), entry.table_schema), self)

    def from_path_with_options(self, path: str, options: dict[str, str]) -> Table:
        """The connector table ``path`` read with some options changed (SQL's dynamic table
        options, ``FROM Orders /*+ OPTIONS('k' = 'v') */``), checked as the table's own are.

        >>> watched = env.from_path_with_options("Orders", {"source.monitor-interval": "1 s"})
        >>> watched.explain().splitlines()[1]
        'LogicalTableScan(table=[[default_catalog, default_database, Orders]])'
        """
        entry = self.descriptor(path)
        builder = TableDescriptor.for_connector(entry.connector).schema(entry.table_schema)
        for key, value in {**entry.options, **options}.items():
            builder.option(key, value)
        changed = builder.build()
        return Table(Scan(path, _source_of(changed), changed.table_schema), self)

    def descriptor(self, path: str) -> TableDescriptor:
        """The descriptor of a table created with ``create_temporary_table``.

        >>> env = TableEnvironment.create()
        >>> env.create_temporary_table("T", TableDescriptor.for_connector("filesystem")
        ...     .schema(Schema.new_builder().column("id", "BIGINT").build())
        ...     .option("path", "/data/t").option("format", "csv").build())
        >>> env.descriptor("T").format
        'csv'
        """
        entry = self._tables.get(path)
        if not isinstance(entry, TableDescriptor):
            raise ValidationError(
                f"{path!r} is not a table with a connector. Tables: {self.list_tables()}."
            )
        return entry

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

    def create_temporary_function(
        self, name: str, function: UserFunction | TemporalTableFunction
    ) -> None:
        """Register a function for ``call(name, ...)``: ``udf(f, result_type="INT")``, or a
        temporal table function for ``join_lateral``.

        >>> from tableapi import call, col, udf
        >>> env = TableEnvironment.create()
        >>> env.create_temporary_function("twice", udf(lambda x: 2 * x, result_type="BIGINT"))
        >>> t = env.from_elements([(1,)], ["a"])
        >>> t.select(call("twice", col("a")).alias("b")).row_type
        RowType(b BIGINT)
        """
        if isinstance(function, TemporalTableFunction):
            self._temporal_functions[name.lower()] = function
            return
        if not isinstance(function, UserFunction):
            raise ValidationError(
                "create_temporary_function() takes udf(python_function, result_type=...) or "
                "table.create_temporal_table_function(time_attribute, primary_key)."
            )
        self._functions[name.lower()] = function

    create_temporary_system_function = create_temporary_function

    def function_names(self) -> list[str]:
        """The registered functions (scalar and temporal table functions), lower case, sorted.

        >>> from tableapi import udf
        >>> env = TableEnvironment.create()
        >>> env.create_temporary_function("Twice", udf(lambda x: 2 * x, result_type="BIGINT"))
        >>> env.function_names()
        ['twice']
        """
        return sorted({*self._functions, *self._temporal_functions})

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
        """``expr`` with calls of registered functions replaced by their definitions.

        >>> from tableapi import udf
        >>> env.create_temporary_function("twice", udf(lambda x: 2 * x, result_type="BIGINT"))
        >>> env.resolve(call("twice", col("id"))).type_in(products.row_type)
        DataType('BIGINT')
        """

        def fix(e: Expression) -> Expression | None:
            if isinstance(e, UnresolvedCall):
                fn = self._functions.get(e.name.lower())
                if fn is None:
                    raise unknown_function(e.name, list(self._functions))
                return fn(*e.args)
            return None

        return expr.transform(fix)

    def temporal_function(self, name: str) -> TemporalTableFunction | None:
        """The temporal table function registered as ``name`` (any case), or None.

        >>> rates_at = rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
        >>> env.create_temporary_function("RatesAt", rates_at)
        >>> env.temporal_function("ratesat").primary_key, env.temporal_function("nope")
        (('r_currency',), None)
        """
        return self._temporal_functions.get(name.lower())

    def temporal_function_names(self) -> list[str]:
        """The registered temporal table functions' names, lower case, sorted.

        >>> rates_at = rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
        >>> env.create_temporary_function("RatesAt", rates_at)
        >>> env.temporal_function_names()
        ['ratesat']
        """
        return sorted(self._temporal_functions)

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
