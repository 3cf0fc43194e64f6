"""Random small workloads, one family at a time.

Each case is drawn from its own ``random.Random(f"{seed}-{n}")``: case ``n`` of seed ``S`` is the
same case whatever else runs. Tables are tiny (3-7 rows, seldom none) over tiny domains, so
duplicate keys, NULL keys and NULL values are common; rows take their keys from the other
tables' mostly, and a case whose joins join nothing (or, with a changelog, whose retractions
take no joined row apart) is drawn again (`exercised`): a case exercises its operators.

No case's answer depends on timing in Flink: event times of a table never fall behind its
own watermark (each row's time is at least its table's largest time so far minus the
watermark delay plus one second), versioned tables have one row per (key, time), and a
changelog table is one file read in order.

Families: regular, changelog, interval, temporal, multiway, computed, subquery, lookup,
aggregate (aggregate.py), window (window_family.py).

Example:
    >>> case = generate("regular", seed=1, n=0)
    >>> case["id"], case["family"]
    ('1-0', 'regular')
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from tests.conformance.aggregate import gen_aggregate
from tests.conformance.late_rows import fragile, millis, watermark_before
from tests.conformance.model import (
    Case,
    Pred,
    Query,
    check_table_changelog,
    output_columns,
    table,
    walk_queries,
)
from tests.conformance.reference import joined_pairs, takes_apart
from tests.conformance.window_family import gen_window

T0 = "2024-01-01 00:00:"
NULL_P = 0.15
VALUE_TYPES = ("INT", "BIGINT", "STRING", "DOUBLE", "DECIMAL(10, 2)", "BOOLEAN")


def ts(second: int) -> str:
    """An event time `second` seconds after 2024-01-01 00:00:00, as JSON text.

    Example:
        >>> ts(5)
        '2024-01-01 00:00:05.000'
    """
    return f"{T0}{second:02d}.000"


def category(ty: str) -> str:
    """Types that compare with each other: num, str, bool, ts.

    Example:
        >>> category("DECIMAL(10, 2)"), category("STRING")
        ('num', 'str')
    """
    if ty.startswith(("INT", "BIGINT", "DOUBLE", "DECIMAL")):
        return "num"
    if ty == "STRING":
        return "str"
    if ty == "BOOLEAN":
        return "bool"
    return "ts"


def value(rng: random.Random, ty: str, nullable: bool = True) -> Any:
    """A random value of a type, from a tiny domain; NULL with probability NULL_P."""
    if nullable and rng.random() < NULL_P:
        return None
    if ty in ("INT", "BIGINT"):
        return rng.randint(0, 4)
    if ty == "DOUBLE":
        return rng.choice([0.5, 1.25, 2.0, 3.75])
    if ty.startswith("DECIMAL"):
        return rng.choice([0.5, 1.25, 2.0, 3.1])
    if ty == "STRING":
        return rng.choice(["x", "y", "z"])
    if ty == "BOOLEAN":
        return rng.choice([True, False])
    raise ValueError(ty)


def key_value(rng: random.Random, ty: str, nullable: bool = True) -> Any:
    """A join key: 1-3 (or k1-k3), NULL with probability NULL_P when nullable."""
    if nullable and rng.random() < NULL_P:
        return None
    k = rng.randint(1, 3)
    return k if ty in ("INT", "BIGINT") else f"k{k}"


# -- tables ------------------------------------------------------------------------------------


class TableSpec:
    """What to draw for one table."""

    def __init__(
        self,
        name: str,
        key_type: str = "INT",
        values: int = 1,
        pk: bool = False,
        changelog: bool = False,
        rowtime: bool = False,
        computed: int = 0,
        versioned: bool = False,  # one row per (key, time): a temporal join's build side
        max_rows: int = 5,
        partners: tuple[Any, ...] = (),  # keys of the case's earlier tables (`_keys_of`)
    ) -> None:
        self.name = name
        self.prefix = name.lower()
        self.key_type = key_type
        self.values = values
        self.pk = pk
        self.changelog = changelog
        self.rowtime = rowtime
        self.computed = computed
        self.versioned = versioned
        self.max_rows = max_rows
        self.partners = partners


#: The chance that a row's key is one the case's earlier tables hold (a partner there).
PARTNER_P = 0.7


def _keys_of(tables: list[dict[str, Any]]) -> tuple[Any, ...]:
    """The non-NULL keys (first columns) of `tables`' rows, each once, in order.

    Example:
        >>> _keys_of([table("A", [("a_k", "INT")], rows=[["+I", [2]], ["+I", [None]]])])
        (2,)
    """
    return tuple(dict.fromkeys(v[0] for t in tables for _, v in t["rows"] if v[0] is not None))


def _spec_key(rng: random.Random, spec: TableSpec, nullable: bool = True) -> Any:
    """A key for a row of `spec`'s table: with PARTNER_P one of its partners' keys, so that
    rows find partners in the other tables, else one of the key domain."""
    if spec.partners and rng.random() < PARTNER_P:
        return rng.choice(spec.partners)
    return key_value(rng, spec.key_type, nullable)


def gen_table(rng: random.Random, spec: TableSpec, value_types: tuple[str, ...] = VALUE_TYPES):
    p = spec.prefix
    key = f"{p}_k"
    columns = [(key, spec.key_type)]
    for i in range(spec.values):
        columns.append((f"{p}_v{i}" if i else f"{p}_v", rng.choice(value_types)))
    rowtime = f"{p}_rt" if spec.rowtime else None
    if rowtime:
        columns.append((rowtime, "TIMESTAMP(3)"))
    pk = [key] if spec.pk else []
    delay = rng.randint(1, 3) if rowtime else 0
    computed = [_computed(rng, p, columns, i) for i in range(spec.computed)]
    rows = _rows(rng, spec, columns, delay)
    cuts: list[int] = []
    if len(rows) > 1:
        cuts = sorted(rng.sample(range(1, len(rows)), min(len(rows) - 1, rng.randint(1, 2))))
    return table(
        spec.name,
        columns,
        rows=rows,
        primary_key=pk,
        rowtime=rowtime,
        watermark_delay_s=delay,
        computed=computed,
        changelog=spec.changelog,
        files=cuts,
    )


def _computed(rng: random.Random, p: str, columns: list, i: int) -> tuple[str, str, str]:
    """A computed column over the table's physical columns (SQL both sides parse)."""
    name = f"{p}_c{i}" if i else f"{p}_c"
    choices: list[tuple[str, str]] = []
    for c, ty in columns:
        if ty in ("INT", "BIGINT"):
            choices += [
                (f"{c} * 2", ty),
                (f"{c} + 1", ty),
                (f"COALESCE({c}, 0)", ty),
                (f"CAST({c} AS STRING)", "STRING"),
                (f"CASE WHEN {c} > 2 THEN 'hi' ELSE 'lo' END", "STRING"),
                (f"SIGN({c} - 2)", ty),
                (f"{c} * 1.5", "DECIMAL(12, 1)"),  # 1.5 is an exact DECIMAL(2, 1)
            ]
        elif ty == "STRING":
            choices += [(f"UPPER({c})", "STRING"), (f"CONCAT({c}, '!')", "STRING")]
            choices += [(f"INITCAP(CONCAT({c}, '_a b'))", "STRING")]  # 'X_A B' in Flink
        elif ty == "DOUBLE":
            choices += [(f"{c} * 2", "DOUBLE"), (f"CAST({c} AS STRING)", "STRING")]
            choices += [(f"{c} / ({c} - 2.0)", "DOUBLE")]  # x / 0.0: Infinity, as in Java
        elif ty == "TIMESTAMP(3)":
            choices += [(f"{c} + INTERVAL '1' SECOND", "TIMESTAMP(3)")]
            choices += [(f"CAST({c} AS STRING)", "STRING")]
        elif ty == "BOOLEAN":
            choices += [(f"CAST({c} AS STRING)", "STRING")]
        elif ty == "DECIMAL(10, 2)":
            choices += [(f"CAST({c} AS STRING)", "STRING"), (f"FLOOR({c})", "DECIMAL(10, 0)")]
            choices += [(f"CEIL({c})", "DECIMAL(10, 0)"), (f"{c} / 3", "DECIMAL(21, 13)")]
    expr, ty = rng.choice(choices)
    return name, expr, ty


def _row(rng: random.Random, spec: TableSpec, columns: list, key: Any, t: int | None) -> list:
    out = []
    for c, ty in columns:
        if c.endswith("_k"):
            out.append(key)
        elif ty == "TIMESTAMP(3)":
            out.append(ts(t if t is not None else 0))
        else:
            out.append(value(rng, ty))
    return out


#: The chance of a table with no row; the others have 3 to max_rows (rows that can match).
EMPTY_P = 0.02


def _rows(rng: random.Random, spec: TableSpec, columns: list, delay: int) -> list:
    n = 0 if rng.random() < EMPTY_P else rng.randint(3, spec.max_rows)
    times = _times(rng, n, delay) if spec.rowtime else [None] * n
    if spec.versioned:  # one row per (key, time): the version valid at a time is one row
        used: set = set()
        rows = []
        for t in times:
            k = _spec_key(rng, spec, nullable=False)
            if (k, t) not in used:
                used.add((k, t))
                rows.append(["+I", _row(rng, spec, columns, k, t)])
        return rows
    if not spec.changelog:
        if spec.pk:  # unique keys
            keys = list(dict.fromkeys(_spec_key(rng, spec, False) for _ in range(n)))
            return [
                ["+I", _row(rng, spec, columns, k, t)] for k, t in zip(keys, times, strict=False)
            ]
        return [["+I", _row(rng, spec, columns, _spec_key(rng, spec), t)] for t in times]
    return _changelog(rng, spec, columns, n, times)


def _times(rng: random.Random, n: int, delay: int) -> list[int]:
    """Event times (seconds) that never fall behind the table's watermark."""
    out: list[int] = []
    top = -1
    for _ in range(n):
        lo = max(0, top - delay + 1)
        t = rng.randint(lo, max(lo, top) + 3) if top >= 0 else rng.randint(0, 3)
        out.append(t)
        top = max(top, t)
    return out


def _changelog(rng: random.Random, spec: TableSpec, columns: list, n: int, times: list) -> list:
    """A valid changelog: retract only rows that are there; -U directly before +U; with a
    primary key, at most one row alive per key and an update keeps the key."""
    alive: list[list] = []
    out: list = []
    steps = max(n, 1) + rng.randint(0, 3)
    for i in range(steps):
        t = times[min(i, len(times) - 1)] if times and times[0] is not None else None
        choice = rng.random()
        if not alive or choice < 0.5:
            if spec.pk:
                taken = {r[0] for r in alive}
                free = [_key(spec, k) for k in (1, 2, 3) if _key(spec, k) not in taken]
                if not free:
                    continue
                k = _spec_key(rng, spec, nullable=False)
                if k not in free:
                    k = rng.choice(free)
            else:
                k = _spec_key(rng, spec)
            row = _row(rng, spec, columns, k, t)
            alive.append(row)
            out.append(["+I", row])
        elif choice < 0.75:
            row = alive.pop(rng.randrange(len(alive)))
            out.append(["-D", row])
        else:
            old = alive.pop(rng.randrange(len(alive)))
            k = old[0] if spec.pk else _spec_key(rng, spec)
            new = _row(rng, spec, columns, k, t)
            out += [["-U", old], ["+U", new]]
            alive.append(new)
    return out


def _key(spec: TableSpec, k: int) -> Any:
    return k if spec.key_type in ("INT", "BIGINT") else f"k{k}"


# -- predicates --------------------------------------------------------------------------------


#: The chance that a residual compares the two sides' key columns, which the join equates
#: (``a_k < b_k`` beside ``a_k = b_k`` joins nothing; README, difference 6 came from one).
KEYS_RESIDUAL_P = 0.1


def residual(rng: random.Random, left: list, right: list) -> Pred | None:
    """A predicate over columns of both sides (or of one side and a literal); None when the
    columns offer none. A key column and a STRING value column are never compared (their
    domains, k1-k3 and x-z, never meet); the two key columns seldom (KEYS_RESIDUAL_P)."""
    pairs = [
        (a, b)
        for a, ta in left
        for b, tb in right
        if category(ta) == category(tb)
        and category(ta) in ("num", "str", "ts")
        and not (category(ta) == "str" and a.endswith("_k") != b.endswith("_k"))
    ]
    keys_too = rng.random() < KEYS_RESIDUAL_P
    if not keys_too:
        pairs = [(a, b) for a, b in pairs if not (a.endswith("_k") and b.endswith("_k"))]
    r = rng.random()
    if pairs and r < 0.6:
        a, b = rng.choice(pairs)
        if rng.random() < 0.5:
            a, b = b, a
        return {"cmp": rng.choice(["<", "<=", ">", ">=", "<>", "="]), "left": a, "right": b}
    one_side = [(c, t) for c, t in left + right if category(t) in ("num", "str")]
    if one_side and r < 0.85:
        c, t = rng.choice(one_side)
        return _compare_literal(rng, c, t, ("<", ">", "<>", "="))
    cols = [c for c, _ in left + right if not c.endswith("_rt")]
    if not keys_too:  # a key IS NULL beside its equality joins nothing either
        cols = [c for c in cols if not c.endswith("_k")]
    if not cols:
        return None
    c = rng.choice(cols)
    p: Pred = {"is_null": c} if rng.random() < 0.5 else {"not_null": c}
    if pairs and rng.random() < 0.5:
        a, b = rng.choice(pairs)
        p = {"or": [p, {"cmp": "<", "left": a, "right": b}]}
    return p


def _domain(column: str, ty: str) -> list[Any]:
    """The values the generator draws for a key or value column (`key_value`, `value`), in
    order; [] for another column (a computed one).

    Example:
        >>> _domain("a_k", "STRING"), _domain("b_v1", "DOUBLE")
        (['k1', 'k2', 'k3'], [0.5, 1.25, 2.0, 3.75])
    """
    if column.endswith("_k"):
        return [1, 2, 3] if ty in ("INT", "BIGINT") else ["k1", "k2", "k3"]
    if not re.search(r"_v\d*$", column):
        return []
    domains: dict[str, list[Any]] = {
        "INT": [0, 1, 2, 3, 4],
        "BIGINT": [0, 1, 2, 3, 4],
        "DOUBLE": [0.5, 1.25, 2.0, 3.75],
        "DECIMAL(10, 2)": [0.5, 1.25, 2.0, 3.1],
        "STRING": ["x", "y", "z"],
    }
    return domains.get(ty, [])


def _compare_literal(rng: random.Random, column: str, ty: str, ops: tuple[str, ...]) -> Pred:
    """``column op literal`` that some value of the column's domain passes: the literal is
    one of the domain, never its smallest after ``<`` nor its largest after ``>``.

    Example:
        >>> _compare_literal(random.Random(3), "a_k", "STRING", ("<",))
        {'cmp': '<', 'left': 'a_k', 'value': 'k2'}
    """
    op = rng.choice(ops)
    domain = _domain(column, ty)
    if not domain:  # a computed column: a literal of its category
        value = rng.randint(0, 4) if category(ty) == "num" else rng.choice(["x", "y"])
        return {"cmp": op, "left": column, "value": value}
    if op == "<":
        domain = domain[1:]
    elif op == ">":
        domain = domain[:-1]
    return {"cmp": op, "left": column, "value": rng.choice(domain)}


def _filtered(rng: random.Random, case: Case, q: Query, p: float = 0.2) -> Query:
    """Sometimes a filter on one input (pushed into the join or not)."""
    if rng.random() >= p:
        return q
    cols = [(c, t) for c, t in output_columns(case, q) if category(t) in ("num", "str")]
    if not cols:
        return q
    c, t = rng.choice(cols)
    pred = _compare_literal(rng, c, t, (">", "<>", "<="))
    if rng.random() < 0.3:
        pred = {"or": [pred, {"is_null": c}]}
    return {"op": "where", "input": q, "pred": pred}


def _projected(rng: random.Random, case: Case, q: Query, p: float = 0.25) -> Query:
    """Sometimes a projection (a subset of the columns, in another order) on top."""
    if rng.random() >= p:
        return q
    cols = [c for c, _ in output_columns(case, q)]
    chosen = rng.sample(cols, rng.randint(1, len(cols)))
    return {"op": "select", "input": q, "columns": chosen}


def _scan(name: str) -> Query:
    return {"op": "scan", "table": name}


def _base(rng: random.Random, family: str, seed: int, n: int) -> Case:
    return {
        "id": f"{seed}-{n}",
        "family": family,
        "mode": "streaming",
        "feed": "once",
        "options": {},
        "tables": [],
        "functions": [],
        "query": None,
    }


def _binary_join(
    rng: random.Random, case: Case, kinds: tuple[str, ...], residual_p: float = 0.4
) -> Query:
    a, b = case["tables"][0]["name"], case["tables"][1]["name"]
    left, right = _filtered(rng, case, _scan(a)), _filtered(rng, case, _scan(b))
    lc, rc = output_columns(case, left), output_columns(case, right)
    keys = [[f"{a.lower()}_k", f"{b.lower()}_k"]]
    extra = [
        (x, y)
        for x, tx in lc
        for y, ty in rc
        if tx == ty and not x.endswith(("_k", "_rt")) and not y.endswith(("_k", "_rt"))
    ]
    if extra and rng.random() < 0.15:  # a second equi key
        keys.append(list(rng.choice(extra)))
    res: list[Pred] = []
    while rng.random() < residual_p and len(res) < 2:
        p = residual(rng, lc, rc)
        if p:
            res.append(p)
    q: Query = {
        "op": "join",
        "kind": rng.choice(kinds),
        "left": left,
        "right": right,
        "keys": keys,
        "residual": res,
        "interval": None,
    }
    return q


# -- families ----------------------------------------------------------------------------------


def gen_regular(rng: random.Random, seed: int, n: int) -> Case:
    """Regular joins of every kind over insert-only tables, batch and streaming."""
    case = _base(rng, "regular", seed, n)
    case["mode"] = rng.choice(["batch", "streaming"])
    key_type = rng.choice(["INT", "STRING"])
    for name in ("A", "B"):
        spec = TableSpec(
            name,
            key_type,
            values=rng.randint(1, 2),
            pk=rng.random() < 0.3,
            partners=_keys_of(case["tables"]),
        )
        case["tables"].append(gen_table(rng, spec))
    q = _binary_join(rng, case, ("inner", "left", "right", "full", "semi", "anti"))
    if q["kind"] in ("left", "right", "full") and rng.random() < 0.2:
        side = q["right"] if q["kind"] == "left" else q["left"]
        c = rng.choice(output_columns(case, side))[0]
        q = {"op": "where", "input": q, "pred": {"is_null": c}}
    case["query"] = _projected(rng, case, q)
    return case


def gen_changelog(rng: random.Random, seed: int, n: int) -> Case:
    """Regular joins over changelog inputs (+I/-U/+U/-D), fed at once or file by file."""
    case = _base(rng, "changelog", seed, n)
    case["feed"] = rng.choice(["once", "files"])
    key_type = rng.choice(["INT", "STRING"])
    which = rng.choice([(True, False), (False, True), (True, True)])
    for name, changelog in zip(("A", "B"), which, strict=True):
        spec = TableSpec(
            name,
            key_type,
            values=rng.randint(1, 2),
            pk=rng.random() < 0.5,
            changelog=changelog,
            max_rows=6,
            partners=_keys_of(case["tables"]),
        )
        case["tables"].append(gen_table(rng, spec))
    q = _binary_join(rng, case, ("inner", "left", "right", "full", "semi", "anti"))
    case["query"] = _projected(rng, case, q)
    return case


def gen_interval(rng: random.Random, seed: int, n: int) -> Case:
    """Interval joins of every kind, both bound directions, with residuals and NULL keys."""
    case = _base(rng, "interval", seed, n)
    case["mode"] = rng.choice(["streaming", "streaming", "batch"])
    case["feed"] = rng.choice(["once", "files"])
    key_type = rng.choice(["INT", "STRING"])
    for name in ("A", "B"):
        spec = TableSpec(name, key_type, values=1, rowtime=True, partners=_keys_of(case["tables"]))
        case["tables"].append(gen_table(rng, spec, ("INT", "STRING", "DOUBLE")))
    kinds = ("inner", "left", "right", "full", "inner", "left", "right", "full", "semi", "anti")
    q = _binary_join(rng, case, kinds, residual_p=0.35)
    time, base = ("a_rt", "b_rt") if rng.random() < 0.5 else ("b_rt", "a_rt")
    width, lower = rng.randint(0, 4), rng.randint(-3, 1)
    gaps = _key_pair_gaps(case, time, base)
    if gaps and rng.random() < SATISFIABLE_P:  # a window that holds a pair of one key
        lower = rng.choice(gaps) - rng.randint(0, width)
    upper = lower + width
    q["interval"] = {
        "time": time,
        "base": base,
        "lower_s": lower,
        "upper_s": upper,
        "strict": rng.random() < 0.2 and upper - lower >= 2,
    }
    case["query"] = _projected(rng, case, q, p=0.15)
    return case


#: The chance that an interval join's window holds the time gap of a pair of rows of one key.
SATISFIABLE_P = 0.8


def _key_pair_gaps(case: Case, time: str, base: str) -> list[int]:
    """The gaps `time - base` in seconds of the pairs of rows of tables A and B with one
    (non-NULL) key, each once.

    Example:
        >>> a = table("A", [("a_k", "INT"), ("a_rt", "TIMESTAMP(3)")], rowtime="a_rt",
        ...           rows=[["+I", [1, ts(5)]]])
        >>> b = table("B", [("b_k", "INT"), ("b_rt", "TIMESTAMP(3)")], rowtime="b_rt",
        ...           rows=[["+I", [1, ts(2)]]])
        >>> _key_pair_gaps({"tables": [a, b]}, "a_rt", "b_rt")
        [3]
    """
    a, b = case["tables"][:2]
    ta, tb = ([c for c, _ in t["columns"]].index(t["rowtime"]) for t in (a, b))
    gaps = {
        (millis(ra[ta]) - millis(rb[tb])) // 1000
        for _, ra in a["rows"]
        for _, rb in b["rows"]
        if ra[0] is not None and ra[0] == rb[0]
    }
    ordered = sorted(gaps)
    return ordered if time == "a_rt" else [-g for g in ordered]


TEMPORAL_KEYS = ("a_k", "r_k")


def _contradicts_the_key(p: Pred, key_not_null: bool) -> bool:
    """A residual that is FALSE beside ``a_k = r_k`` where ``r_k`` is NOT NULL (the versioned
    table's primary key in Flink's DDL): ``r_k IS NULL``, ``r_k <> a_k`` (or ``<``, ``>``).
    Flink 2.3 simplifies the condition to FALSE and then refuses the join ("Currently the join
    key in Temporal Table Join can not be empty"; seed 603, cases 39 and 66; README).

    >>> null = {"is_null": "r_k"}
    >>> _contradicts_the_key(null, True), _contradicts_the_key(null, False)
    (True, False)
    >>> _contradicts_the_key({"cmp": "<>", "left": "r_k", "right": "a_k"}, True)
    True
    """
    if not key_not_null:
        return False
    if p.get("is_null") == "r_k":
        return True
    pair = {p.get("left"), p.get("right")}
    return p.get("cmp") in ("<>", "<", ">") and pair == {"a_k", "r_k"}


def gen_temporal(rng: random.Random, seed: int, n: int) -> Case:
    """Event-time temporal joins (FOR SYSTEM_TIME AS OF) and temporal table functions."""
    case = _base(rng, "temporal", seed, n)
    case["mode"] = rng.choice(["streaming", "streaming", "batch"])
    case["feed"] = rng.choice(["once", "files"])
    key_type = rng.choice(["INT", "STRING"])
    probe = gen_table(rng, TableSpec("A", key_type, values=1, rowtime=True), ("INT", "STRING"))
    style = rng.choice(["as_of", "function"])
    build = gen_table(
        rng,
        TableSpec(
            "R",
            key_type,
            values=1,
            pk=style == "as_of" or rng.random() < 0.5,
            rowtime=True,
            versioned=True,
            partners=_keys_of([probe]),
        ),
        ("INT", "STRING"),
    )
    case["tables"] = [probe, build]
    kind = rng.choice(["inner", "left"])
    res = []
    if rng.random() < 0.3:
        p = residual(rng, output_columns(case, _scan("A")), output_columns(case, _scan("R")))
        if (
            p
            and style == "function"
            and p.get("cmp") == "="
            and (p.get("left") in TEMPORAL_KEYS or "right" in p)
        ):
            # Flink 2.3 fails to plan a temporal table function join whose key equals a
            # constant ("Unsupported call: __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY"; README), or
            # with a second equality of columns (`a_rt = r_rt`: the same; `a_v = r_v`: "Only
            # single column join key is supported")
            p = {**p, "cmp": "<="}
        key_not_null = style == "as_of" or kind == "left" or bool(build["primary_key"])
        if p and _contradicts_the_key(p, key_not_null):
            p = None
        if p:
            res.append(p)
    q: Query = {
        "op": "temporal",
        "kind": kind,
        "input": _filtered(rng, case, _scan("A"), p=0.15),
        "table": "R",
        "keys": [["a_k", "r_k"]],
        "residual": res,
        "as_of": "a_rt",
        "style": style,
        "function": None,
    }
    if style == "function":
        case["functions"] = [{"name": "RFn", "table": "R", "time": "r_rt", "key": "r_k"}]
        q["function"] = "RFn"
    case["query"] = _projected(rng, case, q, p=0.15)
    return case


def gen_multiway(rng: random.Random, seed: int, n: int) -> Case:
    """Chains of three or four joins, with the multi-way join option on and off."""
    case = _base(rng, "multiway", seed, n)
    if rng.random() < 0.7:
        case["options"]["table.optimizer.multi-join.enabled"] = "true"
    key_type = rng.choice(["INT", "STRING"])
    names = ["A", "B", "C", "D"][: rng.choice([3, 3, 4])]
    for name in names:
        spec = TableSpec(
            name,
            key_type,
            values=1,
            pk=rng.random() < 0.3,
            changelog=rng.random() < 0.3,
            max_rows=4,
            partners=_keys_of(case["tables"][:1]),  # the common key's: joined rows have them
        )
        case["tables"].append(gen_table(rng, spec, ("INT", "STRING")))
    q: Query = _scan(names[0])
    for i, name in enumerate(names[1:], 1):
        # a common key (a_k = b_k = c_k ...) mostly; sometimes a key from another column
        prior = names[rng.randrange(i)].lower()
        left_key = f"{prior}_k"
        if rng.random() < 0.15:
            left_key = f"{prior}_v"
            types = dict(output_columns(case, q))
            if types.get(left_key) != key_type or key_type == "STRING":  # x-z never are k1-k3
                left_key = f"{prior}_k"
        kind = rng.choice(
            ["inner", "inner", "left", "left", "right", "full"]
            if rng.random() < 0.2
            else ["inner", "left"]
        )
        right = _scan(name)
        res = []
        if rng.random() < 0.2:
            p = residual(rng, output_columns(case, q), output_columns(case, right))
            if p:
                res.append(p)
        q = {
            "op": "join",
            "kind": kind,
            "left": q,
            "right": right,
            "keys": [[left_key, f"{name.lower()}_k"]],
            "residual": res,
            "interval": None,
        }
    case["query"] = _projected(rng, case, q, p=0.2)
    return case


#: The computed family's value columns (each a CAST to STRING among its computed columns).
COMPUTED_TYPES = ("INT", "STRING", "DOUBLE", "DECIMAL(10, 2)", "BOOLEAN")


def gen_computed(rng: random.Random, seed: int, n: int) -> Case:
    """Joins whose keys, residuals or outputs are computed columns."""
    case = _base(rng, "computed", seed, n)
    case["mode"] = rng.choice(["batch", "streaming"])
    key_type = "INT"
    for name in ("A", "B"):
        spec = TableSpec(
            name,
            key_type,
            values=1,
            computed=rng.randint(1, 2),
            rowtime=rng.random() < 0.25,
            partners=_keys_of(case["tables"]),
        )
        case["tables"].append(gen_table(rng, spec, COMPUTED_TYPES))
    q = _binary_join(rng, case, ("inner", "left", "right", "full", "semi", "anti"))
    # join on a computed column when both sides have one of a type
    lc = [c for c in case["tables"][0]["computed"]]
    rc = [c for c in case["tables"][1]["computed"]]
    same = [(x[0], y[0]) for x in lc for y in rc if x[2] == y[2]]
    if same and rng.random() < 0.5:
        q["keys"] = [list(rng.choice(same))]
    case["query"] = _projected(rng, case, q)
    return case


def gen_subquery(rng: random.Random, seed: int, n: int) -> Case:
    """IN, NOT IN (Flink's null-aware anti join) and multi-column IN subqueries."""
    case = _base(rng, "subquery", seed, n)
    case["mode"] = rng.choice(["batch", "streaming"])
    key_type = rng.choice(["INT", "STRING"])
    for name in ("A", "B"):
        spec = TableSpec(name, key_type, values=1, partners=_keys_of(case["tables"]))
        case["tables"].append(gen_table(rng, spec, ("INT", "STRING")))
    multi = rng.random() < 0.3
    a_cols = ["a_k", "a_v"] if multi else ["a_k"]
    b_cols = ["b_k", "b_v"] if multi else ["b_k"]
    if multi:  # the value columns must compare
        types = dict(output_columns(case, _scan("A"))) | dict(output_columns(case, _scan("B")))
        if category(types["a_v"]) != category(types["b_v"]):
            case["tables"][1]["columns"][1][1] = types["a_v"]
            for _, row in case["tables"][1]["rows"]:
                row[1] = value(rng, types["a_v"])
    case["query"] = {
        "op": "in",
        "input": _scan("A"),
        "columns": a_cols,
        "sub": _filtered(rng, case, _scan("B"), p=0.3),
        "sub_columns": b_cols,
        "negated": rng.random() < 0.5,
    }
    return case


LOOKUP_TYPES = ("INT", "BIGINT", "STRING", "DOUBLE", "BOOLEAN")


def gen_lookup(rng: random.Random, seed: int, n: int) -> Case:
    """Lookup joins (``JOIN D FOR SYSTEM_TIME AS OF a.a_pt``) of a probe table, insert-only
    or a changelog, with a static dimension table (1:N keys and NULLs unless it has a primary
    key): equi keys, constant keys, dimension filters, pre-filters, residuals, computed
    columns on both sides; caches and hints that change no answer."""
    case = _base(rng, "lookup", seed, n)
    changelog = rng.random() < 0.45  # `exercised` keeps fewer changelog probes than it draws
    # Batch reads insert-only tables only (as Flink's batch mode does).
    case["mode"] = "streaming" if changelog else rng.choice(["batch", "streaming"])
    case["feed"] = rng.choice(["once", "files"])
    key_type = rng.choice(["INT", "BIGINT", "STRING"])
    probe_spec = TableSpec(
        "A",
        key_type,
        values=rng.randint(1, 2),
        pk=changelog and rng.random() < 0.5,
        changelog=changelog,
        computed=int(rng.random() < 0.2),
        max_rows=6,
    )
    probe = gen_table(rng, probe_spec, LOOKUP_TYPES)
    probe["proctime"] = "a_pt"
    dim_spec = TableSpec(
        "D",
        key_type,
        values=rng.randint(1, 3),
        pk=rng.random() < 0.3,
        max_rows=7,
        partners=_keys_of([probe]),
    )
    dim = gen_table(rng, dim_spec, LOOKUP_TYPES)
    if rng.random() < 0.25:
        dim["computed"] = [_dim_computed(rng, dim["columns"])]
    dim["files"] = []
    dim["lookup"] = True
    case["tables"] = [probe, dim]
    kind = rng.choice(["inner", "left"])
    probe_q = _filtered(rng, case, _scan("A"), p=0.2)
    pc, dc = output_columns(case, probe_q), output_columns(case, _scan("D"))
    dc = [
        (c, t)
        for c, t in dc
        if not any(e.startswith(OUTPUT_ONLY_COMPUTED) for n, e, _ in dim["computed"] if n == c)
    ]
    dim_physical = [(c, t) for c, t in dim["columns"]]
    keys: list[list[str]] = []
    if rng.random() < 0.9:
        keys.append(["a_k", "d_k"])
    # a second key, or a first one from other columns (a computed probe column). Never an
    # equality with a computed DIMENSION column or one of another type: Flink 2.3 drops it
    # from the condition when another key exists (wrong rows; README "Flink's own bugs").
    pairs = [
        (x, y)
        for x, tx in pc
        for y, ty in dim_physical
        if tx == ty and [x, y] not in keys and not (x == "a_k" and y == "d_k")
    ]
    if pairs and rng.random() < 0.25:
        keys.append(list(rng.choice(pairs)))
    constants: list[list[Any]] = []
    if not keys or rng.random() < 0.2:
        # Flink simplifies `d_bool = TRUE` to `d_bool`, no equality: as the only key it refuses
        # the join ("requires an equality condition"); the product takes it as a key
        usable = dim_physical if keys else [(c, t) for c, t in dim_physical if t != "BOOLEAN"]
        c, ty = rng.choice(usable)
        v = key_value(rng, ty, nullable=False) if c == "d_k" else value(rng, ty, False)
        constants.append([c, v])
    dim_filter = []
    if rng.random() < 0.3:
        dim_filter.append(_one_side_pred(rng, dc))
    pre_filter = []
    if rng.random() < (0.3 if kind == "left" else 0.15):
        pre_filter.append(_one_side_pred(rng, pc))
    res: list[Pred] = []
    while rng.random() < 0.35 and len(res) < 2:
        p = residual(rng, pc, dc)
        if p:
            res.append(_no_dropped_equality(p, [c for c, _, _ in dim["computed"]], pc + dc))
    hints: list[dict[str, Any]] = []
    r = rng.random()
    if r < 0.15:
        hints.append({"name": "SHUFFLE_HASH", "tables": ["D"]})
    elif r < 0.3:
        hints.append({"name": "LOOKUP", "options": {"table": "D", "shuffle": "true"}})
    if changelog and not (probe_spec.pk and {x for x, _ in keys} <= {"a_k"}):
        # the product refuses a hash hint whose keys are not in the probe's upsert key (issue
        # 12, FLIP-204); Flink 2.3 ignores the hint there (README: where the product differs)
        hints = []
    cache = rng.choice(["NONE", "NONE", "PARTIAL", "FULL"])
    cache_options: dict[str, str] = {}
    if cache == "FULL":  # loaded once; no reload within a run
        cache_options["lookup.full-cache.periodic-reload.interval"] = "1 h"
    if cache == "PARTIAL":
        cache_options["lookup.partial-cache.max-rows"] = rng.choice(["1", "2", "1000"])
        if rng.random() < 0.3:
            cache_options["lookup.partial-cache.cache-missing-key"] = "false"
    q: Query = {
        "op": "lookup",
        "kind": kind,
        "input": probe_q,
        "table": "D",
        "as_of": "a_pt",
        "keys": keys,
        "constants": constants,
        "dim_filter": dim_filter,
        "pre_filter": pre_filter,
        "residual": res,
        "hints": hints,
        "cache": cache,
        "cache_options": cache_options,
    }
    case["query"] = _projected(rng, case, q, p=0.2)
    return case


#: What the product's lookup operator cannot evaluate in a join condition (it computes such a
#: computed column after the join, so only outputs may use it: README, difference 8).
OUTPUT_ONLY_COMPUTED = ("CAST(", "CONCAT(")


def _dim_computed(rng: random.Random, columns: list) -> list:
    """A computed column of a lookup table."""
    choices: list[tuple[str, str]] = []
    for c, ty in columns:
        if ty in ("INT", "BIGINT"):
            choices += [(f"{c} * 2", ty), (f"{c} + 1", ty), (f"COALESCE({c}, 0)", ty)]
            choices += [(f"CASE WHEN {c} > 2 THEN 'hi' ELSE 'lo' END", "STRING")]
            choices += [(f"CAST({c} AS STRING)", "STRING")]
        elif ty == "STRING":
            choices += [(f"UPPER({c})", "STRING"), (f"CONCAT({c}, '!')", "STRING")]
            choices += [(f"COALESCE({c}, '-')", "STRING")]
        elif ty == "DOUBLE":
            choices += [(f"{c} * 2", "DOUBLE")]
    expr, ty = rng.choice(choices)
    return ["d_c", expr, ty]


def _no_dropped_equality(p: Pred, computed: list[str], types: list[tuple[str, str]]) -> Pred:
    """`p` with an equality Flink 2.3 drops turned into <=: probe = computed dimension column,
    or probe = dimension column of another type (Flink casts the column, computes the cast
    and forgets the comparison when another key exists). See gen_lookup."""
    of = dict(types)
    if p.get("cmp") == "=" and "right" in p:
        a, b = p["left"], p["right"]
        if {a, b} & set(computed) or of.get(a) != of.get(b):
            return {**p, "cmp": "<="}
    if "or" in p:
        return {"or": [_no_dropped_equality(x, computed, types) for x in p["or"]]}
    return p


def _one_side_pred(rng: random.Random, columns: list[tuple[str, str]]) -> Pred:
    """A predicate on one side's columns: a comparison with a literal, IS [NOT] NULL, an OR."""
    c, ty = rng.choice(columns)
    r = rng.random()
    if r < 0.25 or category(ty) not in ("num", "str"):
        return {"is_null": c} if rng.random() < 0.4 else {"not_null": c}
    p = _compare_literal(rng, c, ty, ("<", "<=", ">", ">=", "<>"))
    if r > 0.85:
        p = {"or": [p, {"is_null": c}]}
    return p


FAMILIES: dict[str, Callable[[random.Random, int, int], Case]] = {
    "regular": gen_regular,
    "changelog": gen_changelog,
    "interval": gen_interval,
    "temporal": gen_temporal,
    "multiway": gen_multiway,
    "computed": gen_computed,
    "subquery": gen_subquery,
    "lookup": gen_lookup,
    "aggregate": gen_aggregate,  # aggregate.py
    "window": gen_window,  # window_family.py
}
RESERVED: dict[str, Callable[[random.Random, int, int], Case]] = {}  # families not built yet


def _maybe_incremental(rng: random.Random, case: Case, p: float) -> Case:
    """Streaming cases without event times: sometimes their files are appended one at a time
    to watched tables (each file its own micro-batch). Drawn last, so that adding this did not
    change the earlier draws of a seed's cases."""
    no_rowtime = not any(t["rowtime"] for t in case["tables"])
    if case["mode"] == "streaming" and no_rowtime and rng.random() < p:
        case["feed"] = "incremental"
    return case


INCREMENTAL_P = {
    "regular": 0.2,
    "changelog": 0.4,
    "multiway": 0.3,
    "computed": 0.2,
    "lookup": 0.25,
    "aggregate": 0.3,
}
HINTS_P = {"regular": 0.2, "changelog": 0.2, "computed": 0.1}
OPERATOR_P = {"regular": 0.25, "computed": 0.25, "interval": 0.0}


def _maybe_operator(rng: random.Random, case: Case, p: float) -> Case:
    """Streaming cases: sometimes ``table.exec.join.spark-native.enabled=true``, so that
    joins Spark can run natively run on Spark's join too (the default is server_ext's
    operator). Drawn last (see above)."""
    if case["mode"] == "streaming" and rng.random() < p:
        case["options"]["table.exec.join.spark-native.enabled"] = "true"
    return case


def _maybe_hints(rng: random.Random, case: Case, p: float) -> Case:
    """Binary joins of two tables: sometimes a hint that changes no answer (a day's
    STATE_TTL in streaming, a join strategy in batch). Drawn last (see above)."""
    q = case["query"]
    while q["op"] in ("select", "where"):
        q = q["input"]
    if q["op"] != "join" or q["left"]["op"] not in ("scan", "where") or rng.random() >= p:
        return case
    left, right = (_table_name(q[side]) for side in ("left", "right"))
    if case["mode"] == "streaming":
        ttl = {name: rng.choice(["1d", "12h"]) for name in (left, right) if rng.random() < 0.7}
        if ttl:
            q["hints"] = [{"name": "STATE_TTL", "options": ttl}]
    else:
        strategy = rng.choice(
            ["BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "SHUFFLE_REPLICATE_NL"]
        )
        q["hints"] = [{"name": strategy, "tables": [rng.choice([left, right])]}]
    return case


def _table_name(q: Query) -> str:
    while q["op"] != "scan":
        q = q["input"]
    return q["table"]


def _maybe_unbounded(rng: random.Random, case: Case, p: float) -> Case:
    """Interval cases: sometimes no time bound at all, a regular join of tables with rowtime
    attributes (Flink materializes the time attributes). Drawn last (see above)."""
    q = case["query"]
    while q["op"] in ("select", "where"):
        q = q["input"]
    if q["op"] == "join" and rng.random() < p:
        q["interval"] = None
    return case


# -- several changes of one key in one file (changelog tables) --------------------------------

#: Per changelog table of a case of the family: the chance of a burst of changes of one key.
CHURN_P = {"changelog": 0.6, "multiway": 0.5, "lookup": 0.5, "aggregate": 0.4}


def _maybe_churn(rng: random.Random, case: Case, p: float) -> Case:
    """Changelog tables: sometimes several changes of one key inside one file (insert, delete,
    insert again; update chains), between rows of other keys: the order of changes within a
    file must reach the join (a -D read before its +I keeps a row Flink has not). Drawn last
    (see above)."""
    for t in case["tables"]:
        if t["changelog"] and rng.random() < p:
            _churn(rng, t)
    return case


Unit = list[list[Any]]  # one change, or a -U and its +U: kept together


def _churn(rng: random.Random, t: dict[str, Any]) -> None:
    """A burst of changes of one key into a changelog TABLE (in place): at a random place,
    spread over the following rows of other keys, in one file. Inside the rows the burst
    leaves the key's live rows as it found them; at the end it may leave others."""
    rows: list[list[Any]] = t["rows"]
    pk = bool(t["primary_key"])
    spots = [i for i in range(len(rows) + 1) if i == 0 or rows[i - 1][0] != "-U"]
    at = rng.choice(spots)
    alive = _alive(rows[:at])
    used = [values[0] for _, values in rows if not (pk and values[0] is None)]
    if used and rng.random() < 0.7:
        key = rng.choice(used)
    else:
        key = key_value(rng, t["columns"][0][1], nullable=not pk)
    mine = [r for r in alive if r[0] == key]
    burst = _burst(rng, t, key, mine, net_zero=at < len(rows))
    rest = _units(rows[at:])
    out = [list(r) for r in rows[:at]]
    start = len(out)
    for n, unit in enumerate(burst):
        # between the burst's changes, now and then a unit of other keys that follows
        while n and rest and key not in {r[1][0] for r in rest[0]} and rng.random() < 0.35:
            out += rest.pop(0)
        out += unit
    end = len(out)
    for unit in rest:
        out += unit
    t["rows"] = out
    # the burst in one file: no cut inside it
    allowed = [c for c in range(1, len(out)) if c <= start or c >= end]
    count = min(len(allowed), max(1, len(t["files"])))
    t["files"] = sorted(rng.sample(allowed, count)) if allowed else []
    problems = check_table_changelog(t)
    if problems:
        raise AssertionError(f"a burst made an invalid changelog of {t['name']}: {problems}")


def _alive(rows: list[list[Any]]) -> list[list[Any]]:
    """The rows alive after `rows` (a valid changelog), as a list (duplicates repeated)."""
    alive: list[list[Any]] = []
    for kind, values in rows:
        if kind in ("+I", "+U"):
            alive.append(values)
        else:
            alive.remove(values)
    return alive


def _units(rows: list[list[Any]]) -> list[Unit]:
    """Changes as units: a -U with its +U, every other change alone."""
    out: list[Unit] = []
    for change in rows:
        if out and out[-1][-1][0] == "-U":
            out[-1].append(change)
        else:
            out.append([change])
    return out


def _burst(
    rng: random.Random, t: dict[str, Any], key: Any, mine: list[list[Any]], net_zero: bool
) -> list[Unit]:
    """2-4 changes of `key`, given its live rows `mine` (with a primary key: at most one, and
    an update keeps the key); `net_zero`: the key's live rows as they were at the end."""
    pk = bool(t["primary_key"])
    seen: list[list[Any]] = []

    def fresh() -> list[Any]:
        if seen and rng.random() < 0.3:  # the same row again (insert, delete, insert again)
            return list(rng.choice(seen))
        row = [key] + [value(rng, ty) for _, ty in t["columns"][1:]]
        seen.append(row)
        return list(row)

    cur = [list(r) for r in mine]
    out: list[Unit] = []
    for _ in range(rng.randint(2, 4)):
        r = rng.random()
        if cur and (r < 0.35 if pk else r < 0.3):  # delete
            old = cur.pop(rng.randrange(len(cur)))
            out.append([["-D", old]])
        elif cur and r < 0.75:  # update (chains: the next update starts from the new row)
            old = cur.pop(rng.randrange(len(cur)))
            new = fresh()
            out.append([["-U", old], ["+U", new]])
            cur.append(new)
        elif not (pk and cur):
            new = fresh()
            out.append([["+I", new]])
            cur.append(new)
    if net_zero:  # back to the rows the key had
        extra, missing = list(cur), list[list[Any]]()
        for row in mine:
            if row in extra:
                extra.remove(row)
            else:
                missing.append(row)
        while extra and missing and pk:
            out.append([["-U", extra.pop()], ["+U", list(missing.pop())]])
        out += [[["-D", row]] for row in extra]
        out += [[["+I", list(row)]] for row in missing]
    return out


# -- late rows (time families) -----------------------------------------------------------------

#: Per case of the family: the chance of rows behind their table's watermark.
LATE_P = {"interval": 0.6, "temporal": 0.6}


def _maybe_late(rng: random.Random, case: Case, p: float) -> Case:
    """Tables with a rowtime: sometimes 1-2 rows per table whose event time is behind the
    table's watermark when they are read (up to 3 s behind). One is kept only when Flink's
    answer stays the same however its inputs interleave (`late_rows`); else it keeps its
    time. Versioned tables keep one row per (key, time). Drawn last (see above)."""
    if rng.random() >= p:
        return case
    versioned = {q["table"] for q in walk_queries(case["query"]) if q["op"] == "temporal"}
    for t in case["tables"]:
        if not t["rowtime"] or t.get("lookup"):
            continue
        at = [n for n, _ in t["columns"]].index(t["rowtime"])
        for _ in range(rng.randint(1, 2)):
            marks = watermark_before(t)
            spots = [i for i, w in enumerate(marks) if w is not None and w >= 0]
            if not spots:
                break
            i = rng.choice(spots)
            w = marks[i]
            assert w is not None
            row = t["rows"][i][1]
            old, new = row[at], ts(rng.randint(max(0, w // 1000 - 3), w // 1000))
            if t["name"] in versioned and any(
                r[0] == row[0] and r[at] == new for _, r in t["rows"]
            ):
                continue
            row[at] = new
            if fragile(case):
                row[at] = old
    return case


def generate(family: str, seed: int, n: int) -> Case:
    """Case `n` of `seed` in `family`.

    Example:
        >>> generate("interval", 3, 1)["tables"][0]["rowtime"]
        'a_rt'
    """
    gen = FAMILIES.get(family) or RESERVED.get(family)
    if gen is None:
        raise ValueError(f"unknown family {family!r}; families: {sorted(FAMILIES)}")
    rng = random.Random(f"{seed}-{n}-{family}")
    for _ in range(DRAWS):
        case = _maybe_incremental(rng, gen(rng, seed, n), INCREMENTAL_P.get(family, 0.0))
        case = _maybe_operator(rng, case, OPERATOR_P.get(family, 0.0))
        case = _maybe_unbounded(rng, case, 0.1 if family == "interval" else 0.0)
        case = _maybe_hints(rng, case, HINTS_P.get(family, 0.0))
        case = _maybe_churn(rng, case, CHURN_P.get(family, 0.0))
        case = _maybe_late(rng, case, LATE_P.get(family, 0.0))
        if exercised(case) or rng.random() < IDLE_P:
            break
    return case


#: A case is drawn again (up to DRAWS times) until its rows do what its operators are for
#: (`exercised`); one that does not is kept with IDLE_P: a join with nothing to join is a case
#: too, but seed 421's CI cases were mostly such cases (issue 30).
DRAWS = 10
IDLE_P = 0.1


def exercised(case: Case) -> bool:
    """Every join of the case joins a pair of rows, and a case with a changelog table has a
    retraction that takes a joined pair (or an aggregate's row) apart, in the plain-Python
    answer (`reference.activity`: ``all(joined)`` and ``retracted > 0``).

    Example:
        >>> exercised(generate("regular", 1, 0))
        True
    """
    if not all(joined_pairs(case)):
        return False
    return not any(t["changelog"] for t in case["tables"]) or takes_apart(case)


def generate_many(count: int, seed: int, families: list[str] | None = None) -> list[Case]:
    """`count` cases of `seed`, the families taken in turn.

    Example:
        >>> [c["family"] for c in generate_many(3, 1, ["regular", "interval"])]
        ['regular', 'interval', 'regular']
    """
    families = families or list(FAMILIES)
    return [generate(families[n % len(families)], seed, n) for n in range(count)]


def describe_tables(case: Case) -> str:
    """The tables of a case, readable (for failure reports)."""
    lines = []
    for t in case["tables"]:
        head = ", ".join(f"{n} {ty}" for n, ty in t["columns"])
        extras = []
        if t["computed"]:
            extras.append("computed " + ", ".join(f"{n} AS {e}" for n, e, _ in t["computed"]))
        if t["primary_key"]:
            extras.append(f"PRIMARY KEY {t['primary_key']}")
        if t["rowtime"]:
            extras.append(f"WATERMARK {t['rowtime']} - {t['watermark_delay_s']} s")
        if t["changelog"]:
            extras.append("changelog")
        lines.append(f"{t['name']}({head}) {'; '.join(extras)}")
        for kind, row in t["rows"]:
            lines.append(f"  {kind}{row}")
    return "\n".join(lines)
