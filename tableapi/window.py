"""The Table API's group windows, as PyFlink's ``pyflink.table.window``: ``Tumble``, ``Slide``
and ``Session``, used with :meth:`Table.window` and grouped by their alias.

A group window becomes the window TVF of the same kind under the window aggregation (as
Flink's legacy ``GROUP BY TUMBLE(ts, ...)`` in SQL does, see ``docs/windows.md``): one final
row per window and key once the watermark passes the window's end. ``col("w").start``,
``.end``, ``.rowtime`` and ``.proctime`` are the window's ``window_start``, ``window_end`` and
``window_time``.

Example::

    >>> from tableapi import col, lit
    >>> w = Tumble.over(lit(10).minutes).on(col("o_rowtime")).alias("w")
    >>> w
    Tumble.over(lit(datetime.timedelta(seconds=600))).on(col('o_rowtime')).alias('w')
    >>> str(w.window(rowtime=True))
    'TUMBLE(time_col=[o_rowtime], size=[10 min])'
    >>> str(Slide.over(lit(10).minutes).every(lit(5).minutes).on(col("ts")).alias("w").window())
    'HOP(time_col=[ts], size=[10 min], slide=[5 min])'
    >>> str(Session.with_gap(lit(30).seconds).on(col("ts")).alias("w").window(("k",)))
    'SESSION(time_col=[ts], gap=[30 s], partition keys=[k])'
"""

from __future__ import annotations

import datetime as dt

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import Column, Expression, Literal
from tableapi.plan.windows import Window, WindowKind


def _millis(e: Expression, what: str, example: str) -> int:
    """A positive interval literal (``lit(10).minutes``) in milliseconds."""
    if not isinstance(e, Literal) or not isinstance(e.value, dt.timedelta):
        raise ValidationError(
            f"A group window's {what} is an interval literal such as {example}; got {e}. "
            "Row-count windows (lit(10).rows) are not supported."
        )
    ms = e.value // dt.timedelta(milliseconds=1)
    if ms <= 0:
        raise ValidationError(f"A group window's {what} must be positive, got {e}.")
    return int(ms)


def _time_column(e: Expression | str) -> str:
    if isinstance(e, str):
        return e
    if not isinstance(e, Column):
        raise ValidationError(
            f"A group window is on a time attribute column, as in .on(col('ts')); got {e}."
        )
    return e.name


def _alias_name(alias: Expression | str) -> str:
    if isinstance(alias, Column):
        return alias.name
    if isinstance(alias, str) and alias:
        return alias
    raise ValidationError(f"A group window's alias is a name, as in .alias('w'); got {alias!r}.")


@attrs.frozen
class GroupWindow:
    """A group window with its time column and alias: what :meth:`Table.window` takes.

    >>> from tableapi import col, lit
    >>> Tumble.over(lit(1).hours).on(col("ts")).alias("w").alias_name
    'w'
    """

    kind: WindowKind
    size: Expression
    time_field: str
    alias_name: str
    slide: Expression | None = None

    def window(self, partition: tuple[str, ...] = (), rowtime: bool = True) -> Window:
        """The window TVF's parameters (a SESSION partitioned by ``partition``, the other
        group keys).

        >>> from tableapi import col, lit
        >>> Slide.over(lit(4).seconds).every(lit(2).seconds).on(col("t")).alias("w").window()
        Window(kind=<WindowKind.HOP: 'HOP'>, time_col='t', size_ms=4000, step_ms=2000, \
offset_ms=0, partition=())
        """
        session = self.kind is WindowKind.SESSION
        size = _millis(self.size, "gap" if session else "size", "lit(10).minutes")
        step = None if self.slide is None else _millis(self.slide, "slide", "lit(5).minutes")
        return Window(self.kind, self.time_field, size, step, 0, partition if session else ())

    def __repr__(self) -> str:
        if self.kind is WindowKind.SESSION:
            head = f"Session.with_gap({self.size!r})"
        elif self.kind is WindowKind.HOP:
            head = f"Slide.over({self.size!r}).every({self.slide!r})"
        else:
            head = f"Tumble.over({self.size!r})"
        return f"{head}.on(col({self.time_field!r})).alias({self.alias_name!r})"


@attrs.frozen
class _OnTime:
    kind: WindowKind
    size: Expression
    time_field: str
    slide: Expression | None = None

    def alias(self, alias: Expression | str) -> GroupWindow:
        """Names the window, for ``group_by(col(alias))`` and ``col(alias).start``.

        >>> from tableapi import col, lit
        >>> Tumble.over(lit(1).hours).on(col("ts")).alias("w").kind.value
        'TUMBLE'
        """
        return GroupWindow(self.kind, self.size, self.time_field, _alias_name(alias), self.slide)


@attrs.frozen
class _Sized:
    kind: WindowKind
    size: Expression
    slide: Expression | None = None

    def on(self, time_field: Expression | str) -> _OnTime:
        """The time attribute (a rowtime or a processing-time column) the window is on.

        >>> from tableapi import col, lit
        >>> Tumble.over(lit(1).hours).on(col("ts")).time_field
        'ts'
        """
        return _OnTime(self.kind, self.size, _time_column(time_field), self.slide)


@attrs.frozen
class _SlideWithSize:
    size: Expression

    def every(self, slide: Expression) -> _Sized:
        """How far apart the sliding windows start.

        >>> from tableapi import lit
        >>> str(Slide.over(lit(10).minutes).every(lit(5).minutes).slide)
        "INTERVAL '5' MINUTE"
        """
        return _Sized(WindowKind.HOP, self.size, slide)


class Tumble:
    """Tumbling windows: fixed size, no overlap (Flink's ``Tumble``).

    >>> from tableapi import col, lit
    >>> Tumble.over(lit(10).minutes).on(col("ts")).alias("w").kind.value
    'TUMBLE'
    """

    @staticmethod
    def over(size: Expression) -> _Sized:
        """The window's size, an interval literal (``lit(10).minutes``).

        >>> from tableapi import lit
        >>> str(Tumble.over(lit(10).minutes).size)
        "INTERVAL '10' MINUTE"
        """
        return _Sized(WindowKind.TUMBLE, size)


class Slide:
    """Sliding (hopping) windows: fixed size, starting every ``slide`` (Flink's ``Slide``;
    the size a multiple of the slide).

    >>> from tableapi import col, lit
    >>> Slide.over(lit(10).minutes).every(lit(5).minutes).on(col("ts")).alias("w").kind.value
    'HOP'
    """

    @staticmethod
    def over(size: Expression) -> _SlideWithSize:
        """The window's size; then ``.every(slide)``.

        >>> from tableapi import lit
        >>> str(Slide.over(lit(10).minutes).size)
        "INTERVAL '10' MINUTE"
        """
        return _SlideWithSize(size)


class Session:
    """Session windows: rows of a key within ``gap`` of each other (Flink's ``Session``).

    >>> from tableapi import col, lit
    >>> Session.with_gap(lit(10).minutes).on(col("ts")).alias("w").kind.value
    'SESSION'
    """

    @staticmethod
    def with_gap(gap: Expression) -> _Sized:
        """The gap that closes a session, an interval literal.

        >>> from tableapi import lit
        >>> str(Session.with_gap(lit(10).minutes).size)
        "INTERVAL '10' MINUTE"
        """
        return _Sized(WindowKind.SESSION, gap)


__all__ = ["GroupWindow", "Session", "Slide", "Tumble"]
