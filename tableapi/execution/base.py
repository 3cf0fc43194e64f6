"""What the API and the executors share: the sinks ``execute_insert`` writes into, the
executor protocol and the server an executor runs on.

Example::

    >>> from tableapi.types import BIGINT, RowType
    >>> BlackholeSink("Out", RowType.of(("a", BIGINT))).name
    'Out'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import attrs
from pyspark.sql import DataFrame
from pyspark.sql.connect.session import SparkSession

from tableapi.connectors import JdbcOptions
from tableapi.errors import FileTable
from tableapi.plan import PlanNode
from tableapi.result import Guard, TableResult
from tableapi.session import server_call
from tableapi.types import RowType


@attrs.frozen
class FileSink:
    """Where ``execute_insert`` writes: a catalog table's files."""

    name: str
    path: str
    format: str
    row_type: RowType  # its physical columns


@attrs.frozen
class PrintSink:
    """A ``print`` table: the client prints each row (see ``execution/printing.py``)."""

    name: str
    row_type: RowType
    prefix: str = ""  # 'print-identifier> '
    standard_error: bool = False


@attrs.frozen
class BlackholeSink:
    """A ``blackhole`` table: the query runs and its rows are discarded (Spark's noop)."""

    name: str
    row_type: RowType


@attrs.frozen
class JdbcSink:
    """A ``jdbc`` table: a PostgreSQL or SQLite table, written in upsert mode when the table
    has a primary key (``key``) and in append mode otherwise (see ``execution/jdbc.py``)."""

    name: str
    row_type: RowType
    key: tuple[str, ...]
    options: JdbcOptions


#: What ``execute_insert`` can write into. Print, blackhole and keyed jdbc sinks take
#: changelogs.
Sink = FileSink | PrintSink | BlackholeSink | JdbcSink


class Executor(Protocol):
    """What the API asks of execution; each method takes an optimized plan."""

    def to_spark(self, plan: PlanNode) -> DataFrame:
        """The DataFrame the plan compiles to (streaming: a streaming DataFrame)."""
        ...

    def execute(self, plan: PlanNode, row_type: RowType) -> TableResult:
        """Run the plan: a finished batch result, or a running streaming query."""
        ...

    def insert(self, plan: PlanNode, sink: Sink, overwrite: bool) -> TableResult:
        """Write the plan's rows (the sink's physical columns, in order) into ``sink``."""
        ...


@attrs.frozen
class Server:
    """The server an executor runs on: its session (connected on first use) and its URL."""

    session: Callable[[], SparkSession]
    url: Callable[[], str]

    def guard(self, advice: str, files: Sequence[FileTable] = ()) -> Guard:
        """Calls that fail because this server went away raise an error naming it, what was
        being done, and ``advice``; Spark's error for a path of ``files`` (the query's
        filesystem tables) that does not exist becomes one naming the table."""

        def guarded(doing: str) -> AbstractContextManager[None]:
            return server_call(self.url(), doing, advice, files)

        return guarded


__all__ = [
    "BlackholeSink",
    "Executor",
    "FileSink",
    "JdbcSink",
    "PrintSink",
    "Server",
    "Sink",
]
