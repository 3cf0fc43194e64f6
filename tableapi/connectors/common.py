"""What the connectors share: the options every connector has (``connector``,
``property-version``, ``sink.parallelism``), and refusing options a connector does not have,
with Flink's message (the unknown options, then every supported one).

Example::

    >>> check_supported_options("blackhole", {"path": "/tmp"}, {"connector"}, "Sink")
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Unsupported options found for 'blackhole' of table 'Sink'.
    <BLANKLINE>
    Unsupported options:
    <BLANKLINE>
    path
    <BLANKLINE>
    Supported options:
    <BLANKLINE>
    connector
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping

from tableapi.errors import ValidationError
from tableapi.options import ConfigOptions

CONNECTOR = (
    ConfigOptions.key("connector")
    .string_type()
    .no_default_value()
    .with_description("The connector: 'filesystem', 'jdbc', 'nexmark', 'print' or 'blackhole'.")
)
PROPERTY_VERSION = (
    ConfigOptions.key("property-version")
    .int_type()
    .default_value(1)
    .with_description("Flink's version of the connector's properties: accepted, not read.")
)
SINK_PARALLELISM = (
    ConfigOptions.key("sink.parallelism")
    .int_type()
    .no_default_value()
    .with_description("The number of the sink's write tasks (a positive integer).")
)


def where(table: str) -> str:
    """How messages name the table whose options they are about.

    >>> where("Out"), where("")
    (" of table 'Out'", '')
    """
    return f" of table {table!r}" if table else ""


def check_supported_options(
    connector: str,
    options: Mapping[str, str],
    supported: Collection[str],
    table: str = "",
    note: Callable[[list[str]], str] | None = None,
) -> None:
    """Raise :class:`ValidationError` when ``options`` has a key that ``connector`` does not
    support: Flink's message, naming the table, then the supported option nearest to each
    unknown one; ``note(unknown)`` may add lines of advice.

    >>> check_supported_options("print", {"print-identifier": "x"}, {"print-identifier"})
    >>> check_supported_options("print", {"print.identifier": "x"}, {"print-identifier"})
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Unsupported options found for 'print'.
    <BLANKLINE>
    Unsupported options:
    <BLANKLINE>
    print.identifier
    <BLANKLINE>
    Supported options:
    <BLANKLINE>
    print-identifier
    <BLANKLINE>
    print.identifier: did you mean 'print-identifier'?
    """
    unknown = sorted(k for k in options if k not in supported)
    if not unknown:
        return
    known = sorted(supported)
    nearest = [(k, difflib.get_close_matches(k, known, n=1, cutoff=0.8)) for k in unknown]
    hints = [f"{k}: did you mean {close[0]!r}?" for k, close in nearest if close]
    raise ValidationError(
        f"Unsupported options found for {connector!r}{where(table)}.\n\nUnsupported options:\n\n"
        + "\n".join(unknown)
        + "\n\nSupported options:\n\n"
        + "\n".join(known)
        + ("\n\n" + "\n".join(hints) if hints else "")
        + (note(unknown) if note else "")
    )


def sink_parallelism(options: Mapping[str, str], table: str = "") -> int | None:
    """Flink's ``sink.parallelism``: a positive integer, or None when unset; Flink's message
    otherwise.

    >>> sink_parallelism({"sink.parallelism": "4"}), sink_parallelism({})
    (4, None)
    >>> sink_parallelism({"sink.parallelism": "0"}, "Out")
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Invalid configured parallelism 0 for table 'Out'.
    """
    parallelism = SINK_PARALLELISM.read(options, where(table))
    if parallelism is not None and parallelism <= 0:
        name = f" for table {table!r}" if table else ""
        raise ValidationError(f"Invalid configured parallelism {parallelism}{name}.")
    return parallelism


__all__ = [
    "CONNECTOR",
    "PROPERTY_VERSION",
    "SINK_PARALLELISM",
    "check_supported_options",
    "sink_parallelism",
    "where",
]
