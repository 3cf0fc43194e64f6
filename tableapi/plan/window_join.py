"""The window join (Flink's WindowJoin): a join of two window TVFs' rows that equates both
sides' ``window_start`` and ``window_end`` (the rule ``tableapi/rules/window_joins.py`` marks
such a :class:`~tableapi.plan.Join` with its :class:`JoinWindows`). Each window's rows are
joined once the watermark passes the window's end; the output is insert-only.

Example::

    >>> from tableapi.plan.windows import Window, WindowKind
    >>> w = Window(WindowKind.HOP, "ts", 10_000, 5_000)
    >>> jw = JoinWindows(w, w, ("window_start", "window_end"), ("ws", "we"))
    >>> jw.explain_window("left")
    'HOP(win_start=[window_start], win_end=[window_end], size=[10 s], slide=[5 s])'
"""

from __future__ import annotations

import attrs

from tableapi.plan.windows import Window


@attrs.frozen
class JoinWindows:
    """A window join's windows: each side's window TVF (the same windows: Flink plans a
    regular join otherwise) and each side's ``(window_start, window_end)`` columns."""

    left: Window
    right: Window
    left_bounds: tuple[str, str]
    right_bounds: tuple[str, str]

    @property
    def bound_columns(self) -> frozenset[str]:
        """The window bound columns of both sides (their equi keys are the window's).

        >>> from tableapi.plan.windows import WindowKind
        >>> w = Window(WindowKind.TUMBLE, "ts", 1000)
        >>> sorted(JoinWindows(w, w, ("s", "e"), ("s0", "e0")).bound_columns)
        ['e', 'e0', 's', 's0']
        """
        return frozenset(self.left_bounds + self.right_bounds)

    def explain_window(self, side: str) -> str:
        """Flink's ``leftWindow=[...]`` text: the window's kind and sizes, named by its bound
        columns instead of its time column.

        >>> from tableapi.plan.windows import WindowKind
        >>> w = Window(WindowKind.TUMBLE, "ts", 5000)
        >>> JoinWindows(w, w, ("s", "e"), ("s0", "e0")).explain_window("right")
        'TUMBLE(win_start=[s0], win_end=[e0], size=[5 s])'
        """
        window, (start, end) = (
            (self.left, self.left_bounds) if side == "left" else (self.right, self.right_bounds)
        )
        text = str(window)
        return text.replace(
            f"time_col=[{window.time_col}]", f"win_start=[{start}], win_end=[{end}]", 1
        )


def same_windows(a: Window, b: Window) -> bool:
    """Do two window TVFs assign the same windows (their time columns aside; offsets equal
    modulo the period of the window starts, HOP's slide or else the size, are the same)?

    >>> from tableapi.plan.windows import WindowKind
    >>> same_windows(Window(WindowKind.TUMBLE, "a", 10, offset_ms=3),
    ...              Window(WindowKind.TUMBLE, "b", 10, offset_ms=13))
    True
    """
    period = a.step_ms if a.kind.value == "HOP" and a.step_ms else a.size_ms
    same = (a.kind, a.size_ms, a.step_ms) == (b.kind, b.size_ms, b.step_ms)
    return same and (a.offset_ms - b.offset_ms) % period == 0


__all__ = ["JoinWindows", "same_windows"]
