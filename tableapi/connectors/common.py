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
    support: Flink's message, naming the table; ``note(unknown)`` may add a line of advice.

    >>> check_supported_options("print", {"print-identifier": "x"}, {"print-identifier"})
    """
    unknown = sorted(k for k in options if k not in supported)
    if not unknown:
        return
    where = f" of table {table!r}" if table else ""
    raise ValidationError(
        f"Unsupported options found for {connector!r}{where}.\n\nUnsupported options:\n\n"
        + "\n".join(unknown)
        + "\n\nSupported options:\n\n"
        + "\n".join(sorted(supported))
        + (note(unknown) if note else "")
    )


__all__ = ["check_supported_options"]
