"""The ``filesystem`` connector: files under a directory in json, csv or parquet, read with
Spark's readers (as a stream in streaming mode).

Options: ``path`` and ``format`` (required); ``changelog.op-column`` (the column holding each
row's kind: the table is read as a changelog); ``changelog.file-order`` (``modification-time``,
the default: a changelog's files are applied in the order of their modification times, to the
nanosecond where the filesystem keeps it, and two files of one directory that tie fail the
query, naming them; ``name``: in the order of their paths, for writers that number their
files); ``source.monitor-interval`` (watch the
directory for new files: the table is unbounded; without it the table is bounded, as in
Flink); ``json.ignore-parse-errors`` / ``csv.ignore-parse-errors`` (Flink's: ``false``, the
default, fails the query on a record that cannot be parsed, naming the file; ``true`` skips
such records — never Spark's default of reading them as rows of NULLs);
``<format>.<option>`` or ``<option>``: handed to Spark's reader (``csv.header`` -> ``header``).

Example::

    >>> opts = validate_filesystem_options({"path": "/data/orders", "format": "csv",
    ...     "csv.header": "true", "source.monitor-interval": "2 s"})
    >>> opts.reader_options, opts.monitor_interval_ms
    ((('header', 'true'), ('mode', 'FAILFAST')), 2000)
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import attrs

from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.plan.sources import FILE_ORDERS

FILE_FORMATS = ("json", "csv", "parquet")
PATH = "path"
FORMAT = "format"
OP_COLUMN = "changelog.op-column"
FILE_ORDER = "changelog.file-order"
MONITOR_INTERVAL = "source.monitor-interval"
IGNORE_PARSE_ERRORS = "ignore-parse-errors"  # json.ignore-parse-errors, csv.ignore-parse-errors
# Options the product itself reads; everything else is handed to Spark's reader.
OWN_OPTIONS = frozenset({"connector", PATH, FORMAT, OP_COLUMN, FILE_ORDER, MONITOR_INTERVAL})
# Formats read by a parser that can meet a malformed record (Spark's reader ``mode``).
_PARSED_FORMATS = ("json", "csv")


@attrs.frozen
class FilesystemOptions:
    """A validated ``filesystem`` table."""

    path: str
    format: str
    reader_options: tuple[tuple[str, str], ...] = ()
    op_column: str | None = None
    monitor_interval_ms: int | None = None
    file_order: str = FILE_ORDERS[0]


def validate_filesystem_options(options: Mapping[str, str], table: str = "") -> FilesystemOptions:
    """Check a ``filesystem`` table's options; raise :class:`ValidationError` naming the fix.

    Example::

        >>> validate_filesystem_options({"path": "/data/t"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: The filesystem connector needs the option(s) ['format']...
    """
    missing = [k for k in (PATH, FORMAT) if k not in options]
    if missing:
        raise ValidationError(
            f"The filesystem connector needs the option(s) {missing}, e.g. "
            ".option('path', '/data/orders').option('format', 'json')."
        )
    fmt = options[FORMAT]
    if fmt not in FILE_FORMATS:
        raise ValidationError(
            f"Unknown format {fmt!r}; the filesystem connector reads {list(FILE_FORMATS)}."
        )
    interval = options.get(MONITOR_INTERVAL)
    interval_ms = None if interval is None else parse_duration_ms(interval, MONITOR_INTERVAL)
    if interval_ms == 0:
        raise ValidationError(
            f"{MONITOR_INTERVAL} must be positive, e.g. '10 s'; leave it out for a bounded "
            "table (the files present when the query starts)."
        )
    order = options.get(FILE_ORDER, FILE_ORDERS[0]).strip().lower()
    if order not in FILE_ORDERS:
        raise ValidationError(
            f"{FILE_ORDER} must be one of {list(FILE_ORDERS)}, got {options[FILE_ORDER]!r}."
        )
    if FILE_ORDER in options and OP_COLUMN not in options:
        raise ValidationError(
            f"{FILE_ORDER} orders the files of a changelog: it needs {OP_COLUMN!r} too "
            "(an insert-only table's rows are applied in any order)."
        )
    prefix = fmt + "."
    passed = {
        k[len(prefix) :] if k.startswith(prefix) else k: v
        for k, v in options.items()
        if k not in OWN_OPTIONS
    }
    ignore = passed.pop(IGNORE_PARSE_ERRORS, None)
    if ignore is not None and ignore.strip().lower() not in ("true", "false"):
        raise ValidationError(
            f"{prefix}{IGNORE_PARSE_ERRORS} must be 'true' or 'false', got {ignore!r}."
        )
    if fmt in _PARSED_FORMATS and "mode" not in passed:
        # Spark's default (PERMISSIVE) reads a malformed record as a row of NULLs: invented
        # data. Flink fails the query, or skips the record with ignore-parse-errors.
        skip = ignore is not None and ignore.strip().lower() == "true"
        passed["mode"] = "DROPMALFORMED" if skip else "FAILFAST"
    reader = tuple(sorted(passed.items()))
    return FilesystemOptions(options[PATH], fmt, reader, options.get(OP_COLUMN), interval_ms, order)


def local_path_missing(path: str) -> bool:
    """Is ``path`` a path of this machine (no scheme but ``file:``, no glob pattern, which
    Spark expands) that does not exist? Only meaningful when the server reads this machine's
    files (the embedded server).

    >>> local_path_missing("/no/such/dir"), local_path_missing("/"), local_path_missing("s3a://b/x")
    (True, False, False)
    """
    if re.match(r"^[A-Za-z][\w+.-]*:", path) and not path.startswith("file:"):
        return False  # another filesystem (hdfs:, s3a:, ...): the server's to find
    if any(c in path for c in "*?[{"):
        return False
    plain = re.sub(r"^file:(//)?(?=/)", "", path)
    return not os.path.exists(plain)
