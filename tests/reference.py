"""Plain-Python reference results, computed independently of Spark and of the planner."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

RowT = tuple[Any, ...]
Pred = Callable[[RowT, RowT], bool]


# Join kind -> the Table API method that makes it.
JOIN_METHODS = {
    "inner": "join",
    "left": "left_outer_join",
    "right": "right_outer_join",
    "full": "full_outer_join",
    "semi": "semi_join",
    "anti": "anti_join",
}


def nested_loop_join(
    left: Sequence[RowT],
    right: Sequence[RowT],
    kind: str,
    pred: Pred,
    widths: tuple[int, int] | None = None,
) -> list[RowT]:
    """The SQL meaning of each join kind, by brute force (``widths``: column counts, needed
    when a side may be empty)."""
    out: list[RowT] = []
    lw, rw = widths or (len(left[0]), len(right[0]))
    nulls_l, nulls_r = (None,) * lw, (None,) * rw
    matched_right: set[int] = set()
    for lrow in left:
        matches = [(j, r) for j, r in enumerate(right) if pred(lrow, r)]
        matched_right.update(j for j, _ in matches)
        if kind == "semi":
            out += [lrow] if matches else []
        elif kind == "anti":
            out += [] if matches else [lrow]
        else:
            out += [lrow + r for _, r in matches]
            if not matches and kind in ("left", "full"):
                out.append(lrow + nulls_r)
    if kind in ("right", "full"):
        out += [nulls_l + r for j, r in enumerate(right) if j not in matched_right]
    return out


def eq(a: Any, b: Any) -> bool:
    """SQL ``=``: NULL never equals anything."""
    return a is not None and b is not None and a == b


def as_bag(rows: Sequence[Sequence[Any]]) -> Counter[RowT]:
    return Counter(tuple(r) for r in rows)
