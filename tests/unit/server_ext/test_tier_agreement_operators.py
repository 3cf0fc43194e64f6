"""The JVM temporal, interval and multi-way join operators agree with their models: on random
changelogs the JVM functions (``Harness.java``, flatMapGroupsWithState's calls and timeouts,
no Spark) emit what the Python models of Flink's operators (``tests/models``) emit on
TwsTester (input rows with the batch's watermark, then the timers it fires), key by key,
batch by batch, in order.

Kinds: event-time temporal joins (inner, left: versions, deletions, late probe rows, null
keys, residuals), processing-time temporal joins, interval joins (inner, left, right, full:
bounds of every shape incl. empty windows, rows without a time, late rows, null and
null-safe keys), multi-way joins (inner/left chains over three inputs, a residual, state
TTL). ``TIER_AGREEMENT_CASES`` sets the number of random changelogs per kind (default 150;
the issue's bar is 500); all cases run in one JVM.
"""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from typing import Any

import pytest

from server_ext.joins.interval_spec import IntervalSpec
from server_ext.joins.multi_spec import MultiJoinSpec, input_column
from server_ext.joins.temporal_spec import TemporalSpec
from server_ext.jvm import wire
from tests.unit.server_ext.harness import JKCUK, KINDS, side
from tests.unit.server_ext.interval_harness import IntervalHarness
from tests.unit.server_ext.jvm_harness import json_type, rows_json, run_cases, to_json
from tests.unit.server_ext.temporal_harness import TemporalHarness, fmt
from tests.unit.server_ext.test_multi_join import MultiHarness

CASES = int(os.environ.get("TIER_AGREEMENT_CASES", "150"))
L2 = (("lk", "BIGINT"), ("lv", "BIGINT"))
R2 = (("rk", "BIGINT"), ("rw", "BIGINT"))
KEYS = [1, 1, 1, 2, None]
VALUES = [1, 2, 3, None]
RESIDUALS: list[tuple | None] = [
    None,
    None,
    ("call", "<", ("col", "l", 1), ("col", "r", 1)),
    (
        "call",
        "or",
        ("call", "is_null", ("col", "l", 1)),
        ("call", ">", ("col", "r", 1), ("lit", 1)),
    ),
]
MULTI_FIELDS = (
    (("k0", "BIGINT"), ("a", "STRING")),
    (("k1", "BIGINT"), ("b", "STRING")),
    (("k2", "BIGINT"), ("c", "STRING")),
)
K1_EQ_K0 = ("call", "=", ("col", "l", 0), ("col", "r", 0))
K2_EQ_K1 = ("call", "=", ("col", "l", 2), ("col", "r", 0))
K2_EQ_K0_A_NE_C = ("call", "and", ("call", "=", ("col", "l", 0), ("col", "r", 0)),
                   ("call", "<>", ("col", "l", 1), ("col", "r", 1)))  # fmt: skip
KIND_CASES = [
    "temporal-event-inner",
    "temporal-event-left",
    "temporal-processing-inner",
    "temporal-processing-left",
    "interval-inner",
    "interval-left",
    "interval-right",
    "interval-full",
    "multi",
]


# -- the union as the operator and the model see it -----------------------------------------------


def union_schema(structs: list[tuple[str, tuple]], time: bool) -> str:
    """The tagged union's StructType JSON: ``__k0`` BIGINT, ``__side``, ``__kind``, ``__seq``,
    the struct columns, and ``__t`` BIGINT when ``time``."""

    def f(name: str, t: Any) -> dict:
        return {"name": name, "type": t, "nullable": True, "metadata": {}}

    fields = [f("__k0", "long"), f("__side", "byte"), f("__kind", "byte"), f("__seq", "long")]
    for name, row in structs:
        inner = [f(n, json_type(t)) for n, t in row]
        fields.append(f(name, {"type": "struct", "fields": inner}))
    if time:
        fields.append(f("__t", "long"))
    return json.dumps({"type": "struct", "fields": fields})


def output_schema(fields: tuple) -> dict:
    out = [{"name": "__kind", "type": "byte", "nullable": False, "metadata": {}}]
    out += [{"name": n, "type": json_type(t), "nullable": True, "metadata": {}} for n, t in fields]
    return {"type": "struct", "fields": out}


def spec_json(spec: Any) -> str:
    return wire.operator_spec_json(spec, ["__k0"], json.dumps(output_schema(spec.output_fields())))


# -- temporal joins --------------------------------------------------------------------------------


def temporal_scenario(rng: random.Random, kind: str, time: str) -> dict[str, Any]:
    spec = TemporalSpec(
        kind, time, side(fields=L2), side(JKCUK, R2, (0,)), residual=rng.choice(RESIDUALS)
    )
    batches, watermark, t0 = [], 0, 1000
    for _ in range(rng.randint(1, 5)):
        changes = []
        for _ in range(rng.randint(0, 12)):
            t = t0 + rng.randint(-300, 600)
            if rng.random() < 0.5:
                changes.append(("L", "+I", t, (rng.choice(KEYS), rng.choice(VALUES))))
            else:
                op = rng.choice(["+I", "+U", "+U", "-U", "-D"])
                changes.append(("R", op, t, (rng.choice(KEYS), rng.choice(VALUES))))
        batches.append((t0, watermark, changes))
        watermark = max(watermark, t0 + rng.choice([-200, 0, 100, 400]))
        t0 += rng.choice([0, 200, 500])
    batches.append((t0, watermark + rng.choice([0, 10_000]), []))  # often the end of input
    return {"spec": spec, "batches": batches}


def temporal_model(case: dict[str, Any]) -> list[dict]:
    spec = case["spec"]
    h = TemporalHarness(spec)
    out = []
    for _, watermark, changes in case["batches"]:
        if spec.time == "event" and watermark > h.tester._currentWatermarkMs:
            h.watermark_before_timers(watermark)
        rows = h.process(*changes)
        if spec.time == "event":
            rows += [fmt(r) for r in h.tester._handleExpiredTimers()]
        out.append(by_key(rows, lambda r: r[1]))
    return out


def temporal_jvm(case: dict[str, Any]) -> dict[str, Any]:
    spec = case["spec"]
    schema = union_schema([("__l", L2), ("__r", R2)], time=True)
    seq, batches = 0, []
    for now, watermark, changes in case["batches"]:
        rows = []
        for name, kind, t, row in changes:
            seq += 1
            left = name == "L"
            rows.append([row[0], 0 if left else 1, KINDS[kind], seq,
                         list(row) if left else None, None if left else list(row), t])  # fmt: skip
        batch: dict[str, Any] = {"now": now, "rows": [to_json(r) for r in rows]}
        if getattr(spec, "time", "event") == "event":  # (interval joins: event time too)
            batch["watermark"] = watermark
        batches.append(batch)
    return {"operator": "temporal", "spec": spec_json(spec), "input": schema, "key_count": 1,
            "batches": batches}  # fmt: skip


# -- interval joins --------------------------------------------------------------------------------

BOUNDS = [(-100, 50), (0, 0), (-300, -100), (100, 300), (20, -20)]  # the last: an empty window


def interval_scenario(rng: random.Random, kind: str) -> dict[str, Any]:
    lower, upper = rng.choice(BOUNDS)
    spec = IntervalSpec(
        kind, side(fields=L2), side(fields=R2), lower, upper,
        null_safe=(rng.random() < 0.3,), residual=rng.choice(RESIDUALS),
    )  # fmt: skip
    batches, watermark, t0 = [], 0, 1000
    for _ in range(rng.randint(1, 5)):
        changes = []
        for _ in range(rng.randint(0, 8)):
            t = None if rng.random() < 0.05 else t0 + rng.randint(-300, 600)
            name = rng.choice("LR")
            changes.append((name, rng.choice(["+I", "+I", "+U"]), t,
                            (rng.choice(KEYS), rng.choice(VALUES))))  # fmt: skip
        batches.append((t0, watermark, changes))
        watermark = max(watermark, t0 + rng.choice([-200, 0, 100, 400, 900]))
        t0 += rng.choice([0, 200, 500])
    batches.append((t0, watermark + rng.choice([0, 10_000]), []))  # often the end of input
    return {"spec": spec, "batches": batches}


def interval_model(case: dict[str, Any]) -> list[dict]:
    h = IntervalHarness(case["spec"])
    return [
        by_key(h.batch(watermark, *changes), _interval_key)
        for _, watermark, changes in case["batches"]
    ]


def _interval_key(row: tuple) -> Any:
    """The left row's key, or the right row's for a right row padded with nulls."""
    return row[1] if any(v is not None for v in row[1:3]) else row[3]


def interval_jvm(case: dict[str, Any]) -> dict[str, Any]:
    return {**temporal_jvm(case), "operator": "interval"}  # the same union


# -- multi-way joins -------------------------------------------------------------------------------


def multi_scenario(rng: random.Random) -> dict[str, Any]:
    kinds = (rng.choice(["inner", "left"]), rng.choice(["inner", "left"]))
    second = rng.choice([K2_EQ_K1, K2_EQ_K1, K2_EQ_K0_A_NE_C])
    ttl = rng.choice([None, None, 1000])
    spec = MultiJoinSpec(MULTI_FIELDS, kinds, (K1_EQ_K0, second), ttl)
    present: list[list[tuple]] = [[], [], []]
    batches, now = [], 1000
    for _ in range(rng.randint(1, 5)):
        changes = []
        for _ in range(rng.randint(0, 8)):
            i = rng.randint(0, 2)
            if present[i] and rng.random() < 0.35:
                row = rng.choice(present[i])
                present[i].remove(row)
                changes.append((i, rng.choice(["-D", "-U"]), row))
            else:
                row = (rng.choice(KEYS), rng.choice(["x", "y", None]))
                present[i].append(row)
                changes.append((i, rng.choice(["+I", "+I", "+U"]), row))
        batches.append((now, changes))
        now += rng.choice([1, 400, 1500])
    return {"spec": spec, "batches": batches}


def multi_model(case: dict[str, Any]) -> list[dict]:
    spec = case["spec"]
    h = MultiHarness(spec)
    out = []
    for now, changes in case["batches"]:
        if spec.ttl_ms is not None:
            h.advance(now)
        out.append(by_key(h.process(*changes), lambda r: r[1]))
    return out


def multi_jvm(case: dict[str, Any]) -> dict[str, Any]:
    spec = case["spec"]
    structs = [(input_column(i), f) for i, f in enumerate(spec.inputs)]
    schema = union_schema(structs, time=False)
    seq, batches = 0, []
    for now, changes in case["batches"]:
        rows = []
        for i, kind, row in changes:
            seq += 1
            ins = [list(row) if j == i else None for j in range(3)]
            rows.append(to_json([row[0], i, KINDS[kind], seq, *ins]))
        batches.append({"now": now, "rows": rows})
    return {"operator": "multi", "spec": spec_json(spec), "input": schema, "key_count": 1,
            "batches": batches}  # fmt: skip


# -- comparing ---------------------------------------------------------------------------------


def by_key(rows: list[tuple], key: Any) -> dict:
    """A batch's output rows by join key (each key's rows in emitted order), in JSON form."""
    out: dict = defaultdict(list)
    for r in rows:
        out[json.dumps(to_json(key(r)))].extend(rows_json([r]))
    return dict(out)


def jvm_by_key(result: dict[str, Any]) -> list[dict]:
    return [{json.dumps(keyed[0][0]): keyed[1] for keyed in batch} for batch in result["batches"]]


def build(kind: str, rng: random.Random) -> dict[str, Any]:
    if kind.startswith("temporal"):
        _, time, join = kind.split("-")
        return temporal_scenario(rng, join, time)
    if kind.startswith("interval"):
        return interval_scenario(rng, kind.split("-")[1])
    return multi_scenario(rng)


def model_run(kind: str, case: dict[str, Any]) -> list[dict]:
    if kind.startswith("temporal"):
        return temporal_model(case)
    if kind.startswith("interval"):
        return interval_model(case)
    return multi_model(case)


def jvm_case(kind: str, case: dict[str, Any]) -> dict[str, Any]:
    if kind.startswith("temporal"):
        return temporal_jvm(case)
    if kind.startswith("interval"):
        return interval_jvm(case)
    return multi_jvm(case)


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[dict], list[list[dict]], list[dict]]]:
    cases = {k: [build(k, random.Random(f"{k}-{i}")) for i in range(CASES)] for k in KIND_CASES}
    results = iter(run_cases([jvm_case(k, c) for k in KIND_CASES for c in cases[k]]))
    return {
        k: (cases[k], [model_run(k, c) for c in cases[k]], [next(results) for _ in cases[k]])
        for k in KIND_CASES
    }


@pytest.mark.parametrize("kind", KIND_CASES)
def test_jvm_operator_emits_the_models_changelog(
    kind: str, runs: dict[str, tuple[list[dict], list[list[dict]], list[dict]]]
) -> None:
    cases, expected, results = runs[kind]
    for i, (case, want, got) in enumerate(zip(cases, expected, results, strict=True)):
        assert "error" not in got, f"case {i}: {got['error']}\n{case}"
        assert jvm_by_key(got) == want, f"case {i} differs:\n{case}"
    emitted = [r for w in expected for batch in w for rows in batch.values() for r in rows]
    assert len(emitted) > CASES // 4  # the cases emit enough to compare
    if kind.startswith("temporal-event"):
        assert any(r[0] == "LATE" for r in emitted)
    if kind in ("interval-full", "temporal-event-left"):
        assert any(None in r[1:] for r in emitted)  # padded rows
    if kind == "multi":
        assert any(r[0] == "-D" for r in emitted)


def test_jvm_temporal_join_keeps_state_small() -> None:
    """Versions the watermark made useless and emitted probe rows leave the JVM operator's state;
    the deletion stays as the key's one version (a late build row must not resurface)."""
    spec = TemporalSpec("inner", "event", side(fields=L2), side(JKCUK, R2, (0,)))
    batches = [
        (1000, 0, [("R", "+I", 1000, (1, 1)), ("R", "+U", 1100, (1, 2)),
                   ("L", "+I", 1150, (1, 7))]),
        (1000, 2000, [("R", "-D", 1900, (1, 2))]),
        (1000, 3000, []),
    ]  # fmt: skip
    case = {"spec": spec, "batches": batches}
    [got] = run_cases([temporal_jvm(case)])
    assert jvm_by_key(got) == temporal_model(case)
    assert jvm_by_key(got)[1] == {"1": [["+I", 1, 7, 1, 2]]}
    assert got["state_keys"] == 1  # the deletion stays as the key's one version, as in Flink
