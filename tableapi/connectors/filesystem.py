"""The ``filesystem`` connector: files under a directory in json, csv or parquet, read with
Spark's readers (as a stream in streaming mode).

The options, Flink's where Flink has them, are declared below (:data:`OPTIONS`;
docs/options.md lists them): the connector's own (``path`` and ``format`` required; without
``source.monitor-interval`` the table is bounded, as in Flink; ``sink.parallelism`` is
checked, a Spark write has its own parallelism) and each format's (:data:`FORMAT_OPTIONS`),
read into Spark's reader options: a record that cannot be parsed fails the query, naming the
file, or is skipped (``<format>.ignore-parse-errors``), never read as a row of NULLs (Spark's
default); ``csv.header`` is the product's own.

Any other option is refused with Flink's message ("Unsupported options found for
'filesystem'", then the supported ones), naming the nearest supported option, Flink's options
the product does not have (partitions, rolling policies, compaction, ...) and the Flink option
for a Spark reader option (``sep``: ``csv.field-delimiter``). Flink itself leaves
``<format>.*`` options of a filesystem table unchecked (a misspelled one is ignored); here
they are checked as any other.

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
from typing import Any

import attrs

from tableapi.connectors.common import (
    CONNECTOR,
    PROPERTY_VERSION,
    SINK_PARALLELISM,
    check_supported_options,
    sink_parallelism,
    where,
)
from tableapi.errors import ValidationError
from tableapi.options import ConfigOption, ConfigOptions, OptionGroup
from tableapi.plan.sources import FILE_ORDERS

FILE_FORMATS = ("json", "csv", "parquet")
PATH = (
    ConfigOptions.key("path")
    .string_type()
    .no_default_value()
    .with_description("The directory (or file) the table's files are in; required.")
)
FORMAT = (
    ConfigOptions.key("format")
    .enum_type(FILE_FORMATS)
    .no_default_value()
    .with_requirement(
        lambda key, value: (
            f"Unknown format {value!r}; the filesystem connector reads {list(FILE_FORMATS)}."
        )
    )
    .with_description("The files' format; required.")
)
OP_COLUMN = (
    ConfigOptions.key("changelog.op-column")
    .string_type()
    .no_default_value()
    .with_description(
        "The column holding each row's kind (+I, -U, +U, -D): the table is read as a changelog."
    )
)
FILE_ORDER = (
    ConfigOptions.key("changelog.file-order")
    .enum_type(FILE_ORDERS)
    .default_value(FILE_ORDERS[0])
    .with_description(
        "The order a changelog's files are applied in: their modification times (to the "
        "nanosecond where the filesystem keeps it; two files of one directory that tie fail "
        "the query) or their paths ('name', for writers that number their files)."
    )
)
MONITOR_INTERVAL = (
    ConfigOptions.key("source.monitor-interval")
    .duration_type()
    .no_default_value()
    .with_description(
        "Watch the directory for new files this often: the table is unbounded; unset: bounded "
        "(the files present when the query starts)."
    )
)
# The connector options the product reads (any format).
OWN_OPTIONS = (
    CONNECTOR,
    PROPERTY_VERSION,
    PATH,
    FORMAT,
    OP_COLUMN,
    FILE_ORDER,
    MONITOR_INTERVAL,
    SINK_PARALLELISM,
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


def _unescaped(value: str) -> str:
    """Java escapes read as Flink reads them (``'\\t'`` is a tab)."""
    return value.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _char_option(key: str, default: str | None, description: str) -> ConfigOption[Any]:
    """A csv option holding one character, Flink's message for any other value."""
    builder = ConfigOptions.key(key).string_type()
    option = builder.no_default_value() if default is None else builder.default_value(default)
    return option.with_requirement(
        lambda k, v: f"Option '{k}' must be a string with single character, but was: {v}",
        lambda v: len(_unescaped(v)) == 1,
    ).with_description(description)


def _flag_option(key: str, description: str, default: bool = False) -> ConfigOption[bool]:
    return (
        ConfigOptions.key(key).boolean_type().default_value(default).with_description(description)
    )


def _parse_errors(skip: bool) -> dict[str, str]:
    # Spark's default (PERMISSIVE) reads a malformed record as a row of NULLs: invented data.
    # Flink fails the query (FAILFAST, set when this option is absent), or skips the record.
    return {"mode": "DROPMALFORMED" if skip else "FAILFAST"}


_IGNORE_PARSE_ERRORS = (
    "Skip a record that cannot be parsed; false fails the query on it, naming the file (never "
    "Spark's default of reading it as a row of NULLs)."
)


def _missing_field(fail: bool) -> dict[str, str]:
    if fail:
        raise ValidationError(
            "json.fail-on-missing-field = 'true' is not supported by this product (yet): a field "
            "missing from a record is read as NULL (Flink's default, 'false')."
        )
    return {}


#: How a format option's value becomes Spark reader options.
ToReader = Callable[[Any], dict[str, str]]
#: Per format, its options the product honours and the Spark reader options each becomes.
FORMAT_OPTIONS: dict[str, tuple[tuple[ConfigOption[Any], ToReader], ...]] = {
    "csv": (
        (
            _char_option("csv.field-delimiter", ",", "The field separator (Java escapes: '\\t')."),
            lambda v: {"sep": _unescaped(v)},
        ),
        (
            _char_option("csv.quote-character", '"', "The character quoting a field."),
            lambda v: {"quote": _unescaped(v)},
        ),
        (  # '' turns Spark's quoting off
            _flag_option("csv.disable-quote-character", "Read quote characters as any other."),
            lambda on: {"quote": ""} if on else {},
        ),
        (  # Flink's comments start with '#'
            _flag_option("csv.allow-comments", "Skip lines starting with '#'."),
            lambda on: {"comment": "#"} if on else {},
        ),
        (
            _char_option("csv.escape-character", None, "The character escaping a quote."),
            lambda v: {"escape": _unescaped(v)},
        ),
        (
            ConfigOptions.key("csv.null-literal")
            .string_type()
            .no_default_value()
            .with_description("The text read as NULL."),
            lambda v: {"nullValue": v},
        ),
        (
            _flag_option("csv.trim-spaces", "Trim the spaces around each field."),
            lambda on: {
                "ignoreLeadingWhiteSpace": str(on).lower(),
                "ignoreTrailingWhiteSpace": str(on).lower(),
            },
        ),
        (_flag_option("csv.ignore-parse-errors", _IGNORE_PARSE_ERRORS), _parse_errors),
        (  # the product's: Flink's csv has no header line
            _flag_option("csv.header", "The product's: a first line of column names, skipped."),
            lambda on: {"header": str(on).lower()},
        ),
    ),
    "json": (
        (_flag_option("json.ignore-parse-errors", _IGNORE_PARSE_ERRORS), _parse_errors),
        (
            _flag_option(
                "json.fail-on-missing-field", "Only false: a field missing from a record is NULL."
            ),
            _missing_field,
        ),
        (  # Spark's reader takes both '2024-01-01 10:00:00' and '2024-01-01T10:00:00'
            ConfigOptions.key("json.timestamp-format.standard")
            .enum_type(("SQL", "ISO-8601"))
            .default_value("SQL")
            .with_requirement(
                lambda k, v: (
                    f"Unsupported value '{v}' for {k}. Supported values are [SQL, ISO-8601]."
                )
            )
            .with_description("Flink's timestamp text format; both are read."),
            lambda v: {},
        ),
        (  # which JSON parser Flink uses: the same rows either way
            _flag_option(
                "json.decode.json-parser.enabled", "Flink's choice of JSON parser: checked.", True
            ),
            lambda v: {},
        ),
    ),
    "parquet": (),
}
#: The connector's options, its formats' too.
OPTIONS = OptionGroup(
    "Connector 'filesystem'",
    "Files under a directory, read with Spark's readers; a format's options apply to a table "
    "of that format (Flink's names, read into Spark's reader options).",
    OWN_OPTIONS + tuple(option for own in FORMAT_OPTIONS.values() for option, _ in own),
)


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
    at = where(table)
    path, fmt = PATH.read(options), FORMAT.read(options, at)
    if path is None or fmt is None:
        missing = [str(o) for o in (PATH, FORMAT) if not o.is_set(options)]
        raise ValidationError(
            f"The filesystem connector needs the option(s) {missing}, e.g. "
            ".option('path', '/data/orders').option('format', 'json')."
        )
    own = FORMAT_OPTIONS[fmt]
    supported = {k for o in OWN_OPTIONS for k in o.keys} | {o.key for o, _ in own}
    check_supported_options("filesystem", options, supported, table, lambda keys: _note(keys, fmt))
    interval_ms = MONITOR_INTERVAL.read(options, at)
    if interval_ms == 0:
        raise ValidationError(
            f"{MONITOR_INTERVAL} must be positive, e.g. '10 s'; leave it out for a bounded "
            "table (the files present when the query starts)."
        )
    order = FILE_ORDER.read(options, at)
    if FILE_ORDER.is_set(options) and not OP_COLUMN.is_set(options):
        raise ValidationError(
            f"{FILE_ORDER} orders the files of a changelog: it needs {str(OP_COLUMN)!r} too "
            "(an insert-only table's rows are applied in any order)."
        )
    if "csv.quote-character" in options and "csv.disable-quote-character" in options:
        raise ValidationError(
            "Format cannot define a quote character and disabled quote character at the same "
            "time: drop csv.quote-character or csv.disable-quote-character."
        )
    sink_parallelism(options, table)
    reader: dict[str, str] = {"mode": "FAILFAST"} if fmt in _PARSED_FORMATS else {}
    for option, to_reader in own:
        if option.is_set(options):
            reader.update(to_reader(option.read(options, at)))
    return FilesystemOptions(
        path,
        fmt,
        tuple(sorted(reader.items())),
        OP_COLUMN.read(options),
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
                f"files under 'path' (new ones as they come with {str(MONITOR_INTERVAL)!r})."
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
