"""The ``print`` connector: a sink table whose rows are printed, one line per change, in
Flink's print connector format (``+I[1, pen, 2.5]``, ``-U[...]``, ``+U[...]``, ``-D[...]``).

Where the lines appear: in Flink, in the TaskManager's standard output (the console of a
local job). Here the server's output is not the user's (an embedded server is a child
process; a remote one is elsewhere), so **the client prints them**, on its own standard
output (or standard error), as the insert's result arrives: a batch insert prints its rows
before ``execute_insert`` returns; a streaming insert prints each micro-batch's changes as it
commits, in change order, until the query ends or is cancelled (a query over bounded inputs
has printed everything when ``execute_insert`` returns).

Options (Flink's):

- ``print-identifier``: a prefix, ``id> +I[...]``;
- ``standard-error``: ``true`` prints to standard error (default ``false``: standard output);
- ``sink.parallelism``: accepted (a positive integer) for Flink DDL's sake; the client prints
  one stream, so the lines carry no subtask number (Flink's output at parallelism 1).

Any other option is refused with the list of these. The table cannot be read.

Example::

    >>> opts = validate_print_options({"print-identifier": "orders", "standard-error": "TRUE"})
    >>> opts.prefix, opts.standard_error
    ('orders> ', True)
    >>> validate_print_options({"standard-error": "yes"}, "Out")
    Traceback (most recent call last):
    ...
    tableapi.options.OptionValueError: Could not parse value 'yes' for key \
'standard-error' of table 'Out': it must be true or false.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from tableapi.connectors.common import (
    CONNECTOR,
    PROPERTY_VERSION,
    SINK_PARALLELISM,
    check_supported_options,
    sink_parallelism,
    where,
)
from tableapi.options import ConfigOptions, OptionGroup

PRINT_IDENTIFIER = (
    ConfigOptions.key("print-identifier")
    .string_type()
    .no_default_value()
    .with_description("A prefix of each line: 'id> +I[...]'.")
)
STANDARD_ERROR = (
    ConfigOptions.key("standard-error")
    .boolean_type()
    .default_value(False)
    .with_description("Print to standard error instead of standard output.")
)
#: The connector's options.
OPTIONS = OptionGroup(
    "Connector 'print'",
    "A sink whose changes the client prints, one line per change (`+I[...]`).",
    (CONNECTOR, PROPERTY_VERSION, PRINT_IDENTIFIER, STANDARD_ERROR, SINK_PARALLELISM),
)


@attrs.frozen
class PrintOptions:
    """A validated ``print`` table."""

    identifier: str = ""  # print-identifier ('' : no prefix)
    standard_error: bool = False
    parallelism: int | None = None  # sink.parallelism (accepted; one stream is printed)

    @property
    def prefix(self) -> str:
        """What each line starts with: ``'<print-identifier>> '``, or nothing.

        >>> PrintOptions("sink").prefix, PrintOptions().prefix
        ('sink> ', '')
        """
        return f"{self.identifier}> " if self.identifier else ""


def validate_print_options(options: Mapping[str, str], table: str = "") -> PrintOptions:
    """Check a ``print`` table's options the way Flink's print connector does.

    >>> validate_print_options({"sink.parallelism": "0"}, "Out")
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Invalid configured parallelism 0 for table 'Out'.
    """
    check_supported_options("print", options, OPTIONS.keys(), table)
    return PrintOptions(
        PRINT_IDENTIFIER.read(options) or "",
        STANDARD_ERROR.read(options, where(table)),
        sink_parallelism(options, table),
    )


__all__ = ["OPTIONS", "PrintOptions", "validate_print_options"]
