"""Flink-style duration strings: ``"1 d"``, ``"12h"``, ``"30 min"``, ``"500 ms"``, ``"3600000"``.

Example::

    >>> parse_duration_ms("12h"), format_duration(43_200_000)
    (43200000, '12 h')
"""

from __future__ import annotations

import re

from tableapi.errors import ValidationError

_UNITS_MS = {
    "ms": 1,
    "milli": 1,
    "millis": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "s": 1000,
    "sec": 1000,
    "secs": 1000,
    "second": 1000,
    "seconds": 1000,
    "min": 60_000,
    "mins": 60_000,
    "minute": 60_000,
    "minutes": 60_000,
    "m": 60_000,
    "h": 3_600_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "d": 86_400_000,
    "day": 86_400_000,
    "days": 86_400_000,
}
_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$", re.I)
#: What a duration is written as (error messages say it).
DURATION_FORMAT = "a number and a unit, e.g. '1 d', '12 h', '30 min', '10 s' or '500 ms'"


def read_duration_ms(text: str) -> int | None:
    """Milliseconds of a duration (a bare number is milliseconds, as in Flink); None when
    ``text`` is not one.

    >>> read_duration_ms("30 min"), read_duration_ms("250"), read_duration_ms("-10s")
    (1800000, 250, None)
    """
    match = _DURATION.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or (unit not in _UNITS_MS and unit != ""):
        return None
    return int(match.group(1)) * _UNITS_MS.get(unit, 1)


def parse_duration_ms(text: str | int, what: str = "duration") -> int:
    """Milliseconds of a duration; an error naming ``what`` when ``text`` is not one.

    >>> parse_duration_ms("1 fortnight", "STATE_TTL of Orders")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Cannot read STATE_TTL of Orders '1 fortnight': it must be \
a number and a unit, e.g. '1 d', ...
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    ms = read_duration_ms(str(text))
    if ms is None:
        raise ValidationError(f"Cannot read {what} {text!r}: it must be {DURATION_FORMAT}.")
    return ms


def format_duration(ms: int) -> str:
    """A duration in its largest whole unit, as the options reference shows defaults.

    >>> format_duration(180_000), format_duration(1500), format_duration(0)
    ('3 min', '1500 ms', '0 ms')
    """
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"
