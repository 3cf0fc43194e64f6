"""The conformance suite's ``window`` family (issue 33): window aggregation over the window
TVFs (TUMBLE, HOP, CUMULATE with offsets, SESSION with and without PARTITION BY), legacy group
windows (``GROUP BY TUMBLE(ts, ..)`` with ``TUMBLE_START`` ...), cascaded windows (a legacy
group window over a window aggregation's rowtime), window joins of two TVFs (INNER, LEFT,
RIGHT, FULL, SEMI/ANTI as ``[NOT] EXISTS``), late rows, filters and projections over the
result. Window SQL has no Table API form in this product (docs/windows.md), so every case of
the family runs as SQL text on both sides (``"via": "sql"``).

Two QUERY ops, and what each side makes of them, kept in this module (``model``,
``flink_sql``, ``reference`` and ``generator`` call in with one line each)::

    WINDOW = {"kind": "tumble|hop|cumulate|session", "time": "a_rt", "size": 10,
              "step": 5 | None,              # HOP's slide, CUMULATE's step
              "offset": 0,                    # TUMBLE/HOP/CUMULATE (TVFs only)
              "partition": ["a_k"],           # SESSION TVF's PARTITION BY ([] : none)
              "named": False}                 # named arguments (DATA => TABLE A, ...)
    {"op": "window_agg", "input": QUERY,      # a scan for a TVF; any query for a legacy window
     "window": WINDOW, "legacy": False, "pre": PRED | None,   # TVF: WHERE over the TVF's rows
     "bounds": ["ws", "we", "wt"],            # window_start/_end/_time (or TUMBLE_START ...),
     "prefix": "w",                           # output as w_ws, w_we, w_wt
     "until": None | 60,                      # time < 00:01:00 (below: the end row's filter)
     "group": ["a_k"], "aggs": [AGG, ...]}    # AGG: aggregate.py's calls
    {"op": "window_join", "kind": "inner|left|right|full|semi|anti", "window": WINDOW,
     "tables": ["A", "B"], "times": ["a_rt", "b_rt"], "keys": [["a_k", "b_k"]],
     "residual": [PRED, ...], "left_pred": PRED | None, "right_pred": PRED | None}
     # output: A's columns, a_ws, a_we, then (not semi/anti) B's columns, b_ws, b_we

Standard library only (Flink's runner imports ``flink_sql``, which imports this module).

Example:
    >>> w = {"kind": "hop", "time": "a_rt", "size": 6, "step": 2, "offset": 1,
    ...      "partition": [], "named": False}
    >>> tvf_sql(w, "A")  # doctest: +NORMALIZE_WHITESPACE
    "HOP(TABLE `A`, DESCRIPTOR(`a_rt`), INTERVAL '2' SECOND, INTERVAL '6' SECOND,
    INTERVAL '1' SECOND)"
    >>> assign(w, 5000)
    [(1000, 7000), (3000, 9000), (5000, 11000)]
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

Case = dict[str, Any]
Query = dict[str, Any]
Columns = Callable[[Case, Query], list[tuple[str, str]]]

#: Behind flags until their operators land (issue 33: others build them now): window
#: aggregation over a changelog input, and window Top-N over a window aggregation. Off, the
#: generator draws neither (their draws below are kept ready).
CHANGELOG_INPUT = False
WINDOW_TOPN = False
#: Cascaded windows (a legacy group window over a window aggregation's ``window_time``): off,
#: the product returns no row for them (README, difference 22: repro
#: ``window-cascade-no-rows``); on once it runs them.
CASCADE = False

_BOUNDS = {"ws": "window_start", "we": "window_end", "wt": "window_time"}
_LEGACY_AUX = {"ws": "START", "we": "END", "wt": "ROWTIME"}


def _iv(seconds: int) -> str:
    return f"INTERVAL '{seconds}' SECOND" if seconds >= 0 else f"INTERVAL '-{-seconds}' SECOND"


def tvf_sql(w: dict[str, Any], table: str) -> str:
    """The window TVF over ``table`` (positional or named arguments)."""
    kind = w["kind"]
    data = f"TABLE `{table}`"
    if kind == "session" and w["partition"]:
        data += " PARTITION BY (" + ", ".join(f"`{c}`" for c in w["partition"]) + ")"
    args: list[tuple[str, str]] = [("DATA", data), ("TIMECOL", f"DESCRIPTOR(`{w['time']}`)")]
    if kind == "tumble":
        args.append(("SIZE", _iv(w["size"])))
    elif kind == "hop":
        args += [("SLIDE", _iv(w["step"])), ("SIZE", _iv(w["size"]))]
    elif kind == "cumulate":
        args += [("STEP", _iv(w["step"])), ("SIZE", _iv(w["size"]))]
    else:
        args.append(("GAP", _iv(w["size"])))
    if kind != "session" and w.get("offset"):
        args.append(("OFFSET", _iv(w["offset"])))
    text = ", ".join(f"{n} => {v}" if w.get("named") else v for n, v in args)
    return f"{kind.upper()}({text})"


def legacy_window_sql(w: dict[str, Any]) -> str:
    """A legacy group window's call: ``TUMBLE(ts, size)``, ``HOP(ts, slide, size)``,
    ``SESSION(ts, gap)``.

    Example:
        >>> legacy_window_sql({"kind": "hop", "time": "a_rt", "size": 4, "step": 2})
        "HOP(`a_rt`, INTERVAL '2' SECOND, INTERVAL '4' SECOND)"
    """
    sizes = [w["step"], w["size"]] if w["kind"] == "hop" else [w["size"]]
    return f"{w['kind'].upper()}(`{w['time']}`, {', '.join(_iv(s) for s in sizes)})"


def bound_name(q: Query, b: str) -> str:
    return f"{q['prefix']}_{b}"


def output_columns(case: Case, q: Query, columns: Columns) -> list[tuple[str, str]]:
    """A window op's columns (``columns``: model.output_columns, for its inputs)."""
    from tests.conformance.aggregate import agg_type
    from tests.conformance.model import table_columns, table_of

    if q["op"] == "window_topn":
        return [*columns(case, q["input"]), ("rn", "BIGINT")]
    if q["op"] == "window_join":
        left = table_columns(table_of(case, q["tables"][0]))
        a, b = q["tables"][0].lower(), q["tables"][1].lower()
        out = [*left, (f"{a}_ws", "TIMESTAMP(3)"), (f"{a}_we", "TIMESTAMP(3)")]
        if q["kind"] in ("semi", "anti"):
            return out
        right = table_columns(table_of(case, q["tables"][1]))
        return out + right + [(f"{b}_ws", "TIMESTAMP(3)"), (f"{b}_we", "TIMESTAMP(3)")]
    types = dict(columns(case, q["input"]))
    out = [(bound_name(q, b), "TIMESTAMP(3)") for b in q["bounds"]]
    out += [(c, types[c]) for c in q["group"]]
    out += [(a["name"], agg_type(a["fn"], types.get(a["arg"]))) for a in q["aggs"]]
    return out


def window_agg_sql(q: Query, input_sql: Callable[[Query], str], alias: Callable[[], str]) -> str:
    """A window aggregation as Flink SQL (``input_sql`` of a query, ``alias`` a new name)."""
    from tests.conformance.aggregate import _call_sql
    from tests.conformance.flink_sql import pred_sql

    w = q["window"]
    keys = [f"`{c}`" for c in q["group"]]
    calls = [f"{_call_sql(a)} AS `{a['name']}`" for a in q["aggs"]]
    if q["legacy"]:
        call = legacy_window_sql(w)
        args = call[call.index("(") :]
        kind = w["kind"].upper()
        bounds = [f"{kind}_{_LEGACY_AUX[b]}{args} AS `{bound_name(q, b)}`" for b in q["bounds"]]
        select = ", ".join(bounds + keys + calls)
        source = f"({input_sql(q['input'])}) AS {alias()}"
        if q.get("until"):
            source = f"(SELECT * FROM {source} WHERE {until_sql(q)}) AS {alias()}"
        return f"SELECT {select} FROM {source} GROUP BY {', '.join([call, *keys])}"
    bounds = [f"{_BOUNDS[b]} AS `{bound_name(q, b)}`" for b in q["bounds"]]
    select = ", ".join(bounds + keys + calls)
    terms = ([pred_sql(q["pre"])] if q.get("pre") else []) + (
        [until_sql(q)] if q.get("until") else []
    )
    where = f" WHERE {' AND '.join(terms)}" if terms else ""
    group = ["window_start", "window_end"] + (["window_time"] if "wt" in q["bounds"] else [])
    source = f"TABLE({tvf_sql(w, q['input']['table'])})"
    return f"SELECT {select} FROM {source}{where} GROUP BY {', '.join(group + keys)}"


def until_sql(q: Query) -> str:
    """The filter that drops the end row (``END_ROW``): ``time < TIMESTAMP '...'``.

    Example:
        >>> until_sql({"window": {"time": "a_rt"}, "until": 60})
        "(`a_rt` < TIMESTAMP '2024-01-01 00:01:00.000')"
    """
    return f"(`{q['window']['time']}` < TIMESTAMP '{_text(q['until'] * 1000)}')"


def window_join_sql(case: Case, q: Query) -> str:
    """A window join of two TVFs as Flink SQL (semi/anti: ``[NOT] EXISTS``)."""
    from tests.conformance.flink_sql import pred_sql
    from tests.conformance.model import table_columns, table_of

    w = q["window"]

    def side(name: str, time: str, pred: Any) -> str:
        where = f" WHERE {pred_sql(pred)}" if pred else ""
        return f"(SELECT * FROM TABLE({tvf_sql({**w, 'time': time}, name)}){where})"

    a, b = q["tables"][0].lower(), q["tables"][1].lower()
    left = side(q["tables"][0], q["times"][0], q.get("left_pred"))
    right = side(q["tables"][1], q["times"][1], q.get("right_pred"))
    terms = ["L.window_start = R.window_start", "L.window_end = R.window_end"]
    terms += [f"L.`{x}` = R.`{y}`" for x, y in q["keys"]]
    terms += [pred_sql(p) for p in q.get("residual", [])]
    cond = " AND ".join(terms)
    cols = [f"L.`{c}`" for c, _ in table_columns(table_of(case, q["tables"][0]))]
    cols += [f"L.window_start AS `{a}_ws`", f"L.window_end AS `{a}_we`"]
    if q["kind"] in ("semi", "anti"):
        neg = "NOT " if q["kind"] == "anti" else ""
        return (
            f"SELECT {', '.join(cols)} FROM {left} L WHERE {neg}EXISTS "
            f"(SELECT 1 FROM {right} R WHERE {cond})"
        )
    cols += [f"R.`{c}`" for c, _ in table_columns(table_of(case, q["tables"][1]))]
    cols += [f"R.window_start AS `{b}_ws`", f"R.window_end AS `{b}_we`"]
    join = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}
    return f"SELECT {', '.join(cols)} FROM {left} L {join[q['kind']]} {right} R ON {cond}"


# -- the windows, in plain Python (reference.py) -------------------------------------------------


def assign(w: dict[str, Any], t: int) -> list[tuple[int, int]]:
    """The windows (start, end) in ms of a row at ``t`` ms (not SESSION: ``sessions``).
    Flink's assigners: ``start = t - (t - offset + size) % size`` (a positive modulo)."""
    size, offset = w["size"] * 1000, (w.get("offset") or 0) * 1000
    if w["kind"] == "tumble":
        start = t - (t - offset) % size
        return [(start, start + size)]
    step = w["step"] * 1000
    if w["kind"] == "hop":
        last = t - (t - offset) % step
        return [(s, s + size) for s in range(last - size + step, last + 1, step)]
    start = t - (t - offset) % size  # cumulate: the window's first step containing t
    first = start + ((t - start) // step + 1) * step
    return [(start, end) for end in range(first, start + size + 1, step)]


def sessions(times: Sequence[int], gap_s: int) -> list[tuple[int, int]]:
    """Per row time (ms), its session (start, end): rows whose windows ``[t, t + gap)``
    touch merge (bounds included, as Flink's ``TimeWindow.intersects``)."""
    gap = gap_s * 1000
    order = sorted(set(times))
    spans: list[list[int]] = []
    for t in order:
        if spans and t <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], t + gap)
        else:
            spans.append([t, t + gap])
    out = []
    for t in times:
        span = next(s for s in spans if s[0] <= t <= s[1])
        out.append((span[0], span[1]))
    return out


def _ms(text: str) -> int:
    from tests.conformance.late_rows import millis

    return millis(text)


def _text(ms: int) -> str:
    """A time ``ms`` after 2024-01-01 (before it too: a HOP window may start there) as the
    JSON text of event times.

    Example:
        >>> _text(-3000), _text(61_500)
        ('2023-12-31 23:59:57.000', '2024-01-01 00:01:01.500')
    """
    import datetime as dt

    t = dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def windowed(w: dict[str, Any], rows: Sequence[dict], partition: Sequence[str]) -> list[dict]:
    """Each row once per window, with ``__ws``/``__we`` in ms (rows with a NULL time none)."""
    out = []
    if w["kind"] == "session":
        groups: dict[tuple, list[dict]] = {}
        for r in rows:
            if r[w["time"]] is not None:
                groups.setdefault(tuple(r[c] for c in partition), []).append(r)
        for members in groups.values():
            spans = sessions([_ms(r[w["time"]]) for r in members], w["size"])
            out += [{**r, "__ws": s, "__we": e} for r, (s, e) in zip(members, spans, strict=True)]
        return out
    for r in rows:
        if r[w["time"]] is not None:
            out += [{**r, "__ws": s, "__we": e} for s, e in assign(w, _ms(r[w["time"]]))]
    return out


def reference_rows(run: Any, q: Query) -> list[dict]:
    """A window op's final rows (``run``: reference._Run over the final state). Late rows
    are not dropped here: the plain-Python answer is the one without late rows."""
    from tests.conformance.reference import aggregate, eq, truth

    if q["op"] == "window_topn":
        return topn_rows(run.rows(q["input"]), q)
    if q["op"] == "window_agg":
        rows = run.rows(q["input"])
        if q.get("until"):
            limit = q["until"] * 1000
            rows = [
                r
                for r in rows
                if r[q["window"]["time"]] is None or _ms(r[q["window"]["time"]]) < limit
            ]
        if q.get("pre"):  # before the windows: a filtered row makes no session (Flink's Calc)
            rows = [r for r in rows if truth(q["pre"], r)]
        partition = q["window"]["partition"] if not q["legacy"] else q["group"]
        rows = windowed(q["window"], rows, partition)
        agg = {**q, "group": ["__ws", "__we", *q["group"]]}
        out = []
        for r in aggregate(agg, rows, "streaming"):
            ws, we = r.pop("__ws"), r.pop("__we")
            bounds = {"ws": ws, "we": we, "wt": we - 1}
            out.append({bound_name(q, b): _text(bounds[b]) for b in q["bounds"]} | r)
        return out
    w = q["window"]
    a, b = q["tables"][0].lower(), q["tables"][1].lower()

    def side(name: str, time: str, pred: Any, p: str) -> list[dict]:
        rows = windowed({**w, "time": time}, run.scan(name), [])
        rows = [r for r in rows if not pred or truth(pred, r)]
        return [
            {k: v for k, v in r.items() if not k.startswith("__")}
            | {f"{p}_ws": _text(r["__ws"]), f"{p}_we": _text(r["__we"])}
            for r in rows
        ]

    left = side(q["tables"][0], q["times"][0], q.get("left_pred"), a)
    right = side(q["tables"][1], q["times"][1], q.get("right_pred"), b)
    null_left = dict.fromkeys(left[0] if left else [])
    null_right = dict.fromkeys(right[0] if right else [])

    def matches(r: dict) -> bool:
        return (
            r[f"{a}_ws"] == r[f"{b}_ws"]
            and r[f"{a}_we"] == r[f"{b}_we"]
            and all(eq(r[x], r[y]) for x, y in q["keys"])
            and all(truth(p, r) for p in q.get("residual", []))
        )

    out, matched_right = [], set()
    for lr in left:
        found = False
        for i, rr in enumerate(right):
            if matches(lr | rr):
                found = True
                matched_right.add(i)
                run.pairs[id(q)] += 1
                if q["kind"] not in ("semi", "anti"):
                    out.append(lr | rr)
        if (q["kind"] == "semi" and found) or (q["kind"] == "anti" and not found):
            out.append(lr)
        if not found and q["kind"] in ("left", "full"):
            out.append(lr | _nulls(run, q, "right", null_right))
    if q["kind"] in ("right", "full"):
        for i, rr in enumerate(right):
            if i not in matched_right:
                out.append(_nulls(run, q, "left", null_left) | rr)
    return out


def _nulls(run: Any, q: Query, side: str, known: dict) -> dict:
    from tests.conformance.model import table_columns, table_of

    name = q["tables"][0 if side == "left" else 1]
    p = name.lower()
    names = [c for c, _ in table_columns(table_of(run.case, name))]
    return dict.fromkeys([*names, f"{p}_ws", f"{p}_we"]) | known


# -- the generator -----------------------------------------------------------------------------


def _window(rng: random.Random, time: str, kinds: Sequence[str]) -> dict[str, Any]:
    """A window over ``time``: sizes that divide (HOP/CUMULATE: size a multiple of the step,
    which the product's and Flink's slicing windows need), sometimes an offset."""
    kind = rng.choice(kinds)
    w: dict[str, Any] = {"kind": kind, "time": time, "size": 0, "step": None, "offset": 0,
                         "partition": [], "named": rng.random() < 0.2}  # fmt: skip
    if kind == "tumble":
        w["size"] = rng.choice([2, 3, 5, 10])
    elif kind in ("hop", "cumulate"):
        w["step"] = rng.choice([1, 2, 3, 5])
        w["size"] = w["step"] * rng.choice([2, 3, 4])
    else:
        w["size"] = rng.choice([1, 2, 3, 5])
    if kind != "session" and rng.random() < 0.35:
        w["offset"] = rng.choice([1, 2, -1, w["size"] + 1])
        if kind == "tumble" and w["offset"] >= w["size"]:  # Flink 2.3 refuses it (HOP and
            w["offset"] %= w["size"]  # CUMULATE take it): the same windows modulo the size
    if w["offset"]:  # Flink 2.3 fails to parse `OFFSET => ...` (OFFSET is a keyword)
        w["named"] = False
    return w


def _window_table(
    rng: random.Random, case: Case, name: str, key_type: str, values: int, changelog: bool = False
) -> dict:
    from tests.conformance import generator as g

    spec = g.TableSpec(name, key_type, values=values, rowtime=True, max_rows=8,
                       changelog=changelog, partners=g._keys_of(case["tables"]))  # fmt: skip
    return g.gen_table(rng, spec, VALUE_TYPES)


#: Value columns: numbers to add up, strings for MIN/MAX, BOOLEAN for COUNT.
VALUE_TYPES = ("INT", "BIGINT", "DOUBLE", "DECIMAL(10, 2)", "STRING", "BOOLEAN")


def gen_window(rng: random.Random, seed: int, n: int) -> Case:
    """A window aggregation (TVF, legacy or cascaded) over one table with a rowtime, or a
    window join of two; filters and projections over the result; late rows (one table)."""
    from tests.conformance import generator as g

    case = g._base(rng, "window", seed, n)
    case["via"] = "sql"
    key_type = rng.choice(["INT", "STRING"])
    shapes = ["tvf", "tvf", "tvf", "legacy", "join", "join"] + (["cascade"] if CASCADE else [])
    shape = rng.choice(shapes)
    if shape == "join":
        for name in ("A", "B"):
            case["tables"].append(_window_table(rng, case, name, key_type, rng.randint(1, 2)))
        case["query"] = _join(rng, case)
        # no late row: Flink's window join sees the smaller of its inputs' watermarks, and
        # how its two sources interleave is not defined (late_rows.py), so a late row's fate
        # would be too; batch mode runs the join of the two TVFs' rows (the same rows)
        case["mode"] = "batch" if rng.random() < 0.25 else "streaming"
        case["feed"] = "once" if case["mode"] == "batch" else rng.choice(["once", "files"])
    else:
        # behind CHANGELOG_INPUT (off: no draw is made, so the cases stay the same)
        changelog = CHANGELOG_INPUT and shape == "tvf" and rng.random() < 0.3
        values = rng.randint(1, 3)
        case["tables"].append(_window_table(rng, case, "A", key_type, values, changelog))
        q = _agg(rng, case, g._scan("A"), shape, "w")
        if WINDOW_TOPN and shape == "tvf" and rng.random() < 0.3:
            q = _topn(rng, case, q)
        if shape == "cascade":  # a legacy window over the first one's rowtime
            if "wt" not in q["bounds"]:
                q["bounds"] = [*q["bounds"], "wt"]
            outer = _window(rng, "w_wt", ("tumble", "hop", "session"))
            outer["offset"] = 0
            group = [c for c in q["group"] if rng.random() < 0.5]
            cols = g.output_columns(case, q)
            aggs = _aggs(rng, [c for c in cols if c[0] not in ("w_wt", *group)], "y")
            q = {"op": "window_agg", "input": q, "window": outer, "legacy": True, "pre": None,
                 "bounds": _bounds(rng), "prefix": "v", "group": group, "aggs": aggs}  # fmt: skip
        case["query"] = q
        if not changelog and rng.random() < 0.5:
            case = g._maybe_late(rng, case, 1.0)
        if changelog:  # a changelog's order within a file counts; no late row drawn
            case["feed"] = rng.choice(["once", "files"])
        elif late(case) or rng.random() < 0.1:
            _row_by_row(case)
        elif rng.random() < 0.3:
            case["mode"] = "batch"
        else:
            case["feed"] = rng.choice(["once", "files"])
    case["query"] = _over(rng, case, case["query"])
    return case


#: The end row's time (s): after every row the generator draws (times stay under 40 s).
END_ROW = 60


def _row_by_row(case: Case) -> None:
    """Feed the product the table's rows so that each late row meets Flink's watermark: a
    late row (behind the watermark of the rows before it: Flink reads the table as one file,
    in order) is a file, a micro-batch, of its own (feed "incremental"), so the product's
    watermark there, the largest time of the files before it minus the delay, is Flink's.
    Other rows may share a file: the product's watermark at them is at most Flink's, and they
    are late on neither side. A lone late row, not only a first one: a SESSION row behind the
    watermark joins an open session, which rows read after it must not have made yet. A
    watched table never ends, so a last file holds the end row, at ``END_ROW`` s, whose
    watermark fires every window (Flink's end of input does the same there); the query
    filters it out below the aggregation (``until``), so it counts on neither side."""
    from tests.conformance.late_rows import late_positions

    t = case["tables"][0]
    cuts = {c for i in late_positions(t) for c in (i, i + 1)}
    at = [n for n, _ in t["columns"]].index(t["rowtime"])
    end = [None] * len(t["columns"])
    end[0] = t["rows"][0][1][0] if t["rows"] else None
    end[at] = _text(END_ROW * 1000)
    cuts.add(len(t["rows"]))
    t["rows"].append(["+I", end])
    t["files"] = sorted(c for c in cuts if 0 < c < len(t["rows"]))
    case["feed"] = "incremental"
    for q in _window_aggs(case["query"]):
        if q["input"]["op"] != "window_agg":  # the first level reads the table
            q["until"] = END_ROW


def _window_aggs(q: Query) -> list[Query]:
    from tests.conformance.model import walk_queries

    return [x for x in walk_queries(q) if x["op"] == "window_agg"]


def late(case: Case) -> bool:
    """Has a table of the case a row behind its watermark (``late_rows``)?"""
    from tests.conformance.late_rows import late_positions

    return any(late_positions(t) for t in case["tables"] if t["rowtime"])


def _bounds(rng: random.Random) -> list[str]:
    return rng.choice([["ws", "we"], ["ws", "we"], ["we"], ["ws", "we", "wt"], ["ws"]])


def _aggs(rng: random.Random, columns: list[tuple[str, str]], prefix: str) -> list[dict]:
    from tests.conformance.aggregate import _aggs as aggs

    return aggs(rng, [c for c in columns if not c[1].startswith("TIMESTAMP")], prefix)


def _agg(rng: random.Random, case: Case, scan: Query, shape: str, prefix: str) -> Query:
    from tests.conformance import generator as g

    t = case["tables"][0]
    legacy = shape == "legacy" or (shape == "cascade" and rng.random() < 0.3)
    kinds = ("tumble", "hop", "session") if legacy else ("tumble", "hop", "cumulate", "session")
    w = _window(rng, t["rowtime"], kinds)
    cols = [(c, ty) for c, ty in g.output_columns(case, scan) if c != t["rowtime"]]
    keys = [c for c, ty in cols if ty not in ("DOUBLE",)]
    group = rng.sample(keys, min(len(keys), rng.choice([0, 1, 1, 2])))
    if w["kind"] == "session" and not legacy:  # Flink: group keys = the PARTITION BY keys
        w["partition"] = list(group)
    if legacy:
        w["offset"] = 0
    source = g._filtered(rng, case, scan, 0.3) if legacy else scan
    pre = None
    if not legacy and rng.random() < 0.3:
        pre = g._filtered(rng, case, scan, 1.0).get("pred")
    aggs = _aggs(rng, [c for c in cols if c[0] not in group] or cols, "x")
    return {"op": "window_agg", "input": source, "window": w, "legacy": legacy, "pre": pre,
            "bounds": _bounds(rng), "prefix": prefix, "group": group, "aggs": aggs}  # fmt: skip


def _join(rng: random.Random, case: Case) -> Query:
    from tests.conformance import generator as g

    w = _window(rng, case["tables"][0]["rowtime"], ("tumble", "hop", "cumulate"))
    lc = [c for c in g.output_columns(case, g._scan("A")) if c[0] != "a_rt"]
    rc = [c for c in g.output_columns(case, g._scan("B")) if c[0] != "b_rt"]
    keys = [["a_k", "b_k"]] if rng.random() < 0.9 else []
    residual = []
    if rng.random() < 0.25:
        p = g.residual(rng, lc, rc)
        if p:
            residual.append(p)

    def pred(cols: list) -> Any:
        if rng.random() >= 0.2:
            return None
        c, ty = rng.choice([x for x in cols if g.category(x[1]) in ("num", "str")] or [cols[0]])
        return g._compare_literal(rng, c, ty, (">", "<>", "<="))

    return {"op": "window_join", "kind": rng.choice(["inner", "left", "right", "full", "semi",
            "anti"]), "window": w, "tables": ["A", "B"], "times": ["a_rt", "b_rt"],
            "keys": keys, "residual": residual, "left_pred": pred(lc),
            "right_pred": pred(rc)}  # fmt: skip


def _topn(rng: random.Random, case: Case, q: Query) -> Query:
    """Window Top-N over a window aggregation (behind WINDOW_TOPN): the first ``n`` rows of
    each window by some aggregate columns, then every other column (no tie: rows equal in
    every ordered column are equal rows, whichever is kept)."""
    from tests.conformance import generator as g

    q = {**q, "bounds": ["ws", "we", *[b for b in q["bounds"] if b == "wt"]]}
    cols = [c for c, _ in g.output_columns(case, q) if c not in ("w_ws", "w_we", "w_wt")]
    aggs = [a["name"] for a in q["aggs"]]
    first = rng.sample(aggs, rng.randint(1, len(aggs)))
    order = [[c, rng.choice(["ASC", "DESC"])] for c in first + [c for c in cols if c not in first]]
    return {"op": "window_topn", "input": q, "order": order, "n": rng.randint(1, 3)}


def window_topn_sql(q: Query, input_sql: str, alias: Callable[[], str]) -> str:
    """Window Top-N as Flink SQL: ROW_NUMBER() over the window bounds, ``rn <= n``."""
    inner = q["input"]
    part = f"`{bound_name(inner, 'ws')}`, `{bound_name(inner, 'we')}`"
    order = ", ".join(f"`{c}` {d}" for c, d in q["order"])
    ranked = (
        f"SELECT *, ROW_NUMBER() OVER (PARTITION BY {part} ORDER BY {order}) AS `rn` "
        f"FROM ({input_sql}) AS {alias()}"
    )
    return f"SELECT * FROM ({ranked}) AS {alias()} WHERE `rn` <= {q['n']}"


def topn_rows(rows: list[dict], q: Query) -> list[dict]:
    """The plain-Python window Top-N: per window, sorted (Flink: ASC NULLS FIRST, DESC NULLS
    LAST), the first ``n`` with their ``rn``."""
    import functools

    inner = q["input"]
    ws, we = bound_name(inner, "ws"), bound_name(inner, "we")

    def compare(x: dict, y: dict) -> int:
        for c, d in q["order"]:
            a, b = x[c], y[c]
            if a == b:
                continue
            if a is None or b is None:  # NULL first ascending, last descending
                return -1 if (a is None) == (d == "ASC") else 1
            return (-1 if a < b else 1) * (1 if d == "ASC" else -1)
        return 0

    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r[ws], r[we]), []).append(r)
    out = []
    for members in groups.values():
        ranked = sorted(members, key=functools.cmp_to_key(compare))[: q["n"]]
        out += [{**r, "rn": i} for i, r in enumerate(ranked, 1)]
    return out


def _over(rng: random.Random, case: Case, q: Query) -> Query:
    """Sometimes a filter (on a key or an aggregate) and a projection over the result."""
    from tests.conformance import generator as g

    if rng.random() < 0.25:
        cols = [(c, t) for c, t in g.output_columns(case, q) if g.category(t) in ("num", "str")]
        if cols:
            c, ty = rng.choice(cols)
            pred: dict = (
                {"not_null": c}
                if ty == "STRING" or rng.random() < 0.2
                else {"cmp": rng.choice([">", ">=", "<"]), "left": c, "value": rng.randint(0, 3)}
            )
            q = {"op": "where", "input": q, "pred": pred}
    return g._projected(rng, case, q, 0.25)
