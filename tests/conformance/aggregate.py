"""The conformance suite's ``aggregate`` family (issue 21): group aggregations over insert-only
tables, changelogs, joins (outer joins' retractions) and other aggregations, global ones,
``distinct()``, the DISTINCT forms, and HAVING (a ``where`` over the aggregate).

One QUERY op, and what each side makes of it (the model, Flink's SQL, the product's Table
API), kept in this module; ``model``, ``flink_sql``, ``product`` and ``generator`` each call
in with one line::

    {"op": "aggregate", "input": QUERY, "group": ["a_k", ...],      # [] : a global aggregate
     "aggs": [{"fn": "count_star|count|sum|avg|min|max", "arg": "a_v" | None,
               "distinct": False, "name": "x0"}, ...],
     "distinct": False}      # no aggs and True: the product says input.select(group).distinct()

Standard library only at import (the Flink runner imports ``flink_sql``, which imports this
module, in Flink's virtualenv); the product's half imports ``tableapi`` when called.

Example:
    >>> from tests.conformance.model import table
    >>> case = {"tables": [table("A", [("a_k", "INT"), ("a_v", "INT")])]}
    >>> q = {"op": "aggregate", "input": {"op": "scan", "table": "A"}, "group": ["a_k"],
    ...      "aggs": [{"fn": "avg", "arg": "a_v", "distinct": False, "name": "x0"}]}
    >>> output_columns(case, q, lambda c, q: [("a_k", "INT"), ("a_v", "INT")])
    [('a_k', 'INT'), ('x0', 'INT')]
    >>> aggregate_sql(q, "SELECT * FROM `A`", "t1")
    'SELECT `a_k`, AVG(`a_v`) AS `x0` FROM (SELECT * FROM `A`) AS t1 GROUP BY `a_k`'
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

Case = dict[str, Any]
Query = dict[str, Any]
Columns = Callable[[Case, Query], list[tuple[str, str]]]

NUMERIC = ("INT", "BIGINT", "DOUBLE", "DECIMAL(10, 2)")


def agg_type(fn: str, arg_type: str | None) -> str:
    """Flink 2.3's result type of an aggregate call (nullability aside).

    Example:
        >>> agg_type("sum", "DECIMAL(10, 2)"), agg_type("avg", "DECIMAL(10, 2)")
        ('DECIMAL(38, 2)', 'DECIMAL(38, 6)')
    """
    if fn in ("count_star", "count"):
        return "BIGINT"
    assert arg_type is not None
    if arg_type.startswith("DECIMAL"):
        scale = int(arg_type.split(",")[1].strip(" )"))
        return f"DECIMAL(38, {scale if fn == 'sum' else max(6, scale)})"
    return arg_type


def output_columns(case: Case, q: Query, columns: Columns) -> list[tuple[str, str]]:
    """The group columns, then one per aggregate call (``columns``: model.output_columns)."""
    types = dict(columns(case, q["input"]))
    out = [(c, types[c]) for c in q["group"]]
    for a in q["aggs"]:
        out.append((a["name"], agg_type(a["fn"], types.get(a["arg"]))))
    return out


def _call_sql(a: dict[str, Any]) -> str:
    if a["fn"] == "count_star":
        return "COUNT(*)"
    distinct = "DISTINCT " if a["distinct"] else ""
    return f"{a['fn'].upper()}({distinct}`{a['arg']}`)"


def aggregate_sql(q: Query, input_sql: str, alias: str) -> str:
    """The aggregate as Flink SQL over its input's SELECT."""
    keys = [f"`{c}`" for c in q["group"]]
    select = ", ".join(keys + [f"{_call_sql(a)} AS `{a['name']}`" for a in q["aggs"]])
    group_by = f" GROUP BY {', '.join(keys)}" if keys else ""
    return f"SELECT {select} FROM ({input_sql}) AS {alias}{group_by}"


def build_aggregate(table: Any, q: Query) -> Any:
    """The aggregate in the product's Table API over ``table`` (the input, built)."""
    from tableapi import col, lit

    keys = [col(c) for c in q["group"]]
    if not q["aggs"] and q.get("distinct"):
        return table.select(*keys).distinct()
    calls = []
    for a in q["aggs"]:
        arg = lit(1) if a["fn"] == "count_star" else col(a["arg"])
        call = getattr(arg, "count" if a["fn"] == "count_star" else a["fn"])
        calls.append((call.distinct if a["distinct"] else call).alias(a["name"]))
    if not keys:
        return table.select(*calls)
    return table.group_by(*keys).select(*keys, *calls)


# -- the generator ---------------------------------------------------------------------------


def _aggs(rng: random.Random, columns: list[tuple[str, str]], prefix: str) -> list[dict]:
    """1-4 aggregate calls over ``columns`` (SUM/AVG of numbers; MIN/MAX of numbers and
    strings; DISTINCT forms sometimes), named ``<prefix>0..``."""
    out: list[dict] = []
    for i in range(rng.randint(1, 4)):
        fn = rng.choice(["count_star", "count", "sum", "avg", "min", "max", "count"])
        fit = {
            "count": [c for c, _ in columns],
            "sum": [c for c, t in columns if t in NUMERIC],
            "avg": [c for c, t in columns if t in NUMERIC],
            "min": [c for c, t in columns if t in (*NUMERIC, "STRING")],
            "max": [c for c, t in columns if t in (*NUMERIC, "STRING")],
        }.get(fn, [])
        if fn != "count_star" and not fit:
            fn = "count_star"
        arg = None if fn == "count_star" else rng.choice(fit)
        distinct = fn in ("count", "sum") and rng.random() < 0.25
        out.append({"fn": fn, "arg": arg, "distinct": distinct, "name": f"{prefix}{i}"})
    return out


def _having(rng: random.Random, q: Query, columns: list[tuple[str, str]]) -> Query:
    """Sometimes a HAVING: a filter on an aggregate column of the result."""
    results = columns[len(q["group"]) :]
    aggs = [(a["name"], t) for a, (_, t) in zip(q["aggs"], results, strict=True)]
    if not aggs or rng.random() >= 0.3:
        return q
    name, ty = rng.choice(aggs)
    if ty == "STRING":
        pred: dict = {"not_null": name}
    else:
        pred = {"cmp": rng.choice([">", ">=", "<"]), "left": name, "value": rng.randint(0, 3)}
    return {"op": "where", "input": q, "pred": pred}


def gen_aggregate(rng: random.Random, seed: int, n: int) -> Case:
    """Aggregations over one table (insert-only or a changelog), over a join of two (inner or
    outer, changelog inputs), or of an aggregation; global ones, distinct(), HAVING; batch
    (insert-only inputs) and streaming."""
    from tests.conformance import generator as g
    from tests.conformance.model import output_columns as columns_of

    case = g._base(rng, "aggregate", seed, n)
    shape = rng.choice(["table", "table", "join", "nested"])
    changelog = rng.random() < 0.6
    if not changelog and rng.random() < 0.3:
        case["mode"] = "batch"
    else:
        case["feed"] = rng.choice(["once", "files"])
    names = ("A", "B") if shape == "join" else ("A",)
    key_type = rng.choice(["INT", "STRING"])
    for name in names:
        spec = g.TableSpec(
            name,
            key_type,
            values=rng.randint(1, 3),
            pk=rng.random() < 0.4,
            changelog=changelog and (name == "A" or rng.random() < 0.5),
            max_rows=7,
            partners=g._keys_of(case["tables"]),
        )
        case["tables"].append(g.gen_table(rng, spec))
    if shape == "join":
        source = g._binary_join(rng, case, ("inner", "left", "right", "full"), residual_p=0.2)
    else:
        source = g._filtered(rng, case, g._scan("A"))
    columns = columns_of(case, source)
    names_only = [c for c, _ in columns]
    group = rng.sample(names_only, rng.choice([0, 1, 1, 1, 2]))
    others = [(c, t) for c, t in columns if c not in group]
    if group and shape != "nested" and rng.random() < 0.15:  # distinct(): no call
        q: Query = {"op": "aggregate", "input": source, "group": group, "aggs": [],
                    "distinct": True}  # fmt: skip
    else:
        q = {"op": "aggregate", "input": source, "group": group,
             "aggs": _aggs(rng, others or columns, "x")}  # fmt: skip
    if shape == "nested":  # an aggregate of an aggregate: group by one of its results
        inner = {**q, "group": group or [names_only[0]], "distinct": False}
        inner_columns = columns_of(case, inner)
        counts = [c for c, _ in inner_columns[len(inner["group"]) :]]
        outer_group = [rng.choice(counts)] if counts and rng.random() < 0.8 else []
        rest = [(c, t) for c, t in inner_columns if c not in outer_group]
        q = {"op": "aggregate", "input": inner, "group": outer_group,
             "aggs": _aggs(rng, rest, "y")}  # fmt: skip
    case["query"] = _having(rng, q, columns_of(case, q))
    if case["mode"] == "batch" and any(
        s["op"] == "aggregate" and not s["group"] for s in g.walk_queries(case["query"])
    ):  # a global aggregate of no row: one row in batch mode (Flink's too), none streaming
        case["mode"] = "streaming"
    return case
