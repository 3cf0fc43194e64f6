"""Flink SQL without a server: every statement parses and plans, a SQL query builds the same
plan as its Table API twin (``explain()`` equal), and malformed input is refused with the
line and column, never with an internal exception."""

from __future__ import annotations

import pytest

from tableapi import (
    Schema,
    Table,
    TableDescriptor,
    TableEnvironment,
    ValidationError,
    call,
    col,
    lit,
    udf,
)
from tableapi.errors import SqlParserError, SqlValidationError
from tableapi.sql import syntax as S
from tableapi.sql.parser import parse_statement, tokenize
from tableapi.sql.statements import _Runner

ORDERS_DDL = """
CREATE TABLE Orders (
  order_id BIGINT,
  product_id BIGINT,
  amount INT,
  currency STRING,
  o_rowtime TIMESTAMP(3),
  o_proctime AS PROCTIME(),
  amount_x2 AS amount * 2,
  WATERMARK FOR o_rowtime AS o_rowtime - INTERVAL '5' SECOND,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = '/nonexistent/orders', 'format' = 'json')
"""
PRODUCT_DDL = """
CREATE TABLE Product (id BIGINT PRIMARY KEY NOT ENFORCED, name STRING, price DOUBLE)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent/product', 'format' = 'json')
"""
SHIPMENTS_DDL = """
CREATE TEMPORARY TABLE IF NOT EXISTS Shipments (
  s_order_id BIGINT, s_rowtime TIMESTAMP(3),
  WATERMARK FOR s_rowtime AS s_rowtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '/nonexistent/shipments', 'format' = 'json')
"""
RATES_DDL = """
CREATE TABLE Rates (
  r_currency STRING, rate DOUBLE, r_rowtime TIMESTAMP(3),
  WATERMARK FOR r_rowtime AS r_rowtime,
  PRIMARY KEY (r_currency) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = '/nonexistent/rates', 'format' = 'json')
"""
CUSTOMERS_DDL = """
CREATE TABLE Customers (c_id BIGINT, c_name STRING, c_age INT, PRIMARY KEY (c_id) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = 'jdbc:sqlite:/nonexistent/shop.db',
      'table-name' = 'customers', 'lookup.cache' = 'PARTIAL',
      'lookup.partial-cache.max-rows' = '100')
"""
SINK_DDL = """
CREATE TABLE Out (order_id BIGINT, name STRING) WITH ('connector' = 'print')
"""


def sql_env(mode: str) -> TableEnvironment:
    env = TableEnvironment.create(mode=mode)
    for ddl in (ORDERS_DDL, PRODUCT_DDL, SHIPMENTS_DDL, RATES_DDL, CUSTOMERS_DDL, SINK_DDL):
        assert [tuple(r) for r in env.execute_sql(ddl).collect()] == [("OK",)]
    return env


@pytest.fixture
def env() -> TableEnvironment:
    return sql_env("batch")


@pytest.fixture
def senv() -> TableEnvironment:
    return sql_env("streaming")


# -- DDL builds what the Table API builds ---------------------------------------------------


def test_create_table_builds_the_descriptor_the_table_api_builds(env: TableEnvironment) -> None:
    built = (
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("order_id", "BIGINT")
            .column("product_id", "BIGINT")
            .column("amount", "INT")
            .column("currency", "STRING")
            .column("o_rowtime", "TIMESTAMP(3)")
            .column_by_expression("o_proctime", "PROCTIME()")
            .column_by_expression("amount_x2", "amount * 2")
            .watermark("o_rowtime", "o_rowtime - INTERVAL '5' SECOND")
            .primary_key("order_id")
            .build()
        )
        .option("path", "/nonexistent/orders")
        .option("format", "json")
        .build()
    )
    assert env.descriptor("Orders").to_dict() == built.to_dict()
    assert env.from_path("Orders").row_type == built.table_schema.row_type
    assert env.descriptor("Product").table_schema.primary_key == ("id",)
    assert env.descriptor("Customers").jdbc.cache.max_rows == 100


def test_ddl_statements(env: TableEnvironment) -> None:
    def rows(sql: str) -> list[tuple[object, ...]]:
        return [tuple(r) for r in env.execute_sql(sql).collect()]

    assert rows("SHOW TABLES") == [(t,) for t in sorted(env.list_tables())]
    assert rows("CREATE TABLE IF NOT EXISTS Orders (x INT) WITH ('connector' = 'print')") == [
        ("OK",)
    ]
    assert rows("CREATE VIEW Big AS SELECT order_id, amount FROM Orders WHERE amount > 10") == [
        ("OK",)
    ]
    assert rows("SHOW VIEWS") == [("Big",)]
    assert env.from_path("Big").column_names == ("order_id", "amount")
    assert rows("DESCRIBE Orders")[0] == ("order_id", "BIGINT", "FALSE", "PRI(order_id)", "", "")
    assert rows("DESC Orders")[4][0::5] == ("o_rowtime", "(o_rowtime - INTERVAL '5' SECOND)")
    assert rows("DESCRIBE Orders")[5][1:5] == (
        "TIMESTAMP_LTZ(3) *PROCTIME*",
        "FALSE",
        "",
        "AS PROCTIME()",
    )
    assert rows("DESCRIBE Big") == [
        ("order_id", "BIGINT", "FALSE", "", "", ""),
        ("amount", "INT", "TRUE", "", "", ""),
    ]
    assert rows("SET 'table.exec.state.ttl' = '1 h'") == [("OK",)]
    assert env.config.state_ttl_ms == 3_600_000
    assert rows("SET") == [("table.exec.state.ttl", "1 h")]
    assert rows("RESET 'table.exec.state.ttl'") == [("OK",)]
    assert env.config.state_ttl_ms is None
    env.execute_sql("SET 'pipeline.name' = 'x'")
    env.execute_sql("RESET")
    assert env.config.to_dict() == {}
    assert rows("DROP VIEW Big") == [("OK",)]
    assert rows("DROP TABLE IF EXISTS Big") == [("OK",)]
    assert rows("DROP TEMPORARY TABLE Shipments") == [("OK",)]
    assert "Shipments" not in env.list_tables()
    show = rows("SHOW CREATE TABLE Product")[0][0]
    assert show.startswith("CREATE TABLE `default_catalog`.`default_database`.`Product`")
    assert "'connector' = 'filesystem'" in show
    assert ("upper",) in rows("SHOW FUNCTIONS")


def test_drop_and_create_refuse_what_does_not_fit(env: TableEnvironment) -> None:
    with pytest.raises(SqlValidationError, match="does not exist"):
        env.execute_sql("DROP TABLE Nope")
    with pytest.raises(SqlValidationError, match="exists already"):
        env.execute_sql("CREATE TABLE Orders (x INT) WITH ('connector' = 'print')")
    env.execute_sql("CREATE VIEW V AS SELECT 1 AS one")
    with pytest.raises(SqlValidationError, match="'V' is a view: use DROP VIEW V"):
        env.execute_sql("DROP TABLE V")
    with pytest.raises(SqlValidationError, match="option key 'connector'"):
        env.execute_sql("CREATE TABLE T (x INT) WITH ('path' = '/x')")
    with pytest.raises(SqlValidationError, match="METADATA columns are not supported"):
        env.execute_sql("CREATE TABLE T (x INT METADATA) WITH ('connector' = 'print')")


def test_set_refuses_a_bad_value_with_the_options_message(env: TableEnvironment) -> None:
    message = r"Could not parse value 'soon' for key 'table\.exec\.state\.ttl'"
    with pytest.raises(SqlValidationError, match=message):
        env.execute_sql("SET 'table.exec.state.ttl' = 'soon'")
    assert env.config.get("table.exec.state.ttl") is None


def test_set_runtime_mode_runs_the_next_statements_in_that_mode(
    env: TableEnvironment, senv: TableEnvironment
) -> None:
    query = "SELECT currency, SUM(amount) AS total FROM Orders GROUP BY currency"
    assert "changelogMode=[I,UB,UA,D]" in senv.sql_query(query).explain()
    senv.execute_sql("SET 'execution.runtime-mode' = 'batch'")  # as Flink's SQL client
    assert senv.mode == "batch"
    assert type(senv.executor).__name__ == "BatchExecutor"
    assert senv.sql_query(query).explain() == env.sql_query(query).explain()
    senv.execute_sql("RESET 'execution.runtime-mode'")
    assert type(senv.executor).__name__ == "StreamingExecutor"
    assert "changelogMode=[I,UB,UA,D]" in senv.sql_query(query).explain()
    env.execute_sql("SET 'execution.runtime-mode' = 'STREAMING'")
    assert env.mode == "streaming"
    with pytest.raises(SqlValidationError, match=r"Could not parse value 'automatic' for key "):
        env.execute_sql("SET 'execution.runtime-mode' = 'automatic'")
    assert env.mode == "streaming"  # the refused value is not kept


# -- queries build the Table API's plans --------------------------------------------------------


def twins(env: TableEnvironment) -> list[tuple[str, object]]:
    """(SQL, the Table API program a user would write for it)."""
    orders, product = env.from_path("Orders"), env.from_path("Product")
    shipments = env.from_path("Shipments")
    return [
        (
            "SELECT order_id, amount * 2 AS twice FROM Orders WHERE amount > 1",
            orders.where(col("amount") > 1).select(
                col("order_id"), (col("amount") * 2).alias("twice")
            ),
        ),
        ("SELECT * FROM Orders", orders),
        (
            "SELECT o.order_id, p.name FROM Orders AS o JOIN Product AS p "
            "ON o.product_id = p.id WHERE o.amount > 1",
            orders.join(product, col("product_id") == col("id"))
            .where(col("amount") > 1)
            .select(col("order_id"), col("name")),
        ),
        (
            "SELECT * FROM Orders LEFT JOIN Product ON product_id = id AND price > 2",
            orders.left_outer_join(product, (col("product_id") == col("id")) & (col("price") > 2)),
        ),
        (
            "SELECT * FROM Orders RIGHT OUTER JOIN Product ON product_id = id",
            orders.right_outer_join(product, col("product_id") == col("id")),
        ),
        (
            "SELECT * FROM Orders FULL JOIN Product ON product_id = id",
            orders.full_outer_join(product, col("product_id") == col("id")),
        ),
        ("SELECT * FROM Orders CROSS JOIN Product", orders.join(product)),
        (
            "SELECT * FROM Orders o, Shipments s WHERE o.order_id = s.s_order_id "
            "AND o.o_rowtime BETWEEN s.s_rowtime - INTERVAL '4' HOUR AND s.s_rowtime",
            orders.join(shipments).where(
                (col("order_id") == col("s_order_id"))
                & col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime"))
            ),
        ),
        (
            "SELECT currency, SUM(amount) AS total, COUNT(*) AS n FROM Orders "
            "GROUP BY currency HAVING SUM(amount) > 10",
            orders.group_by(col("currency"))
            .select(col("currency"), col("amount").sum.alias("total"), call("count").alias("n"))
            .where(col("total") > 10),
        ),
        (
            "SELECT COUNT(DISTINCT currency) AS c, MAX(amount) AS m FROM Orders",
            orders.select(col("currency").count.distinct.alias("c"), col("amount").max.alias("m")),
        ),
        (
            "SELECT * FROM Orders WHERE product_id IN (SELECT id FROM Product)",
            orders.where(col("product_id").in_(product.select(col("id")))),
        ),
        (
            "SELECT * FROM Orders WHERE product_id NOT IN (SELECT id FROM Product)",
            orders.where(~col("product_id").in_(product.select(col("id")))),
        ),
        (
            "SELECT * FROM Orders o WHERE EXISTS (SELECT 1 FROM Product p "
            "WHERE p.id = o.product_id)",
            orders.semi_join(product, col("id") == col("product_id")),
        ),
        (
            "SELECT * FROM Orders WHERE NOT EXISTS (SELECT * FROM Product WHERE id = "
            "product_id) AND amount > 1",
            orders.where(col("amount") > 1).anti_join(product, col("id") == col("product_id")),
        ),
        (
            "SELECT name, price FROM Product UNION ALL SELECT currency, 1.5E0 FROM Orders",
            product.select(col("name"), col("price")).union_all(
                orders.select(col("currency"), lit(1.5))
            ),
        ),
        (
            "SELECT DISTINCT name FROM Product ORDER BY name LIMIT 3",
            product.select(col("name")).distinct().order_by(col("name").asc).limit(3),
        ),
        (
            "SELECT name, CASE WHEN price > 5 THEN 'dear' ELSE 'cheap' END AS band, "
            "CAST(price AS DECIMAL(10, 2)) AS p FROM Product",
            product.select(
                col("name"),
                call("if", col("price") > 5, "dear", "cheap").alias("band"),
                col("price").cast("DECIMAL(10, 2)").alias("p"),
            ),
        ),
        (
            "SELECT /*+ BROADCAST(p) */ * FROM Orders JOIN Product AS p ON product_id = id",
            orders.join(product, col("product_id") == col("id")).with_hint("BROADCAST", "Product"),
        ),
    ]


def test_sql_plans_are_the_table_api_plans(env: TableEnvironment) -> None:
    for sql, table in twins(env):
        assert env.sql_query(sql).explain() == table.explain(), sql  # type: ignore[attr-defined]


def test_streaming_sql_plans_are_the_table_api_plans(senv: TableEnvironment) -> None:
    orders, rates = senv.from_path("Orders"), senv.from_path("Rates")
    customers = senv.from_path("Customers")
    senv.create_temporary_function(
        "RatesAt", rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
    )
    pairs = [
        (
            "SELECT o.order_id, r.rate FROM Orders AS o JOIN Rates FOR SYSTEM_TIME AS OF "
            "o.o_rowtime AS r ON o.currency = r.r_currency",
            orders.temporal_join(
                rates, col("currency") == col("r_currency"), as_of=col("o_rowtime")
            ).select(col("order_id"), col("rate")),
        ),
        (
            "SELECT /*+ LOOKUP('table'='c', 'retry-predicate'='lookup_miss', "
            "'retry-strategy'='fixed_delay', 'fixed-delay'='1s', 'max-attempts'='2') */ "
            "o.order_id, c.c_name FROM Orders AS o LEFT JOIN Customers FOR SYSTEM_TIME AS OF "
            "o.o_proctime AS c ON o.product_id = c.c_id AND c.c_age > 20",
            orders.temporal_join(
                customers,
                (col("product_id") == col("c_id")) & (col("c_age") > 20),
                as_of=col("o_proctime"),
                how="left",
            )
            .select(col("order_id"), col("c_name"))
            .with_hint(
                "LOOKUP",
                **{
                    "table": "Customers",
                    "retry-predicate": "lookup_miss",
                    "retry-strategy": "fixed_delay",
                    "fixed-delay": "1s",
                    "max-attempts": "2",
                },
            ),
        ),
        (
            "SELECT /*+ SHUFFLE_HASH('Customers') */ * FROM Orders AS o JOIN Customers "
            "FOR SYSTEM_TIME AS OF o.o_proctime AS c ON o.product_id = c.c_id",
            orders.temporal_join(
                customers, col("product_id") == col("c_id"), as_of=col("o_proctime")
            ).with_hint("SHUFFLE_HASH", "Customers"),
        ),
        (
            "SELECT o.amount * r.rate AS amount FROM Orders AS o, "
            "LATERAL TABLE (RatesAt(o.o_rowtime)) AS r WHERE r.r_currency = o.currency",
            orders.join_lateral(
                call("RatesAt", col("o_rowtime")), col("r_currency") == col("currency")
            ).select((col("amount") * col("rate")).alias("amount")),
        ),
        (
            "SELECT * FROM Orders JOIN LATERAL TABLE(RatesAt(o_rowtime)) ON currency = r_currency",
            orders.join_lateral(
                call("RatesAt", col("o_rowtime")), col("currency") == col("r_currency")
            ),
        ),
        (
            "SELECT * FROM Orders LEFT JOIN LATERAL TABLE(RatesAt(o_rowtime)) ON TRUE "
            "WHERE currency = r_currency",
            orders.join_lateral(
                call("RatesAt", col("o_rowtime")), col("currency") == col("r_currency")
            ),
        ),
        (
            "SELECT * FROM Orders LEFT JOIN LATERAL TABLE(RatesAt(o_rowtime)) "
            "ON currency = r_currency",
            orders.left_outer_join_lateral(
                call("RatesAt", col("o_rowtime")), col("currency") == col("r_currency")
            ),
        ),
        (
            "SELECT /*+ STATE_TTL('o' = '1d', 'Product' = '12h') */ * FROM Orders o "
            "JOIN Product ON product_id = id",
            orders.join(senv.from_path("Product"), col("product_id") == col("id")).with_hint(
                "STATE_TTL", Orders="1d", Product="12h"
            ),
        ),
        (
            "SELECT * FROM Orders /*+ OPTIONS('source.monitor-interval' = '1 s') */",
            senv.from_path_with_options("Orders", {"source.monitor-interval": "1 s"}),
        ),
    ]
    for sql, table in pairs:
        assert senv.sql_query(sql).explain() == table.explain(), sql


def test_same_named_columns_of_two_tables(env: TableEnvironment) -> None:
    """As Flink: both are kept, the second renamed (id, id0), each found by its table."""
    q = env.sql_query("SELECT * FROM Product a JOIN Product b ON a.id = b.id")
    assert q.column_names == ("id", "name", "price", "id0", "name0", "price0")
    q = env.sql_query("SELECT b.name, a.name FROM Product a JOIN Product b ON a.id = b.id")
    assert q.column_names == ("name", "name0")
    with pytest.raises(SqlValidationError, match="Column 'name' is ambiguous"):
        env.sql_query("SELECT name FROM Product a JOIN Product b ON a.id = b.id")


def test_query_details(env: TableEnvironment) -> None:
    assert env.sql_query("SELECT amount + 1, amount FROM Orders").column_names == (
        "EXPR$0",
        "amount",
    )
    q = env.sql_query(
        "WITH big AS (SELECT * FROM Orders WHERE amount > 9) SELECT COUNT(*) FROM big"
    )
    assert q.row_type.field("EXPR$0").type.name == "BIGINT"
    q = env.sql_query("SELECT * FROM (VALUES (1, 'a'), (2, NULL)) AS t(n, s)")
    assert str(q.row_type) == "(n INT NOT NULL, s STRING)"
    q = env.sql_query("SELECT name FROM Product ORDER BY price DESC, 1 LIMIT 2 OFFSET 1")
    assert q.column_names == ("name",)
    q = env.sql_query(
        "SELECT currency FROM Orders GROUP BY currency HAVING COUNT(*) > 1 ORDER BY SUM(amount)"
    )
    assert q.column_names == ("currency",)
    q = env.sql_query("SELECT `order_id` AS `select` FROM default_catalog.default_database.Orders")
    assert q.column_names == ("select",)
    q = env.sql_query(
        "SELECT EXTRACT(HOUR FROM o_rowtime), TRIM(LEADING FROM currency) FROM Orders"
    )
    assert q.row_type.field("EXPR$0").type.name == "BIGINT"
    q = env.sql_query(
        "SELECT o_rowtime + INTERVAL '1 02:00:00' DAY TO SECOND AS t, -amount AS m FROM Orders"
    )
    assert q.column_names == ("t", "m")
    q = env.sql_query(
        "SELECT * FROM Orders WHERE (order_id, currency) IN (SELECT id, name FROM Product)"
    )
    assert q.column_names[0] == "order_id"


def test_sql_and_the_table_api_mix(env: TableEnvironment) -> None:
    cheap = env.from_path("Product").where(col("price") < 5)
    env.create_temporary_view("Cheap", cheap)
    q = env.sql_query("SELECT c.name FROM Cheap AS c")
    assert q.explain() == cheap.select(col("name")).explain()
    joined = env.sql_query("SELECT id, name FROM Product").join(
        env.from_path("Orders"), col("id") == col("product_id")
    )
    assert joined.column_names[:3] == ("id", "name", "order_id")


def test_a_sink_column_of_another_type_is_refused_when_planned(env: TableEnvironment) -> None:
    env.execute_sql("CREATE TABLE Counts (n INT, label STRING) WITH ('connector' = 'print')")
    with pytest.raises(SqlValidationError) as info:
        plan(env, "INSERT INTO Counts SELECT currency, currency FROM Orders")
    assert str(info.value) == (
        "SQL validation failed. From line 1, column 1 to line 1, column 56: Column types of "
        "query result and sink for 'default_catalog.default_database.Counts' do not match.\n"
        "Cause: Incompatible types for sink column 'n' at position 1.\n\n"
        "Query schema: [currency: STRING, currency0: STRING]\n"
        "Sink schema:  [n: INT, label: STRING]\n\n"
        "Cast the query's column to the sink's type, e.g. CAST(currency AS INT), or change the "
        "sink column's type."
    )
    # a narrowing Flink does not do implicitly either; the Table API and statement sets too
    with pytest.raises(SqlValidationError, match=r"sink column 'n' at position 1"):
        plan(env, "INSERT INTO Counts SELECT order_id, currency FROM Orders")
    orders = env.from_path("Orders")
    with pytest.raises(ValidationError, match=r"Query schema: \[order_id: BIGINT NOT NULL, "):
        orders.select(col("order_id"), col("currency")).execute_insert("Counts")
    statements = env.create_statement_set()
    statements.add_insert("Counts", orders.select(col("currency"), col("currency").alias("c")))
    with pytest.raises(ValidationError, match=r"Incompatible types for sink column 'n'"):
        statements.execute()
    with pytest.raises(SqlValidationError, match=r"Cause: Different number of columns\."):
        plan(env, "INSERT INTO Counts SELECT amount FROM Orders")


def test_a_sink_column_flink_casts_to_takes_the_query_column(env: TableEnvironment) -> None:
    env.execute_sql(
        "CREATE TABLE Wide (a BIGINT, d DECIMAL(10, 2), f DOUBLE, day DATE) "
        "WITH ('connector' = 'print')"
    )
    plan(env, "INSERT INTO Wide SELECT amount, amount, amount, o_rowtime FROM Orders")
    plan(env, "INSERT INTO Wide (day, a) SELECT o_rowtime, amount FROM Orders")


def test_insert_and_statement_sets_plan_before_anything_runs(env: TableEnvironment) -> None:
    text = env.execute_sql(
        "EXPLAIN INSERT INTO Out SELECT o.order_id, p.name FROM Orders o JOIN Product p "
        "ON o.product_id = p.id"
    ).collect()[0][0]
    assert text.splitlines()[1] == (
        "LogicalSink(table=[default_catalog.default_database.Out], fields=[order_id, name])"
    )
    # the second INSERT is invalid: the set is refused before the first runs (a unit test
    # cannot reach a server, so running the first would fail the test another way)
    with pytest.raises(SqlValidationError, match=r"line 1, column 84 .*do not match"):
        env.execute_sql(
            "EXECUTE STATEMENT SET BEGIN INSERT INTO Out SELECT order_id, currency FROM Orders; "
            "INSERT INTO Out SELECT order_id FROM Orders; END"
        )
    statements = env.create_statement_set()
    statements.add_insert_sql("INSERT INTO Out (name, order_id) SELECT currency, 1 FROM Orders")
    assert "LogicalSink(table=[default_catalog.default_database.Out]" in statements.explain()
    with pytest.raises(SqlValidationError, match="does not exist"):
        statements.add_insert_sql("INSERT INTO Nope SELECT * FROM Orders")


# -- errors ---------------------------------------------------------------------------------


def plan(env: TableEnvironment, sql: str) -> Table | None:
    """Run a statement as far as a unit test can: a query is planned (its Table returned),
    INSERTs planned and explained, anything else executed."""
    statement = parse_statement(sql)
    if isinstance(statement, S.QueryStatement):
        return env.sql_query(sql)
    if isinstance(statement, S.Insert | S.StatementSet):
        _Runner(env, sql).explain(statement)  # planned as running it would, not run
    else:
        env.execute_sql(sql)
    return None


@pytest.mark.parametrize(
    ("sql", "error", "line", "column", "message"),
    [
        ("SELECT order_id FORM Orders", SqlParserError, 1, 22, "did you mean FROM"),
        ("SELEC order_id FROM Orders", SqlParserError, 1, 1, "did you mean SELECT"),
        ("SELECT *\nFROM Orders\nWHER amount > 1", SqlParserError, 3, 6, "did you mean WHERE"),
        ("SELECT /*+ BROADCAST(Orders) FROM Orders", SqlParserError, 1, 8, "unclosed hint"),
        ("SELECT 'abc FROM Orders", SqlParserError, 1, 8, "unclosed string"),
        ("SELECT (1 + 2 FROM Orders", SqlParserError, 1, 15, "Was expecting one of"),
        ("SELECT amount FROM Orders WHERE", SqlParserError, 1, 32, "<expression>"),
        ("SELECT 1; SELECT 2", SqlParserError, 1, 11, "one statement at a time"),
        ("", SqlParserError, 1, 1, "empty"),
        ("ALTER TABLE Orders RENAME TO X", SqlParserError, 1, 1, "ALTER TABLE"),
        ("CREATE FUNCTION f AS 'x'", SqlParserError, 1, 1, "CREATE FUNCTION"),
        ('SELECT "a" FROM Orders', SqlParserError, 1, 8, "backticks"),
        (
            "CREATE TABLE T (x INT, PRIMARY KEY (x)) WITH ('connector' = 'print')",
            SqlParserError,
            1,
            39,
            '"NOT"',
        ),
        ("SELECT amont FROM Orders", SqlValidationError, 1, 8, "Did you mean 'amount'"),
        ("SELECT o.nope FROM Orders o", SqlValidationError, 1, 8, "not found in table 'o'"),
        ("SELECT x.amount FROM Orders o", SqlValidationError, 1, 8, "Table 'x' not found"),
        ("SELECT * FROM Oders", SqlValidationError, 1, 15, "Did you mean 'Orders'"),
        ("SELECT amount + 'x' FROM Orders", SqlValidationError, 1, 8, "PLUS needs numeric"),
        (
            "SELECT * FROM Orders WHERE COUNT(*) > 1",
            SqlValidationError,
            1,
            28,
            "not allowed in WHERE",
        ),
        (
            "SELECT currency, amount FROM Orders GROUP BY currency",
            SqlValidationError,
            1,
            1,
            "neither grouped nor aggregated",
        ),
        (
            "CREATE TABLE T (x INT) WITH ('connector' = 'print', 'nope' = '1')",
            SqlValidationError,
            1,
            53,
            "Unsupported options found for 'print'",
        ),
        (
            "CREATE TABLE T (x INT) WITH ('connector' = 'kafka')",
            SqlValidationError,
            1,
            30,
            "Unknown connector 'kafka'",
        ),
        (
            "CREATE TABLE T (x INT, y AS nope + 1) WITH ('connector' = 'print')",
            SqlValidationError,
            1,
            24,
            "refers to 'nope'",
        ),
        (
            "SELECT * FROM Orders INTERSECT SELECT * FROM Orders",
            SqlValidationError,
            1,
            1,
            "INTERSECT is not supported",
        ),
        (
            "SELECT COUNT(*) OVER (PARTITION BY currency) FROM Orders",
            SqlValidationError,
            1,
            8,
            "OVER aggregation",
        ),
        (
            "SELECT /*+ NOPE(Orders) */ * FROM Orders",
            SqlValidationError,
            1,
            12,
            "Unknown hint NOPE",
        ),
        (
            "SELECT /*+ BROADCAST(Nope) */ * FROM Orders JOIN Product ON product_id = id",
            SqlValidationError,
            1,
            12,
            "reads only",
        ),
        (
            "SELECT * FROM Orders FULL JOIN Product FOR SYSTEM_TIME AS OF o_proctime ON "
            "product_id = id",
            SqlValidationError,
            1,
            15,
            "only support INNER JOIN and LEFT JOIN",
        ),
        (
            "SELECT * FROM Orders WHERE amount IN (SELECT id FROM Product WHERE id = order_id)",
            SqlValidationError,
            1,
            39,
            "correlated IN subquery",
        ),
        ("INSERT INTO Orders2 SELECT * FROM Orders", SqlValidationError, 1, 1, "does not exist"),
        # Flink built-ins the product lacks are named as such, not as unregistered functions
        *(
            (
                sql,
                SqlValidationError,
                1,
                column,
                f"{name} is a Flink built-in function that this product does not support (yet)",
            )
            for name, sql, column in [
                ("SPLIT_INDEX", "SELECT SPLIT_INDEX(currency, ',', 1) FROM Orders", 8),
                ("JSON_VALUE", "SELECT JSON_VALUE(currency, '$.a') FROM Orders", 8),
                ("LISTAGG", "SELECT amount, LISTAGG(currency) FROM Orders GROUP BY amount", 16),
                ("CURRENT_WATERMARK", "SELECT CURRENT_WATERMARK(o_rowtime) FROM Orders", 8),
                # the unit is not read as a column
                (
                    "TIMESTAMPDIFF",
                    "SELECT TIMESTAMPDIFF(MINUTE, o_rowtime, o_rowtime) FROM Orders",
                    8,
                ),
            ]
        ),
        (
            "SELECT FLOOR(o_rowtime TO HOUR) FROM Orders",
            SqlParserError,
            1,
            8,
            "FLOOR(<time> TO <unit>) (at line 1, column 8) is not supported",
        ),
        (
            "SELECT CEIL(o_rowtime TO DAY) FROM Orders",
            SqlParserError,
            1,
            8,
            "CEIL(<time> TO <unit>)",
        ),
    ],
)
def test_malformed_statements_are_refused_with_line_and_column(
    env: TableEnvironment, sql: str, error: type, line: int, column: int, message: str
) -> None:
    with pytest.raises(error) as info:
        table = plan(env, sql)
        if table is not None:
            table.explain()
    assert message in str(info.value), str(info.value)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert f"line {line}, column {column}" in str(info.value)


def test_a_flink_built_in_the_product_lacks_is_named_in_the_table_api_too(
    env: TableEnvironment,
) -> None:
    orders = env.from_path("Orders")
    with pytest.raises(ValidationError, match=r"^SPLIT_INDEX is a Flink built-in function that"):
        orders.select(call("SPLIT_INDEX", col("currency"), ",", 1))
    with pytest.raises(ValidationError, match=r"^Unknown function 'my_split'\. Registered"):
        orders.select(call("my_split", col("currency")))


def test_a_registered_function_of_a_flink_built_ins_name_is_called(env: TableEnvironment) -> None:
    env.create_temporary_function("split_index", udf(lambda s, d, i: s, result_type="STRING"))
    query = env.sql_query("SELECT SPLIT_INDEX(currency, ',', 1) AS c FROM Orders")
    assert query.column_names == ("c",)


def test_tokens_and_spans() -> None:
    tokens = tokenize("SELECT a -- comment\n, `b``c` FROM t /* x */")
    assert [t.text for t in tokens] == ["SELECT", "a", ",", "b`c", "FROM", "t", ""]
    stmt = parse_statement("SELECT x FROM T")
    assert isinstance(stmt, S.QueryStatement)
    assert stmt.span == S.Span(0, 15)


def test_sql_query_takes_queries_only(env: TableEnvironment) -> None:
    with pytest.raises(SqlParserError, match='Encountered "DROP"'):
        env.sql_query("DROP TABLE Orders")
    with pytest.raises(ValidationError):
        env.sql_query("SELECT * FROM Orders; DROP TABLE Orders")


def test_a_statements_rows_are_a_list_and_a_context_manager_as_pyflinks() -> None:
    env = sql_env("batch")
    with env.execute_sql("SHOW TABLES").collect() as rows:
        assert "Orders" in [row[0] for row in rows]


def test_grouping_sets_rollup_and_cube_parse_into_their_sets() -> None:
    def sets(group_by: str) -> list[list[str]]:
        q = parse_statement(f"SELECT 1 FROM T GROUP BY {group_by}")
        item = q.query.body.group_by[-1]  # type: ignore[attr-defined]
        return [[k.parts[-1] for k in s] for s in item.sets]

    assert sets("ROLLUP (a, b)") == [["a", "b"], ["a"], []]
    assert sets("CUBE (a, b)") == [["a", "b"], ["a"], ["b"], []]
    assert sets("k, GROUPING SETS ((a, b), a, ())") == [["a", "b"], ["a"], []]


def test_grouping_sets_are_one_aggregation_per_set(senv: TableEnvironment) -> None:
    q = senv.sql_query(
        "SELECT currency, amount, COUNT(*) AS n FROM Orders GROUP BY GROUPING SETS "
        "((currency, amount), (currency), ())"
    )
    plan = q.explain().split("== Optimized Physical Plan ==")[1]
    assert plan.count("GroupAggregate(") == 3 and "Union(all=[true]" in plan
    assert "CAST(NULL AS INT) AS amount" in plan
