"""Comparing Flink's and the product's answers: final tables as multisets (NULL-aware, types
normalized), and the validity of each changelog.

Example:
    >>> flink = {"columns": ["a"], "changelog": [["+I", [1]], ["+I", [None]]], "error": None}
    >>> product = {"columns": ["a"], "changelog": [["+I", [None]], ["+I", [1.0]]],
    ...            "materialized": [[1], [None]], "error": None, "materialize_error": None}
    >>> compare(flink, product).same
    True
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from tests.conformance.model import apply_changelog

FLOAT_DIGITS = 6  # floats and decimals agree when they do to 6 significant digits


def norm(v: Any) -> Any:
    """One value in a form both sides agree on: timestamps as text with milliseconds,
    numbers (ints, floats, decimals) as floats rounded to FLOAT_DIGITS significant digits,
    NULL (and pandas' NaN/NaT for NULL) as None.

    Example:
        >>> norm({"$ts": "2024-01-01 00:00:01.000000"}), norm({"$dec": "1.50"}), norm(3)
        ('2024-01-01 00:00:01.000', 1.5, 3.0)
    """
    if v is None:
        return None
    if isinstance(v, dict):
        if "$ts" in v:
            text = v["$ts"].replace("T", " ")
            if len(text) == 10:
                return text
            head, _, frac = text.partition(".")
            return f"{head}.{(frac + '000')[:3]}"
        if "$dec" in v:
            return _num(float(v["$dec"]))
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isnan(v):
            return None
        return _num(float(v))
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return v


def _num(x: float) -> float:
    if x == 0 or math.isinf(x):
        return x
    return round(x, FLOAT_DIGITS - 1 - math.floor(math.log10(abs(x))))


def norm_rows(rows: Sequence[Sequence[Any]]) -> Counter:
    """Rows as a multiset of normalized tuples.

    Example:
        >>> norm_rows([[1, None], [1.0, None]])
        Counter({(1.0, None): 2})
    """
    return Counter(tuple(norm(v) for v in r) for r in rows)


def final_table(changelog: Sequence[Sequence[Any]]) -> tuple[Counter, list[str]]:
    """The final table (normalized multiset) of a changelog and its validity problems."""
    normalized = [(k, [norm(v) for v in r]) for k, r in changelog]
    return apply_changelog(normalized)


@dataclasses.dataclass
class Comparison:
    """The verdict on one case: ``same``, or what differs."""

    same: bool
    status: str  # "same", "different", "error" (product failed), "flink-error"
    problems: list[str]
    only_flink: list[tuple[Any, ...]]
    only_product: list[tuple[Any, ...]]

    def report(self) -> str:
        lines = list(self.problems)
        if self.only_flink:
            lines.append(f"rows only in Flink ({len(self.only_flink)}):")
            lines += [f"  {list(r)}" for r in self.only_flink]
        if self.only_product:
            lines.append(f"rows only in the product ({len(self.only_product)}):")
            lines += [f"  {list(r)}" for r in self.only_product]
        return "\n".join(lines)


def _difference(a: Counter, b: Counter) -> list[tuple[Any, ...]]:
    return sorted((a - b).elements(), key=repr)


def compare(flink: dict[str, Any], product: dict[str, Any]) -> Comparison:
    """Compare a Flink result and a product result of one case (see the runners)."""
    if flink.get("error"):
        return Comparison(False, "flink-error", [f"Flink failed: {flink['error']}"], [], [])
    if product.get("error"):
        return Comparison(False, "error", [f"the product failed: {product['error']}"], [], [])
    problems = []
    want, flink_problems = final_table(flink["changelog"])
    problems += [f"Flink's changelog: {p}" for p in flink_problems]  # (never seen)
    got, product_problems = final_table(product["changelog"])
    problems += [f"the product's changelog: {p}" for p in product_problems[:5]]
    if list(flink["columns"]) != list(product["columns"]):
        problems.append(f"columns: Flink {flink['columns']}, product {product['columns']}")
    widths = {len(r) for r in got} | {len(r) for r in want}
    if len(widths) > 1:
        problems.append(f"rows of different widths: {sorted(widths)}")
    if product.get("materialize_error"):
        problems.append(f"materialize() failed: {product['materialize_error']}")
    elif product.get("materialized") is not None:
        mat = norm_rows(product["materialized"])
        if mat != got:
            problems.append(
                "materialize() is not the collected changelog applied: "
                f"{len(mat)} distinct rows vs {len(got)}"
            )
    only_flink, only_product = _difference(want, got), _difference(got, want)
    same = not problems and not only_flink and not only_product
    return Comparison(same, "same" if same else "different", problems, only_flink, only_product)
