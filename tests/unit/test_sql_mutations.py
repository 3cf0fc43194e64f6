"""A property of the SQL front end: a valid statement with random token mutations (one to
three tokens deleted, repeated, swapped or replaced, or names replaced by other names) is
either refused with a
:class:`SqlParserError` / :class:`SqlValidationError` that gives its line and column, or
it plans (queries and INSERTs are planned and explained; other statements run). Never an
internal exception, never an error without a place."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tableapi.errors import SqlParserError, SqlValidationError, ValidationError
from tableapi.sql.parser import Token, tokenize
from tests.unit.test_sql import plan, sql_env

STATEMENTS = [
    "SELECT o.order_id, p.name, o.amount * 2 AS twice FROM Orders AS o "
    "JOIN Product AS p ON o.product_id = p.id WHERE o.amount > 1 AND p.price < 10.5",
    "SELECT currency, SUM(amount) AS total, COUNT(*) FROM Orders "
    "GROUP BY currency HAVING COUNT(DISTINCT order_id) > 1 ORDER BY total DESC LIMIT 5",
    "SELECT * FROM Orders o, Shipments s WHERE o.order_id = s.s_order_id "
    "AND o.o_rowtime BETWEEN s.s_rowtime - INTERVAL '4' HOUR AND s.s_rowtime",
    "SELECT /*+ LOOKUP('table'='c', 'retry-predicate'='lookup_miss', "
    "'retry-strategy'='fixed_delay', 'fixed-delay'='1s', 'max-attempts'='2') */ "
    "o.order_id, c.c_name FROM Orders AS o LEFT JOIN Customers FOR SYSTEM_TIME AS OF "
    "o.o_proctime AS c ON o.product_id = c.c_id AND c.c_age > 20",
    "SELECT o.amount * r.rate AS amount FROM Orders AS o JOIN Rates FOR SYSTEM_TIME AS OF "
    "o.o_rowtime AS r ON o.currency = r.r_currency",
    "SELECT * FROM Orders WHERE product_id IN (SELECT id FROM Product WHERE price > 1) "
    "AND NOT EXISTS (SELECT 1 FROM Shipments WHERE s_order_id = order_id)",
    "SELECT name, CASE WHEN price > 5 THEN 'dear' ELSE 'cheap' END AS band, "
    "CAST(price AS DECIMAL(10, 2)) FROM Product UNION ALL SELECT currency, 'x', 1.5 FROM Orders",
    "SELECT /*+ BROADCAST(Product), STATE_TTL('Orders' = '1d') */ * FROM Orders "
    "LEFT JOIN Product /*+ OPTIONS('format' = 'json') */ ON product_id = id",
    "CREATE TABLE T2 (a INT NOT NULL, b STRING, ts TIMESTAMP(3), c AS UPPER(b), "
    "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (a) NOT ENFORCED) "
    "WITH ('connector' = 'filesystem', 'path' = '/nonexistent/t2', 'format' = 'csv')",
    "CREATE TEMPORARY VIEW Big (id, total) AS SELECT order_id, amount FROM Orders "
    "WHERE amount > 100",
    "INSERT INTO Out SELECT o.order_id, p.name FROM Orders o JOIN Product p ON o.product_id = p.id",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO Out SELECT order_id, currency FROM Orders; "
    "INSERT INTO Out (name, order_id) SELECT name, id FROM Product; END",
    "EXPLAIN PLAN FOR SELECT DISTINCT currency FROM Orders",
    "DESCRIBE Orders",
    "SET 'table.exec.state.ttl' = '1 h'",
    "DROP TEMPORARY TABLE IF EXISTS Shipments",
    "WITH t AS (SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s)) SELECT n FROM t",
]
VOCABULARY = [
    "SELECT", "FROM", "WHERE", "JOIN", "LEFT", "ON", "AND", "OR", "NOT", "IN", "EXISTS",
    "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "AS", "CASE", "WHEN", "END", "CAST", "NULL",
    "TABLE", "CREATE", "INSERT", "INTO", "WITH", "FOR", "SYSTEM_TIME", "OF", "LATERAL",
    "INTERVAL", "UNION", "ALL", "DISTINCT", "(", ")", ",", ".", "*", "=", "<", "+", "-", "/",
    ";", "/*+", "*/", "'x'", "1", "2.5", "amount", "order_id", "id", "name", "Orders", "o",
    "Product", "p", "Nope", "`quoted`", "COUNT", "SUM", "PROCTIME", "SECOND", "TRUE",
]  # fmt: skip


NAMES = [
    "amount", "order_id", "product_id", "currency", "o_rowtime", "o_proctime", "id", "name",
    "price", "s_order_id", "s_rowtime", "r_currency", "rate", "c_id", "c_age", "o", "p", "c",
    "r", "s", "Orders", "Product", "Rates", "Customers", "Shipments", "Out", "Nope", "1 h",
    "table.exec.state.ttl", "json", "lookup_miss", "1d", "SUM", "COUNT", "UPPER",
]  # fmt: skip


def show(tokens: list[Token]) -> str:
    """Tokens back into SQL text (a hint's ``/*+`` and ``*/`` stay tokens of their own)."""
    return " ".join(t.show() for t in tokens if t.kind != "eof")


def vocabulary_token(word: str) -> Token:
    if word in ("/*+", "*/"):  # (a lone one does not tokenize: it is a hint's half)
        return Token("hint_start" if word == "/*+" else "hint_end", word, 0, len(word))
    return tokenize(word)[0]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(STATEMENTS))
    tokens = [t for t in tokenize(text) if t.kind != "eof"]
    semantic = draw(st.booleans())  # names changed only, or any token
    for _ in range(draw(st.integers(1, 3))):
        if not tokens:
            break
        i = draw(st.integers(0, len(tokens) - 1))
        kinds = ["rename"] if semantic else ["delete", "repeat", "swap", "replace", "insert"]
        how = draw(st.sampled_from(kinds))
        names = [j for j, t in enumerate(tokens) if t.kind in ("ident", "qident", "string")]
        if how == "rename" and names:  # another name where a name was: a semantic error
            j = draw(st.sampled_from(names))
            word = draw(st.sampled_from(NAMES))
            tokens[j] = Token(tokens[j].kind, word, 0, len(word))
        elif how == "delete":
            del tokens[i]
        elif how == "repeat":
            tokens.insert(i, tokens[i])
        elif how == "swap" and i + 1 < len(tokens):
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
        else:
            word = draw(st.sampled_from(VOCABULARY))
            new = vocabulary_token(word)
            if how == "replace":
                tokens[i] = new
            else:
                tokens.insert(i, new)
    return show(tokens)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(mutated(), st.sampled_from(["batch", "streaming"]))
def test_mutated_statements_are_refused_cleanly_or_plan(sql: str, mode: str) -> None:
    env = sql_env(mode)
    try:
        table = plan(env, sql)
    except (SqlParserError, SqlValidationError) as e:
        assert e.line >= 1 and e.column >= 1, sql
        assert re.search(r"line \d+, column \d+", str(e)), (sql, str(e))
        return
    if table is not None:
        try:  # what the optimizer refuses (streaming limits) has no place in the SQL
            table.explain()
        except ValidationError:
            pass


def test_the_unmutated_statements_plan() -> None:
    for sql in STATEMENTS:
        plan(sql_env("streaming"), show([t for t in tokenize(sql) if t.kind != "eof"]))
