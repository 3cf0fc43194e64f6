"""The conformance suite's case model: tables, their data and a query, as plain JSON data.

Standard library only: the Flink runner imports this module in Flink's own virtualenv (no
tableapi, no pyspark there).

A case is a dict::

    {"id": "7-12", "family": "regular", "mode": "streaming" | "batch",
     "feed": "once" | "files" | "incremental",   # product side: one file per table, several
                                        # (bounded, read at once), or several appended one
                                        # at a time to a watched table (no rowtimes only)
     "options": {"table.optimizer.multi-join.enabled": "true"},   # product config
     "tables": [TABLE, ...], "functions": [FUNCTION, ...], "query": QUERY}

    TABLE = {"name": "A", "columns": [["a_k", "INT"], ...], "primary_key": ["a_k"] | [],
             "rowtime": "a_rt" | None, "watermark_delay_s": 2,
             "computed": [["a_c", "a_v * 2", "INT"]],   # name, SQL both sides parse, type
             "changelog": False,                        # rows carry +I/-U/+U/-D kinds
             "rows": [["+I", [1, 5, "2024-01-01 00:00:01.000"]], ...],
             "files": [2],                              # split points for feed "files"
             # optional (lookup family only; absent elsewhere):
             "proctime": "a_pt",     # a `a_pt AS PROCTIME()` column: not in rows or outputs
             "lookup": True}         # a dimension table: static, read only by lookups (the
                                     # product: a jdbc table in SQLite; Flink: the
                                     # conformance-lookup connector over write_lookup_file)
    FUNCTION = {"name": "Rates", "table": "R", "time": "r_rt", "key": "r_k"}  # temporal fn

    QUERY (one of)
      {"op": "scan", "table": "A"}
      {"op": "where", "input": QUERY, "pred": PRED}
      {"op": "select", "input": QUERY, "columns": ["a_k", ...]}
      {"op": "join", "kind": "inner|left|right|full|semi|anti", "left": QUERY, "right": QUERY,
       "keys": [["a_k", "b_k"], ...], "residual": [PRED, ...],
       "interval": None | {"time": "a_rt", "base": "b_rt", "lower_s": -2, "upper_s": 1,
                           "strict": False},       # time BETWEEN base + lower AND base + upper
       "hints": [{"name": "STATE_TTL", "options": {"A": "1d"}},    # optional; product only:
                 {"name": "BROADCAST", "tables": ["B"]}]}          # they change no answer
      {"op": "in", "input": QUERY, "columns": ["a_k"], "sub": QUERY, "sub_columns": ["b_k"],
       "negated": False}                            # [NOT] IN (subquery)
      {"op": "temporal", "kind": "inner|left", "input": QUERY, "table": "R",
       "keys": [["a_k", "r_k"]], "residual": [PRED, ...], "as_of": "a_rt",
       "style": "as_of" | "function", "function": "Rates" | None}
      {"op": "lookup", "kind": "inner|left", "input": QUERY (scans and filters of the probe
       table: its proctime must reach the join), "table": "D", "as_of": "a_pt",
       "keys": [["a_k", "d_k"], ...],              # probe column = dimension column
       "constants": [["d_v", 3], ...],             # dimension column = literal (lookup keys)
       "dim_filter": [PRED on D], "pre_filter": [PRED on the probe], "residual": [PRED, ...],
       "hints": [{"name": "SHUFFLE_HASH", "tables": ["D"]}      # product only: they (and the
                 | {"name": "LOOKUP", "options": {"table": "D", "shuffle": "true"}}],
       "cache": "NONE" | "PARTIAL" | "FULL", "cache_options": {"lookup.partial-cache...": ..}}
                                                   # cache: product only, changes no answer
      # Output: the probe's columns (not its proctime), then D's; every term is in ON.

    PRED (one of)
      {"cmp": "<", "left": "a_v", "right": "b_v"}   # column op column
      {"cmp": ">", "left": "a_v", "value": 3}       # column op literal
      {"is_null": "a_v"}, {"not_null": "a_v"}, {"or": [PRED, PRED]}, {"not": PRED}

Column names are unique across a case's tables (a_*, b_*, ...), so no query needs qualifiers.

Example:
    >>> t = table("A", [("a_k", "INT"), ("a_v", "INT")], rows=[["+I", [1, 2]]])
    >>> output_columns({"tables": [t]}, {"op": "scan", "table": "A"})
    [('a_k', 'INT'), ('a_v', 'INT')]
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

Case = dict[str, Any]
Query = dict[str, Any]
Pred = dict[str, Any]
Change = tuple[str, tuple[Any, ...]]

KINDS = ("+I", "-U", "+U", "-D")
JOIN_KINDS = ("inner", "left", "right", "full", "semi", "anti")
CMP_OPS = ("=", "<>", "<", "<=", ">", ">=")


def table(
    name: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]] = (),
    primary_key: Sequence[str] = (),
    rowtime: str | None = None,
    watermark_delay_s: int = 0,
    computed: Sequence[tuple[str, str, str]] = (),
    changelog: bool = False,
    files: Sequence[int] = (),
) -> dict[str, Any]:
    """A TABLE dict (see the module docstring).

    Example:
        >>> table("A", [("a_k", "INT")], rows=[["+I", [1]]])["primary_key"]
        []
    """
    return {
        "name": name,
        "columns": [list(c) for c in columns],
        "primary_key": list(primary_key),
        "rowtime": rowtime,
        "watermark_delay_s": watermark_delay_s,
        "computed": [list(c) for c in computed],
        "changelog": changelog,
        "rows": [[k, list(v)] for k, v in rows],
        "files": list(files),
    }


def table_of(case: Case, name: str) -> dict[str, Any]:
    """The TABLE named `name`.

    Example:
        >>> table_of({"tables": [{"name": "A"}]}, "A")
        {'name': 'A'}
    """
    for t in case["tables"]:
        if t["name"] == name:
            return t
    raise KeyError(f"case has no table {name!r}; tables: {[t['name'] for t in case['tables']]}")


def table_columns(t: dict[str, Any]) -> list[tuple[str, str]]:
    """Physical then computed columns of a TABLE, with types.

    Example:
        >>> table_columns(table("A", [("a_v", "INT")], computed=[("a_c", "a_v * 2", "INT")]))
        [('a_v', 'INT'), ('a_c', 'INT')]
    """
    return [(n, ty) for n, ty in t["columns"]] + [(n, ty) for n, _, ty in t["computed"]]


def output_columns(case: Case, q: Query) -> list[tuple[str, str]]:
    """The columns (name, type) a QUERY returns.

    Example:
        >>> output_columns({"tables": [table("A", [("a_k", "INT")])]},
        ...                {"op": "select", "input": {"op": "scan", "table": "A"},
        ...                 "columns": ["a_k"]})
        [('a_k', 'INT')]
    """
    op = q["op"]
    if op == "scan":
        return table_columns(table_of(case, q["table"]))
    if op == "where" or op == "in":
        return output_columns(case, q["input"])
    if op == "select":
        types = dict(output_columns(case, q["input"]))
        return [(c, types[c]) for c in q["columns"]]
    if op == "join":
        left = output_columns(case, q["left"])
        if q["kind"] in ("semi", "anti"):
            return left
        return left + output_columns(case, q["right"])
    if op in ("temporal", "lookup"):
        return output_columns(case, q["input"]) + table_columns(table_of(case, q["table"]))
    if op == "aggregate":  # the aggregate family (aggregate.py)
        from tests.conformance import aggregate

        return aggregate.output_columns(case, q, output_columns)
    if op in ("window_agg", "window_join", "window_topn"):  # the window family (window_family.py)
        from tests.conformance import window_family

        return window_family.output_columns(case, q, output_columns)
    raise ValueError(f"unknown query op {op!r}")


def scanned_tables(q: Query) -> list[str]:
    """Names of the tables a QUERY reads, left to right.

    Example:
        >>> scanned_tables({"op": "join", "left": {"op": "scan", "table": "A"},
        ...                 "right": {"op": "scan", "table": "B"}})
        ['A', 'B']
    """
    if q["op"] == "scan":
        return [q["table"]]
    if q["op"] in ("temporal", "lookup"):
        return [*scanned_tables(q["input"]), q["table"]]
    if q["op"] == "window_join":
        return list(q["tables"])
    out: list[str] = []
    for key in ("input", "left", "right", "sub"):
        if key in q:
            out += scanned_tables(q[key])
    return out


def walk_queries(q: Query) -> Iterator[Query]:
    """A QUERY and every query inside it, parents first.

    Example:
        >>> [s["op"] for s in walk_queries({"op": "where", "input": {"op": "scan"}})]
        ['where', 'scan']
    """
    yield q
    for key in ("input", "left", "right", "sub"):
        if key in q:
            yield from walk_queries(q[key])


# -- changelogs --------------------------------------------------------------------------------


def apply_changelog(changes: Iterable[tuple[str, Sequence[Any]]]) -> tuple[Counter, list[str]]:
    """The final multiset of rows after `changes`, and the problems found on the way: a -U or
    -D of a row that is not there (Flink never emits one), or an unknown kind.

    Example:
        >>> final, problems = apply_changelog([("+I", [1]), ("-D", [2])])
        >>> sorted(final.elements()), problems
        ([(1,)], ['change 2: -D of a row that is not there: (2,)'])
    """
    rows: Counter = Counter()
    problems: list[str] = []
    for i, (kind, values) in enumerate(changes, 1):
        row = tuple(hashable(v) for v in values)
        if kind in ("+I", "+U"):
            rows[row] += 1
        elif kind in ("-U", "-D"):
            if rows[row] <= 0:
                problems.append(f"change {i}: {kind} of a row that is not there: {row}")
            else:
                rows[row] -= 1
                if not rows[row]:
                    del rows[row]
        else:
            problems.append(f"change {i}: unknown row kind {kind!r}")
    return rows, problems


def hashable(v: Any) -> Any:
    """Lists (JSON arrays) become tuples, so that rows can be counted."""
    return tuple(hashable(x) for x in v) if isinstance(v, list) else v


def table_changes(t: dict[str, Any]) -> list[Change]:
    """A TABLE's rows as (kind, values) changes.

    Example:
        >>> table_changes(table("A", [("a", "INT")], rows=[["+I", [1]]]))
        [('+I', (1,))]
    """
    return [(k, tuple(v)) for k, v in t["rows"]]


def check_table_changelog(t: dict[str, Any]) -> list[str]:
    """Why a TABLE's rows are not a valid changelog (empty when they are): retractions of rows
    that exist only, -U directly followed by +U (of the same key, with a primary key), at most
    one row per key alive, and +I rows only in an insert-only table.

    Example:
        >>> check_table_changelog(table("A", [("a", "INT")], rows=[["-D", [1]]], changelog=True))
        ['change 1: -D of a row that is not there: (1,)']
    """
    changes = table_changes(t)
    if not t["changelog"]:
        bad = [k for k, _ in changes if k != "+I"]
        if bad:
            return [f"insert-only table {t['name']} has {bad[0]} rows"]
    _, problems = apply_changelog(changes)
    names = [n for n, _ in t["columns"]]
    # An insert-only table with a primary key and a rowtime is a versioned table: one row per
    # (key, time), several versions per key.
    versioned = t["rowtime"] and not t["changelog"]
    key_at = [] if versioned else [names.index(k) for k in t["primary_key"]]
    alive: Counter = Counter()
    for i, (kind, row) in enumerate(changes):
        if kind == "-U" and (i + 1 == len(changes) or changes[i + 1][0] != "+U"):
            problems.append(f"change {i + 1}: -U not followed by +U")
        if kind == "+U" and (i == 0 or changes[i - 1][0] != "-U"):
            problems.append(f"change {i + 1}: +U not preceded by -U")
        if key_at:
            key = tuple(row[j] for j in key_at)
            alive[key] += 1 if kind in ("+I", "+U") else -1
            if alive[key] > 1:
                problems.append(f"change {i + 1}: two rows alive for primary key {key}")
    return problems


# -- files -------------------------------------------------------------------------------------


def product_slices(t: dict[str, Any], feed: str) -> list[str]:
    """The TABLE's rows as JSON lines for this product's filesystem source, one text per file:
    one file, or (feeds "files" and "incremental") one per slice between the split points.

    Example:
        >>> product_slices(table("A", [("a", "INT")], rows=[["+I", [1]], ["+I", [2]]],
        ...                      files=[1]), "files")
        ['{"a": 1}\\n', '{"a": 2}\\n']
    """
    names = [n for n, _ in t["columns"]]
    rows = t["rows"]
    cuts = [0, *(t["files"] if feed in ("files", "incremental") else []), len(rows)]
    out = []
    for start, end in itertools.pairwise(cuts):
        lines = []
        for kind, values in rows[start:end]:
            record = dict(zip(names, values, strict=True))
            if t["changelog"]:
                record["op"] = kind
            lines.append(json.dumps(record) + "\n")
        out.append("".join(lines))
    return out


def write_product_files(t: dict[str, Any], directory: Path, feed: str) -> list[Path]:
    """The TABLE's rows as JSON lines for this product's filesystem source: one file, or (feed
    "files") one file per slice between the split points, with increasing modification times
    (the product orders the changes of a table by file time, then name).

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> [p.name for p in write_product_files(
        ...     table("A", [("a", "INT")], rows=[["+I", [1]], ["+I", [2]]], files=[1]), d, "files")]
        ['part-0000.json', 'part-0001.json']
    """
    import os
    import time

    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    base = time.time() - 3600
    for i, text in enumerate(product_slices(t, feed)):
        path = directory / f"part-{i:04d}.json"
        path.write_text(text)
        os.utime(path, (base + i, base + i))
        paths.append(path)
    return paths


def write_flink_file(t: dict[str, Any], directory: Path) -> Path:
    """The TABLE's rows as one file for Flink's filesystem source (one split: read in order).
    Changelog tables use Debezium JSON: +I -> c, -U +U -> one u (before, after), -D -> d.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> t = table("A", [("a", "INT")], changelog=True,
        ...           rows=[["+I", [1]], ["-U", [1]], ["+U", [2]]])
        >>> write_flink_file(t, d).read_text().splitlines()[1]
        '{"before": {"a": 1}, "after": {"a": 2}, "op": "u"}'
    """
    directory.mkdir(parents=True, exist_ok=True)
    names = [n for n, _ in t["columns"]]
    lines = []
    pending_before: dict[str, Any] | None = None
    for kind, values in t["rows"]:
        record = dict(zip(names, values, strict=True))
        if not t["changelog"]:
            lines.append(json.dumps(record))
        elif kind == "+I":
            lines.append(json.dumps({"before": None, "after": record, "op": "c"}))
        elif kind == "-D":
            lines.append(json.dumps({"before": record, "after": None, "op": "d"}))
        elif kind == "-U":
            pending_before = record
        elif kind == "+U":
            lines.append(json.dumps({"before": pending_before, "after": record, "op": "u"}))
            pending_before = None
    path = directory / "part-0.json"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def lookup_field(v: Any) -> str:
    """One value in a lookup file's line (see `write_lookup_file`).

    Example:
        >>> print(" ".join(lookup_field(v) for v in (None, True, 3, 0.5, "x")))
        \\N true 3 0.5 x
    """
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)  # a double's repr is its shortest exact text: Java parses it back
    text = str(v)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def write_lookup_file(t: dict[str, Any], directory: Path) -> Path:
    """A lookup TABLE's rows for Flink's conformance-lookup connector
    (tests/conformance/flink_lookup): one line per row, fields tab-separated, ``\\N`` for NULL.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> t = table("D", [("d_k", "INT"), ("d_v", "STRING")], rows=[["+I", [1, None]]])
        >>> write_lookup_file(t, d).read_text()
        '1\\t\\\\N\\n'
    """
    if any(kind != "+I" for kind, _ in t["rows"]):
        raise ValueError(f"lookup table {t['name']} is static: +I rows only")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "rows.tsv"
    path.write_text("".join("\t".join(map(lookup_field, v)) + "\n" for _, v in t["rows"]))
    return path


# -- JSON --------------------------------------------------------------------------------------


def dumps(case: Case) -> str:
    """A case as pretty JSON (one case per file in failures/).

    Example:
        >>> loads(dumps({"id": "1-1"}))
        {'id': '1-1'}
    """
    # Each row, column and key on one line: readable diffs, still JSON.
    compact: dict[str, str] = {}

    def token(value: Any) -> str:
        key = f"@@{len(compact)}@@"
        compact[key] = json.dumps(value)
        return key

    shown = copy.deepcopy(case)
    for t in shown.get("tables", []):
        for field in ("columns", "computed", "rows"):
            t[field] = [token(x) for x in t.get(field, [])]
        for field in ("primary_key", "files"):
            t[field] = token(t.get(field, []))
    text = json.dumps(shown, indent=1)
    return re.sub(r'"(@@\d+@@)"', lambda m: compact[m.group(1)], text)


def loads(text: str) -> Case:
    """A case from JSON text (see `dumps`)."""
    return json.loads(text)


def with_id(case: Case, case_id: str) -> Case:
    """A copy of `case` with another id.

    Example:
        >>> with_id({"id": "a"}, "b")
        {'id': 'b'}
    """
    out = copy.deepcopy(case)
    out["id"] = case_id
    return out
