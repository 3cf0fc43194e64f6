"""Flink SQL's grammar: a tokenizer and a recursive-descent parser into :mod:`.syntax` trees.

The one place the product's SQL grammar lives: statements (DDL, DML, SHOW, DESCRIBE,
EXPLAIN, SET, statement sets), queries (SELECT, joins, ``FOR SYSTEM_TIME AS OF``,
``LATERAL TABLE``, subqueries, UNION ALL, WITH, VALUES) and expressions (computed columns and
watermarks in DDL too). A statement that does not parse raises :class:`SqlParserError` with
the line and column of the token where it went wrong and what was expected there, Flink's
way (``SQL parse failed. Encountered "x" at line 1, column 8. Was expecting one of: ...``).
A statement or clause Flink has and the product does not is refused here by name.

Identifiers keep their case (Flink's default: case-sensitive); keywords are any case;
`` `quoted` `` identifiers may be keywords.

Example::

    >>> stmt = parse_statement("SELECT o.id, COUNT(*) AS n FROM Orders AS o GROUP BY o.id")
    >>> [str(i.expr) if hasattr(i.expr, "parts") else i.expr.name for i in stmt.query.items]
    ['o.id', 'COUNT']
    >>> parse_statement("SELECT * FROM Orders WHER id = 1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.SqlParserError: SQL parse failed. Encountered "id" at line 1, column 27. \
Was expecting one of: <EOF>, "(", ",", ";", "CROSS", ... ("WHER" at line 1, column 22 was \
read as an alias: did you mean WHERE?)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import NoReturn, TypeVar

import attrs

from tableapi.catalog import DEFAULT_CATALOG, DEFAULT_DATABASE
from tableapi.errors import SqlParserError
from tableapi.sql.syntax import (
    Between,
    Binary,
    CaseE,
    CastE,
    ColumnDef,
    CreateTable,
    CreateView,
    Describe,
    Drop,
    Exists,
    Explain,
    Expr,
    FromItem,
    Func,
    GroupingSets,
    HintCall,
    InList,
    InQuery,
    Insert,
    IntervalLit,
    Is,
    JoinRef,
    LateralRef,
    Like,
    Lit,
    Name,
    OrderItem,
    OverWindow,
    Query,
    QueryBody,
    QueryStatement,
    ResetOption,
    RowE,
    ScalarQuery,
    Select,
    SelectItem,
    SetOp,
    SetOption,
    Show,
    Span,
    Star,
    Statement,
    StatementSet,
    SubqueryRef,
    TableRef,
    TvfArg,
    Unary,
    Use,
    Values,
    WatermarkDef,
    WindowRef,
)

# Words that cannot be an unquoted alias or column name (quote them: `year`).
RESERVED = frozenset(
    """ALL AND ANY AS ASC BETWEEN BY CASE CAST CREATE CROSS CURRENT_DATE CURRENT_TIMESTAMP
    DESC DISTINCT DROP ELSE END EXCEPT EXISTS EXPLAIN FALSE FETCH FOR FROM FULL GROUP HAVING
    IN INNER INSERT INTERSECT INTERVAL INTO IS JOIN LATERAL LEFT LIKE LIMIT LOCALTIMESTAMP
    MATCH_RECOGNIZE MINUS NATURAL NOT NULL OFFSET ON OR ORDER OUTER OVER PARTITION RIGHT
    SELECT SET SIMILAR TABLE THEN TRUE UNION UNKNOWN UNNEST USING VALUES WHEN WHERE WINDOW
    WITH""".split()
)
# Statements Flink has and the product does not: refused by name.
_REFUSED_STATEMENTS = frozenset(
    ("ALTER", "LOAD", "UNLOAD", "ANALYZE", "TRUNCATE", "DELETE", "UPDATE", "CALL")
)
# Reserved words that are also function names: LEFT(s, n)...
_RESERVED_FUNCTIONS = frozenset(("LEFT", "RIGHT"))
# Function-like keywords usable without parentheses.
_NILADIC = ("CURRENT_TIMESTAMP", "CURRENT_DATE", "LOCALTIMESTAMP", "CURRENT_TIME", "LOCALTIME")
_INTERVAL_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
_PLURAL_UNITS = {f"{u}S": u for u in _INTERVAL_UNITS}
_COMPARISONS = {
    "<=>": "is_not_distinct",
    "=": "=",
    "<>": "<>",
    "!=": "<>",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>--[^\n]*)
  | (?P<hint_start>/\*\+)
  | (?P<comment>/\*)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<op><=>|<>|!=|<=|>=|\|\||\*/|[-+*/%=<>(),.;\[\]:])
    """,
    re.VERBOSE,
)


@attrs.frozen
class Token:
    """A token: ``kind`` is ident, qident (`` `quoted` ``), string, number, op, hint_start
    (``/*+``), hint_end (``*/`` in a hint) or eof; ``text`` the identifier, the string's
    value or the symbol."""

    kind: str
    text: str
    start: int
    end: int
    upper: str = attrs.field(eq=False, repr=False)  # a keyword's spelling ("" if no word)

    @upper.default
    def _upper(self) -> str:
        return self.text.upper() if self.kind == "ident" else ""

    def show(self) -> str:
        """How an error quotes the token."""
        if self.kind == "eof":
            return "<EOF>"
        if self.kind == "string":
            return "'" + self.text.replace("'", "''") + "'"
        if self.kind == "qident":
            return "`" + self.text + "`"
        return self.text


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``.

    >>> line_col("SELECT\\n  x", 9)
    (2, 3)
    """
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text`` (comments dropped), ending with an ``eof`` token.

    >>> [t.text for t in tokenize("SELECT `a b`, 'it''s' /* c */ FROM t")]
    ['SELECT', 'a b', ',', "it's", 'FROM', 't', '']
    """
    tokens: list[Token] = []
    i, n = 0, len(text)
    hint_open: int | None = None
    while i < n:
        c = text[i]
        if c in "'`":  # a string, or a quoted identifier; the quote doubled is one quote
            value, end = _quoted(text, i)
            tokens.append(Token("string" if c == "'" else "qident", value, i, end))
            i = end
            continue
        if c == '"':
            _fail_at(
                text,
                i,
                "a double-quoted name: Flink SQL quotes identifiers with backticks (`name`) "
                "and strings with single quotes ('text')",
            )
        m = _TOKEN.match(text, i)
        if m is None:
            _fail_at(text, i, f"the character {c!r}, which is not part of Flink SQL")
        kind = m.lastgroup
        assert kind is not None
        if kind == "comment":
            k = text.find("*/", i + 2)
            if k < 0:
                _fail_at(text, i, "an unclosed comment /*: add */")
            i = k + 2
            continue
        if kind == "hint_start":
            if hint_open is not None:
                _fail_at(text, i, "a hint inside a hint: close the first with */")
            hint_open = i
        elif m.group() == "*/":
            if hint_open is None:
                _fail_at(text, i, "*/ outside a comment")
            hint_open = None
            kind = "hint_end"
        if kind not in ("ws", "line_comment"):
            tokens.append(Token(kind, m.group(), i, m.end()))
        i = m.end()
    if hint_open is not None:
        _fail_at(text, hint_open, "an unclosed hint /*+ ...: close it with */")
    tokens.append(Token("eof", "", n, n))
    return tokens


def _quoted(text: str, start: int) -> tuple[str, int]:
    """The value of the quoted text at ``start`` (its quote doubled stands for the quote)
    and the offset after its closing quote."""
    quote = text[start]
    j, parts = start + 1, []
    while True:
        k = text.find(quote, j)
        if k < 0:
            what = "string literal" if quote == "'" else "quoted identifier"
            _fail_at(text, start, f"an unclosed {what}: add the closing {quote}")
        parts.append(text[j:k])
        if not text.startswith(quote * 2, k):
            return "".join(parts), k + 1
        parts.append(quote)
        j = k + 2


def _fail_at(text: str, offset: int, what: str) -> NoReturn:
    line, column = line_col(text, offset)
    raise SqlParserError(
        f"SQL parse failed. Encountered {what} at line {line}, column {column}.", line, column
    )


_T = TypeVar("_T")


class Parser:
    """One statement's tokens and the position in them. ``_expected`` collects what the
    parser tried at the furthest token it reached, for the error message."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self._far = 0
        self._expected: list[tuple[str, ...]] = []  # labels, in groups as tried
        self._aliases: list[Token] = []  # identifiers read as implicit aliases (typo hints)

    # -- token access -------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def _note(self, *labels: str) -> None:
        """Record what was tried at the current token (quoted when a word or symbol)."""
        if self.i > self._far:
            self._far, self._expected = self.i, []
        if self.i == self._far:
            self._expected.append(labels)

    def at_kw(self, *words: str) -> bool:
        self._note(*words)
        return self.tok.upper in words

    def at_op(self, *ops: str) -> bool:
        self._note(*ops)
        return self.tok.kind == "op" and self.tok.text in ops

    def accept_kw(self, *words: str) -> Token | None:
        if self.at_kw(*words):
            return self.advance()
        return None

    def accept_op(self, *ops: str) -> Token | None:
        if self.at_op(*ops):
            return self.advance()
        return None

    def advance(self) -> Token:
        tok = self.tok
        if tok.kind != "eof":
            self.i += 1
        return tok

    def expect_kw(self, *words: str) -> Token:
        tok = self.accept_kw(*words)
        if tok is None:
            self.fail()
        return tok

    def expect_op(self, op: str) -> Token:
        tok = self.accept_op(op)
        if tok is None:
            self.fail()
        return tok

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def span_from(self, start: int) -> Span:
        """The span from token offset ``start`` to the end of the last token read."""
        end = self.tokens[self.i - 1].end if self.i > 0 else start
        return Span(start, max(start, end))

    # -- errors -------------------------------------------------------------------------------
    def fail(self, expected: str | None = None) -> NoReturn:
        """Raise the parse error at the current token (or where the parser got furthest)."""
        if expected is not None:
            self._note(expected)
        at = self.tokens[self._far] if self._far >= self.i else self.tok
        tried = [x for group in self._expected for x in group] if self._far >= self.i else []
        labels = list(dict.fromkeys(x if x.startswith("<") else f'"{x}"' for x in tried))
        labels = labels or [expected or "?"]
        line, column = line_col(self.text, at.start)
        shown = "<EOF>" if at.kind == "eof" else f'"{at.show()}"'
        ordered = sorted(labels, key=lambda s: (not s.startswith("<"), s[1:2].isalpha(), s))
        listing = ", ".join(ordered[:12]) + (", ..." if len(ordered) > 12 else "")
        message = (
            f"SQL parse failed. Encountered {shown} at line {line}, column {column}. "
            f"Was expecting one of: {listing}"
        )
        message += self._typo_hint(at, labels)
        raise SqlParserError(message, line, column)

    def refuse(self, start: int, what: str, advice: str = "") -> NoReturn:
        """Refuse a statement or clause Flink has and this product does not, by name."""
        line, column = line_col(self.text, start)
        raise SqlParserError(
            f"SQL parse failed. {what} (at line {line}, column {column}) is not supported by "
            f"this product.{' ' + advice if advice else ''}",
            line,
            column,
        )

    def _typo_hint(self, at: Token, labels: list[str]) -> str:
        keywords = [s.strip('"') for s in labels if s.startswith('"') and s[1:2].isalpha()]
        if not keywords:
            return ""
        index = self.tokens.index(at)
        before = self.tokens[index - 1] if index > 0 else None
        if before is not None and before in self._aliases:  # ``SELECT a FORM t``
            close = difflib.get_close_matches(before.upper, keywords, n=1, cutoff=0.75)
            if close:
                line, column = line_col(self.text, before.start)
                return (
                    f' ("{before.text}" at line {line}, column {column} was read as an '
                    f"alias: did you mean {close[0]}?)"
                )
        if at.kind == "ident":
            close = difflib.get_close_matches(at.upper, keywords, n=1, cutoff=0.75)
            if close:
                return f" (did you mean {close[0]}?)"
        return ""

    # -- names --------------------------------------------------------------------------------
    def at_identifier(self) -> bool:
        self._note("<identifier>")
        t = self.tok
        return t.kind == "qident" or (t.kind == "ident" and t.upper not in RESERVED)

    def identifier(self) -> str:
        if not self.at_identifier():
            self.fail()
        return self.advance().text

    def compound_name(self) -> tuple[str, ...]:
        parts = [self.identifier()]
        while self.accept_op("."):
            parts.append(self.identifier())
        return tuple(parts)

    def name_list(self) -> tuple[str, ...]:
        """``(a, b, c)``."""
        self.expect_op("(")
        names = [self.identifier()]
        while self.accept_op(","):
            names.append(self.identifier())
        self.expect_op(")")
        return tuple(names)

    def comma_list(self, item: Callable[[], _T]) -> tuple[_T, ...]:
        items = [item()]
        while self.accept_op(","):
            items.append(item())
        return tuple(items)

    def string(self) -> str:
        self._note("<string>")
        if self.tok.kind != "string":
            self.fail()
        return self.advance().text

    # -- statements ---------------------------------------------------------------------------
    def statement(self) -> Statement:
        start = self.tok.start
        if self.at_kw("SELECT", "WITH", "VALUES") or self.at_op("("):
            query = self.query()
            return QueryStatement(query, self.span_from(start))
        if self.accept_kw("CREATE"):
            return self.create(start)
        if self.accept_kw("DROP"):
            return self.drop(start)
        if self.accept_kw("SHOW"):
            return self.show(start)
        if self.accept_kw("USE"):
            if self.at_kw("MODULES"):
                self.refuse(start, "USE MODULES")
            catalog = bool(self.accept_kw("CATALOG"))
            return Use(self.compound_name(), catalog, self.span_from(start))
        if self.accept_kw("DESCRIBE", "DESC"):
            self.accept_kw("EXTENDED")
            return Describe(self.compound_name(), self.span_from(start))
        if self.accept_kw("EXPLAIN"):
            self.accept_kw("PLAN") and self.expect_kw("FOR")
            while self.accept_kw(
                "ESTIMATED_COST", "CHANGELOG_MODE", "PLAN_ADVICE", "JSON_EXECUTION_PLAN"
            ):
                self.accept_op(",")
            inner = self.statement()
            if not isinstance(inner, QueryStatement | Insert | StatementSet):
                self.refuse(
                    inner.span.start,
                    "EXPLAIN of this statement",
                    "EXPLAIN a query, an INSERT or a STATEMENT SET.",
                )
            return Explain(inner, self.span_from(start))
        if self.accept_kw("SET"):
            if self.tok.kind in ("eof",) or self.at_op(";"):
                return SetOption(None, None, self.span_from(start))
            key = self.option_key()
            self.expect_op("=")
            value = self.option_value()
            return SetOption(key, value, self.span_from(start))
        if self.accept_kw("RESET"):
            if self.tok.kind == "eof" or self.at_op(";"):
                return ResetOption(None, self.span_from(start))
            return ResetOption(self.option_key(), self.span_from(start))
        if self.at_kw("INSERT"):
            return self.insert()
        if self.accept_kw("EXECUTE"):
            if self.accept_kw("STATEMENT"):
                self.expect_kw("SET")
                return self.statement_set(start)
            if self.at_kw("INSERT"):
                return self.insert()
            self.fail()
        if self.tok.upper == "BEGIN":
            self.refuse(
                start,
                "BEGIN STATEMENT SET (the SQL client's form)",
                "Write EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END.",
            )
        if self.tok.upper in _REFUSED_STATEMENTS:  # (not noted: no "expected" noise)
            self.refuse(start, f"{self.tok.upper} {self.peek().text.upper()}".strip())
        self.fail()

    def option_key(self) -> str:
        if self.tok.kind == "string":
            return self.advance().text
        return ".".join(self.comma_free_path())

    def comma_free_path(self) -> list[str]:
        parts = [self.any_word()]
        while self.accept_op("."):
            parts.append(self.any_word())
        return parts

    def any_word(self) -> str:
        self._note("<identifier>")
        if self.tok.kind not in ("ident", "qident", "number"):
            self.fail()
        return self.advance().text

    def option_value(self) -> str:
        if self.tok.kind == "string":
            return self.advance().text
        self._note("<string>")
        if self.tok.kind in ("ident", "qident", "number"):
            return self.advance().text
        self.fail()

    def create(self, start: int) -> Statement:
        if self.accept_kw("OR"):
            self.refuse(start, "CREATE OR REPLACE", "DROP the table or view first.")
        temporary = bool(self.accept_kw("TEMPORARY"))
        if self.accept_kw("TABLE"):
            return self.create_table(start, temporary)
        if self.accept_kw("VIEW"):
            if_not_exists = self.if_exists("NOT")
            name = self.compound_name()
            columns = self.name_list() if self.at_op("(") else ()
            self.expect_kw("AS")
            query = self.query()
            return CreateView(name, temporary, if_not_exists, columns, query, self.span_from(start))
        for word in ("FUNCTION", "SYSTEM", "CATALOG", "DATABASE", "MODEL"):
            if self.at_kw(word):
                advice = (
                    "Register a Python function with env.create_temporary_function(name, udf(...))."
                    if word in ("FUNCTION", "SYSTEM")
                    else f"This product has one catalog and database, {DEFAULT_CATALOG}."
                    f"{DEFAULT_DATABASE}."
                )
                self.refuse(start, f"CREATE {word}", advice)
        self.fail()

    def if_exists(self, negation: str | None = None) -> bool:
        if not self.accept_kw("IF"):
            return False
        if negation:
            self.expect_kw(negation)
        self.expect_kw("EXISTS")
        return True

    def create_table(self, start: int, temporary: bool) -> CreateTable:
        if_not_exists = self.if_exists("NOT")
        name = self.compound_name()
        columns: list[ColumnDef] = []
        watermark: WatermarkDef | None = None
        pk: tuple[str, ...] = ()
        pk_span: Span | None = None
        if self.accept_op("("):
            while True:
                el_start = self.tok.start
                if self.accept_kw("WATERMARK"):
                    if watermark is not None:
                        self.refuse(el_start, "A second WATERMARK", "A table has one watermark.")
                    self.expect_kw("FOR")
                    column = self.identifier()
                    self.expect_kw("AS")
                    e_start = self.tok.start
                    expr = self.expr()
                    text = self.text[e_start : self.span_from(e_start).end]
                    watermark = WatermarkDef(column, expr, text, self.span_from(el_start))
                elif self.at_kw("CONSTRAINT", "PRIMARY"):
                    if self.accept_kw("CONSTRAINT"):
                        self.identifier()
                    self.expect_kw("PRIMARY")
                    self.expect_kw("KEY")
                    pk = self.name_list()
                    self.not_enforced(el_start)
                    pk_span = self.span_from(el_start)
                elif self.at_kw("UNIQUE", "CHECK", "FOREIGN"):
                    self.refuse(
                        el_start,
                        f"A {self.tok.upper} constraint",
                        "Flink tables take PRIMARY KEY (...) NOT ENFORCED only.",
                    )
                else:
                    columns.append(self.column_def())
                if not self.accept_op(","):
                    break
                if self.at_op(")"):  # a trailing comma, as FLIP-70's examples write
                    break
            self.expect_op(")")
        comment = self.string() if self.accept_kw("COMMENT") else None
        partitioned: tuple[str, ...] = ()
        if self.accept_kw("PARTITIONED"):
            self.expect_kw("BY")
            partitioned = self.name_list()
        if self.at_kw("DISTRIBUTED"):
            self.refuse(self.tok.start, "DISTRIBUTED BY")
        options: list[tuple[str, str, Span]] = []
        if self.accept_kw("WITH"):
            self.expect_op("(")
            if not self.at_op(")"):
                while True:
                    o_start = self.tok.start
                    key = self.string()
                    self.expect_op("=")
                    value = self.string()
                    options.append((key, value, self.span_from(o_start)))
                    if not self.accept_op(","):
                        break
            self.expect_op(")")
        like = None
        if self.accept_kw("LIKE"):
            like = self.compound_name()
            if self.at_op("("):
                self.skip_parens()
        as_query = None
        if self.accept_kw("AS"):
            as_query = self.query()
        if not columns and as_query is None and like is None:
            self.fail("<column definitions>")
        return CreateTable(
            name,
            temporary,
            if_not_exists,
            tuple(columns),
            watermark,
            pk,
            pk_span,
            tuple(options),
            partitioned,
            like,
            as_query,
            comment,
            self.span_from(start),
        )

    def not_enforced(self, start: int) -> None:
        if self.accept_kw("NOT"):
            self.expect_kw("ENFORCED")
            return
        if self.at_kw("ENFORCED"):
            self.refuse(
                start,
                "An ENFORCED primary key",
                "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint: Flink does not "
                "own the data, so the only supported mode is NOT ENFORCED.",
            )
        self.fail()

    def column_def(self) -> ColumnDef:
        start = self.tok.start
        name = self.identifier()
        if self.accept_kw("AS"):
            e_start = self.tok.start
            expr = self.expr()
            text = self.text[e_start : self.span_from(e_start).end]
            self.accept_kw("VIRTUAL")  # a computed column is virtual (FLIP-70's spelling)
            comment = self.string() if self.accept_kw("COMMENT") else None
            return ColumnDef(name, None, expr, text, False, comment, False, self.span_from(start))
        type_text = self.data_type(allow_null=True)
        metadata = False
        if self.accept_kw("METADATA"):
            metadata = True
            if self.accept_kw("FROM"):
                self.string()
            self.accept_kw("VIRTUAL")
        pk = False
        if self.at_kw("PRIMARY"):
            pk_start = self.advance().start
            self.expect_kw("KEY")
            self.not_enforced(pk_start)
            pk = True
        comment = self.string() if self.accept_kw("COMMENT") else None
        return ColumnDef(name, type_text, None, None, metadata, comment, pk, self.span_from(start))

    def data_type(self, allow_null: bool = True) -> str:
        """A type as Flink's type text (``TIMESTAMP(3)``, ``DECIMAL(10, 2)``, ``INT NOT
        NULL``, ``TIMESTAMP_LTZ(3)`` for ``TIMESTAMP(3) WITH LOCAL TIME ZONE``)."""
        self._note("<type>")
        if self.tok.kind != "ident":
            self.fail()
        name = self.advance().upper
        if name == "DOUBLE":
            self.accept_kw("PRECISION")
        if name == "CHARACTER" and self.accept_kw("VARYING"):
            name = "VARCHAR"
        text = name
        if name in ("ARRAY", "MAP", "MULTISET", "ROW") and self.at_op("<"):
            depth, parts = 0, []
            while True:
                t = self.advance()
                if t.kind == "eof":
                    self.fail(">")
                parts.append(t.show())
                depth += {"<": 1, ">": -1}.get(t.text, 0) if t.kind == "op" else 0
                if depth == 0:
                    break
            text += "".join(parts)
        elif self.accept_op("("):
            params = [self.number_text()]
            while self.accept_op(","):
                params.append(self.number_text())
            self.expect_op(")")
            text += "(" + ", ".join(params) + ")"
        if name in ("TIMESTAMP", "TIME") and self.at_kw("WITH", "WITHOUT"):
            with_ = self.advance().upper == "WITH"
            local = bool(self.accept_kw("LOCAL")) if with_ else False
            self.expect_kw("TIME")
            self.expect_kw("ZONE")
            if with_ and not local:
                self.refuse(
                    self.tok.start,
                    "TIMESTAMP WITH TIME ZONE",
                    "Use TIMESTAMP_LTZ (TIMESTAMP WITH LOCAL TIME ZONE).",
                )
            if local:
                text = text.replace("TIMESTAMP", "TIMESTAMP_LTZ", 1)
        if allow_null:
            if self.accept_kw("NOT"):
                self.expect_kw("NULL")
                text += " NOT NULL"
            else:
                self.accept_kw("NULL")
        return text

    def number_text(self) -> str:
        self._note("<number>")
        if self.tok.kind != "number":
            self.fail()
        return self.advance().text

    def skip_parens(self) -> None:
        self.expect_op("(")
        depth = 1
        while depth:
            t = self.advance()
            if t.kind == "eof":
                self.fail(")")
            if t.kind == "op" and t.text in "()":
                depth += 1 if t.text == "(" else -1

    def drop(self, start: int) -> Drop:
        temporary = bool(self.accept_kw("TEMPORARY"))
        if temporary and self.accept_kw("SYSTEM"):
            self.expect_kw("FUNCTION")
            what = "SYSTEM FUNCTION"
        elif self.at_kw("TABLE", "VIEW", "FUNCTION"):
            what = self.advance().upper
        else:
            if self.at_kw("SYSTEM", "CATALOG", "DATABASE", "MODEL"):
                self.refuse(start, f"DROP {self.tok.upper}")
            self.fail()
        if_exists = self.if_exists()
        return Drop(what, self.compound_name(), temporary, if_exists, self.span_from(start))

    def show(self, start: int) -> Show:
        if self.accept_kw("CREATE"):
            what = self.expect_kw("TABLE", "VIEW").upper
            return Show(f"CREATE {what}", self.compound_name(), self.span_from(start))
        if self.accept_kw("USER"):
            self.expect_kw("FUNCTIONS")
            return Show("USER FUNCTIONS", (), self.span_from(start))
        if self.accept_kw("CURRENT"):
            what = self.expect_kw("CATALOG", "DATABASE").upper
            return Show(f"CURRENT {what}", (), self.span_from(start))
        if self.at_kw("TABLES", "VIEWS", "FUNCTIONS", "CATALOGS", "DATABASES"):
            return Show(self.advance().upper, (), self.span_from(start))
        if self.tok.kind == "ident":
            self.refuse(
                start,
                f"SHOW {self.tok.upper}",
                "SHOW TABLES, VIEWS, [USER] FUNCTIONS, CATALOGS, DATABASES, CURRENT CATALOG|"
                "DATABASE and CREATE TABLE|VIEW are.",
            )
        self.fail()

    def insert(self) -> Insert:
        start = self.expect_kw("INSERT").start
        overwrite = bool(self.accept_kw("OVERWRITE"))
        if not overwrite:
            self.expect_kw("INTO")
        table = self.compound_name()
        if self.at_kw("PARTITION"):
            self.refuse(self.tok.start, "INSERT with a PARTITION clause")
        columns = self.name_list() if self.at_op("(") and not self.query_follows(1) else ()
        query = self.query()
        return Insert(table, overwrite, columns, query, self.span_from(start))

    def query_follows(self, ahead: int) -> bool:
        """Whether the token ``ahead`` starts a query (after a parenthesis)."""
        t = self.peek(ahead)
        return t.upper in ("SELECT", "WITH", "VALUES") or (t.kind == "op" and t.text == "(")

    def statement_set(self, start: int) -> StatementSet:
        self.expect_kw("BEGIN")
        inserts = []
        while not self.at_kw("END"):
            inserts.append(self.insert())
            self.expect_op(";")
        self.expect_kw("END")
        if not inserts:
            self.fail("INSERT")
        return StatementSet(tuple(inserts), self.span_from(start))

    # -- queries ------------------------------------------------------------------------------
    def query(self) -> Query:
        start = self.tok.start
        ctes: list[tuple[str, tuple[str, ...], Query]] = []
        if self.accept_kw("WITH"):
            while True:
                name = self.identifier()
                cols = self.name_list() if self.at_op("(") else ()
                self.expect_kw("AS")
                self.expect_op("(")
                ctes.append((name, cols, self.query()))
                self.expect_op(")")
                if not self.accept_op(","):
                    break
        body = self.set_expr()
        order: tuple[OrderItem, ...] = ()
        if self.accept_kw("ORDER"):
            self.expect_kw("BY")
            order = self.comma_list(self.order_item)
        limit = offset = None
        while True:
            if limit is None and self.accept_kw("LIMIT"):
                limit = self.expr()
            elif offset is None and self.accept_kw("OFFSET"):
                offset = self.expr()
                self.accept_kw("ROW", "ROWS")
            elif limit is None and self.accept_kw("FETCH"):
                self.expect_kw("FIRST", "NEXT")
                limit = self.expr()
                self.expect_kw("ROW", "ROWS")
                self.expect_kw("ONLY")
            else:
                break
        return Query(body, tuple(ctes), order, limit, offset, self.span_from(start))

    def set_expr(self) -> QueryBody:
        start = self.tok.start
        left = self.query_term()
        while self.at_kw("UNION", "INTERSECT", "EXCEPT", "MINUS"):
            op = self.advance().upper
            op = "except" if op == "MINUS" else op.lower()
            all_ = bool(self.accept_kw("ALL"))
            if not all_:
                self.accept_kw("DISTINCT")
            right = self.query_term()
            left = SetOp(op, all_, left, right, self.span_from(start))
        return left

    def query_term(self) -> QueryBody:
        start = self.tok.start
        if self.at_kw("SELECT"):
            return self.select()
        if self.accept_kw("VALUES"):
            rows = self.comma_list(self.values_row)
            return Values(rows, self.span_from(start))
        if self.accept_op("("):
            inner = self.query()
            self.expect_op(")")
            return inner
        self.fail()

    def values_row(self) -> tuple[Expr, ...]:
        if self.accept_kw("ROW"):
            pass
        self.expect_op("(")
        items = self.comma_list(self.expr)
        self.expect_op(")")
        return items

    def order_item(self) -> OrderItem:
        start = self.tok.start
        e = self.expr()
        desc = False
        if self.at_kw("ASC", "DESC"):
            desc = self.advance().upper == "DESC"
        nulls = None
        if self.accept_kw("NULLS"):
            nulls = self.expect_kw("FIRST", "LAST").upper
        return OrderItem(e, desc, nulls, self.span_from(start))

    def select(self) -> Select:
        start = self.expect_kw("SELECT").start
        hints = self.hints() if self.tok.kind == "hint_start" else ()
        distinct = False
        if self.at_kw("DISTINCT", "ALL"):
            distinct = self.advance().upper == "DISTINCT"
        items = self.comma_list(self.select_item)
        from_ = where = having = None
        group: tuple[Expr | GroupingSets, ...] = ()
        if self.accept_kw("FROM"):
            from_ = self.from_clause()
        if self.accept_kw("WHERE"):
            where = self.expr()
        if self.accept_kw("GROUP"):
            self.expect_kw("BY")
            group = self.comma_list(self.group_item)
        if self.accept_kw("HAVING"):
            having = self.expr()
        for word in ("WINDOW", "QUALIFY"):
            if self.at_kw(word):
                self.refuse(self.tok.start, f"The {word} clause")
        return Select(hints, distinct, items, from_, where, group, having, self.span_from(start))

    def group_item(self) -> Expr | GroupingSets:
        """A GROUP BY item: an expression, ``GROUPING SETS (set, ...)`` (a set is ``(a, b)``,
        ``a`` or ``()``), ``ROLLUP (a, b)`` (the sets ``(a, b), (a), ()``) or ``CUBE (a, b)``
        (every subset, largest first)."""
        start = self.tok.start
        if self.at_kw("GROUPING") and self.peek().upper == "SETS":
            self.advance()
            self.advance()
            self.expect_op("(")
            sets = self.comma_list(self.grouping_set)
            self.expect_op(")")
            return GroupingSets(sets, self.span_from(start))
        if self.at_kw("ROLLUP", "CUBE") and self.peek().text == "(":
            word = self.advance().upper
            self.expect_op("(")
            keys = self.comma_list(self.expr)
            self.expect_op(")")
            if word == "ROLLUP":
                sets = tuple(keys[:n] for n in range(len(keys), -1, -1))
            else:  # Calcite's order: by the keys left out, as bits, the first key highest
                n = len(keys)
                sets = tuple(
                    tuple(k for i, k in enumerate(keys) if not out >> (n - 1 - i) & 1)
                    for out in range(2**n)
                )
            return GroupingSets(sets, self.span_from(start))
        return self.expr()

    def grouping_set(self) -> tuple[Expr, ...]:
        if self.accept_op("("):
            if self.accept_op(")"):
                return ()
            keys = self.comma_list(self.expr)
            self.expect_op(")")
            return keys
        return (self.expr(),)

    def hints(self) -> tuple[HintCall, ...]:
        """``/*+ NAME(args), NAME('k' = 'v', ...) */``."""
        self.advance()  # /*+
        calls = []
        while True:
            h_start = self.tok.start
            self._note("<hint name>")
            if self.tok.kind != "ident":
                self.fail()
            name = self.advance().upper
            args: list[str] = []
            options: list[tuple[str, str]] = []
            if self.accept_op("("):
                if not self.at_op(")"):
                    while True:
                        key = self.hint_word()
                        if self.accept_op("="):
                            options.append((key, self.hint_word()))
                        else:
                            args.append(key)
                        if not self.accept_op(","):
                            break
                self.expect_op(")")
            if args and options:
                self.refuse(h_start, f"Hint {name} mixing names and 'key' = 'value' options")
            calls.append(HintCall(name, tuple(args), tuple(options), self.span_from(h_start)))
            if not self.accept_op(","):
                break
        self._note("*/")
        if self.tok.kind != "hint_end":
            self.fail()
        self.advance()
        return tuple(calls)

    def hint_word(self) -> str:
        self._note("<hint option>")
        if self.tok.kind in ("string", "ident", "qident", "number"):
            parts = [self.advance().text]
            while self.tok.kind in ("ident",) and parts and self.at_op("."):
                self.advance()
                parts.append(self.advance().text)
            return ".".join(parts)
        self.fail()

    def select_item(self) -> SelectItem:
        start = self.tok.start
        if self.at_op("*"):
            self.advance()
            return SelectItem(Star((), self.span_from(start)), None, self.span_from(start))
        if self.at_identifier():
            # t.* : look ahead for the star
            j = self.i
            parts = []
            while self.peek(j - self.i).kind in ("ident", "qident"):
                parts.append(self.tokens[j].text)
                if self.peek(j + 1 - self.i).text != ".":
                    break
                if self.peek(j + 2 - self.i).text == "*":
                    self.i = j + 3
                    star = Star(tuple(parts), self.span_from(start))
                    return SelectItem(star, None, star.span)
                j += 2
        e = self.expr()
        alias = self.alias()
        return SelectItem(e, alias, self.span_from(start))

    def alias(self) -> str | None:
        if self.accept_kw("AS"):
            if self.tok.kind == "string":
                return self.advance().text
            return self.identifier()
        if self.at_identifier():
            tok = self.advance()
            if tok.kind == "ident":
                self._aliases.append(tok)
            return tok.text
        return None

    # -- FROM ---------------------------------------------------------------------------------
    def from_clause(self) -> FromItem:
        start = self.tok.start
        item = self.from_item()
        while self.accept_op(","):
            right = self.from_item()
            item = JoinRef("comma", item, right, None, (), False, self.span_from(start))
        return item

    def from_item(self) -> FromItem:
        start = self.tok.start
        item = self.table_primary()
        while True:
            natural = bool(self.accept_kw("NATURAL"))
            kind = None
            if self.accept_kw("INNER"):
                kind = "inner"
            elif self.at_kw("LEFT", "RIGHT", "FULL"):
                kind = self.advance().upper.lower()
                self.accept_kw("OUTER")
            elif self.accept_kw("CROSS"):
                kind = "cross"
            elif natural:
                kind = "inner"
            if kind is None and not self.at_kw("JOIN"):
                return item
            self.expect_kw("JOIN")
            right = self.table_primary()
            on = None
            using: tuple[str, ...] = ()
            if kind != "cross":
                if self.accept_kw("ON"):
                    on = self.expr()
                elif self.accept_kw("USING"):
                    using = self.name_list()
                elif not natural:
                    self.fail()
            item = JoinRef(kind or "inner", item, right, on, using, natural, self.span_from(start))

    def table_primary(self) -> FromItem:
        start = self.tok.start
        if self.accept_kw("LATERAL"):
            if self.accept_kw("TABLE"):
                self.expect_op("(")
                f_start = self.tok.start
                call = self.primary()
                if not isinstance(call, Func):
                    self.refuse(f_start, "LATERAL TABLE of something other than a function call")
                assert isinstance(call, Func)
                self.expect_op(")")
                alias, cols = self.table_alias()
                return LateralRef(call, alias, cols, self.span_from(start))
            self.refuse(start, "A LATERAL subquery", "LATERAL TABLE(function(...)) is.")
        if self.accept_kw("TABLE"):
            return self.table_function(start)
        if self.at_kw("UNNEST"):
            self.refuse(start, "UNNEST")
        if self.accept_op("("):
            if self.query_follows(0):
                query = self.query()
                self.expect_op(")")
                alias, cols = self.table_alias()
                return SubqueryRef(query, alias, cols, self.span_from(start))
            inner = self.from_clause()
            self.expect_op(")")
            return inner
        name = self.compound_name()
        hints = self.hints() if self.tok.kind == "hint_start" else ()
        as_of = None
        if self.accept_kw("FOR"):
            self.expect_kw("SYSTEM_TIME")
            self.expect_kw("AS")
            self.expect_kw("OF")
            as_of = self.additive()
        if self.at_kw("MATCH_RECOGNIZE"):
            self.refuse(self.tok.start, "MATCH_RECOGNIZE")
        alias, cols = self.table_alias()
        return TableRef(name, alias, cols, as_of, hints, self.span_from(start))

    def table_function(self, start: int) -> FromItem:
        """``TABLE(name(arg, ..))`` after its ``TABLE``: a window TVF (the planner names the
        functions it runs); an argument is ``TABLE t``, ``DESCRIPTOR(c)`` or an expression,
        positional or named (``SIZE => ...``); ``TABLE t PARTITION BY k`` (SESSION's)."""
        self.expect_op("(")
        name = self.identifier().upper()
        self.expect_op("(")
        args = [self.tvf_arg()]
        while self.accept_op(","):
            args.append(self.tvf_arg())
        self.expect_op(")")
        self.expect_op(")")
        alias, cols = self.table_alias()
        return WindowRef(name, tuple(args), alias, cols, self.span_from(start))

    def tvf_arg(self) -> TvfArg:
        start = self.tok.start
        name = None
        if self.tok.kind == "ident" and self.peek().text == "=" and self.peek(2).text == ">":
            if self.peek().end == self.peek(2).start:  # ``=>`` is two tokens, side by side
                name = self.advance().upper
                self.advance()
                self.advance()
        if self.accept_kw("TABLE"):
            table = self.compound_name()
            partition: tuple[str, ...] = ()
            if self.at_kw("PARTITION") and self.peek().upper == "BY":
                self.advance()
                self.advance()
                # SESSION's PARTITION BY k or PARTITION BY (a, b), as Calcite's grammar
                partition = self.name_list() if self.at_op("(") else (self.identifier(),)
            return TvfArg(name, table, None, None, self.span_from(start), partition)
        if self.accept_kw("DESCRIPTOR"):
            return TvfArg(name, None, self.name_list(), None, self.span_from(start))
        return TvfArg(name, None, None, self.expr(), self.span_from(start))

    def table_alias(self) -> tuple[str | None, tuple[str, ...]]:
        alias = self.alias()
        cols = self.name_list() if alias is not None and self.at_op("(") else ()
        return alias, cols

    # -- expressions --------------------------------------------------------------------------
    def expr(self) -> Expr:
        start = self.tok.start
        left = self.and_expr()
        while self.accept_kw("OR"):
            left = Binary("or", left, self.and_expr(), self.span_from(start))
        return left

    def and_expr(self) -> Expr:
        start = self.tok.start
        left = self.not_expr()
        while self.accept_kw("AND"):
            left = Binary("and", left, self.not_expr(), self.span_from(start))
        return left

    def not_expr(self) -> Expr:
        start = self.tok.start
        if self.accept_kw("NOT"):
            return Unary("not", self.not_expr(), self.span_from(start))
        return self.predicate()

    def predicate(self) -> Expr:
        start = self.tok.start
        left = self.additive()
        while True:
            if self.at_op(*_COMPARISONS):
                op = _COMPARISONS[self.advance().text]
                if self.at_kw("ANY", "SOME", "ALL"):
                    self.refuse(self.tok.start, f"A quantified comparison {op} {self.tok.upper}")
                left = Binary(op, left, self.additive(), self.span_from(start))
                continue
            if self.accept_kw("IS"):
                negated = bool(self.accept_kw("NOT"))
                if self.accept_kw("DISTINCT"):
                    self.expect_kw("FROM")
                    op = "is_not_distinct" if negated else "is_distinct"
                    left = Binary(op, left, self.additive(), self.span_from(start))
                    continue
                what = self.expect_kw("NULL", "TRUE", "FALSE", "UNKNOWN").upper
                left = Is(left, what, negated, self.span_from(start))
                continue
            save = self.i
            negated = bool(self.accept_kw("NOT"))
            if self.accept_kw("BETWEEN"):
                if self.accept_kw("SYMMETRIC"):
                    self.refuse(start, "BETWEEN SYMMETRIC")
                self.accept_kw("ASYMMETRIC")
                low = self.additive()
                self.expect_kw("AND")
                high = self.additive()
                left = Between(left, low, high, negated, self.span_from(start))
                continue
            if self.accept_kw("IN"):
                self.expect_op("(")
                if self.query_follows(0) and self.peek(0).kind == "ident":
                    query = self.query()
                    self.expect_op(")")
                    left = InQuery(left, query, negated, self.span_from(start))
                    continue
                items = self.comma_list(self.expr)
                self.expect_op(")")
                left = InList(left, items, negated, self.span_from(start))
                continue
            if self.accept_kw("LIKE"):
                pattern = self.additive()
                if self.at_kw("ESCAPE"):
                    self.refuse(self.tok.start, "LIKE ... ESCAPE")
                left = Like(left, pattern, negated, self.span_from(start))
                continue
            if self.at_kw("SIMILAR"):
                self.refuse(self.tok.start, "SIMILAR TO", "Use LIKE or REGEXP_EXTRACT.")
            self.i = save
            return left

    def additive(self) -> Expr:
        start = self.tok.start
        left = self.multiplicative()
        while self.at_op("+", "-"):
            op = self.advance().text
            left = Binary(op, left, self.multiplicative(), self.span_from(start))
        return left

    def multiplicative(self) -> Expr:
        start = self.tok.start
        left = self.unary()
        while self.at_op("*", "/", "%", "||"):
            op = self.advance().text
            left = Binary(op, left, self.unary(), self.span_from(start))
        return left

    def unary(self) -> Expr:
        start = self.tok.start
        if self.at_op("-", "+"):
            op = "neg" if self.advance().text == "-" else "pos"
            operand = self.unary()
            if isinstance(operand, IntervalLit) and op == "neg":
                return attrs.evolve(
                    operand, negative=not operand.negative, span=self.span_from(start)
                )
            return Unary(op, operand, self.span_from(start))
        return self.primary()

    def primary(self) -> Expr:
        start = self.tok.start
        tok = self.tok
        self._note("<expression>")
        if tok.kind == "number":
            self.advance()
            return Lit("number", tok.text, self.span_from(start))
        if tok.kind == "string":
            self.advance()
            return Lit("string", tok.text, self.span_from(start))
        if self.at_op("("):
            self.advance()
            if self.query_follows(0) and self.peek(0).kind == "ident":
                query = self.query()
                self.expect_op(")")
                return ScalarQuery(query, self.span_from(start))
            items = self.comma_list(self.expr)
            self.expect_op(")")
            if len(items) == 1:
                return items[0]
            return RowE(items, self.span_from(start))
        if tok.kind == "ident":
            word = tok.upper
            if word in ("TRUE", "FALSE"):
                self.advance()
                return Lit("boolean", word, self.span_from(start))
            if word == "NULL":
                self.advance()
                return Lit("null", "NULL", self.span_from(start))
            if word in ("DATE", "TIME", "TIMESTAMP") and self.peek().kind == "string":
                self.advance()
                return Lit(word.lower(), self.advance().text, self.span_from(start))
            if word == "INTERVAL":
                return self.interval(start)
            if word == "CASE":
                return self.case(start)
            if word in ("CAST", "TRY_CAST"):
                self.advance()
                self.expect_op("(")
                operand = self.expr()
                self.expect_kw("AS")
                type_text = self.data_type(allow_null=True)
                self.expect_op(")")
                return CastE(operand, type_text, self.span_from(start), word == "TRY_CAST")
            if word == "EXISTS":
                self.advance()
                self.expect_op("(")
                query = self.query()
                self.expect_op(")")
                return Exists(query, False, self.span_from(start))
            if word == "ROW" and self.peek().text == "(":
                self.advance()
                self.expect_op("(")
                items = self.comma_list(self.expr)
                self.expect_op(")")
                return RowE(items, self.span_from(start))
            if word in _NILADIC and self.peek().text != "(":
                self.advance()
                return Func(word, (), self.span_from(start))
            if word in ("EXTRACT", "TRIM", "SUBSTRING", "POSITION") and self.peek().text == "(":
                return self.special_function(word, start)
        if self.at_identifier() or (tok.upper in _RESERVED_FUNCTIONS and self.peek().text == "("):
            parts = [self.advance().text]
            while self.at_op(".") and self.peek().kind in ("ident", "qident"):
                self.advance()
                parts.append(self.advance().text)
            if self.at_op("(") and len(parts) == 1:
                return self.function_call(parts[0], start)
            return Name(tuple(parts), self.span_from(start))
        self.fail()

    def function_call(self, name: str, start: int) -> Func:
        self.expect_op("(")
        distinct = star = False
        args: tuple[Expr, ...] = ()
        if self.accept_op("*"):
            star = True
        elif not self.at_op(")"):
            if self.at_kw("DISTINCT", "ALL"):
                distinct = self.advance().upper == "DISTINCT"
            args = self.comma_list(self.expr)
        if name.upper() in ("FLOOR", "CEIL", "CEILING") and len(args) == 1 and self.at_kw("TO"):
            self.refuse(
                start,
                f"{name.upper()}(<time> TO <unit>)",
                f"{name.upper()}(x) of a number is.",
            )
        self.expect_op(")")
        if self.at_kw("FILTER"):
            self.refuse(self.tok.start, "An aggregate FILTER (WHERE ...) clause")
        if self.at_kw("WITHIN"):
            self.refuse(self.tok.start, "WITHIN GROUP")
        over, window = False, None
        if self.accept_kw("OVER"):
            over = True
            if self.at_op("("):
                window = self.over_window()
            else:
                self.identifier()
        return Func(name, args, self.span_from(start), distinct, star, over, window)

    def over_window(self) -> OverWindow | None:
        """``(PARTITION BY .. ORDER BY ..)``; None (skipped to its ``)``) when it has a frame
        (ROWS / RANGE ...), which the planner refuses by name."""
        start = self.expect_op("(").start
        partition: tuple[Expr, ...] = ()
        order: tuple[OrderItem, ...] = ()
        if self.accept_kw("PARTITION"):
            self.expect_kw("BY")
            partition = self.comma_list(self.expr)
        if self.accept_kw("ORDER"):
            self.expect_kw("BY")
            order = self.comma_list(self.order_item)
        if not self.at_op(")"):
            depth = 1
            while depth:
                t = self.advance()
                if t.kind == "eof":
                    self.fail(")")
                if t.kind == "op" and t.text in "()":
                    depth += 1 if t.text == "(" else -1
            return None
        self.expect_op(")")
        return OverWindow(partition, order, self.span_from(start))

    def special_function(self, word: str, start: int) -> Expr:
        """EXTRACT(unit FROM x), TRIM([BOTH|LEADING|TRAILING] [c] FROM x),
        SUBSTRING(x FROM a [FOR b]), POSITION(a IN b); the comma forms are plain calls."""
        self.advance()
        self.expect_op("(")
        if word == "EXTRACT":
            unit = self.expect_kw(*_INTERVAL_UNITS, "QUARTER", "WEEK", "DOW", "DOY").upper
            self.expect_kw("FROM")
            arg = self.expr()
            self.expect_op(")")
            name = {"DAY": "DAYOFMONTH"}.get(unit, unit)
            return Func(name, (arg,), self.span_from(start))
        if word == "TRIM":
            side = None
            if self.at_kw("BOTH", "LEADING", "TRAILING"):
                side = self.advance().upper
            chars = None
            if not self.at_kw("FROM"):
                first = self.expr()
                if self.accept_kw("FROM"):
                    chars = first
                    arg = self.expr()
                else:
                    arg = first
            else:
                self.advance()
                arg = self.expr()
            self.expect_op(")")
            if chars is not None and not (isinstance(chars, Lit) and chars.text == " "):
                self.refuse(start, "TRIM of characters other than ' '")
            name = {"LEADING": "LTRIM", "TRAILING": "RTRIM"}.get(side or "", "TRIM")
            return Func(name, (arg,), self.span_from(start))
        if word == "SUBSTRING":
            arg = self.expr()
            if self.accept_kw("FROM"):
                args = [arg, self.expr()]
                if self.accept_kw("FOR"):
                    args.append(self.expr())
            else:
                args = [arg]
                while self.accept_op(","):
                    args.append(self.expr())
            self.expect_op(")")
            return Func("SUBSTRING", tuple(args), self.span_from(start))
        needle = self.additive()
        if self.accept_kw("IN"):
            hay = self.expr()
        else:
            self.expect_op(",")
            hay = self.expr()
        self.expect_op(")")
        return Func("POSITION", (needle, hay), self.span_from(start))

    def interval(self, start: int) -> IntervalLit:
        self.advance()
        negative = bool(self.accept_op("-"))
        self._note("<string>")
        if self.tok.kind == "number":
            text = self.advance().text  # INTERVAL 4 HOUR: Flink wants '4'; take it anyway
        elif self.tok.kind == "string":
            text = self.advance().text
        else:
            self.fail()
        unit = self.interval_unit()
        to_unit = None
        if self.accept_kw("TO"):
            to_unit = self.interval_unit()
        return IntervalLit(text, unit, to_unit, negative, self.span_from(start))

    def interval_unit(self) -> str:
        words = (*_INTERVAL_UNITS, *_PLURAL_UNITS, "MILLISECOND")
        unit = self.expect_kw(*words).upper
        if self.accept_op("("):  # SECOND(3): a precision
            self.number_text()
            self.expect_op(")")
        return _PLURAL_UNITS.get(unit, unit)

    def case(self, start: int) -> CaseE:
        self.advance()
        operand = None if self.at_kw("WHEN") else self.expr()
        whens = []
        while self.accept_kw("WHEN"):
            cond = self.expr()
            self.expect_kw("THEN")
            whens.append((cond, self.expr()))
        if not whens:
            self.fail("WHEN")
        default = self.expr() if self.accept_kw("ELSE") else None
        self.expect_kw("END")
        return CaseE(operand, tuple(whens), default, self.span_from(start))

    # -- entry points -------------------------------------------------------------------------
    def end_of_statement(self) -> None:
        self.accept_op(";")
        self._note("<EOF>")
        if self.tok.kind != "eof":
            if self.i > 0 and self.tokens[self.i - 1].text == ";":
                line, column = line_col(self.text, self.tok.start)
                raise SqlParserError(
                    f"SQL parse failed. A second statement starts at line {line}, column "
                    f"{column}: execute_sql() runs one statement at a time (several INSERTs "
                    "run together in EXECUTE STATEMENT SET BEGIN ...; END).",
                    line,
                    column,
                )
            self.fail()


def parse_statement(text: str) -> Statement:
    """Parse one statement (a trailing ``;`` is fine).

    >>> type(parse_statement("DROP TABLE IF EXISTS Orders;")).__name__
    'Drop'
    """
    parser = Parser(text)
    if parser.tok.kind == "eof":
        raise SqlParserError("SQL parse failed. The statement is empty (line 1, column 1).", 1, 1)
    stmt = parser.statement()
    parser.end_of_statement()
    return stmt


def parse_query(text: str) -> Query:
    """Parse a query (SELECT, set operations, VALUES, WITH); anything else is an error.

    >>> parse_query("SELECT 1").items[0].expr.text
    '1'
    """
    parser = Parser(text)
    query = parser.query()
    parser.end_of_statement()
    return query


def parse_expression(text: str) -> Expr:
    """Parse one scalar expression (a computed column's or a watermark's).

    >>> parse_expression("ts - INTERVAL '5' SECOND").op
    '-'
    """
    parser = Parser(text)
    expr = parser.expr()
    parser._note("<EOF>")
    if parser.tok.kind != "eof":
        parser.fail()
    return expr
