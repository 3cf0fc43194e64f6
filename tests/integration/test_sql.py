"""SQL statements on a real server: DDL over files, queries, INSERT INTO (the Table API's
``execute_insert``), CREATE TABLE AS, statement sets, and SQL mixed with the Table API;
every result checked against plain Python (streaming ones change by change)."""

from __future__ import annotations

import contextlib
import decimal
import json
import sqlite3
from pathlib import Path

from tableapi import TableEnvironment, col
from tableapi.types import DataType
from tests.integration.test_sql_seeds import changelog, files, final, write
from tests.reference import as_bag

ORDERS = [(1, 10, 3, "EUR"), (2, 11, 1, "USD"), (3, 10, 5, "EUR"), (4, 12, 2, None)]
PRODUCTS = [(10, "pen", 2.5), (11, "ink", 7.0), (13, "cap", 1.0)]


def register(env: TableEnvironment, root: Path) -> None:
    write(root / "orders", ("order_id", "product_id", "amount", "currency"), ORDERS)
    write(root / "products", ("id", "name", "price"), PRODUCTS)
    env.execute_sql(
        f"""CREATE TABLE Orders (order_id BIGINT, product_id BIGINT, amount INT,
        currency STRING, PRIMARY KEY (order_id) NOT ENFORCED) WITH ({files(root / "orders")})"""
    )
    env.execute_sql(
        f"""CREATE TABLE Products (id BIGINT, name STRING, price DOUBLE)
        WITH ({files(root / "products")})"""
    )


def test_batch_queries_inserts_and_ctas(env: TableEnvironment, shared_dir: Path) -> None:
    register(env, shared_dir)
    rows = env.execute_sql(
        "SELECT o.order_id, p.name, o.amount * p.price AS total FROM Orders o "
        "JOIN Products p ON o.product_id = p.id WHERE o.amount > 1 ORDER BY o.order_id"
    ).collect()
    price = {p[0]: p for p in PRODUCTS}
    expected = [
        (o[0], price[o[1]][1], o[2] * price[o[1]][2]) for o in ORDERS if o[1] in price and o[2] > 1
    ]
    assert [tuple(r) for r in rows] == sorted(expected)
    totals = env.execute_sql(
        "SELECT currency, SUM(amount) AS s, COUNT(*) AS n FROM Orders GROUP BY currency "
        "HAVING COUNT(*) >= 1"
    ).collect()
    assert as_bag(tuple(r) for r in totals) == as_bag([("EUR", 8, 2), ("USD", 1, 1), (None, 2, 1)])
    # INSERT INTO a filesystem table, then read it back
    out = shared_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    env.execute_sql(f"CREATE TABLE Out (id BIGINT, label STRING) WITH ({files(out)})")
    env.execute_sql(
        "INSERT INTO Out SELECT order_id, UPPER(currency) FROM Orders WHERE currency IS NOT NULL"
    ).wait()
    back = env.execute_sql("SELECT * FROM Out").collect()
    assert as_bag(tuple(r) for r in back) == as_bag(
        [(o[0], o[3].upper()) for o in ORDERS if o[3] is not None]
    )
    # INSERT with a column list: the listed columns by name, NULL for the others
    env.execute_sql("INSERT INTO Out (label) SELECT name FROM Products WHERE id = 13").wait()
    back = env.execute_sql("SELECT id, label FROM Out WHERE label = 'cap'").collect()
    assert [tuple(r) for r in back] == [(None, "cap")]
    # CREATE TABLE ... AS SELECT
    ctas = shared_dir / "ctas"
    env.execute_sql(
        f"CREATE TABLE Cheap WITH ({files(ctas)}) AS SELECT id, name FROM Products WHERE price < 5"
    ).wait()
    assert env.execute_sql("DESCRIBE Cheap").collect()[1][:2] == ("name", "STRING")
    back = env.execute_sql("SELECT * FROM Cheap").collect()
    assert as_bag(tuple(r) for r in back) == as_bag([(10, "pen"), (13, "cap")])
    written = [json.loads(line) for f in ctas.glob("*.json") for line in f.open()]
    assert sorted(r["id"] for r in written) == [10, 13]


def test_streaming_sql_changelog_equals_the_table_api(senv: TableEnvironment, shared_dir: Path):
    """A left join of a changelog with an aggregate on top: SQL and the Table API give the
    same changelog (the same plan), and it applies to the right final table."""
    orders = shared_dir / "orders"
    write(
        orders,
        ("order_id", "product_id", "amount", "op"),
        [(1, 10, 3, "+I"), (2, 11, 1, "+I"), (1, 10, 3, "-U"), (1, 10, 4, "+U"), (3, 99, 2, "+I")],
    )
    write(shared_dir / "products", ("id", "name", "price"), PRODUCTS)
    senv.execute_sql(
        f"""CREATE TABLE Orders (order_id BIGINT, product_id BIGINT, amount INT)
        WITH ({files(orders)}, 'changelog.op-column' = 'op')"""
    )
    senv.execute_sql(
        f"CREATE TABLE Products (id BIGINT, name STRING, price DOUBLE) "
        f"WITH ({files(shared_dir / 'products')})"
    )
    sql = (
        "SELECT p.name, SUM(o.amount) AS total, COUNT(*) AS n FROM Orders AS o "
        "LEFT JOIN Products AS p ON o.product_id = p.id GROUP BY p.name"
    )
    twin = (
        senv.from_path("Orders")
        .left_outer_join(senv.from_path("Products"), col("product_id") == col("id"))
        .group_by(col("name"))
        .select(col("name"), col("amount").sum.alias("total"), col("amount").count.alias("n"))
    )
    assert senv.sql_query(sql).column_names == twin.column_names
    result = senv.execute_sql(sql)
    expected = as_bag([("pen", 4, 1), ("ink", 1, 1), (None, 2, 1)])
    assert final(result) == expected
    # per group, Flink's changes: the pen order's -U empties its group (-D), +U starts it again
    by_group: dict[object, list[tuple[str, tuple[object, ...]]]] = {}
    for kind, row in changelog(result):
        by_group.setdefault(row[0], []).append((kind, row))
    assert by_group == {
        "pen": [("+I", ("pen", 3, 1)), ("-D", ("pen", 3, 1)), ("+I", ("pen", 4, 1))],
        "ink": [("+I", ("ink", 1, 1))],
        None: [("+I", (None, 2, 1))],
    }
    twin_changes = changelog(twin.execute())
    assert sorted(twin_changes, key=str) == sorted(changelog(result), key=str)


def test_statement_set_runs_every_insert(senv: TableEnvironment, shared_dir: Path, capsys) -> None:
    register(senv, shared_dir)
    senv.execute_sql(
        "CREATE TABLE Big (order_id BIGINT, amount INT) WITH ('connector' = 'print', "
        "'print-identifier' = 'big')"
    )
    senv.execute_sql(
        "CREATE TABLE Named (order_id BIGINT, name STRING) WITH ('connector' = 'print', "
        "'print-identifier' = 'named')"
    )
    result = senv.execute_sql("""EXECUTE STATEMENT SET BEGIN
INSERT INTO Big SELECT order_id, amount FROM Orders WHERE amount > 2;
INSERT INTO Named SELECT o.order_id, p.name FROM Orders o JOIN Products p
  ON o.product_id = p.id;
END""")
    result.wait()
    lines = sorted(line for line in capsys.readouterr().out.splitlines() if "> " in line)
    big = ["big> +I[1, 3]", "big> +I[3, 5]"]
    named = ["named> +I[1, pen]", "named> +I[2, ink]", "named> +I[3, pen]"]
    assert lines == sorted([*big, *named])


def test_insert_into_a_jdbc_table(senv: TableEnvironment, shared_dir: Path) -> None:
    """INSERT INTO is execute_insert: an aggregate's changelog upserted into SQLite."""
    db = shared_dir / "out.db"
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE totals (currency TEXT PRIMARY KEY, total INTEGER, n INTEGER)")
    db.chmod(0o666)
    register(senv, shared_dir)
    senv.execute_sql(
        f"""CREATE TABLE Totals (currency STRING, total INT, n BIGINT,
        PRIMARY KEY (currency) NOT ENFORCED)
        WITH ('connector' = 'jdbc', 'url' = 'jdbc:sqlite:{db}', 'table-name' = 'totals')"""
    )
    senv.execute_sql(
        "INSERT INTO Totals SELECT currency, SUM(amount), COUNT(*) FROM Orders "
        "WHERE currency IS NOT NULL GROUP BY currency"
    ).wait()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT currency, total, n FROM totals").fetchall()
    assert sorted(rows) == [("EUR", 8, 2), ("USD", 1, 1)]


def test_a_statement_set_object_in_batch_mode(env: TableEnvironment, shared_dir: Path, capsys):
    register(env, shared_dir)
    env.execute_sql("CREATE TABLE P1 (id BIGINT, name STRING) WITH ('connector' = 'print', "
                    "'print-identifier' = 'sql')")  # fmt: skip
    env.execute_sql("CREATE TABLE P2 (id BIGINT, name STRING) WITH ('connector' = 'print', "
                    "'print-identifier' = 'api')")  # fmt: skip
    statements = env.create_statement_set()
    statements.add_insert_sql("INSERT INTO P1 SELECT id, name FROM Products WHERE price > 5")
    statements.add_insert("P2", env.from_path("Products").select(col("id"), col("name")))
    statements.execute().wait()
    lines = sorted(line for line in capsys.readouterr().out.splitlines() if "> " in line)
    assert lines == ["api> +I[10, pen]", "api> +I[11, ink]", "api> +I[13, cap]",
                     "sql> +I[11, ink]"]  # fmt: skip


def test_a_select_prints_as_flinks_sql_client(
    env: TableEnvironment, senv: TableEnvironment, shared_dir: Path, capsys
) -> None:
    """Columns as wide as their types, values right-aligned, an op column when streaming."""
    register(env, shared_dir)
    env.execute_sql("SELECT order_id, currency FROM Orders WHERE order_id < 3 ORDER BY 1").print()
    env.execute_sql("SELECT * FROM Orders WHERE amount > 100").print()
    register(senv, shared_dir / "s")
    senv.execute_sql("SELECT name, price > 5 AS dear FROM Products WHERE id = 11").print()
    assert capsys.readouterr().out.splitlines() == [
        "+----------------------+--------------------------------+",
        "|             order_id |                       currency |",
        "+----------------------+--------------------------------+",
        "|                    1 |                            EUR |",
        "|                    2 |                            USD |",
        "+----------------------+--------------------------------+",
        "2 rows in set",
        "Empty set",
        "+----+--------------------------------+--------+",
        "| op |                           name |   dear |",
        "+----+--------------------------------+--------+",
        "| +I |                            ink |   TRUE |",
        "+----+--------------------------------+--------+",
        "1 row in set",
    ]


def test_sql_and_the_table_api_both_ways(env: TableEnvironment, shared_dir: Path) -> None:
    register(env, shared_dir)
    env.create_temporary_view("Dear", env.from_path("Products").where(col("price") > 5))
    rows = env.execute_sql("SELECT d.name FROM Dear AS d").collect()
    assert [tuple(r) for r in rows] == [("ink",)]
    eur = env.sql_query("SELECT order_id, product_id FROM Orders WHERE currency = 'EUR'")
    joined = eur.join(env.from_path("Products"), col("product_id") == col("id"))
    got = joined.select(col("order_id"), col("name")).execute().collect()
    assert as_bag(tuple(r) for r in got) == as_bag([(1, "pen"), (3, "pen")])


def test_insert_casts_where_flink_does(env: TableEnvironment, shared_dir: Path) -> None:
    """The sink's types are Flink's implicit casts of the query's: INT into BIGINT, DECIMAL and
    DOUBLE columns arrives as those types' values (a STRING into an INT column is refused when
    planned: tests/unit/test_sql.py)."""
    register(env, shared_dir)
    out = shared_dir / "wide"
    out.mkdir()
    out.chmod(0o777)
    env.execute_sql(
        f"CREATE TABLE Wide (id BIGINT, a BIGINT, d DECIMAL(10, 2), f DOUBLE) WITH ({files(out)})"
    )
    env.execute_sql("INSERT INTO Wide SELECT order_id, amount, amount, amount FROM Orders").wait()
    back = env.execute_sql("SELECT * FROM Wide").collect()
    assert as_bag(tuple(r) for r in back) == as_bag(
        [(o[0], o[2], decimal.Decimal(f"{o[2]}.00"), float(o[2])) for o in ORDERS]
    )
    assert env.from_path("Wide").row_type.field("d").type == DataType.parse("DECIMAL(10, 2)")


def test_set_runtime_mode_batch_runs_the_next_query_in_batch(senv: TableEnvironment, shared_dir):
    """As in Flink's SQL client: after SET 'execution.runtime-mode' = 'batch' a streaming
    environment's next query gives its final rows, no -U/+U."""
    register(senv, shared_dir)
    sql = "SELECT currency, SUM(amount) AS total FROM Orders GROUP BY currency"
    assert {kind for kind, _ in changelog(senv.execute_sql(sql))} == {"+I", "-U", "+U"}
    senv.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    rows = changelog(senv.execute_sql(sql))
    assert sorted(rows, key=str) == sorted(
        [("+I", ("EUR", 8)), ("+I", ("USD", 1)), ("+I", (None, 2))], key=str
    )


def test_flinks_csv_format_options_read_the_file(env: TableEnvironment, shared_dir: Path) -> None:
    """Flink's csv options, read into Spark's reader options: a ';' delimiter, "'" quotes, '#'
    comment lines, a null literal, spaces trimmed."""
    path = shared_dir / "semi"
    path.mkdir(mode=0o777)
    (path / "part-0.csv").write_text("# id;name\n1; 'a;b' \n2;n/a\n")
    env.execute_sql(
        f"""CREATE TABLE Semi (id BIGINT, name STRING) WITH ('connector' = 'filesystem',
        'path' = '{path}', 'format' = 'csv', 'csv.field-delimiter' = ';',
        'csv.quote-character' = '''', 'csv.allow-comments' = 'true',
        'csv.null-literal' = 'n/a', 'csv.trim-spaces' = 'true')"""
    )
    rows = env.execute_sql("SELECT * FROM Semi").collect()
    assert sorted((tuple(r) for r in rows), key=str) == [(1, "a;b"), (2, None)]
