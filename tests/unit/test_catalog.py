"""One catalog for the Table API and SQL (Flink's CatalogManager): permanent and temporary
tables and views (a temporary one shadows a permanent one; each is dropped by its own
statement), qualified names, the current catalog and database, temporary system and catalog
functions, and SHOW CREATE TABLE|VIEW as Flink 2.3 prints it. The expected DDL texts are
PyFlink 2.3.0's output for the same statements (``execute_sql(..).collect()``)."""

from __future__ import annotations

import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment, ValidationError, call, col, udf
from tableapi.catalog import CatalogManager, ObjectIdentifier, parse_path
from tableapi.errors import SqlValidationError

PERMANENT = (
    "CREATE TABLE P (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) "
    "WITH ('connector' = 'filesystem', 'path' = '/tmp/h4/p', 'format' = 'json')"
)
TEMPORARY = (
    "CREATE TEMPORARY TABLE T (id BIGINT, ts TIMESTAMP(3), c AS id * 2, "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
    "WITH ('connector' = 'filesystem', 'path' = '/tmp/h4/t', 'format' = 'json')"
)
# PyFlink 2.3.0's SHOW CREATE TABLE of the two tables above.
FLINK_SHOW_PERMANENT = """CREATE TABLE `default_catalog`.`default_database`.`P` (
  `id` BIGINT NOT NULL,
  `name` VARCHAR(2147483647),
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
WITH (
  'connector' = 'filesystem',
  'format' = 'json',
  'path' = '/tmp/h4/p'
)
"""
FLINK_SHOW_TEMPORARY = """CREATE TEMPORARY TABLE `default_catalog`.`default_database`.`T` (
  `id` BIGINT,
  `ts` TIMESTAMP(3),
  `c` AS `id` * 2,
  WATERMARK FOR `ts` AS `ts` - INTERVAL '5' SECOND
)
WITH (
  'connector' = 'filesystem',
  'format' = 'json',
  'path' = '/tmp/h4/t'
)
"""


@pytest.fixture
def env() -> TableEnvironment:
    env = TableEnvironment.create()
    env.execute_sql(PERMANENT)
    env.execute_sql(TEMPORARY)
    return env


def rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in env.execute_sql(sql).collect()]


def show(env: TableEnvironment, sql: str) -> str:
    [(text,)] = rows(env, sql)
    assert isinstance(text, str)
    return text


# -- SHOW CREATE TABLE | VIEW ---------------------------------------------------------------------
def test_show_create_table_says_temporary_only_for_a_temporary_table(env: TableEnvironment) -> None:
    assert show(env, "SHOW CREATE TABLE P") == FLINK_SHOW_PERMANENT
    assert show(env, "SHOW CREATE TABLE T") == FLINK_SHOW_TEMPORARY


def test_show_create_table_prints_types_expressions_comment_and_sorted_options() -> None:
    env = TableEnvironment.create()
    env.execute_sql(
        "CREATE TEMPORARY TABLE A (id BIGINT NOT NULL, d DECIMAL(10, 2), s STRING, "
        "pt AS PROCTIME(), u AS UPPER(s), ts TIMESTAMP(3), WATERMARK FOR ts AS ts, "
        "PRIMARY KEY (id) NOT ENFORCED) COMMENT 'hi' WITH ('path' = '/x', "
        "'connector' = 'filesystem', 'format' = 'csv', 'source.monitor-interval' = '1 s')"
    )
    assert show(env, "SHOW CREATE TABLE A") == (  # PyFlink 2.3.0's text
        "CREATE TEMPORARY TABLE `default_catalog`.`default_database`.`A` (\n"
        "  `id` BIGINT NOT NULL,\n  `d` DECIMAL(10, 2),\n  `s` VARCHAR(2147483647),\n"
        "  `pt` AS PROCTIME(),\n  `u` AS UPPER(`s`),\n  `ts` TIMESTAMP(3),\n"
        "  WATERMARK FOR `ts` AS `ts`,\n"
        "  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED\n)\nCOMMENT 'hi'\nWITH (\n"
        "  'connector' = 'filesystem',\n  'format' = 'csv',\n  'path' = '/x',\n"
        "  'source.monitor-interval' = '1 s'\n)\n"
    )


def test_show_create_table_writes_computed_columns_as_flink_does() -> None:
    env = TableEnvironment.create()
    env.execute_sql(
        "CREATE TABLE X (a INT, b INT, s STRING, ts TIMESTAMP(3), c1 AS (a + b) * 2, "
        "c2 AS a + b * 2, c3 AS CAST(a AS STRING), c5 AS COALESCE(a, 0), c6 AS a - (b - 1), "
        "c7 AS a > 1 AND b < 2 OR a IS NULL, c8 AS CAST(s AS INT), c9 AS -a, "
        "WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE) WITH ('connector' = 'print')"
    )
    # PyFlink 2.3.0's text (s || 'x' it writes as written; the product as CONCAT(`s`, 'x'))
    assert show(env, "SHOW CREATE TABLE X") == (
        "CREATE TABLE `default_catalog`.`default_database`.`X` (\n  `a` INT,\n  `b` INT,\n"
        "  `s` VARCHAR(2147483647),\n  `ts` TIMESTAMP(3),\n  `c1` AS (`a` + `b`) * 2,\n"
        "  `c2` AS `a` + `b` * 2,\n  `c3` AS CAST(`a` AS STRING),\n  `c5` AS COALESCE(`a`, 0),\n"
        "  `c6` AS `a` - (`b` - 1),\n  `c7` AS `a` > 1 AND `b` < 2 OR `a` IS NULL,\n"
        "  `c8` AS CAST(`s` AS INTEGER),\n  `c9` AS - `a`,\n"
        "  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' MINUTE\n)\n"
        "WITH (\n  'connector' = 'print'\n)\n"
    )


def test_show_create_of_a_table_api_table_follows_how_it_was_created() -> None:
    env = TableEnvironment.create()
    schema = Schema.new_builder().column("x", "INT").build()
    env.create_temporary_table(
        "B", TableDescriptor.for_connector("print").schema(schema).option("print-identifier", "p")
        .build()
    )  # fmt: skip
    env.create_table("C", TableDescriptor.for_connector("blackhole").schema(schema).build())
    assert show(env, "SHOW CREATE TABLE B") == (
        "CREATE TEMPORARY TABLE `default_catalog`.`default_database`.`B` (\n  `x` INT\n)\n"
        "WITH (\n  'connector' = 'print',\n  'print-identifier' = 'p'\n)\n"
    )
    assert show(env, "SHOW CREATE TABLE C") == (
        "CREATE TABLE `default_catalog`.`default_database`.`C` (\n  `x` INT\n)\n"
        "WITH (\n  'connector' = 'blackhole'\n)\n"
    )


def test_show_create_view_and_the_wrong_kind(env: TableEnvironment) -> None:
    env.execute_sql("CREATE VIEW V AS SELECT id, name FROM P WHERE id > 1")
    env.execute_sql("CREATE TEMPORARY VIEW TV (a) AS SELECT id FROM T")
    # Flink prints the query expanded (`P`.`id` ...); the product prints it as written.
    assert show(env, "SHOW CREATE VIEW V") == (
        "CREATE VIEW `default_catalog`.`default_database`.`V` (\n  `id`,\n  `name`\n)\n"
        "AS SELECT id, name FROM P WHERE id > 1\n"
    )
    assert show(env, "SHOW CREATE VIEW TV").startswith(
        "CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`TV` (\n  `a`\n)\nAS "
    )
    with pytest.raises(
        SqlValidationError,
        match=r"SHOW CREATE TABLE is only supported for tables, but "
        r"`default_catalog`\.`default_database`\.`V` is a view\. Please use SHOW CREATE VIEW",
    ):
        env.execute_sql("SHOW CREATE TABLE V")
    with pytest.raises(SqlValidationError, match=r"`P` is a table\. Please use SHOW CREATE TABLE"):
        env.execute_sql("SHOW CREATE VIEW P")
    with pytest.raises(
        SqlValidationError,
        match=r"Table with identifier `default_catalog`\.`default_database`\.`Nope` does not "
        r"exist\. Tables: P, T, TV, V\.",
    ):
        env.execute_sql("SHOW CREATE TABLE Nope")
    env.create_temporary_view("Api", env.from_path("P"))
    with pytest.raises(SqlValidationError, match="a view defined by a Table API program"):
        env.execute_sql("SHOW CREATE VIEW Api")


# -- temporary and permanent objects --------------------------------------------------------------
def test_a_temporary_table_shadows_a_permanent_one_until_dropped(env: TableEnvironment) -> None:
    env.execute_sql(
        "CREATE TEMPORARY TABLE P (x INT) WITH ('connector' = 'filesystem', 'path' = '/x', "
        "'format' = 'csv')"
    )
    assert env.from_path("P").column_names == ("x",)
    assert show(env, "SHOW CREATE TABLE P").startswith("CREATE TEMPORARY TABLE")
    assert env.list_tables() == ["P", "T"] and env.list_temporary_tables() == ["P", "T"]
    with pytest.raises(
        SqlValidationError,
        match=r"Temporary table with identifier '`default_catalog`\.`default_database`\.`P`' "
        r"exists\. Drop it first before removing the permanent table",
    ):
        env.execute_sql("DROP TABLE P")
    assert rows(env, "DROP TEMPORARY TABLE P") == [("OK",)]
    assert env.from_path("P").column_names == ("id", "name")  # the permanent one again
    assert show(env, "SHOW CREATE TABLE P") == FLINK_SHOW_PERMANENT
    assert rows(env, "DROP TABLE P") == [("OK",)]
    assert env.list_tables() == ["T"]


def test_each_drop_acts_on_its_own_kind(env: TableEnvironment) -> None:
    with pytest.raises(
        SqlValidationError,
        match=r"Temporary table or view with identifier 'default_catalog\.default_database\.P' "
        r"does not exist\. 'P' is a table: use DROP TABLE P\.",
    ):
        env.execute_sql("DROP TEMPORARY TABLE P")
    assert rows(env, "DROP TEMPORARY TABLE IF EXISTS P") == [("OK",)]
    assert env.list_tables() == ["P", "T"]
    with pytest.raises(SqlValidationError, match=r"Temporary table with identifier .*`T`' exists"):
        env.execute_sql("DROP TABLE IF EXISTS T")  # Flink refuses it too, IF EXISTS or not
    with pytest.raises(
        SqlValidationError,
        match=r"Table with identifier 'default_catalog\.default_database\.Nope' does not exist\. "
        r"Tables: P, T\.",
    ):
        env.execute_sql("DROP TABLE Nope")
    env.execute_sql("CREATE VIEW V AS SELECT id FROM P")
    with pytest.raises(SqlValidationError, match=r"'V' is a view: use DROP VIEW V\."):
        env.execute_sql("DROP TABLE V")
    with pytest.raises(SqlValidationError, match=r"'V' is a view: use DROP VIEW V\."):
        env.execute_sql("DROP TEMPORARY VIEW V")
    assert env.drop_temporary_view("V") is False and env.drop_view("V") is True
    assert env.drop_temporary_table("P") is False and env.drop_temporary_table("T") is True
    assert env.drop_table("P") is True and env.drop_table("P") is False
    assert env.list_tables() == []


def test_create_refuses_only_an_object_of_the_same_kind_of_lifetime(env: TableEnvironment) -> None:
    with pytest.raises(
        SqlValidationError,
        match=r"Could not execute CreateTable in path `default_catalog`\.`default_database`\.`P`"
        r": a table of that name exists already",
    ):
        env.execute_sql("CREATE TABLE P (x INT) WITH ('connector' = 'print')")
    with pytest.raises(SqlValidationError, match=r"a temporary table of that name exists"):
        env.execute_sql("CREATE TEMPORARY VIEW T AS SELECT 1 AS x")
    assert rows(env, "CREATE TABLE IF NOT EXISTS P (x INT) WITH ('connector' = 'print')") == [
        ("OK",)
    ]
    assert rows(env, "CREATE TABLE T (x INT) WITH ('connector' = 'print')") == [("OK",)]
    assert env.list_tables() == ["P", "T"] and env.list_temporary_tables() == ["T"]
    assert env.from_path("T").column_names == ("id", "ts", "c")  # the temporary one


def test_table_api_views_and_tables_are_permanent_or_temporary() -> None:
    env = TableEnvironment.create()
    ids = env.from_elements([(1,)], ["id"])
    env.create_view("Ids", ids)
    env.create_temporary_view("Tmp", ids)
    assert env.list_views() == ["Ids", "Tmp"] and env.list_temporary_views() == ["Tmp"]
    with pytest.raises(ValidationError, match=r"Permanent view .*`Ids` exists already"):
        env.create_view("Ids", ids)
    env.create_view("Ids", ids, ignore_if_exists=True)
    with pytest.raises(ValidationError, match=r"create_view\(\) takes a Table"):
        env.create_view("X", "SELECT 1")  # type: ignore[arg-type]
    assert [tuple(r) for r in env.execute_sql("SHOW VIEWS").collect()] == [("Ids",), ("Tmp",)]


# -- names ----------------------------------------------------------------------------------------
def test_qualified_and_partially_qualified_names_mean_one_table(env: TableEnvironment) -> None:
    plans = {
        env.sql_query(f"SELECT id FROM {name}").explain()
        for name in ("P", "default_database.P", "default_catalog.default_database.P", "`P`")
    }
    assert len(plans) == 1
    assert "table=[[default_catalog, default_database, P]]" in plans.pop()
    assert env.from_path("default_catalog.default_database.P").column_names == ("id", "name")
    assert env.sql_query(
        "SELECT default_catalog.default_database.P.id FROM default_catalog.default_database.P"
    ).column_names == ("id",)
    with pytest.raises(
        SqlValidationError,
        match=r"A database with name \[sales\] does not exist in the catalog: "
        r"\[default_catalog\]; databases: default_database\.",
    ):
        env.execute_sql("CREATE TABLE sales.X (x INT) WITH ('connector' = 'print')")
    with pytest.raises(
        SqlValidationError,
        match=r"Object 'hive\.db\.P' not found in default_catalog\.default_database\. Tables "
        r"and views: P, T\.",
    ):
        env.sql_query("SELECT * FROM hive.db.P")
    with pytest.raises(ValidationError, match=r"Table 'sales\.P' not found"):
        env.from_path("sales.P")
    assert parse_path("`a.b`.c") == ("a.b", "c")


def test_a_view_is_not_a_table_with_a_connector(env: TableEnvironment) -> None:
    env.execute_sql("CREATE VIEW V AS SELECT id, name FROM P")
    with pytest.raises(
        ValidationError,
        match=r"'V' \(default_catalog\.default_database\.V\) is a view, not a table",
    ):
        env.descriptor("V")
    with pytest.raises(SqlValidationError, match=r"'V' is a view: INSERT INTO a table"):
        env.execute_sql("INSERT INTO V SELECT id, name FROM P")
    with pytest.raises(
        SqlValidationError,
        match=r"Table `default_catalog`\.`default_database`\.`Nope` does not exist\. Tables: P, T, "
        r"V\.",
    ):
        env.execute_sql("INSERT INTO Nope SELECT id, name FROM P")


def test_an_insert_by_a_qualified_name_writes_the_table(env: TableEnvironment) -> None:
    env.execute_sql("CREATE TABLE Out (id BIGINT, name STRING) WITH ('connector' = 'print')")
    explained = show(
        env, "EXPLAIN INSERT INTO default_catalog.default_database.Out SELECT id, name FROM P"
    )
    assert "LogicalSink(table=[default_catalog.default_database.Out], fields=[id, name])" in (
        explained
    )


def test_catalogs_databases_and_use() -> None:
    env = TableEnvironment.create()
    assert rows(env, "SHOW CATALOGS") == [("default_catalog",)]
    assert rows(env, "SHOW DATABASES") == [("default_database",)]
    assert rows(env, "SHOW CURRENT CATALOG") == [("default_catalog",)]
    assert env.execute_sql("SHOW CURRENT DATABASE").row_type.names == ("current database name",)
    for use in ("USE CATALOG default_catalog", "USE default_database",
                "USE default_catalog.default_database"):  # fmt: skip
        assert rows(env, use) == [("OK",)]
    with pytest.raises(
        SqlValidationError, match=r"A catalog with name \[nope\] does not exist; catalogs: "
    ):
        env.execute_sql("USE CATALOG nope")
    with pytest.raises(SqlValidationError, match=r"A database with name \[nope\] does not exist"):
        env.execute_sql("USE nope")
    assert (env.get_current_catalog(), env.get_current_database()) == (
        "default_catalog",
        "default_database",
    )


# -- functions -------------------------------------------------------------------------------------
def test_temporary_system_and_catalog_functions() -> None:
    env = TableEnvironment.create()
    t = env.from_elements([(1,)], ["a"])
    env.create_temporary_system_function("f", udf(lambda x: x + 1, result_type="BIGINT"))
    env.create_temporary_function("f", udf(lambda x: x, result_type="STRING"))
    env.create_temporary_function("g", udf(lambda x: x, result_type="INT"))
    # a system function is found before a catalog function of the same name (Flink's order)
    assert str(t.select(call("f", col("a")).alias("r")).row_type) == "(r BIGINT)"
    assert env.list_user_defined_functions() == ["f", "g"]
    assert rows(env, "SHOW USER FUNCTIONS") == [("f",), ("g",)]
    assert ("f",) in rows(env, "SHOW FUNCTIONS") and ("upper",) in rows(env, "SHOW FUNCTIONS")
    with pytest.raises(ValidationError, match=r"A function named 'f' does already exist"):
        env.create_temporary_system_function("F", udf(lambda x: x, result_type="INT"))
    assert (
        env.drop_temporary_function("g") is True
        and env.drop_temporary_system_function("g") is False
    )
    assert rows(env, "DROP TEMPORARY SYSTEM FUNCTION f") == [("OK",)]
    assert str(t.select(call("f", col("a")).alias("r")).row_type) == "(r STRING)"
    with pytest.raises(
        SqlValidationError,
        match=r"Temporary catalog function `default_catalog`\.`default_database`\.`g` doesn't "
        r"exist\. User functions: f\.",
    ):
        env.execute_sql("DROP TEMPORARY FUNCTION g")
    with pytest.raises(SqlValidationError, match=r"A function named 'g' doesn't exist"):
        env.execute_sql("DROP TEMPORARY SYSTEM FUNCTION g")
    with pytest.raises(SqlValidationError, match=r"Function default_database\.f does not exist"):
        env.execute_sql("DROP FUNCTION f")  # f is temporary; the product has no catalog functions
    assert rows(env, "DROP TEMPORARY FUNCTION IF EXISTS g") == [("OK",)]
    # a temporary system function shadows a built-in, a temporary catalog function does not
    env.create_temporary_function("upper", udf(lambda x: x, result_type="INT"))
    names = env.from_elements([("a",)], ["s"])
    assert str(names.select(call("upper", col("s")).alias("u")).row_type) == "(u STRING)"
    env.create_temporary_system_function("UPPER", udf(lambda x: len(x), result_type="BIGINT"))
    assert str(names.select(call("upper", col("s")).alias("u")).row_type) == "(u BIGINT)"
    assert str(env.sql_query("SELECT UPPER(s) AS u FROM (VALUES ('a')) AS v(s)").row_type) == (
        "(u BIGINT)"
    )
    env.drop_temporary_system_function("upper")
    env.drop_temporary_function("upper")
    assert rows(env, "DROP TEMPORARY FUNCTION default_database.F") == [("OK",)]
    assert env.list_user_defined_functions() == []


# -- the catalog itself ---------------------------------------------------------------------------
def test_identifiers_print_as_flink_prints_them() -> None:
    name = CatalogManager().qualify("db_less")
    assert name == ObjectIdentifier.of("db_less")
    assert (str(name), name.quoted(), name.to_list()) == (
        "default_catalog.default_database.db_less",
        "`default_catalog`.`default_database`.`db_less`",
        "[default_catalog, default_database, db_less]",
    )
    with pytest.raises(ValidationError, match="at most 3 parts"):
        CatalogManager().qualify(("a", "b", "c", "d"))
    with pytest.raises(ValidationError, match="Unclosed backquote"):
        parse_path("`a")
