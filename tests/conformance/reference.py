"""A case's answer in plain Python, and what its joins do with its rows: how many pairs each
join joins, how many joined pairs the tables' retractions take apart, how many keys join
again after.

Standard library only, as ``model``. The answer
is the case's QUERY over the final rows of its tables (each table's changelog applied):
Flink's final table for every case the generator draws (bounded inputs; no row's lateness
changes Flink's answer, ``late_rows``; each event-time probe row takes the version valid at
its time). ``test_conformance`` checks it against Flink's answers of CI's cases.

The activity of a case (``activity``) is counted on that answer, one change at a time: a
change of row ``r`` in table ``T`` is measured by the query over the final rows of every
table, ``T``'s with ``r`` in it against ``T``'s without it (as if that change were read last,
after every other). So a retraction *takes apart* the pairs its row joins with the other
tables' final rows, and an insertion after such a retraction of the same key *joins again*
when its row joins a pair. A case whose joins join nothing has ``joined`` 0 at that join. In
a query without a join (an aggregate of one table) the answer's rows stand for the pairs: a
retraction takes apart the rows of the answer it changes.

Computed columns are the generator's forms only (``_COMPUTED``); another raises ValueError.

Example:
    >>> from tests.conformance.model import table
    >>> a = table("A", [("a_k", "INT")], changelog=True,
    ...           rows=[["+I", [1]], ["-D", [1]], ["+I", [1]], ["+I", [2]]])
    >>> b = table("B", [("b_k", "INT")], rows=[["+I", [1]], ["+I", [1]]])
    >>> q = {"op": "join", "kind": "inner", "left": {"op": "scan", "table": "A"},
    ...      "right": {"op": "scan", "table": "B"}, "keys": [["a_k", "b_k"]], "residual": []}
    >>> case = {"mode": "streaming", "tables": [a, b], "query": q}
    >>> answer(case)
    [(1, 1), (1, 1)]
    >>> activity(case)
    Activity(rows=2, joined=(2,), retracted=2, rematched=1)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tests.conformance.model import (
    Case,
    Pred,
    Query,
    apply_changelog,
    output_columns,
    table_columns,
    table_of,
    walk_queries,
)

Row = dict[str, Any]  # column name -> value: names are unique across a case's tables
State = dict[str, list[tuple[Any, ...]]]  # table name -> its rows (physical columns)

#: Query ops that pair rows of two inputs (counted in Activity.joined).
JOINS = ("join", "in", "temporal", "lookup", "window_join")
TS_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


@dataclasses.dataclass(frozen=True)
class Activity:
    """What a case's rows do (see the module docstring).

    rows: rows of the answer; joined: per join of the query (`JOINS`, parents first) the pairs
    its condition joins; retracted: pairs (without a join: answer rows) the -U/-D changes take
    apart, summed; rematched: insertions of a key whose earlier retraction (in the same
    table) took a pair apart, that join a pair themselves.
    """

    rows: int
    joined: tuple[int, ...]
    retracted: int
    rematched: int


def final_state(case: Case) -> State:
    """Each table's rows after its changelog, as tuples.

    Example:
        >>> from tests.conformance.model import table
        >>> final_state({"tables": [table("A", [("a", "INT")], changelog=True,
        ...                                rows=[["+I", [1]], ["-U", [1]], ["+U", [2]]])]})
        {'A': [(2,)]}
    """
    out: State = {}
    for t in case["tables"]:
        rows, problems = apply_changelog((k, v) for k, v in t["rows"])
        if problems:
            raise ValueError(f"table {t['name']} is no valid changelog: {problems}")
        out[t["name"]] = list(rows.elements())
    return out


def answer(case: Case, state: State | None = None) -> list[tuple[Any, ...]]:
    """The case's final table (sorted by repr), over `state` (default: the final rows).

    Example: see the module docstring.
    """
    run = _Run(case, final_state(case) if state is None else state)
    names = [c for c, _ in output_columns(case, case["query"])]
    rows = [tuple(r[c] for c in names) for r in run.rows(case["query"])]
    return sorted(rows, key=repr)


def joined_pairs(case: Case, state: State | None = None) -> tuple[int, ...]:
    """Per join of the query (`JOINS`, parents first): the pairs its condition joins.

    Example:
        >>> from tests.conformance.model import table
        >>> case = {"tables": [table("A", [("a_k", "INT")], rows=[["+I", [1]]]),
        ...                    table("B", [("b_k", "INT")], rows=[["+I", [2]]])],
        ...         "query": {"op": "in", "input": {"op": "scan", "table": "A"},
        ...                   "columns": ["a_k"], "sub": {"op": "scan", "table": "B"},
        ...                   "sub_columns": ["b_k"], "negated": True}}
        >>> joined_pairs(case)
        (0,)
    """
    run = _Run(case, final_state(case) if state is None else state)
    run.rows(case["query"])
    return tuple(run.pairs[id(q)] for q in walk_queries(case["query"]) if q["op"] in JOINS)


def activity(case: Case) -> Activity:
    """How many rows the case's joins join, take apart and join again (module docstring).

    Example: see the module docstring.
    """
    final = final_state(case)
    joined = joined_pairs(case, final)
    retracted = rematched = 0
    taken_apart: set[tuple[str, Any]] = set()  # (table, key): a retraction took a pair apart
    for name, kind, row, gained in _changes(case, final, joined):
        if kind in ("-U", "-D") and gained:
            retracted += gained
            taken_apart.add((name, row[0]))
        elif kind in ("+I", "+U") and gained and (name, row[0]) in taken_apart:
            rematched += 1
    return Activity(len(answer(case, final)), joined, retracted, rematched)


def takes_apart(case: Case) -> bool:
    """Does a retraction of the case take a joined pair (without a join: an answer's row)
    apart? `activity`'s ``retracted > 0``, found at the first such change.

    Example:
        >>> from tests.conformance.model import table
        >>> takes_apart({"tables": [table("A", [("a", "INT")], rows=[["+I", [1]]])],
        ...              "query": {"op": "scan", "table": "A"}})
        False
    """
    final = final_state(case)
    changes = _changes(case, final, joined_pairs(case, final))
    return any(gained for _, kind, _, gained in changes if kind in ("-U", "-D"))


def _changes(
    case: Case, final: State, joined: tuple[int, ...]
) -> Iterator[tuple[str, str, tuple[Any, ...], int]]:
    """Each change of each table (table, kind, row) and what its row adds: the pairs (without
    a join: the answer's rows) the query has with it and not without it, every other table at
    its final rows."""

    def weight(state: State) -> Counter[Any]:
        if joined:
            return Counter({"pairs": sum(joined_pairs(case, state))})
        return Counter(answer(case, state))

    for t in case["tables"]:
        name = t["name"]
        for kind, values in t["rows"]:
            row = tuple(values)
            with_row = list(final[name])
            if row not in with_row:
                with_row.append(row)
            without_row = list(with_row)
            without_row.remove(row)
            gained = weight({**final, name: with_row}) - weight({**final, name: without_row})
            yield name, kind, row, gained.total()


# -- evaluation --------------------------------------------------------------------------------


class _Run:
    """One evaluation of a case's query over a state; counts the pairs each join joins."""

    def __init__(self, case: Case, state: State) -> None:
        self.case = case
        self.state = state
        self.pairs: Counter[int] = Counter()

    def rows(self, q: Query) -> list[Row]:
        op = q["op"]
        if op == "scan":
            return self.scan(q["table"])
        if op == "where":
            return [r for r in self.rows(q["input"]) if truth(q["pred"], r)]
        if op == "select":
            return [{c: r[c] for c in q["columns"]} for r in self.rows(q["input"])]
        if op == "join":
            return self.join(q)
        if op == "in":
            return self.in_(q)
        if op == "temporal":
            return self.temporal(q)
        if op == "lookup":
            return self.lookup(q)
        if op == "aggregate":
            return aggregate(q, self.rows(q["input"]), self.case.get("mode", "streaming"))
        if op in ("window_agg", "window_join", "window_topn"):  # window_family.py
            from tests.conformance.window_family import reference_rows

            return reference_rows(self, q)
        raise ValueError(f"unknown query op {op!r}")

    def scan(self, name: str) -> list[Row]:
        t = table_of(self.case, name)
        types = dict(table_columns(t))
        out = []
        for values in self.state[name]:
            r = {c: typed(v, ty) for (c, ty), v in zip(t["columns"], values, strict=True)}
            for c, expr, _ in t["computed"]:
                r[c] = computed(expr, r, types)
            out.append(r)
        return out

    def _nulls(self, q: Query) -> Row:
        return dict.fromkeys(c for c, _ in output_columns(self.case, q))

    def join(self, q: Query) -> list[Row]:
        left, right = self.rows(q["left"]), self.rows(q["right"])
        kind = q["kind"]

        def matches(r: Row) -> bool:
            return all(eq(r[a], r[b]) for a, b in q["keys"]) and bool(
                (not q.get("interval") or within(q["interval"], r))
                and all(truth(p, r) for p in q.get("residual", []))
            )

        out: list[Row] = []
        right_joined: set[int] = set()
        for lr in left:
            partners = [j for j, rr in enumerate(right) if matches(lr | rr)]
            self.pairs[id(q)] += len(partners)
            right_joined.update(partners)
            if (kind == "semi" and partners) or (kind == "anti" and not partners):
                out.append(lr)
            elif kind not in ("semi", "anti"):
                out += [lr | right[j] for j in partners]
                if not partners and kind in ("left", "full"):
                    out.append(lr | self._nulls(q["right"]))
        if kind in ("right", "full"):
            nulls = self._nulls(q["left"])
            out += [nulls | rr for j, rr in enumerate(right) if j not in right_joined]
        return out

    def in_(self, q: Query) -> list[Row]:
        """``IN``: a row with an equal subquery row; ``NOT IN``: a row whose equality with
        every subquery row is FALSE (a NULL makes it unknown: Flink's null-aware anti join)."""
        sub = [tuple(r[c] for c in q["sub_columns"]) for r in self.rows(q["sub"])]
        out = []
        for r in self.rows(q["input"]):
            probe = tuple(r[c] for c in q["columns"])
            tests = [_and3(cmp3("=", a, b) for a, b in zip(probe, s, strict=True)) for s in sub]
            self.pairs[id(q)] += sum(t is True for t in tests)
            found = _or3(tests)
            if (found is False) if q.get("negated") else (found is True):
                out.append(r)
        return out

    def temporal(self, q: Query) -> list[Row]:
        """Each probe row with the version of its key valid at its time (the latest at or
        before it), when the residual holds; a left join pads the others."""
        versions = self.scan(q["table"])
        time = table_of(self.case, q["table"])["rowtime"]
        out = []
        for p in self.rows(q["input"]):
            valid = [
                v
                for v in versions
                if all(eq(p[a], v[b]) for a, b in q["keys"])
                and p[q["as_of"]] is not None
                and v[time] <= p[q["as_of"]]
            ]
            v = max(valid, key=lambda v: v[time], default=None)
            if v is not None and all(truth(x, p | v) for x in q.get("residual", [])):
                self.pairs[id(q)] += 1
                out.append(p | v)
            elif q["kind"] == "left":
                out.append(p | dict.fromkeys(self.scan_columns(q["table"])))
        return out

    def scan_columns(self, name: str) -> list[str]:
        return [c for c, _ in table_columns(table_of(self.case, name))]

    def lookup(self, q: Query) -> list[Row]:
        """Each probe row with every dimension row its ON clause accepts (keys, constants,
        filters, residuals); a left join pads the others."""
        dims = self.scan(q["table"])
        terms = [*q.get("dim_filter", []), *q.get("pre_filter", []), *q.get("residual", [])]
        out = []
        for p in self.rows(q["input"]):
            found = [
                d
                for d in dims
                if all(eq(p[a], d[b]) for a, b in q["keys"])
                and all(eq(d[c], typed(v, _type_of(self.case, c))) for c, v in q["constants"])
                and all(truth(x, p | d) for x in terms)
            ]
            self.pairs[id(q)] += len(found)
            out += [p | d for d in found]
            if not found and q["kind"] == "left":
                out.append(p | dict.fromkeys(self.scan_columns(q["table"])))
        return out


def _type_of(case: Case, column: str) -> str:
    for t in case["tables"]:
        for c, ty in table_columns(t):
            if c == column:
                return ty
    raise KeyError(column)


# -- values and predicates ---------------------------------------------------------------------


def typed(v: Any, ty: str) -> Any:
    """A JSON value as the model computes with it: a DECIMAL an exact Decimal.

    Example:
        >>> typed(3.1, "DECIMAL(10, 2)")
        Decimal('3.10')
    """
    if v is None or not ty.startswith("DECIMAL"):
        return v
    scale = int(ty.split(",")[1].strip(" )"))
    return decimal.Decimal(str(v)).quantize(decimal.Decimal(1).scaleb(-scale))


def eq(a: Any, b: Any) -> bool:
    """A key equality: NULL equals nothing.

    Example:
        >>> eq(1, 1), eq(None, None)
        (True, False)
    """
    return cmp3("=", a, b) is True


#: The generator's comparison operators as Python functions (also applied to the product's
#: Column expressions by ``product.py``).
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def cmp3(op: str, a: Any, b: Any) -> bool | None:
    """A comparison in SQL's three-valued logic (None: unknown).

    Example:
        >>> cmp3("<", 1, 2), cmp3("<", None, 2)
        (True, None)
    """
    if a is None or b is None:
        return None
    return bool(COMPARISONS[op](a, b))


def _and3(values: Any) -> bool | None:
    values = list(values)
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _or3(values: Any) -> bool | None:
    values = list(values)
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


def truth(p: Pred, r: Row) -> bool | None:
    """A PRED on a row, three-valued.

    Example:
        >>> truth({"or": [{"is_null": "a"}, {"cmp": ">", "left": "a", "value": 2}]}, {"a": 3})
        True
    """
    if "cmp" in p:
        return cmp3(p["cmp"], r[p["left"]], r[p["right"]] if "right" in p else p["value"])
    if "is_null" in p:
        return r[p["is_null"]] is None
    if "not_null" in p:
        return r[p["not_null"]] is not None
    if "or" in p:
        return _or3(truth(x, r) for x in p["or"])
    if "not" in p:
        inner = truth(p["not"], r)
        return None if inner is None else not inner
    raise ValueError(f"unknown predicate {p}")


@functools.lru_cache(maxsize=4096)  # a case's few times, parsed per pair otherwise
def seconds(text: str) -> float:
    """An event time as seconds since the epoch (naive, UTC).

    Example:
        >>> seconds("1970-01-01 00:00:01.500")
        1.5
    """
    return dt.datetime.strptime(text, TS_FORMAT).replace(tzinfo=dt.timezone.utc).timestamp()


def within(iv: dict[str, Any], r: Row) -> bool:
    """An interval join's time bound on a joined row.

    Example:
        >>> r = {"a_rt": "2024-01-01 00:00:03.000", "b_rt": "2024-01-01 00:00:01.000"}
        >>> within({"time": "a_rt", "base": "b_rt", "lower_s": 1, "upper_s": 2}, r)
        True
    """
    if r[iv["time"]] is None or r[iv["base"]] is None:
        return False
    d = seconds(r[iv["time"]]) - seconds(r[iv["base"]])
    if iv.get("strict"):
        return iv["lower_s"] < d < iv["upper_s"]
    return iv["lower_s"] <= d <= iv["upper_s"]


# -- computed columns: the generator's forms ---------------------------------------------------


def _cast_string(v: Any, ty: str) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):  # Java's Double.toString for the generator's values
        return repr(v)
    return str(v)  # ints, Decimals at their scale, timestamps as written (precision 3)


def _initcap(s: str) -> str:
    """Calcite's INITCAP: a word is a run of ASCII letters and digits."""
    out, start = [], True
    for ch in s:
        ascii_word = ch.isascii() and ch.isalnum()
        out.append((ch.upper() if start else ch.lower()) if ch.isascii() else ch)
        start = not ascii_word
    return "".join(out)


def _divide(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a) * math.copysign(1, b)
    return a / b


def _plus_second(text: str) -> str:
    t = dt.datetime.strptime(text, TS_FORMAT) + dt.timedelta(seconds=1)
    return t.strftime(TS_FORMAT)[:-3]


def _decimal_divide_3(v: decimal.Decimal) -> decimal.Decimal:
    return (v / 3).quantize(decimal.Decimal(1).scaleb(-13), rounding=decimal.ROUND_HALF_UP)


_C = r"(\w+)"
#: (pattern over a column, value of a non-NULL value and its type); NULL in, NULL out unless
#: the form says otherwise (COALESCE, CASE).
_COMPUTED: list[tuple[str, Callable[[Any, str], Any]]] = [
    (rf"{_C} \* 2", lambda v, ty: v * 2),
    (rf"{_C} \+ 1", lambda v, ty: v + 1),
    (rf"{_C} \* 1\.5", lambda v, ty: decimal.Decimal(v) * decimal.Decimal("1.5")),
    (rf"SIGN\({_C} - 2\)", lambda v, ty: (v > 2) - (v < 2)),
    (rf"CAST\({_C} AS STRING\)", _cast_string),
    (rf"UPPER\({_C}\)", lambda v, ty: v.upper()),
    (rf"CONCAT\({_C}, '!'\)", lambda v, ty: v + "!"),
    (rf"INITCAP\(CONCAT\({_C}, '_a b'\)\)", lambda v, ty: _initcap(v + "_a b")),
    (rf"{_C} / \(\1 - 2\.0\)", lambda v, ty: _divide(v, v - 2.0)),
    (rf"{_C} \+ INTERVAL '1' SECOND", lambda v, ty: _plus_second(v)),
    (rf"FLOOR\({_C}\)", lambda v, ty: v.to_integral_value(decimal.ROUND_FLOOR)),
    (rf"CEIL\({_C}\)", lambda v, ty: v.to_integral_value(decimal.ROUND_CEILING)),
    (rf"{_C} / 3", lambda v, ty: _decimal_divide_3(v)),
]


def computed(expr: str, r: Row, types: dict[str, str]) -> Any:
    """A computed column's value on a row of physical columns (the generator's forms).

    Example:
        >>> computed("CAST(a AS STRING)", {"a": True}, {"a": "BOOLEAN"})
        'TRUE'
        >>> computed("CASE WHEN a > 2 THEN 'hi' ELSE 'lo' END", {"a": None}, {"a": "INT"})
        'lo'
    """
    if m := re.fullmatch(rf"COALESCE\({_C}, (0|'-')\)", expr):
        v = r[m[1]]
        return v if v is not None else (0 if m[2] == "0" else "-")
    if m := re.fullmatch(rf"CASE WHEN {_C} > 2 THEN 'hi' ELSE 'lo' END", expr):
        return "hi" if cmp3(">", r[m[1]], 2) else "lo"
    for pattern, fn in _COMPUTED:
        if m := re.fullmatch(pattern, expr):
            v = r[m[1]]
            return None if v is None else fn(v, types[m[1]])
    raise ValueError(f"the reference model cannot compute {expr!r}")


# -- aggregates --------------------------------------------------------------------------------


def aggregate(q: Query, rows: Sequence[Row], mode: str) -> list[Row]:
    """A group aggregation (aggregate.py's op): a row per group; a global one over no row is
    no row streaming (Flink retracts it) and one row in batch mode.

    Example:
        >>> q = {"group": ["k"], "aggs": [{"fn": "avg", "arg": "v", "distinct": False,
        ...                                "name": "x0"}]}
        >>> aggregate(q, [{"k": 1, "v": 2}, {"k": 1, "v": -5}], "streaming")
        [{'k': 1, 'x0': -1}]
    """
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        groups.setdefault(tuple(r[c] for c in q["group"]), []).append(r)
    if not q["group"] and not groups and mode == "batch":
        groups[()] = []
    out = []
    for key, members in groups.items():
        r = dict(zip(q["group"], key, strict=True))
        for a in q["aggs"]:
            r[a["name"]] = _aggregate_call(a, members)
        out.append(r)
    return out


def _aggregate_call(a: dict[str, Any], rows: Sequence[Row]) -> Any:
    if a["fn"] == "count_star":
        return len(rows)
    values = [r[a["arg"]] for r in rows if r[a["arg"]] is not None]
    if a["distinct"]:
        values = list(dict.fromkeys(values))
    if a["fn"] == "count":
        return len(values)
    if not values:
        return None
    if a["fn"] == "min":
        return min(values)
    if a["fn"] == "max":
        return max(values)
    total = sum(values)
    if a["fn"] == "sum":
        return total
    if isinstance(total, int):  # AVG of an integral type: Java's division, toward zero
        quotient = abs(total) // len(values)
        return quotient if total >= 0 else -quotient
    if isinstance(total, decimal.Decimal):  # DECIMAL(38, max(6, s))
        scale = max(6, max(-int(v.as_tuple().exponent) for v in values))
        return (total / len(values)).quantize(
            decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP
        )
    return total / len(values)


# -- against Flink's answer --------------------------------------------------------------------


def comparable(v: Any, ty: str = "") -> Any:
    """A value of the model's answer (of type `ty`) or of a runner's (JSON, ``$ts``/``$dec``
    tagged) in one form, to check the model's rows (not their types: `compare` does that):
    numbers as floats to 12 significant digits, NaN as ``"NaN"``, timestamps as seconds,
    booleans tagged (TRUE is not 1).

    Example:
        >>> comparable({"$dec": "1.50"}) == comparable(decimal.Decimal("1.5"))
        True
        >>> comparable({"$ts": "2024-01-01 00:00:01.000000"}) == comparable(
        ...     "2024-01-01 00:00:01.000", "TIMESTAMP(3)")
        True
    """
    if v is None:
        return None
    if isinstance(v, dict):
        if "$ts" in v:
            return ("ts", seconds(v["$ts"].replace("T", " ")))
        v = decimal.Decimal(v["$dec"])
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float, decimal.Decimal)):
        x = float(v)
        if math.isnan(x) or math.isinf(x) or x == 0:
            return "NaN" if math.isnan(x) else x
        return round(x, 11 - math.floor(math.log10(abs(x))))
    if ty.startswith("TIMESTAMP"):
        return ("ts", seconds(v))
    return v


def differences_from(case: Case, changelog: Sequence[Sequence[Any]]) -> list[str]:
    """How the model's answer differs from the final table of a runner's `changelog` (Flink's):
    empty when they hold the same rows.

    Example:
        >>> from tests.conformance.model import table
        >>> case = {"tables": [table("A", [("a_k", "INT")], rows=[["+I", [1]]])],
        ...         "query": {"op": "scan", "table": "A"}}
        >>> differences_from(case, [["+I", [1]]]), differences_from(case, [])
        ([], ['only in the model: (1.0,)'])
    """
    types = [ty for _, ty in output_columns(case, case["query"])]
    mine = Counter(
        tuple(comparable(v, ty) for v, ty in zip(row, types, strict=True)) for row in answer(case)
    )
    final, _ = apply_changelog(
        (kind, [comparable(v) for v in values]) for kind, values in changelog
    )
    theirs = Counter({tuple(k): n for k, n in final.items()})
    return [f"only in the model: {r}" for r in (mine - theirs).elements()] + [
        f"only in the answer: {r}" for r in (theirs - mine).elements()
    ]
