"""A case as Flink SQL: CREATE TABLE statements over files, and the query.

Standard library only (imported in Flink's virtualenv). Where this product goes beyond Flink
by design, the query is the equivalent Flink query:

- ``semi_join`` / ``anti_join`` -> ``WHERE [NOT] EXISTS (SELECT 1 FROM ... WHERE cond)``;
- join hints (``STATE_TTL`` of a day, ``BROADCAST``, ``SHUFFLE_HASH`` ...) are left out: a TTL
  longer than the run and a join strategy change no answer;
- ``left_outer_join_lateral`` on a temporal table function with a join condition (Flink
  takes ``LEFT JOIN LATERAL TABLE(f(t)) ON TRUE`` only) -> ``LEFT JOIN R FOR SYSTEM_TIME AS OF``
  on the function's table, with the function's key as primary key: the same versions.
- a lookup join on a ``jdbc`` table (SQLite) -> the same join on a ``conformance-lookup``
  table (tests/conformance/flink_lookup: a file loaded by a Java ``LookupFunction``); the
  LOOKUP and SHUFFLE_HASH hints and the lookup cache are left out (they change no answer).

Example:
    >>> from tests.conformance.model import table
    >>> case = {"tables": [table("A", [("a_k", "INT")])], "functions": [],
    ...         "query": {"op": "scan", "table": "A"}}
    >>> query_sql(case, case["query"])
    'SELECT * FROM `A`'
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.conformance.model import Case, Pred, Query, output_columns, walk_queries


def ddl(
    t: dict[str, Any],
    path: str,
    primary_key: list[str] | None = None,
    with_options: str | None = None,
) -> str:
    """CREATE TEMPORARY TABLE for a TABLE stored at `path` (see `model.write_flink_file`);
    `with_options` replaces the WITH clause's options (the product's own, over its files).

    Example:
        >>> from tests.conformance.model import table
        >>> print(ddl(table("A", [("a_k", "INT")], primary_key=["a_k"]), "/d"))
        CREATE TEMPORARY TABLE `A` (
          `a_k` INT NOT NULL,
          PRIMARY KEY (`a_k`) NOT ENFORCED
        ) WITH ('connector' = 'filesystem', 'path' = '/d', 'format' = 'json')
    """
    key = t["primary_key"] if primary_key is None else primary_key
    parts = [f"`{n}` {ty}{' NOT NULL' if n in key else ''}" for n, ty in t["columns"]]
    parts += [f"`{n}` AS {expr}" for n, expr, _ in t["computed"]]
    if t.get("proctime"):
        parts.append(f"`{t['proctime']}` AS PROCTIME()")
    if t["rowtime"]:
        delay = t["watermark_delay_s"]
        parts.append(
            f"WATERMARK FOR `{t['rowtime']}` AS `{t['rowtime']}` - INTERVAL '{delay}' SECOND"
        )
    if key:
        parts.append(f"PRIMARY KEY ({', '.join(f'`{k}`' for k in key)}) NOT ENFORCED")
    fmt = "debezium-json" if t["changelog"] else "json"
    body = ",\n  ".join(parts)
    if with_options is not None:
        return f"CREATE TEMPORARY TABLE `{t['name']}` (\n  {body}\n) WITH ({with_options})"
    if t.get("lookup"):  # a file of rows (model.write_lookup_file) behind a LookupFunction
        return (
            f"CREATE TEMPORARY TABLE `{t['name']}` (\n  {body}\n) WITH "
            f"('connector' = 'conformance-lookup', 'path' = '{path}')"
        )
    return (
        f"CREATE TEMPORARY TABLE `{t['name']}` (\n  {body}\n) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = '{fmt}')"
    )


def primary_keys_for_flink(case: Case) -> dict[str, list[str]]:
    """Primary keys Flink needs beyond the case's: a temporal table function's table joined
    with ``left_outer_join_lateral`` becomes a versioned table (``FOR SYSTEM_TIME AS OF``).
    An inner ``join_lateral`` stays a function call on the table as declared: a primary key
    would make its key NOT NULL in Flink's result, which the function alone does not (README,
    difference 16)."""
    keys = {t["name"]: list(t["primary_key"]) for t in case["tables"]}
    for q in walk_queries(case["query"]):
        if q["op"] == "temporal" and q["style"] == "function" and q["kind"] != "inner":
            fn = _function(case, q["function"])
            if not keys[fn["table"]]:
                keys[fn["table"]] = [fn["key"]]
    return keys


def _function(case: Case, name: str) -> dict[str, Any]:
    for fn in case.get("functions", []):
        if fn["name"] == name:
            return fn
    raise KeyError(f"case has no temporal table function {name!r}")


def pred_sql(p: Pred) -> str:
    """A PRED as SQL.

    Example:
        >>> pred_sql({"or": [{"cmp": "<", "left": "a", "right": "b"}, {"is_null": "a"}]})
        '((`a` < `b`) OR (`a` IS NULL))'
    """
    if "cmp" in p:
        right = f"`{p['right']}`" if "right" in p else literal_sql(p["value"])
        return f"(`{p['left']}` {p['cmp']} {right})"
    if "is_null" in p:
        return f"(`{p['is_null']}` IS NULL)"
    if "not_null" in p:
        return f"(`{p['not_null']}` IS NOT NULL)"
    if "or" in p:
        return "(" + " OR ".join(pred_sql(x) for x in p["or"]) + ")"
    if "not" in p:
        return f"(NOT {pred_sql(p['not'])})"
    raise ValueError(f"unknown predicate {p}")


def literal_sql(v: Any) -> str:
    """A literal value as SQL.

    Example:
        >>> literal_sql("x'y"), literal_sql(True), literal_sql(3)
        ("'x''y'", 'TRUE', '3')
    """
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def interval_sql(iv: dict[str, Any]) -> str:
    """An interval bound: ``time BETWEEN base + lower AND base + upper`` (or strict < <).

    Example:
        >>> interval_sql({"time": "a", "base": "b", "lower_s": -2, "upper_s": 1,
        ...               "strict": False})
        "(`a` BETWEEN `b` - INTERVAL '2' SECOND AND `b` + INTERVAL '1' SECOND)"
    """
    lo = _shift(iv["base"], iv["lower_s"])
    hi = _shift(iv["base"], iv["upper_s"])
    if iv.get("strict"):
        return f"(`{iv['time']}` > {lo} AND `{iv['time']}` < {hi})"
    return f"(`{iv['time']}` BETWEEN {lo} AND {hi})"


def _shift(column: str, seconds: int) -> str:
    sign = "-" if seconds < 0 else "+"
    return f"`{column}` {sign} INTERVAL '{abs(seconds)}' SECOND"


def join_condition_sql(q: Query) -> str:
    """Keys, interval bound and residuals of a join QUERY, ANDed (TRUE when there are none)."""
    terms = [f"(`{a}` = `{b}`)" for a, b in q["keys"]]
    if q.get("interval"):
        terms.append(interval_sql(q["interval"]))
    terms += [pred_sql(p) for p in q.get("residual", [])]
    return " AND ".join(terms) if terms else "TRUE"


def query_sql(case: Case, q: Query, _names: Any = None) -> str:
    """A QUERY as one Flink SQL SELECT (nested subqueries, each with an alias).

    Example:
        >>> from tests.conformance.model import table
        >>> case = {"tables": [table("A", [("a_k", "INT")]), table("B", [("b_k", "INT")])]}
        >>> print(query_sql(case, {"op": "join", "kind": "semi", "keys": [["a_k", "b_k"]],
        ...     "left": {"op": "scan", "table": "A"}, "right": {"op": "scan", "table": "B"}}))
        ... # doctest: +NORMALIZE_WHITESPACE
        SELECT * FROM (SELECT * FROM `A`) AS t1
        WHERE EXISTS (SELECT 1 FROM (SELECT * FROM `B`) AS t2 WHERE (`a_k` = `b_k`))
    """
    names = _names or (f"t{i}" for i in itertools.count(1))
    op = q["op"]
    if op == "scan":
        return f"SELECT * FROM `{q['table']}`"
    if op == "where":
        inner = f"({query_sql(case, q['input'], names)}) AS {next(names)}"
        return f"SELECT * FROM {inner} WHERE {pred_sql(q['pred'])}"
    if op == "select":
        cols = ", ".join(f"`{c}`" for c in q["columns"])
        return f"SELECT {cols} FROM ({query_sql(case, q['input'], names)}) AS {next(names)}"
    if op == "join":
        left = f"({query_sql(case, q['left'], names)}) AS {next(names)}"
        right = f"({query_sql(case, q['right'], names)}) AS {next(names)}"
        cond = join_condition_sql(q)
        kind = q["kind"]
        if kind in ("semi", "anti"):
            neg = "NOT " if kind == "anti" else ""
            return f"SELECT * FROM {left} WHERE {neg}EXISTS (SELECT 1 FROM {right} WHERE {cond})"
        join = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}
        return f"SELECT * FROM {left} {join[kind]} {right} ON {cond}"
    if op == "in":
        inner = f"({query_sql(case, q['input'], names)}) AS {next(names)}"
        sub_cols = ", ".join(f"`{c}`" for c in q["sub_columns"])
        sub = f"SELECT {sub_cols} FROM ({query_sql(case, q['sub'], names)}) AS {next(names)}"
        probe = ", ".join(f"`{c}`" for c in q["columns"])
        if len(q["columns"]) > 1:
            probe = f"({probe})"
        neg = "NOT " if q.get("negated") else ""
        return f"SELECT * FROM {inner} WHERE {probe} {neg}IN ({sub})"
    if op == "temporal":
        alias = next(names)
        left = f"({query_sql(case, q['input'], names)}) AS {alias}"
        terms = [f"(`{a}` = `{b}`)" for a, b in q["keys"]]
        terms += [pred_sql(p) for p in q.get("residual", [])]
        cond = " AND ".join(terms)
        if q["style"] == "function" and q["kind"] == "inner":
            call = f"LATERAL TABLE (`{q['function']}`(`{q['as_of']}`))"
            return f"SELECT * FROM {left}, {call} WHERE {cond}"
        join = "JOIN" if q["kind"] == "inner" else "LEFT JOIN"
        return (
            f"SELECT * FROM {left} {join} `{q['table']}` FOR SYSTEM_TIME AS OF "
            f"{alias}.`{q['as_of']}` ON {cond}"
        )
    if op == "lookup":
        alias, dim = next(names), next(names)
        left = f"({query_sql(case, q['input'], names)}) AS {alias}"
        cols = ", ".join(f"`{c}`" for c, _ in output_columns(case, q))
        join = "JOIN" if q["kind"] == "inner" else "LEFT JOIN"
        return (
            f"SELECT {cols} FROM {left} {join} `{q['table']}` FOR SYSTEM_TIME AS OF "
            f"{alias}.`{q['as_of']}` AS {dim} ON {lookup_condition_sql(q)}"
        )
    if op == "aggregate":  # the aggregate family (aggregate.py)
        from tests.conformance.aggregate import aggregate_sql

        return aggregate_sql(q, query_sql(case, q["input"], names), next(names))
    if op == "window_agg":  # the window family (window_family.py)
        from tests.conformance.window_family import window_agg_sql

        return window_agg_sql(q, lambda x: query_sql(case, x, names), lambda: next(names))
    if op == "window_topn":
        from tests.conformance.window_family import window_topn_sql

        return window_topn_sql(q, query_sql(case, q["input"], names), lambda: next(names))
    if op == "window_join":
        from tests.conformance.window_family import window_join_sql

        return window_join_sql(case, q)
    raise ValueError(f"unknown query op {op!r}")


def lookup_condition_sql(q: Query) -> str:
    """The ON clause of a lookup QUERY: keys, constants, dimension filters, pre-filters and
    residuals, ANDed (Flink sorts them into lookup keys, filters and the remaining condition).

    Example:
        >>> lookup_condition_sql({"keys": [["a_k", "d_k"]], "constants": [["d_v", "x"]],
        ...     "dim_filter": [], "pre_filter": [{"not_null": "a_v"}], "residual": []})
        "(`a_k` = `d_k`) AND (`d_v` = 'x') AND (`a_v` IS NOT NULL)"
    """
    terms = [f"(`{a}` = `{b}`)" for a, b in q["keys"]]
    terms += [f"(`{c}` = {literal_sql(v)})" for c, v in q.get("constants", [])]
    for field in ("dim_filter", "pre_filter", "residual"):
        terms += [pred_sql(p) for p in q.get(field, [])]
    return " AND ".join(terms)


def case_statements(case: Case, paths: dict[str, str]) -> tuple[list[str], str]:
    """The DDL statements (tables at `paths`) and the query of a case.

    Example:
        >>> from tests.conformance.model import table
        >>> case = {"tables": [table("A", [("a_k", "INT")])], "functions": [],
        ...         "query": {"op": "scan", "table": "A"}}
        >>> case_statements(case, {"A": "/d"})[1]
        'SELECT * FROM `A`'
    """
    keys = primary_keys_for_flink(case)
    ddls = [ddl(t, paths[t["name"]], keys[t["name"]]) for t in case["tables"]]
    return ddls, query_sql(case, case["query"])


def describe(case: Case) -> str:
    """The query of a case as Flink SQL (for failure reports)."""
    return query_sql(case, case["query"])
