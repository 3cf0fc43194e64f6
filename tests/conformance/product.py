"""A case on this product: its tables as filesystem JSON tables, its query through the
public Table API (``tableapi``), or, for a case with ``"via": "sql"``, its tables created
with Flink's DDL of the case and its query sent as Flink's SQL text (``flink_sql``: the
very string Flink runs), run on a Spark Connect server.

Example:
    >>> from tests.conformance.product import run_case  # doctest: +SKIP
    >>> run_case(case, remote="sc://localhost:15002", workdir=Path("/tmp/x"))  # doctest: +SKIP
    {'id': ..., 'columns': [...], 'changelog': [['+I', [...]], ...], 'materialized': [...], ...}
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import sqlite3
import time
import traceback
from pathlib import Path
from typing import Any

from tableapi import Schema, Table, TableDescriptor, TableEnvironment, call, col, lit, row
from tableapi.expressions import Expression
from tests.conformance.aggregate import build_aggregate
from tests.conformance.flink_sql import ddl, primary_keys_for_flink, query_sql
from tests.conformance.model import (
    Case,
    Pred,
    Query,
    output_columns,
    product_slices,
    walk_queries,
    write_product_files,
)
from tests.conformance.reference import COMPARISONS


def pred_expr(p: Pred) -> Expression:
    """A PRED as a tableapi expression.

    Example:
        >>> str(pred_expr({"cmp": "<", "left": "a", "value": 3}))  # doctest: +ELLIPSIS
        '...a...3...'
    """
    if "cmp" in p:
        right = col(p["right"]) if "right" in p else lit(p["value"])
        return COMPARISONS[p["cmp"]](col(p["left"]), right)
    if "is_null" in p:
        return col(p["is_null"]).is_null
    if "not_null" in p:
        return col(p["not_null"]).is_not_null
    if "or" in p:
        out = pred_expr(p["or"][0])
        for x in p["or"][1:]:
            out = out | pred_expr(x)
        return out
    if "not" in p:
        return ~pred_expr(p["not"])
    raise ValueError(f"unknown predicate {p}")


def _shift(column: str, seconds: int) -> Expression:
    if seconds < 0:
        return col(column) - lit(-seconds).seconds
    return col(column) + lit(seconds).seconds


def interval_expr(iv: dict[str, Any]) -> Expression:
    """An interval bound as the product's interval-join condition."""
    lo, hi = _shift(iv["base"], iv["lower_s"]), _shift(iv["base"], iv["upper_s"])
    if iv.get("strict"):
        return (col(iv["time"]) > lo) & (col(iv["time"]) < hi)
    return col(iv["time"]).between(lo, hi)


def _and(terms: list[Expression]) -> Expression | None:
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = out & t
    return out


def build_query(env: TableEnvironment, case: Case, q: Query) -> Table:
    """A QUERY as a tableapi Table (the case's tables registered in `env`)."""
    op = q["op"]
    if op == "scan":
        return env.from_path(q["table"])
    if op == "where":
        return build_query(env, case, q["input"]).where(pred_expr(q["pred"]))
    if op == "select":
        return build_query(env, case, q["input"]).select(*(col(c) for c in q["columns"]))
    if op == "join":
        left, right = build_query(env, case, q["left"]), build_query(env, case, q["right"])
        terms = [col(a) == col(b) for a, b in q["keys"]]
        if q.get("interval"):
            terms.append(interval_expr(q["interval"]))
        terms += [pred_expr(p) for p in q.get("residual", [])]
        cond = _and(terms)
        method = {
            "inner": left.join,
            "left": left.left_outer_join,
            "right": left.right_outer_join,
            "full": left.full_outer_join,
            "semi": left.semi_join,
            "anti": left.anti_join,
        }[q["kind"]]
        joined = method(right, cond) if cond is not None else method(right)
        for hint in q.get("hints", []):
            joined = joined.with_hint(
                hint["name"], *hint.get("tables", []), **hint.get("options", {})
            )
        return joined
    if op == "in":
        table = build_query(env, case, q["input"])
        sub = build_query(env, case, q["sub"]).select(*(col(c) for c in q["sub_columns"]))
        if len(q["columns"]) == 1:
            probe = col(q["columns"][0])
        else:
            probe = row(*(col(c) for c in q["columns"]))
        test = probe.in_(sub)
        return table.where(~test if q.get("negated") else test)
    if op == "temporal":
        left = build_query(env, case, q["input"])
        terms = [col(a) == col(b) for a, b in q["keys"]]
        terms += [pred_expr(p) for p in q.get("residual", [])]
        cond = _and(terms)
        if q["style"] == "function":
            fn = call(q["function"], col(q["as_of"]))
            if q["kind"] == "inner":
                return left.join_lateral(fn, cond)
            return left.left_outer_join_lateral(fn, cond)
        return left.temporal_join(
            env.from_path(q["table"]), cond, as_of=col(q["as_of"]), how=q["kind"]
        )
    if op == "lookup":
        probe = build_query(env, case, q["input"])
        terms = [col(a) == col(b) for a, b in q["keys"]]
        terms += [col(c) == lit(v) for c, v in q.get("constants", [])]
        for field in ("dim_filter", "pre_filter", "residual"):
            terms += [pred_expr(p) for p in q.get(field, [])]
        cond = _and(terms)
        assert cond is not None, "a lookup join has at least one key"
        joined = probe.temporal_join(
            env.from_path(q["table"]), cond, as_of=col(q["as_of"]), how=q["kind"]
        )
        for hint in q.get("hints", []):
            joined = joined.with_hint(
                hint["name"], *hint.get("tables", []), **hint.get("options", {})
            )
        # the probe's proctime is not an output (its values differ run to run)
        return joined.select(*(col(c) for c, _ in output_columns(case, q)))
    if op == "aggregate":  # the aggregate family (aggregate.py)
        return build_aggregate(build_query(env, case, q["input"]), q)
    if op in ("window_agg", "window_join", "window_topn"):
        raise ValueError('window cases run as SQL text ("via": "sql"): windows have no Table API')
    raise ValueError(f"unknown query op {op!r}")


_SQLITE_TYPES = {"INT": "INTEGER", "BIGINT": "INTEGER", "DOUBLE": "REAL", "BOOLEAN": "INTEGER"}


def write_sqlite_table(t: dict[str, Any], path: Path) -> str:
    """A lookup TABLE's rows as a SQLite table in the file `path` (booleans are 0/1 there);
    returns the SQL table's name.

    Example:
        >>> import tempfile
        >>> from tests.conformance.model import table
        >>> d = Path(tempfile.mkdtemp())
        >>> write_sqlite_table(table("D", [("d_k", "INT")], rows=[["+I", [1]]]), d / "d.db")
        'dim_d'
    """
    name = f"dim_{t['name'].lower()}"
    columns = ", ".join(f'"{n}" {_SQLITE_TYPES.get(ty, "TEXT")}' for n, ty in t["columns"])
    with sqlite3.connect(path) as conn:
        conn.execute(f'CREATE TABLE "{name}" ({columns})')
        marks = ", ".join("?" for _ in t["columns"])
        conn.executemany(f'INSERT INTO "{name}" VALUES ({marks})', [v for _, v in t["rows"]])
    conn.close()
    path.chmod(0o666)  # the server's workers may run as another user
    return name


def lookup_options(case: Case) -> dict[str, dict[str, str]]:
    """The cache options of each lookup table, from the lookup queries that read it.

    Example:
        >>> lookup_options({"query": {"op": "lookup", "table": "D", "cache": "FULL",
        ...                           "input": {"op": "scan", "table": "A"}}})
        {'D': {'lookup.cache': 'FULL'}}
    """
    return {
        q["table"]: {"lookup.cache": q.get("cache", "NONE")} | q.get("cache_options", {})
        for q in walk_queries(case["query"])
        if q["op"] == "lookup"
    }


def register_tables(env: TableEnvironment, case: Case, workdir: Path) -> None:
    """Each TABLE as a filesystem JSON table under `workdir` (a changelog table with
    ``changelog.op-column = op``), and each temporal table function. Bounded with its files
    written, except with feed "incremental": watched (``source.monitor-interval``), empty."""
    incremental = case["feed"] == "incremental"
    cache_options = lookup_options(case)
    for t in case["tables"]:
        builder = Schema.new_builder()
        for name, ty in t["columns"]:
            builder.column(name, ty + (" NOT NULL" if name in t["primary_key"] else ""))
        for name, expr, _ in t["computed"]:
            builder.column_by_expression(name, expr)
        if t.get("proctime"):
            builder.column_by_expression(t["proctime"], "PROCTIME()")
        if t.get("lookup"):  # a jdbc table in a SQLite file, static
            if t["primary_key"]:
                builder.primary_key(*t["primary_key"])
            db = workdir / f"{t['name']}.db"
            lookup = (
                TableDescriptor.for_connector("jdbc")
                .schema(builder.build())
                .option("url", f"jdbc:sqlite:{db}")
                .option("table-name", write_sqlite_table(t, db))
            )
            for key, value in cache_options.get(t["name"], {}).items():
                lookup.option(key, value)
            env.create_temporary_table(t["name"], lookup.build())
            continue
        if t["rowtime"]:
            delay = t["watermark_delay_s"]
            builder.watermark(t["rowtime"], f"{t['rowtime']} - INTERVAL '{delay}' SECOND")
        if t["primary_key"]:
            builder.primary_key(*t["primary_key"])
        directory = workdir / t["name"]
        if incremental:
            directory.mkdir(parents=True)
        else:
            write_product_files(t, directory, case["feed"])
        descriptor = (
            TableDescriptor.for_connector("filesystem")
            .schema(builder.build())
            .option("path", str(directory))
            .option("format", "json")
        )
        if t["changelog"]:
            descriptor.option("changelog.op-column", "op")
        if incremental:
            descriptor.option("source.monitor-interval", "100 ms")
        env.create_temporary_table(t["name"], descriptor.build())
    for fn in case.get("functions", []):
        table = env.from_path(fn["table"])
        env.create_temporary_function(
            fn["name"], table.create_temporal_table_function(col(fn["time"]), col(fn["key"]))
        )


def register_tables_sql(env: TableEnvironment, case: Case, workdir: Path) -> None:
    """Each TABLE with ``CREATE TABLE``: Flink's DDL of the case (``flink_sql.ddl``, its
    primary keys included), only the WITH options pointed at the product's files or SQLite
    database (the same tables ``register_tables`` builds); temporal table functions with
    the Table API (SQL has no DDL for them, Flink's runner registers them the same way)."""
    incremental = case["feed"] == "incremental"
    cache_options = lookup_options(case)
    keys = primary_keys_for_flink(case)
    for t in case["tables"]:
        if t.get("lookup"):
            db = workdir / f"{t['name']}.db"
            options = {"connector": "jdbc", "url": f"jdbc:sqlite:{db}",
                       "table-name": write_sqlite_table(t, db)}  # fmt: skip
            options.update(cache_options.get(t["name"], {}))
        else:
            directory = workdir / t["name"]
            if incremental:
                directory.mkdir(parents=True)
            else:
                write_product_files(t, directory, case["feed"])
            options = {"connector": "filesystem", "path": str(directory), "format": "json"}
            if t["changelog"]:
                options["changelog.op-column"] = "op"
            if incremental:
                options["source.monitor-interval"] = "100 ms"
        with_options = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
        env.execute_sql(ddl(t, "", keys[t["name"]], with_options=with_options))
    for fn in case.get("functions", []):
        table = env.from_path(fn["table"])
        env.create_temporary_function(
            fn["name"], table.create_temporal_table_function(col(fn["time"]), col(fn["key"]))
        )


def encode(v: Any) -> Any:
    """A product result value as JSON (tagged as the Flink runner tags them).

    Example:
        >>> encode(dt.datetime(2024, 1, 1, 0, 0, 1))
        {'$ts': '2024-01-01 00:00:01.000000'}
    """
    if v is None:
        return None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):  # numpy scalars
        v = v.item()
    # (a NaN stays a NaN: in collect() it is one; in materialize()'s pandas frame a NULL of a
    # numeric column is one too, which compare's materialize() check allows for)
    if type(v).__name__ == "NaTType":  # pandas' NULL timestamp (a datetime subclass)
        return None
    if isinstance(v, dt.datetime):
        if getattr(v, "tzinfo", None) is not None:
            v = v.replace(tzinfo=None)
        return {"$ts": v.strftime("%Y-%m-%d %H:%M:%S.%f")}
    if isinstance(v, decimal.Decimal):
        return {"$dec": str(v)}
    return v


def feed_incrementally(case: Case, workdir: Path, result: Any) -> None:
    """Append the tables' files one at a time (the tables in turn), each processed before the
    next is written: every file is a micro-batch of its own."""
    tables = [t for t in case["tables"] if not t.get("lookup")]  # lookup tables: SQLite
    slices = {t["name"]: product_slices(t, "incremental") for t in tables}
    step = 0
    while any(slices.values()):
        for t in tables:
            if not slices[t["name"]]:
                continue
            text = slices[t["name"]].pop(0)
            directory = workdir / t["name"]
            # Spark skips files whose names start with "."; the rename makes the file appear
            # whole.
            tmp = directory / f".part-{step:04d}.tmp"
            tmp.write_text(text)
            os.replace(tmp, directory / f"part-{step:04d}.json")
            step += 1
            result.process_all_available()


def run_case(case: Case, remote: str, workdir: Path) -> dict[str, Any]:
    """Run a case on the server at `remote`: ``collect()`` rows with their kinds and
    ``materialize()``; errors are reported in the result, never raised."""
    started = time.monotonic()
    out: dict[str, Any] = {
        "id": case["id"],
        "columns": [],
        "types": [],
        "changelog": [],
        "materialized": None,
        "error": None,
        "materialize_error": None,
    }
    env = None
    result = None
    try:
        env = TableEnvironment.create(mode=case["mode"], remote=remote)
        if case.get("via") == "sql":  # the query as Flink's SQL text, the same string
            for key, value in case.get("options", {}).items():
                env.execute_sql(f"SET '{key}' = '{value}'")
            register_tables_sql(env, case, workdir)
            out["sql"] = query_sql(case, case["query"])
            table = env.sql_query(out["sql"])
        else:
            for key, value in case.get("options", {}).items():
                env.config.set(key, value)
            register_tables(env, case, workdir)
            table = build_query(env, case, case["query"])
        out["columns"] = list(table.column_names)
        result = table.execute()
        # the result schema in Flink's types (compare.normalize_type reads the spelling)
        out["types"] = [str(f.type) for f in result.row_type]
        if case["feed"] == "incremental":
            feed_incrementally(case, workdir, result)
        out["changelog"] = [[r.kind.short_string, [encode(v) for v in r]] for r in result.collect()]
        try:
            frame = result.materialize()
            out["materialized"] = [[encode(v) for v in row] for row in frame.itertuples(False)]
        except Exception as e:
            out["materialize_error"] = f"{type(e).__name__}: {str(e)[:800]}"
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {_short(e)}"
        out["traceback"] = traceback.format_exc()[-4000:]
    finally:
        if result is not None:
            try:
                result.cancel()
            except Exception:
                pass
        if env is not None:
            try:
                for query in env.spark.streams.active:
                    query.stop()
            except Exception:
                pass
            env.close()
    out["seconds"] = round(time.monotonic() - started, 3)
    return out


def _short(e: Exception) -> str:
    lines = [ln for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("at ")]
    return " | ".join(lines[:6])[:1500]
