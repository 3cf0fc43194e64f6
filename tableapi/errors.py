"""Errors the Table API raises. Each message names the problem and the fix."""

from __future__ import annotations

from collections.abc import Iterable


class TableApiError(Exception):
    """Base class of the Table API's errors."""


class ValidationError(TableApiError, ValueError):
    """A table program is invalid; raised while the plan is built, before anything runs."""


class ServerError(TableApiError, RuntimeError):
    """The Spark Connect server is missing, unreachable or lacks the right server_ext."""


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
