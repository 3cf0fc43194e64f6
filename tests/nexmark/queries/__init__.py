"""Nexmark's queries q0-q23 as Nexmark's SQL text (``qN.sql`` here) and the DDL of their three
event tables (``tables.sql``): what the conformance test (tests/nexmark) and benchmarks read.

Standard library only: Flink's side imports it in Flink's virtualenv too. A query file is
Nexmark's: its sink's ``CREATE TABLE nexmark_qN`` (blackhole), the ``INSERT INTO nexmark_qN``
of its answer, and what the query needs before them (q12's view, q13's side input, q14's
function). ``${NAME}`` placeholders are Nexmark's way to name files; `substitute` fills them.

Example:
    >>> q = load("q2")
    >>> q.select
    'SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0'
    >>> q.sink.split("(")[0], q.insert.split("\\n")[0]
    ('CREATE TABLE nexmark_q2 ', 'INSERT INTO nexmark_q2')
    >>> [s.split("(")[0].strip() for s in table_ddl(Path("/data/events"))]
    ['CREATE TABLE person', 'CREATE TABLE auction', 'CREATE TABLE bid']
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

QUERIES_DIR = Path(__file__).resolve().parent
#: Nexmark's queries, in order.
QUERY_NAMES: tuple[str, ...] = tuple(f"q{i}" for i in range(24))
_PLACEHOLDER = re.compile(r"\$\{([A-Z_]+)\}")


@dataclasses.dataclass(frozen=True)
class NexmarkQuery:
    """One query file, split into its statements.

    ``setup``: statements before the sink (views, side-input tables), ``functions``: its
    ``CREATE FUNCTION`` statements, ``sink``: ``CREATE TABLE nexmark_qN``, ``insert``: the
    ``INSERT INTO nexmark_qN``; ``select`` is the INSERT's query: the query's answer.
    """

    name: str
    text: str
    setup: tuple[str, ...]
    functions: tuple[str, ...]
    sink: str
    insert: str

    @property
    def select(self) -> str:
        """The query of the INSERT (what the conformance compares).

        Example:
            >>> load("q0").select
            'SELECT auction, bidder, price, `dateTime`, extra FROM bid'
        """
        match = re.match(r"INSERT\s+INTO\s+\S+\s+(.*)", self.insert, re.S | re.I)
        assert match, self.insert
        return match.group(1).strip()

    @property
    def text_hash(self) -> str:
        """A hash of the file's text (stored with Flink's answer: an edited query answers
        again).

        Example:
            >>> len(load("q1").text_hash)
            16
        """
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def split_statements(text: str) -> list[str]:
    """SQL text as its statements: ``--`` comments dropped, split at ``;`` outside quotes.

    Example:
        >>> split_statements("-- a comment; not a statement\\nSELECT 'a;b' ;\\nSELECT 2;")
        ["SELECT 'a;b'", 'SELECT 2']
    """
    statements, current, quote, i = [], [], "", 0
    while i < len(text):
        c = text[i]
        if quote:
            current.append(c)
            if c == quote:
                quote = ""
        elif c in "'`\"":
            quote = c
            current.append(c)
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif c == ";":
            statements.append("".join(current).strip())
            current = []
        else:
            current.append(c)
        i += 1
    statements.append("".join(current).strip())
    return [s for s in statements if s]


def load(name: str) -> NexmarkQuery:
    """The query ``name`` (``q0`` .. ``q23``).

    Example:
        >>> load("q14").functions
        ("CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar'",)
    """
    if name not in QUERY_NAMES:
        raise ValueError(f"no Nexmark query {name!r}: one of q0 .. q23")
    text = (QUERIES_DIR / f"{name}.sql").read_text()
    setup, functions, sink, insert = [], [], "", ""
    sink_name = f"nexmark_{name}"
    for statement in split_statements(text):
        words = statement.split()
        head = " ".join(words[:3]).upper()
        if head.startswith("CREATE FUNCTION"):
            functions.append(statement)
        elif head == f"CREATE TABLE {sink_name}".upper():
            sink = statement
        elif " ".join(words[:2]).upper() == "INSERT INTO" and words[2] == sink_name:
            insert = statement
        else:
            setup.append(statement)
    if not sink or not insert:
        raise ValueError(f"{name}.sql has no CREATE TABLE / INSERT INTO {sink_name}")
    return NexmarkQuery(name, text, tuple(setup), tuple(functions), sink, insert)


def load_all() -> dict[str, NexmarkQuery]:
    """Every query, by name, in order.

    Example:
        >>> list(load_all())[:3]
        ['q0', 'q1', 'q2']
    """
    return {name: load(name) for name in QUERY_NAMES}


def substitute(statement: str, values: dict[str, str]) -> str:
    """Fill a statement's ``${NAME}`` placeholders (one without a value is an error).

    Example:
        >>> substitute("'path' = '${EVENTS_DIR}/bid'", {"EVENTS_DIR": "/e"})
        "'path' = '/e/bid'"
    """

    def value(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"no value for ${{{m.group(1)}}} in: {statement[:80]}")
        return values[m.group(1)]

    return _PLACEHOLDER.sub(value, statement)


def tables_text() -> str:
    """The text of ``tables.sql`` (its hash is part of an answer's key)."""
    return (QUERIES_DIR / "tables.sql").read_text()


def table_ddl(events_dir: Path) -> list[str]:
    """``CREATE TABLE`` person, auction and bid over the CSV files in ``events_dir``.

    Example:
        >>> "'path' = '/e/bid'" in table_ddl(Path("/e"))[2]
        True
    """
    values = {"EVENTS_DIR": str(events_dir)}
    return [substitute(s, values) for s in split_statements(tables_text())]
