"""Errors the Table API raises. Each message names the problem and the fix."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple


class TableApiError(Exception):
    """Base class of the Table API's errors.

    >>> try:
    ...     products.select(col("nope"))
    ... except TableApiError as e:
    ...     print(type(e).__name__)
    ValidationError
    """


class ValidationError(TableApiError, ValueError):
    """A table program is invalid; raised while the plan is built, before anything runs.

    >>> products.select(col("Name"))
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Column 'Name' not found in select(). Available columns: \
[id, name, price]. Did you mean 'name'? Column names are case-sensitive.
    """


class SqlParserError(ValidationError):
    """A SQL statement that does not parse (Flink's ``SqlParserException``): the message
    says where (``line``, ``column``, 1-based) and what was expected there.

    >>> env.execute_sql("SELECT id FORM Products")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.SqlParserError: SQL parse failed. Encountered "Products" at line 1, \
column 16. Was expecting one of: <EOF>, ",", ";", "EXCEPT", "FETCH", "FROM", ... \
("FORM" at line 1, column 11 was read as an alias: did you mean FROM?)
    """

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


class SqlValidationError(ValidationError):
    """A SQL statement that parses but is invalid (Flink's ``ValidationException`` for SQL):
    an unknown table or column, a type mismatch, an unsupported clause. The message gives
    the span (``line``, ``column`` to ``end_line``, ``end_column``, 1-based) and the names in
    scope.

    >>> env.execute_sql("SELECT nme FROM Products")
    Traceback (most recent call last):
    ...
    tableapi.errors.SqlValidationError: SQL validation failed. From line 1, column 8 to \
line 1, column 10: Column 'nme' not found in any table. Columns in scope: [Products.id, \
Products.name, Products.price]. Did you mean 'name'?
    """

    def __init__(
        self, message: str, line: int, column: int, end_line: int, end_column: int
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column


class ServerError(TableApiError, RuntimeError):
    """The Spark Connect server is missing, unreachable or lacks the right server_ext.

    >>> issubclass(ServerError, TableApiError), issubclass(ServerError, RuntimeError)
    (True, True)
    """


class DataError(TableApiError, RuntimeError):
    """An input file holds a record the query cannot read; the message names the file and
    the table option that skips such records.

    >>> error = malformed_input(Exception("[MALFORMED_RECORD_IN_PARSING] ..."))
    >>> isinstance(error, DataError), isinstance(error, RuntimeError)
    (True, True)
    """


class DatabaseError(TableApiError, RuntimeError):
    """The database of a ``jdbc`` table failed the query: a lookup table's (unreachable after
    ``lookup.max-retries``, or it refused the lookup query) or a sink table's (unreachable
    after ``sink.max-retries``, or it refused the rows); the message names the table, the
    database's address and what to check. The Spark Connect server is fine: run the query
    again once the database is back (a sink's batch is never half written).

    >>> error = database_failure(Exception("LookupSourceError: Lookup table 'T': PostgreSQL "
    ...     "database 'db' at 10.0.0.5:5432 (table t) is unreachable; ..."))
    >>> isinstance(error, DatabaseError), isinstance(error, RuntimeError)
    (True, True)
    """


# A database's failure as server_ext raises it in a Python worker: a lookup's message, then
# the SQL of a refused query; or a sink's message (the worker's traceback and the JVM's
# follow).
_DATABASE_FAILURE = re.compile(
    r"(?:LookupSourceError: (Lookup table [^\n]*)(\nSQL: [^\n]*)?"
    r"|JdbcSinkError: (Table [^\n]*))"
)


def database_failure(error: BaseException) -> DatabaseError | None:
    r"""The :class:`DatabaseError` for a query that failed because a ``jdbc`` table's database
    did, or None when ``error`` is something else.

    >>> e = Exception("[PYTHON_EXCEPTION] ... LookupSourceError: Lookup table 'Users': "
    ...     "PostgreSQL database 'db' at 10.0.0.5:5432 (table users) is unreachable; 4 "
    ...     "attempts failed.\n\tat org.apache.spark...")
    >>> print(database_failure(e))  # doctest: +NORMALIZE_WHITESPACE
    Lookup table 'Users': PostgreSQL database 'db' at 10.0.0.5:5432 (table users) is
    unreachable; 4 attempts failed.
    >>> print(database_failure(Exception("[PYTHON_EXCEPTION] JdbcSinkError: Table 'Totals': "
    ...     "SQLite database /d.db (table t) is unreachable; 4 attempts failed.\n\tat ...")))
    Table 'Totals': SQLite database /d.db (table t) is unreachable; 4 attempts failed.
    >>> database_failure(Exception("Connection refused")) is None
    True
    """
    found = _DATABASE_FAILURE.search(str(error))
    if found is None:
        return None
    if found.group(3) is not None:
        return DatabaseError(found.group(3).strip())
    return DatabaseError(found.group(1).strip() + (found.group(2) or ""))


# Spark's messages for a file its reader cannot parse (FAILFAST): the file, then the cause.
_FAILED_FILE = re.compile(r"Encountered error while reading file (\S+?)\.?\s")
_PARSE_CAUSE = re.compile(
    r"Caused by: (?!org\.apache\.spark\.)([\w.$]+(?:Exception|Error): [^\n]*)"
)


def malformed_input(error: BaseException) -> DataError | None:
    r"""The :class:`DataError` for a query that failed on a record it could not parse, or
    None when ``error`` is something else.

    >>> e = Exception("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
    ...     "file:///d/part-1.json.  SQLSTATE: KD001\nCaused by: org.apache.spark.SparkException:"
    ...     " [MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected"
    ...     "\nCaused by: com.fasterxml.jackson.core.JsonParseException: Unrecognized token 'x'")
    >>> print(malformed_input(e))  # doctest: +NORMALIZE_WHITESPACE
    The file file:///d/part-1.json holds a record that cannot be parsed
    (com.fasterxml.jackson.core.JsonParseException: Unrecognized token 'x'). A filesystem table
    fails on such a record, as Flink does; to skip such records instead, set the table's
    option 'json.ignore-parse-errors' (or 'csv.ignore-parse-errors') to 'true'.
    """
    text = str(error)
    if "MALFORMED_RECORD_IN_PARSING" not in text:
        return None
    found = _FAILED_FILE.search(text)
    where = found.group(1) if found else "an input file"
    cause = _PARSE_CAUSE.search(text)
    detail = f" ({cause.group(1).strip()})" if cause else ""
    return DataError(
        f"The file {where} holds a record that cannot be parsed{detail}. A filesystem table "
        "fails on such a record, as Flink does; to skip such records instead, set the table's "
        "option 'json.ignore-parse-errors' (or 'csv.ignore-parse-errors') to 'true'."
    )


class FileTable(NamedTuple):
    """A filesystem table a query reads: its name, its ``path``, whether the query streams
    and whether ``source.monitor-interval`` watches the path (for the missing-path error)."""

    table: str
    path: str
    streaming: bool = False
    watched: bool = False


def missing_path(file: FileTable) -> ValidationError:
    """The error for a filesystem table whose path does not exist, with what Flink does.

    >>> print(missing_path(FileTable("Orders", "/no/dir")))  # doctest: +NORMALIZE_WHITESPACE
    Table 'Orders' reads path '/no/dir', which does not exist. Flink's filesystem source fails
    on a missing path too (it lists the path when the job starts): create the directory (an
    empty one reads as no rows) or fix the table's option 'path'.
    """
    reader = f"Table {file.table!r}" if file.table else "A filesystem table"
    head = f"{reader} reads path {file.path!r}, which does not exist."
    if file.streaming and file.watched:
        return ValidationError(
            f"{head} With 'source.monitor-interval' the directory is watched for new files, but "
            "it must exist when the query starts: Flink's filesystem source fails on a missing "
            "path too, watching or not (it lists the path when the job starts). Create the "
            "directory first (an empty one is fine: files written there later are read as they "
            "arrive), or fix the table's option 'path'."
        )
    bounded = (
        " In streaming mode a table without 'source.monitor-interval' is bounded: the query "
        "reads the files there when it starts."
        if file.streaming
        else ""
    )
    return ValidationError(
        f"{head}{bounded} Flink's filesystem source fails on a missing path too (it lists the "
        "path when the job starts): create the directory (an empty one reads as no rows) or "
        "fix the table's option 'path'."
    )


# Spark's analysis error for a path its reader cannot find (the path may come qualified).
_PATH_NOT_FOUND = re.compile(r"\[PATH_NOT_FOUND\] Path does not exist: (\S+?)\.?(?:\s|$)")


def path_not_found(error: BaseException, files: Sequence[FileTable]) -> ValidationError | None:
    """The :func:`missing_path` error for Spark's PATH_NOT_FOUND, naming the table of
    ``files`` whose path it is; None when ``error`` is something else.

    >>> e = Exception("[PATH_NOT_FOUND] Path does not exist: file:/no/dir. SQLSTATE: 42K03")
    >>> path_not_found(e, [FileTable("Orders", "/no/dir/")]).args[0][:54]
    "Table 'Orders' reads path '/no/dir/', which does not e"
    """
    found = _PATH_NOT_FOUND.search(str(error))
    if found is None:
        return None
    missing = _plain_path(found.group(1))
    named = [f for f in files if _same_path(f.path, missing)]
    if not named and len(files) == 1:  # Spark qualified it in a way we do not follow
        named = list(files)
    if named:
        return missing_path(named[0])
    streaming = any(f.streaming for f in files)
    return missing_path(FileTable("", found.group(1), streaming))


def _same_path(path: str, missing: str) -> bool:
    """``path`` (a table's option) is ``missing`` (as Spark gave it): equal, or relative to
    the server's working directory."""
    plain = _plain_path(path)
    return plain == missing or (
        not plain.startswith("/") and missing.endswith("/" + plain.removeprefix("./"))
    )


def _plain_path(path: str) -> str:
    """A local path as Spark may qualify it (``file:/d``, ``file:///d``) -> ``/d``."""
    plain = re.sub(r"^file:(//)?(?=/)", "", path)
    return plain.rstrip("/") or "/"


def column_not_found(name: str, available: Iterable[str], where: str = "") -> ValidationError:
    """The error for a column reference that matches no column of the input."""
    names = list(available)
    hint = ""
    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        hint = f" Did you mean {lowered[name.lower()]!r}? Column names are case-sensitive."
    place = f" in {where}" if where else ""
    return ValidationError(
        f"Column {name!r} not found{place}. Available columns: [{', '.join(names)}].{hint}"
    )
