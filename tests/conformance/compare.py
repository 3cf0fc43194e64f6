"""Comparing Flink's and the product's answers: the result schemas' column types, the final
tables as multisets of exactly typed values, and the validity of each changelog.

Exact means: a NULL is not a NaN, TRUE is not 1, 3 (an INT) is not 3.0 (a DOUBLE) nor the
DECIMAL 3 or 3.00 (a DECIMAL's value and scale count), timestamps to the microsecond, strings
as they are. The one tolerance: values of DOUBLE/FLOAT result columns (by Flink's result
schema) agree to FLOAT_DIGITS significant digits (sums and quotients may differ in the last
bits). Column types are compared after spelling them the same way (`normalize_type`).

Example:
    >>> flink = {"columns": ["a"], "types": ["INT"], "changelog": [["+I", [1]], ["+I", [None]]],
    ...          "error": None}
    >>> product = {"columns": ["a"], "types": ["INT"],
    ...            "changelog": [["+I", [None]], ["+I", [1]]],
    ...            "materialized": [[1.0], [float("nan")]], "error": None,
    ...            "materialize_error": None}
    >>> compare(flink, product).same
    True
    >>> product["changelog"] = [["+I", [None]], ["+I", [1.0]]]  # a DOUBLE 1.0: not the INT 1
    >>> print(compare(flink, product).report())
    rows only in Flink (1):
      [1]
    rows only in the product (1):
      [1.0]
"""

from __future__ import annotations

import dataclasses
import decimal
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from tests.conformance.model import apply_changelog

FLOAT_DIGITS = 12  # DOUBLE/FLOAT result columns agree when they do to 12 significant digits

_FLOAT_TYPES = ("DOUBLE", "FLOAT")


class Value(NamedTuple):
    """One non-NULL result value, typed: ``kind`` (bool, int, float, dec, str, ts) and the
    ``key`` equality uses. Reports show it as Flink would print it (`repr`).

    Example:
        >>> Value("bool", True) == Value("int", 1), Value("int", 3), Value("bool", False)
        (False, 3, FALSE)
    """

    kind: str
    key: Any

    def __repr__(self) -> str:
        if self.kind == "bool":
            return "TRUE" if self.key else "FALSE"
        if self.kind == "float":
            if isinstance(self.key, str):  # NaN
                return self.key
            if math.isinf(self.key):
                return "Infinity" if self.key > 0 else "-Infinity"
            return repr(self.key)
        if self.kind == "dec":
            return f"Decimal('{self.key[0]:f}')" if self.key[1] < 0 else f"Decimal('{self.key[0]}')"
        if self.kind in ("int", "ts"):
            return str(self.key)
        return repr(self.key)


NAN = Value("float", "NaN")


def norm(v: Any, floating: bool = False) -> Value | None:
    """One result value (as the runners encode them: JSON with ``$ts``/``$dec`` tags) in the
    exact form both sides are compared in; ``floating``: a DOUBLE/FLOAT column's value, kept to
    FLOAT_DIGITS significant digits.

    Example:
        >>> norm({"$ts": "2024-01-01 00:00:01.000000"}), norm({"$dec": "1.50"}), norm(3)
        (2024-01-01 00:00:01.000000, Decimal('1.50'), 3)
        >>> norm(0.1 + 0.2, floating=True), norm(0.1 + 0.2), norm(float("nan")), norm(None)
        (0.3, 0.30000000000000004, NaN, None)
    """
    if v is None:
        return None
    if isinstance(v, dict):
        if "$ts" in v:
            return Value("ts", v["$ts"].replace("T", " "))
        if "$dec" in v:
            d = decimal.Decimal(v["$dec"])
            exponent = d.as_tuple().exponent
            return Value("dec", (d, exponent if isinstance(exponent, int) else 0))
    if isinstance(v, bool):
        return Value("bool", v)
    if isinstance(v, int):
        return Value("int", v)
    if isinstance(v, float):
        if math.isnan(v):
            return NAN
        return Value("float", _significant(v) if floating else v)
    if isinstance(v, str):
        return Value("str", v)
    return Value(type(v).__name__, v)


def _significant(x: float) -> float:
    if x == 0 or math.isinf(x):
        return x
    return round(x, FLOAT_DIGITS - 1 - math.floor(math.log10(abs(x))))


def norm_rows(rows: Sequence[Sequence[Any]], floating: frozenset[int] = frozenset()) -> Counter:
    """Rows as a multiset of normalized tuples (`floating`: the DOUBLE/FLOAT columns).

    Example:
        >>> norm_rows([[1, None], [1, None], [1.0, None]])
        Counter({(1, None): 2, (1.0, None): 1})
    """
    return Counter(tuple(norm(v, i in floating) for i, v in enumerate(r)) for r in rows)


def final_table(
    changelog: Sequence[Sequence[Any]], floating: frozenset[int] = frozenset()
) -> tuple[Counter, list[str]]:
    """The final table (normalized multiset) of a changelog and its validity problems."""
    normalized = [(k, [norm(v, i in floating) for i, v in enumerate(r)]) for k, r in changelog]
    return apply_changelog(normalized)


_TYPE_ALIASES = {"INTEGER": "INT", "VARCHAR": "STRING", "CHAR": "STRING", "STRING": "STRING"}


def normalize_type(text: str) -> str:
    """A column type in one spelling for both sides: Flink's summary strings (``VARCHAR(n)``,
    ``CHAR(n)``, ``TIMESTAMP(3) NOT NULL *ROWTIME*``) and the product's (``STRING``,
    ``TIMESTAMP(3) *ROWTIME* NOT NULL``). Character strings of any length are ``STRING``: the
    product has no length-bounded string types (CHAR and VARCHAR parse to STRING); everything
    else (precision, scale, nullability, the time attribute) is kept.

    Example:
        >>> normalize_type("TIMESTAMP(3) NOT NULL *ROWTIME*")
        'TIMESTAMP(3) NOT NULL *ROWTIME*'
        >>> normalize_type("TIMESTAMP(3) *ROWTIME* NOT NULL"), normalize_type("CHAR(2) NOT NULL")
        ('TIMESTAMP(3) NOT NULL *ROWTIME*', 'STRING NOT NULL')
        >>> normalize_type("DECIMAL(10,2)"), normalize_type("INTEGER")
        ('DECIMAL(10, 2)', 'INT')
    """
    t = " ".join(text.upper().split())
    marker = ""
    for m in ("*ROWTIME*", "*PROCTIME*"):
        if m in t:
            marker, t = m, t.replace(m, " ")
    not_null = "NOT NULL" in t
    t = " ".join(t.replace("NOT NULL", " ").split())
    match = re.fullmatch(r"([A-Z_ ]+?)\s*(?:\(([0-9, ]*)\))?", t)
    if not match:
        return text
    base, params = match.group(1), [p.strip() for p in (match.group(2) or "").split(",") if p]
    base = _TYPE_ALIASES.get(base, base)
    if base == "STRING":
        params = []
    out = base + (f"({', '.join(params)})" if params else "")
    return out + (" NOT NULL" if not_null else "") + (f" {marker}" if marker else "")


def type_differences(flink: dict[str, Any], product: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(column, Flink's type, the product's type) of each column whose normalized types
    differ; a missing column's type is ``-``.

    Example:
        >>> type_differences({"columns": ["a", "b"], "types": ["INT", "VARCHAR(2147483647)"]},
        ...                  {"types": ["BIGINT", "STRING"]})
        [('a', 'INT', 'BIGINT')]
    """
    names = list(flink.get("columns") or product.get("columns") or [])
    want = [normalize_type(t) for t in flink.get("types") or []]
    got = [normalize_type(t) for t in product.get("types") or []]
    if not want:
        return []  # an answer recorded without types (never cached: see suite.case_key)
    width = max(len(want), len(got))
    want, got = want + ["-"] * (width - len(want)), got + ["-"] * (width - len(got))
    return [
        (names[i] if i < len(names) else str(i), a, b)
        for i, (a, b) in enumerate(zip(want, got, strict=True))
        if a != b
    ]


def _type_problems(differences: list[tuple[str, str, str]]) -> list[str]:
    if not differences:
        return []
    text = "; ".join(f"{c}: Flink {a}, product {b}" for c, a, b in differences)
    return [f"column types differ: {text}"]


def _pandas_view(row: Sequence[Value | None], types: Sequence[str]) -> tuple[Any, ...]:
    """A row as pandas can hold it (for the materialize() check only): a NULL and a NaN are
    one missing value, and an integer column with NULLs is float64."""
    out: list[Any] = []
    for i, v in enumerate(row):
        if v is None or v == NAN:
            out.append("<missing>")
        elif v.kind == "float" and not isinstance(v.key, str) and float(v.key).is_integer():
            integral = i < len(types) and types[i].startswith(("INT", "BIGINT", "SMALLINT"))
            out.append(Value("int", int(v.key)) if integral else v)
        else:
            out.append(v)
    return tuple(out)


@dataclasses.dataclass
class Comparison:
    """The verdict on one case: ``same``, or what differs."""

    same: bool
    # "same", "different", "types" (same rows, other column types), "error" (product failed),
    # "flink-error"
    status: str
    problems: list[str]
    only_flink: list[tuple[Any, ...]]
    only_product: list[tuple[Any, ...]]
    types: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # (column,
    # Flink's type, the product's) of the columns whose types differ

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
    types = [normalize_type(t) for t in flink.get("types") or []]
    floating = frozenset(i for i, t in enumerate(types) if t.startswith(_FLOAT_TYPES))
    want, flink_problems = final_table(flink["changelog"], floating)
    problems += [f"Flink's changelog: {p}" for p in flink_problems]  # (never seen)
    got, product_problems = final_table(product["changelog"], floating)
    problems += [f"the product's changelog: {p}" for p in product_problems[:5]]
    if list(flink["columns"]) != list(product["columns"]):
        problems.append(f"columns: Flink {flink['columns']}, product {product['columns']}")
    types_differ = type_differences(flink, product)
    type_problems = _type_problems(types_differ)
    problems += type_problems
    widths = {len(r) for r in got} | {len(r) for r in want}
    if len(widths) > 1:
        problems.append(f"rows of different widths: {sorted(widths)}")
    if product.get("materialize_error"):
        problems.append(f"materialize() failed: {product['materialize_error']}")
    elif product.get("materialized") is not None:
        product_types = [normalize_type(t) for t in product.get("types") or []]
        mat = norm_rows(product["materialized"], floating)
        lossy_mat = Counter(_pandas_view(r, product_types) for r in mat.elements())
        lossy_got = Counter(_pandas_view(r, product_types) for r in got.elements())
        if lossy_mat != lossy_got:
            problems.append(
                "materialize() is not the collected changelog applied: "
                f"{len(lossy_mat)} distinct rows vs {len(lossy_got)}"
            )
    only_flink, only_product = _difference(want, got), _difference(got, want)
    same = not problems and not only_flink and not only_product
    status = "same" if same else "different"
    if not same and problems == type_problems and not only_flink and not only_product:
        status = "types"  # the same rows; only the result schema's types differ
    return Comparison(same, status, problems, only_flink, only_product, types_differ)
