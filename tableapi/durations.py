"""Flink-style duration strings: ``"1 d"``, ``"12h"``, ``"30 min"``, ``"500 ms"``, ``"3600000"``.

Example::

    >>> parse_duration_ms("12h")
    43200000
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


def parse_duration_ms(text: str | int, what: str = "duration") -> int:
    """Milliseconds of a duration; a bare number is milliseconds, as in Flink."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = _DURATION.match(str(text))
    unit = match.group(2).lower() if match else ""
    if not match or (unit not in _UNITS_MS and unit != ""):
        raise ValidationError(
            f"Cannot read {what} {text!r}: write a number and a unit, e.g. '1 d', '12 h', "
            "'30 min', '10 s' or '500 ms'."
        )
    return int(match.group(1)) * _UNITS_MS.get(unit, 1)
