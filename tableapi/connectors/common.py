"""What the connectors share: refusing options a connector does not have, with Flink's
message (the unknown options, then every supported one).

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
    where = f" of table {table!r}" if table else ""
    known = sorted(supported)
    nearest = [(k, difflib.get_close_matches(k, known, n=1, cutoff=0.8)) for k in unknown]
    hints = [f"{k}: did you mean {close[0]!r}?" for k, close in nearest if close]
    raise ValidationError(
        f"Unsupported options found for {connector!r}{where}.\n\nUnsupported options:\n\n"
        + "\n".join(unknown)
        + "\n\nSupported options:\n\n"
        + "\n".join(known)
        + ("\n\n" + "\n".join(hints) if hints else "")
        + (note(unknown) if note else "")
    )


SINK_PARALLELISM = "sink.parallelism"


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
    if SINK_PARALLELISM not in options:
        return None
    raw = options[SINK_PARALLELISM]
    try:
        parallelism = int(raw)
    except ValueError:
        where = f" of table {table!r}" if table else ""
        raise ValidationError(
            f"Invalid value for option {SINK_PARALLELISM!r}{where}: could not parse {raw!r} as "
            "an integer."
        ) from None
    if parallelism <= 0:
        name = f" for table {table!r}" if table else ""
        raise ValidationError(f"Invalid configured parallelism {parallelism}{name}.")
    return parallelism


__all__ = ["SINK_PARALLELISM", "check_supported_options", "sink_parallelism"]
