"""The JVM window aggregate (``WindowAggregate.java``, run by ``Harness.java``: the calls and
event-time timeouts of flatMapGroupsWithState, no Spark) emits what the plain Python model
of Flink's slicing window aggregation (``tests/models/window_aggregate.py``; its session
model for SESSION) emits, key by key, batch by batch: TUMBLE (with offsets), HOP, CUMULATE
and SESSION windows (sessions merging, late rows merging into a session that has not fired),
every aggregate function and DISTINCT form, NULL keys and values, rows without a time, late
rows (behind the batch's watermark: dropped, or counted in the windows of theirs that have
not fired), and the end of input (a watermark far ahead fires every window). Two-phase
(TUMBLE, HOP, CUMULATE): each batch's rows spread over one to three tasks, each folded by the
local phase (``LocalGroupAggregate`` over the union grouped by the key and the slice, as the
client's compiler lays it out) into partials that the operator merges: the same rows. A
changelog input (``retractions``; one phase and two): inserts, deletes and updates of rows it
inserted, a window whose rows all retracted emitting nothing.
``TIER_AGREEMENT_CASES`` sets the number of random cases per window kind (the suite's
default 60; 150 by hand); all run in one JVM.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import random
from collections import defaultdict
from typing import Any

import pytest

from server_ext.aggregate_spec import AggCall
from server_ext.jvm import wire
from server_ext.window_spec import WindowAggregateSpec
from tests.models.window_aggregate import window_model
from tests.unit.server_ext.jvm_harness import json_type, rows_json, run_cases, to_json

CASES = int(os.environ.get("TIER_AGREEMENT_CASES", "60"))
INPUT = (("k", "BIGINT"), ("i", "INT"), ("s", "STRING"), ("d", "DOUBLE"))
VALUES: list[list[Any]] = [[1, 2, None], [-3, 0, 2, 5, None], ["a", "b", None], [0.5, -2.25, None]]
CALLS = [
    ("count_star", None, False, "BIGINT"),
    ("count", 1, False, "BIGINT"),
    ("sum", 1, False, "INT"),
    ("sum", 3, False, "DOUBLE"),
    ("avg", 1, False, "INT"),
    ("min", 2, False, "STRING"),
    ("max", 1, False, "INT"),
    ("count", 2, True, "BIGINT"),
    ("sum", 1, True, "INT"),
]
WINDOWS: dict[str, list[tuple[int, int | None, int]]] = {  # kind -> (size, step, offset), ms
    "tumble": [(1000, None, 0), (3000, None, 0), (2000, None, 700), (2000, None, -300)],
    "hop": [(3000, 1000, 0), (2000, 1000, 0), (4000, 2000, 500)],
    "cumulate": [(3000, 1000, 0), (4000, 2000, 0), (3000, 1000, -200)],
    "session": [(1000, None, 0), (2500, None, 0)],  # size: the gap
}
BASE = 1_700_000_000_000  # event times near 2023-11-14
END_OF_INPUT = BASE + 10**9
_EPOCH = dt.datetime(1970, 1, 1)


def scenario(rng: random.Random, kind: str) -> dict[str, Any]:
    """A random spec and batches ``(watermark, [(key, row, time)])``: each batch's watermark
    is the previous batches' largest time minus a delay, as Spark's; now and then a row far
    behind it (late), and an end of input."""
    size, step, offset = rng.choice(WINDOWS[kind])
    calls = rng.sample(CALLS, rng.randint(1, 4))
    keyed = rng.random() < 0.8
    columns = ["window_start", "window_end", *(["key0"] if keyed else [])]
    columns += [f"agg{i}" for i in range(len(calls))]
    rng.shuffle(columns)
    if rng.random() < 0.3:
        columns.append("window_time")
    spec = WindowAggregateSpec(
        input=INPUT if keyed else INPUT[1:],
        key_count=1 if keyed else 0,
        aggs=tuple(
            AggCall(f, None if a is None else a - (not keyed), d, t) for f, a, d, t in calls
        ),
        window=kind,
        size_ms=size,
        step_ms=step,
        offset_ms=offset,
        columns=tuple(columns),
    )
    batches: list[tuple[int, list]] = []
    top, watermark = None, 0  # Spark's watermark before any row
    for _ in range(rng.randint(1, 6)):
        rows: list[tuple[Any, tuple, int | None]] = []
        for _ in range(rng.randint(0, 8)):
            row = tuple(rng.choice(v) for v in VALUES)
            ts: int | None = BASE + rng.randint(0, 9000)
            if watermark and rng.random() < 0.3:
                ts = watermark - rng.randint(-500, 3000)  # around or behind the watermark
            if rng.random() < 0.05:
                ts = None
            rows.append((row[0] if keyed else 0, row if keyed else row[1:], ts))
        batches.append((watermark, rows))
        times = [t for _, _, t in rows if t is not None]
        if times:
            top = max([*times, *([top] if top is not None else [])])
        if top is not None:
            watermark = max(watermark, top - rng.choice([0, 500, 2000]))
    if rng.random() < 0.8:
        batches.append((END_OF_INPUT, []))
    return {"spec": spec, "batches": batches}


def model_run(case: dict[str, Any]) -> list[dict]:
    spec = case["spec"]
    model = window_model(spec)
    out = []
    for watermark, rows in case["batches"]:
        emitted: dict = defaultdict(list)
        for r in model.batch(watermark, rows):
            key = r[1 + spec.columns.index("key0")] if spec.key_count else 0
            emitted[json.dumps(to_json([key]))] += rows_json([timestamps(spec, r)])
        out.append(dict(emitted))
    return out


def timestamps(spec: WindowAggregateSpec, row: tuple) -> tuple:
    """The model's window columns (epoch ms) as the timestamps the operator emits."""
    values = list(row)
    for i, c in enumerate(spec.columns):
        if c.startswith("window_"):
            values[1 + i] = _EPOCH + dt.timedelta(milliseconds=values[1 + i])
    return tuple(values)


def jvm_case(case: dict[str, Any]) -> dict[str, Any]:
    spec = case["spec"]

    def f(name: str, t: Any) -> dict:
        return {"name": name, "type": t, "nullable": True, "metadata": {}}

    row = {"type": "struct", "fields": [f(n, json_type(t)) for n, t in spec.input]}
    key_type = "long" if spec.key_count else "integer"
    fields = [f("__k0", key_type), f("__side", "byte"), f("__in0", row), f("__t", "long")]
    output = [{"name": "__kind", "type": "byte", "nullable": False, "metadata": {}}]
    output += [f(n, json_type(t)) for n, t in spec.output_fields()]
    batches = []
    for watermark, rows in case["batches"]:
        rows_json_ = [to_json([k, 0, list(r), t]) for k, r, t in rows]
        batches.append({"now": 0, "watermark": watermark, "rows": rows_json_})
    out = json.dumps({"type": "struct", "fields": output})
    return {
        "operator": "window_aggregate",
        "spec": wire.operator_spec_json(spec, ["__k0"], out),
        "input": json.dumps({"type": "struct", "fields": fields}),
        "key_count": 1,
        "batches": batches,
    }


def jvm_by_key(result: dict[str, Any]) -> list[dict]:
    return [{json.dumps(k): rows for k, rows in batch if rows} for batch in result["batches"]]


KINDS = list(WINDOWS)


SLICED = ["tumble", "hop", "cumulate"]
_KIND_BYTES = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


def changelog_scenario(rng: random.Random, kind: str) -> dict[str, Any]:
    """``scenario``'s spec over a changelog input: each batch inserts rows, deletes or updates
    (-U, +U) rows it inserted before (their time as they had it), the rows (key, row, time,
    kind) in changelog order."""
    case = scenario(rng, kind)
    spec = dataclasses.replace(case["spec"], retractions=True)
    keyed = spec.key_count == 1
    live: list[tuple[Any, tuple, int | None]] = []
    batches = []
    for watermark, inserts in case["batches"]:
        rows: list[tuple] = []
        for k, r, t in inserts:
            if live and rng.random() < 0.4:
                old = live.pop(rng.randrange(len(live)))
                if rng.random() < 0.5:
                    rows.append((*old, "-D"))
                    continue
                rows.append((*old, "-U"))
                k = old[0]
                r = (k, *r[1:]) if keyed else r
                rows.append((k, r, t, "+U"))
            else:
                rows.append((k, r, t, "+I"))
            live.append((k, r, t))
        batches.append((watermark, rows))
    return {"spec": spec, "batches": batches}


def changelog_case(case: dict[str, Any], two_phase: bool, rng: random.Random) -> dict[str, Any]:
    """A changelog case's JVM case: the union with ``__kind`` and ``__seq`` (one phase), or the
    local phase's union with ``__kind`` (partials need no order), over tasks."""
    spec = dataclasses.replace(case["spec"], two_phase=two_phase)
    plain = jvm_case({"spec": spec, "batches": [(w, []) for w, _ in case["batches"]]})
    k, side, row, t = json.loads(plain["input"])["fields"]
    kind = {"name": "__kind", "type": "byte", "nullable": True, "metadata": {}}
    seq = {"name": "__seq", "type": "string", "nullable": True, "metadata": {}}
    size, n = spec.slice_ms, 0
    batches = []
    for watermark, rows in case["batches"]:
        wire_rows = []
        for key, r, ts, op in rows:
            n += 1
            if two_phase:
                last = None if ts is None else ts - (ts - spec.offset_ms) % size + size - 1
                wire_rows.append(to_json([key, last, 0, _KIND_BYTES[op], list(r)]))
            else:
                wire_rows.append(to_json([key, 0, _KIND_BYTES[op], f"{n:020d}", list(r), ts]))
        if two_phase:
            tasks: list[list] = [[] for _ in range(rng.randint(1, 3))]
            for w in wire_rows:
                rng.choice(tasks).append(w)
            batches.append({"now": 0, "watermark": watermark, "tasks": tasks})
        else:
            batches.append({"now": 0, "watermark": watermark, "rows": wire_rows})
    fields = [k, t, side, kind, row] if two_phase else [k, side, kind, seq, row, t]
    extra = {"local": True, "local_key_count": 2} if two_phase else {}
    return dict(
        plain, input=json.dumps({"type": "struct", "fields": fields}), batches=batches, **extra
    )


@pytest.mark.parametrize("kind", SLICED)
def test_window_aggregate_over_a_changelog_emits_the_models_rows(kind: str) -> None:
    """Retractions leave their slices (a window retracted to empty emits nothing), in one
    phase and in two (the local phase folds them with their signs)."""
    rng = random.Random(f"changelog-{kind}")
    cases = [changelog_scenario(random.Random(f"cl-{kind}-{i}"), kind) for i in range(CASES)]
    jvm = [changelog_case(c, two, rng) for c in cases for two in (False, True)]
    results = iter(run_cases(jvm))
    for i, case in enumerate(cases):
        want = model_run(case)
        for phases in (1, 2):
            got = next(results)
            assert "error" not in got, f"case {i} ({phases} phases): {got['error']}\n{case}"
            assert jvm_by_key(got) == want, f"case {i} ({phases} phases) differs:\n{case}"
            if case["batches"][-1][0] == END_OF_INPUT:
                assert got["state_keys"] == 0, f"case {i} keeps state:\n{case}"
    assert sum(len(b) for w in map(model_run, cases) for b in w) > CASES // 2


def two_phase_case(case: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``case``'s JVM case in two phases: its spec with ``two_phase``, each batch's rows
    spread over tasks, each row as the local phase's union has it (``__k0``, ``__t`` as its
    slice's last millisecond, ``__side``, ``__in0``: ``local_window_aggregate`` in
    ``tableapi/compiler/operators.py``)."""
    spec = dataclasses.replace(case["spec"], two_phase=True)
    plain = jvm_case(dict(case, spec=spec))
    fields = json.loads(plain["input"])["fields"]
    local = [fields[0], fields[3], fields[1], fields[2]]  # __k0, __t, __side, __in0
    size = spec.slice_ms

    def last_ms(t: int | None) -> int | None:
        return None if t is None else t - (t - spec.offset_ms) % size + size - 1

    batches = []
    for watermark, rows in case["batches"]:
        tasks: list[list] = [[] for _ in range(rng.randint(1, 3))]
        for k, r, t in rows:
            rng.choice(tasks).append(to_json([k, last_ms(t), 0, list(r)]))
        batches.append({"now": 0, "watermark": watermark, "tasks": tasks})
    return dict(
        plain,
        input=json.dumps({"type": "struct", "fields": local}),
        local=True,
        local_key_count=2,
        batches=batches,
    )


@pytest.fixture(scope="module")
def two_phase_runs() -> dict[str, tuple[list[dict], list[list[dict]], list[dict]]]:
    rng = random.Random("two-phase")
    cases = {k: [scenario(random.Random(f"win2-{k}-{i}"), k) for i in range(CASES)] for k in SLICED}
    jvm = [two_phase_case(c, rng) for k in SLICED for c in cases[k]]
    results = iter(run_cases(jvm))
    return {
        k: (cases[k], [model_run(c) for c in cases[k]], [next(results) for _ in cases[k]])
        for k in SLICED
    }


@pytest.mark.parametrize("kind", SLICED)
def test_two_phase_window_aggregate_emits_the_one_phase_rows(
    kind: str, two_phase_runs: dict[str, tuple[list[dict], list[list[dict]], list[dict]]]
) -> None:
    """Partials folded per task, key and slice, merged into the operator's slices: the model's
    rows (late partials dropped or kept as late rows are)."""
    cases, expected, results = two_phase_runs[kind]
    for i, (case, want, got) in enumerate(zip(cases, expected, results, strict=True)):
        assert "error" not in got, f"case {i}: {got['error']}\n{case}"
        assert jvm_by_key(got) == want, f"case {i} differs:\n{case}"
        if case["batches"][-1][0] == END_OF_INPUT:
            assert got["state_keys"] == 0, f"case {i} keeps state:\n{case}"
    assert sum(len(b) for w in expected for b in w) > CASES // 2


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[dict], list[list[dict]], list[dict]]]:
    cases = {k: [scenario(random.Random(f"win-{k}-{i}"), k) for i in range(CASES)] for k in KINDS}
    results = iter(run_cases([jvm_case(c) for k in KINDS for c in cases[k]]))
    return {
        k: (cases[k], [model_run(c) for c in cases[k]], [next(results) for _ in cases[k]])
        for k in KINDS
    }


@pytest.mark.parametrize("kind", KINDS)
def test_jvm_window_aggregate_emits_flinks_rows(
    kind: str, runs: dict[str, tuple[list[dict], list[list[dict]], list[dict]]]
) -> None:
    cases, expected, results = runs[kind]
    for i, (case, want, got) in enumerate(zip(cases, expected, results, strict=True)):
        assert "error" not in got, f"case {i}: {got['error']}\n{case}"
        assert jvm_by_key(got) == want, f"case {i} differs:\n{case}"
        if case["batches"][-1][0] == END_OF_INPUT:  # every window fired: no state is left
            assert got["state_keys"] == 0, f"case {i} keeps state:\n{case}"
    emitted = [r for w in expected for batch in w for rows in batch.values() for r in rows]
    assert len(emitted) > CASES  # the cases emit enough to compare
    assert {r[0] for r in emitted} == {"+I"}
    # late rows were drawn, and some windows got rows after others of theirs had fired
    assert sum(1 for c in cases if len(c["batches"]) > 2) > CASES // 3


def test_bad_specs_fail_at_plan_time_naming_the_problem() -> None:
    """The operator's factory checks the spec against the union and the output schema."""
    case = scenario(random.Random(1), "tumble")
    good = jvm_case(case)
    no_time = dict(good, input=good["input"].replace('"__t"', '"__x"'))
    wrong_output = dict(good, spec=good["spec"].replace('"columns": [', '"columns": ["agg0", ', 1))
    ok, missing, extra = run_cases([good, no_time, wrong_output])
    assert "error" not in ok
    assert "needs the union's __t column" in missing["error"]
    assert "the output schema has" in extra["error"]


def test_processing_time_windows_follow_the_clock() -> None:
    """A proctime window aggregate assigns rows by the batch's processing time (their time
    column unread) and fires a window once the clock reaches its end - 1: in the key's next
    call, by its rows or by its processing-time timeout."""
    spec = WindowAggregateSpec(
        (("k", "BIGINT"), ("i", "INT")), 1,
        (AggCall("count_star"), AggCall("sum", 1, False, "INT")), "tumble", 1000,
        columns=("key0", "window_start", "window_end", "agg0", "agg1"), proctime=True,
    )  # fmt: skip
    case = jvm_case({"spec": spec, "batches": [(0, [(1, (1, 2), None), (1, (1, 3), 5)])]})
    row = case["batches"][0]["rows"][0]
    case["batches"] = [
        {"now": 500, "watermark": 0, "rows": [row, row]},  # [0, 1000)
        {"now": 1200, "watermark": 0, "rows": [row]},  # [1000, 2000); [0, 1000) fires
        {"now": 1500, "watermark": 0, "rows": []},
        {"now": 2500, "watermark": 0, "rows": []},  # the timeout fires [1000, 2000)
    ]
    (got,) = run_cases([case])
    assert "error" not in got, got
    batches = jvm_by_key(got)
    key = json.dumps([1])

    def window(start: int, end: int, n: int, s: int) -> list:
        stamps = [_EPOCH + dt.timedelta(milliseconds=x) for x in (start, end)]
        return rows_json([("+I", 1, *stamps, n, s)])

    assert batches == [{}, {key: window(0, 1000, 2, 4)}, {}, {key: window(1000, 2000, 1, 2)}]
    assert got["state_keys"] == 0
