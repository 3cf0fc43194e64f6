"""The ``filesystem`` connector: files under a directory in json, csv or parquet, read with
Spark's readers (as a stream in streaming mode).

Options, Flink's where Flink has them: ``path`` and ``format`` (required);
``source.monitor-interval`` (watch the directory for new files: the table is unbounded;
without it the table is bounded, as in Flink); ``sink.parallelism`` (checked; a Spark write
has its own parallelism); ``changelog.op-column`` (the column holding each row's kind: the
table is read as a changelog); ``changelog.file-order`` (``modification-time``, the default:
a changelog's files are applied in the order of their modification times, to the nanosecond
where the filesystem keeps it, and two files of one directory that tie fail the query, naming
them; ``name``: in the order of their paths, for writers that number their files).

The format options are Flink's, read into Spark's reader options (:data:`FORMAT_OPTIONS`):
``csv.field-delimiter``, ``csv.quote-character``, ``csv.disable-quote-character``,
``csv.allow-comments``, ``csv.escape-character``, ``csv.null-literal``, ``csv.trim-spaces``;
``json.fail-on-missing-field`` (``false`` only: a missing field is NULL),
``json.timestamp-format.standard`` (Spark reads both), ``json.decode.json-parser.enabled``;
``<format>.ignore-parse-errors`` (``false``, the default, fails the query on a record that
cannot be parsed, naming the file; ``true`` skips such records — never Spark's default of
reading them as rows of NULLs); and one of the product's, ``csv.header`` (a first line of
column names, skipped). Any other option is refused with Flink's message ("Unsupported
options found for 'filesystem'", then the supported ones), naming the nearest supported
option, Flink's options the product does not have (partitions, rolling policies,
compaction, ...) and the Flink option for a Spark reader option (``sep``:
``csv.field-delimiter``). Flink itself leaves ``<format>.*`` options of a filesystem table
unchecked (a misspelled one is ignored); here they are checked as any other.

Example::

    >>> opts = validate_filesystem_options({"path": "/data/orders", "format": "csv",
    ...     "csv.field-delimiter": ";", "source.monitor-interval": "2 s"})
    >>> opts.reader_options, opts.monitor_interval_ms
    ((('mode', 'FAILFAST'), ('sep', ';')), 2000)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

import attrs

from tableapi.connectors.common import SINK_PARALLELISM, check_supported_options, sink_parallelism
from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.plan.sources import FILE_ORDERS

FILE_FORMATS = ("json", "csv", "parquet")
PATH = "path"
FORMAT = "format"
OP_COLUMN = "changelog.op-column"
FILE_ORDER = "changelog.file-order"
MONITOR_INTERVAL = "source.monitor-interval"
# The connector options the product reads (any format).
OWN_OPTIONS = frozenset(
    {
        "connector",
        "property-version",
        PATH,
        FORMAT,
        OP_COLUMN,
        FILE_ORDER,
        MONITOR_INTERVAL,
        SINK_PARALLELISM,
    }
)
# Flink 2.3's filesystem connector options the product does not have (yet): refused, by name.
FLINK_ONLY_OPTIONS = frozenset(
    """
    auto-compaction compaction.file-size partition.default-name partition.time-extractor.class
    partition.time-extractor.kind partition.time-extractor.timestamp-formatter
    partition.time-extractor.timestamp-pattern scan.watermark.alignment.group
    scan.watermark.alignment.max-drift scan.watermark.alignment.update-interval
    scan.watermark.emit.strategy scan.watermark.idle-timeout sink.partition-commit.delay
    sink.partition-commit.policy.class sink.partition-commit.policy.class.parameters
    sink.partition-commit.policy.kind sink.partition-commit.success-file.name
    sink.partition-commit.trigger sink.partition-commit.watermark-time-zone
    sink.rolling-policy.check-interval sink.rolling-policy.file-size
    sink.rolling-policy.inactivity-interval sink.rolling-policy.rollover-interval
    sink.shuffle-by-partition.enable source.path.regex-pattern source.report-statistics
    csv.allow-trailing-comma csv.array-element-delimiter csv.empty-string-as-null
    csv.fail-on-missing-columns csv.ignore-trailing-unmappable
    csv.write-bigdecimal-in-scientific-notation json.encode.decimal-as-plain-number
    json.encode.ignore-null-fields json.map-null-key.literal json.map-null-key.mode
    parquet.timestamp.time.unit parquet.utc-timezone parquet.write.int64.timestamp
    """.split()
)
# Spark reader options a user may try, and the option that says it here.
_SPARK_READER_OPTIONS = {
    "sep": "csv.field-delimiter",
    "delimiter": "csv.field-delimiter",
    "quote": "csv.quote-character",
    "escape": "csv.escape-character",
    "nullValue": "csv.null-literal",
    "comment": "csv.allow-comments",
    "header": "csv.header",
    "mode": "<format>.ignore-parse-errors",
}
# Formats read by a parser that can meet a malformed record (Spark's reader ``mode``).
_PARSED_FORMATS = ("json", "csv")


def _flag(key: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise ValidationError(f"{key} must be 'true' or 'false', got {value!r}.")
    return lowered == "true"


def _char(key: str, value: str) -> str:
    """One character, Java escapes read as Flink reads them (``'\\t'`` is a tab)."""
    char = value.encode("latin-1", "backslashreplace").decode("unicode_escape")
    if len(char) != 1:
        raise ValidationError(
            f"Option '{key}' must be a string with single character, but was: {value}"
        )
    return char


def _parse_errors(key: str, value: str) -> dict[str, str]:
    # Spark's default (PERMISSIVE) reads a malformed record as a row of NULLs: invented data.
    # Flink fails the query (FAILFAST, set when this option is absent), or skips the record.
    return {"mode": "DROPMALFORMED" if _flag(key, value) else "FAILFAST"}


def _missing_field(key: str, value: str) -> dict[str, str]:
    if _flag(key, value):
        raise ValidationError(
            f"{key} = 'true' is not supported by this product (yet): a field missing from a "
            "record is read as NULL (Flink's default, 'false')."
        )
    return {}


def _timestamp_standard(key: str, value: str) -> dict[str, str]:
    if value.strip().upper() not in ("SQL", "ISO-8601"):
        raise ValidationError(
            f"Unsupported value '{value}' for {key}. Supported values are [SQL, ISO-8601]."
        )
    return {}  # Spark's reader takes both '2024-01-01 10:00:00' and '2024-01-01T10:00:00'


def _spark_flag(name: str, value: str | None = None) -> Callable[[str, str], dict[str, str]]:
    """A Flink flag that sets Spark's ``name`` to ``value`` when true (``value`` None: to
    the flag itself)."""

    def read(key: str, raw: str) -> dict[str, str]:
        on = _flag(key, raw)
        if value is None:
            return {name: str(on).lower()}
        return {name: value} if on else {}

    return read


def _trim(key: str, value: str) -> dict[str, str]:
    on = str(_flag(key, value)).lower()
    return {"ignoreLeadingWhiteSpace": on, "ignoreTrailingWhiteSpace": on}


def _checked_flag(key: str, value: str) -> dict[str, str]:
    _flag(key, value)  # which JSON parser Flink uses: the same rows either way
    return {}


#: Per format, its options the product honours and the Spark reader options each becomes.
FORMAT_OPTIONS: dict[str, dict[str, Callable[[str, str], dict[str, str]]]] = {
    "csv": {
        "csv.field-delimiter": lambda k, v: {"sep": _char(k, v)},
        "csv.quote-character": lambda k, v: {"quote": _char(k, v)},
        "csv.disable-quote-character": _spark_flag("quote", ""),  # '' turns quoting off
        "csv.allow-comments": _spark_flag("comment", "#"),  # Flink's comments start with '#'
        "csv.escape-character": lambda k, v: {"escape": _char(k, v)},
        "csv.null-literal": lambda k, v: {"nullValue": v},
        "csv.trim-spaces": _trim,
        "csv.ignore-parse-errors": _parse_errors,
        "csv.header": _spark_flag("header"),  # the product's: Flink's csv has no header line
    },
    "json": {
        "json.ignore-parse-errors": _parse_errors,
        "json.fail-on-missing-field": _missing_field,
        "json.timestamp-format.standard": _timestamp_standard,
        "json.decode.json-parser.enabled": _checked_flag,
    },
    "parquet": {},
}


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
    own = FORMAT_OPTIONS[fmt]
    check_supported_options(
        "filesystem", options, OWN_OPTIONS | own.keys(), table, lambda keys: _note(keys, fmt)
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
    if "csv.quote-character" in options and "csv.disable-quote-character" in options:
        raise ValidationError(
            "Format cannot define a quote character and disabled quote character at the same "
            "time: drop csv.quote-character or csv.disable-quote-character."
        )
    sink_parallelism(options, table)
    reader: dict[str, str] = {"mode": "FAILFAST"} if fmt in _PARSED_FORMATS else {}
    for key, read in own.items():
        if key in options:
            reader.update(read(key, options[key]))
    return FilesystemOptions(
        options[PATH],
        fmt,
        tuple(sorted(reader.items())),
        options.get(OP_COLUMN),
        interval_ms,
        order,
    )


def _note(unknown: list[str], fmt: str) -> str:
    """Why each unknown option is not taken: a Flink option the product does not have, another
    format's option, or a Spark reader option and the option that says it here."""
    lines = []
    for key in unknown:
        bare = key.split(".", 1)[1] if key.split(".", 1)[0] in FILE_FORMATS else key
        if key in FLINK_ONLY_OPTIONS:
            lines.append(f"{key}: Flink's, not supported by this product (yet); remove it.")
        elif key.split(".", 1)[0] in FILE_FORMATS and not key.startswith(fmt + "."):
            lines.append(
                f"{key}: an option of format {key.split('.')[0]!r}; this table's is {fmt!r}."
            )
        elif bare in _SPARK_READER_OPTIONS:
            flink = _SPARK_READER_OPTIONS[bare].replace("<format>", fmt)
            lines.append(f"{key}: Spark's reader option {bare!r}; write {flink!r}.")
        elif key.startswith(fmt + ".") and not FORMAT_OPTIONS[fmt]:
            lines.append(f"{key}: format {fmt!r} takes no options here.")
        elif key.startswith("scan."):
            lines.append(
                f"{key}: a scan option of another connector; a filesystem table reads the "
                f"files under 'path' (new ones as they come with {MONITOR_INTERVAL!r})."
            )
    return "\n\n" + "\n".join(lines) if lines else ""


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
