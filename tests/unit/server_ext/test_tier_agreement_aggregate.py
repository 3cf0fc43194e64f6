"""The JVM group aggregate (``GroupAggregate.java``, run by ``Harness.java``: the calls and
timeouts of flatMapGroupsWithState, no Spark) emits what the plain Python model of Flink's
GroupAggFunction (``tests/models/aggregate.py``) emits, on random changelogs, key by key, batch by
batch, change by change.

Cases: every function (COUNT(*), COUNT, SUM, AVG, MIN, MAX) and the DISTINCT forms over
INT, TINYINT (wrapping sums), DOUBLE, STRING, DECIMAL, DATE and TIMESTAMP columns with NULLs;
inputs with +I/-U/+U/-D (MIN/MAX and DISTINCT under retraction, keys retracted to nothing
and back) and insert-only ones (the union without ``__kind``/``__seq``); NULL group keys; global
aggregates; with and without -U rows; state TTL; mini-batch (a key's changes of a batch
folded in bundles of at most ``bundle_size`` rows, then one result per bundle); two-phase
(each batch's changes spread over one to three tasks, most on one hot key: the local phase
folds each task's rows into partial accumulators per key and bundle, the operator merges
them). ``TIER_AGREEMENT_CASES`` sets the number of random changelogs per kind (default 150);
all run in one JVM.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import random
from collections import Counter, defaultdict
from decimal import Decimal
from typing import Any

import pytest

from server_ext.aggregate_spec import AggCall, AggregateSpec
from server_ext.jvm import wire
from tests.models.aggregate import KIND_NAMES, GroupAggModel
from tests.unit.server_ext.jvm_harness import json_type, rows_json, run_cases, to_json

CASES = int(os.environ.get("TIER_AGREEMENT_CASES", "150"))
INPUT = (
    ("k", "BIGINT"),
    ("i", "INT"),
    ("t", "TINYINT"),
    ("d", "DOUBLE"),
    ("s", "STRING"),
    ("m", "DECIMAL(10,2)"),
    ("day", "DATE"),
    ("at", "TIMESTAMP"),
)
VALUES: list[list[Any]] = [
    [1, 2, None],
    [-3, 0, 2, 5, None, 2**31 - 1],
    [100, -100, 7, None],
    [0.5, 1.5, -2.25, None],  # exact in binary: sums do not depend on the order
    ["a", "b", "é", "B", None],
    [Decimal("1.25"), Decimal("-0.10"), Decimal("3.00"), None],
    [dt.date(2024, 1, 2), dt.date(1969, 12, 31), dt.date(2024, 1, 1), None],
    [dt.datetime(2024, 1, 1, 12, 0, 0, 123000), dt.datetime(1970, 1, 1), None],
]
# (function, argument field, DISTINCT, result type): Flink's result types (PyFlink 2.3).
CALLS = [
    ("count_star", None, False, "BIGINT"),
    ("count", 1, False, "BIGINT"),
    ("count", 4, False, "BIGINT"),
    ("sum", 1, False, "INT"),
    ("sum", 2, False, "TINYINT"),
    ("sum", 3, False, "DOUBLE"),
    ("sum", 5, False, "DECIMAL(38,2)"),
    ("avg", 1, False, "INT"),
    ("avg", 2, False, "TINYINT"),
    ("avg", 3, False, "DOUBLE"),
    ("avg", 5, False, "DECIMAL(38,6)"),
    ("min", 1, False, "INT"),
    ("max", 1, False, "INT"),
    ("min", 4, False, "STRING"),
    ("max", 4, False, "STRING"),
    ("min", 5, False, "DECIMAL(10,2)"),
    ("max", 3, False, "DOUBLE"),
    ("count", 1, True, "BIGINT"),
    ("count", 4, True, "BIGINT"),
    ("sum", 1, True, "INT"),
    ("avg", 1, True, "INT"),
    ("max", 4, True, "STRING"),
    ("sum", 5, True, "DECIMAL(38,2)"),
    ("min", 6, False, "DATE"),
    ("max", 7, False, "TIMESTAMP"),
    ("count", 6, True, "BIGINT"),
]
# Calls that all fold as counts and integral sums: the local phase's primitive path
# (GroupAggregate.integral); "two-phase-integral" cases draw from them alone.
INTEGRAL_CALLS = [
    c
    for c in CALLS
    if not c[2]
    and (c[0] in ("count_star", "count") or INPUT[c[1]][1] in ("BIGINT", "INT", "TINYINT"))
    and c[0] in ("count_star", "count", "sum", "avg")
]
KIND_CASES = [
    "grouped", "global", "insert-only", "ttl", "mini-batch", "two-phase", "two-phase-integral"
]  # fmt: skip
BUNDLE_SIZES = [None, None, 1, 2, 3, 5]


def scenario(rng: random.Random, kind: str) -> dict[str, Any]:
    """A random spec and a consistent changelog (a -U/-D retracts a row that is there; now
    and then one for a key without state, which the operator drops)."""
    two = kind.startswith("two-phase")
    calls = rng.sample(INTEGRAL_CALLS if kind == "two-phase-integral" else CALLS, rng.randint(1, 4))
    batched = kind == "mini-batch" or two
    insert_only = kind == "insert-only" or (two and rng.random() < 0.3)
    spec = AggregateSpec(
        input=INPUT,
        key=() if kind == "global" else (0,),
        aggs=tuple(AggCall(f, a, d, t) for f, a, d, t in calls),
        update_before=rng.random() < 0.7,
        mini_batch=batched,
        bundle_size=rng.choice(BUNDLE_SIZES) if batched else None,
        two_phase=two,
        retractions=not insert_only,
        ttl_ms=1000 if kind == "ttl" or (batched and rng.random() < 0.3) else None,
    )
    tasks = rng.randint(1, 3)
    live: list[tuple] = []  # the rows in the operator's state
    written: dict[Any, int] = {}  # per group key with state: its last write (state TTL)
    batches, now = [], 0
    for _ in range(rng.randint(1, 5)):
        if spec.ttl_ms is not None:  # expired keys are gone: their rows are not retracted
            live = [r for r in live if written[group_key(spec, r)] + spec.ttl_ms > now]
        changes = []
        for _ in range(rng.randint(0, 10)):
            row = tuple(rng.choice(v) for v in VALUES)
            if two and rng.random() < 0.6:
                row = (1, *row[1:])  # skewed: most changes are of one hot key
            r = rng.random()
            if insert_only or r < 0.45 or not live:
                if not insert_only and rng.random() < 0.1:
                    k = group_key(spec, row)
                    if all(group_key(spec, x) != k for x in live) and (
                        not spec.mini_batch or all(group_key(spec, c) != k for _, c in changes)
                    ):
                        changes.append((3, row))  # a retraction for a key without state
                    continue
                live.append(row)
                changes.append((0, row))
            elif r < 0.7:
                changes.append((3, live.pop(rng.randrange(len(live)))))
            else:  # an update: -U then +U (the group key may change)
                changes.append((1, live.pop(rng.randrange(len(live)))))
                live.append(row)
                changes.append((2, row))
            for _, changed in changes[-2:]:
                written[group_key(spec, changed)] = now
        # two-phase: each change goes to one of the tasks (a -U and its +U may part)
        batches.append((now, [(rng.randrange(tasks), *c) for c in changes]))
        now += rng.choice([0, 400, 700, 1500])
    return {"spec": spec, "batches": batches}


def group_key(spec: AggregateSpec, row: tuple) -> Any:
    return row[0] if spec.key else 0


def model_run(case: dict[str, Any]) -> list[dict]:
    spec = case["spec"]
    model = GroupAggModel(spec)
    size = spec.bundle_size or 1 << 30
    out = []
    for now, tasked in case["batches"]:
        emitted: dict = defaultdict(list)
        changes = [(kind, row) for _, kind, row in tasked]
        if spec.two_phase:  # each task's partials per key and bundle, then merged per key
            partials: dict = defaultdict(list)
            for task in sorted({t for t, _, _ in tasked}):
                mine = [(kind, row) for t, kind, row in tasked if t == task]
                for bundle in chunks(mine, size):
                    folded: dict = defaultdict(Counter)
                    for kind, row in bundle:
                        folded[group_key(spec, row)][row] += 1 if kind in (0, 2) else -1
                    for key, partial in folded.items():
                        partials[key].append(partial)
            for key, keyed in partials.items():
                for bundle in chunks(keyed, size):
                    emitted[json.dumps(to_json([key]))] += rows_json(model.merge(key, bundle, now))
        elif spec.mini_batch:  # each key's changes of the batch, bundle by bundle
            for key, keyed in group(changes, lambda c: group_key(spec, c[1])).items():
                for bundle in chunks(keyed, size):
                    emitted[json.dumps(to_json([key]))] += rows_json(model.bundle(key, bundle, now))
        else:
            for kind, row in changes:
                key = group_key(spec, row)
                rows = model.process(kind, (key, row), now)
                emitted[json.dumps(to_json([key]))].extend(rows_json(rows))
        out.append({k: v for k, v in emitted.items() if v})
    return out


def chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def group(changes: list[tuple], key: Any) -> dict[Any, list[tuple]]:
    """Changes by group key, each key's in order."""
    out: dict[Any, list[tuple]] = defaultdict(list)
    for change in changes:
        out[key(change)].append(change)
    return out


def jvm_case(case: dict[str, Any]) -> dict[str, Any]:
    spec = case["spec"]

    def f(name: str, t: Any) -> dict:
        return {"name": name, "type": t, "nullable": True, "metadata": {}}

    insert_only = not spec.retractions
    row = {"type": "struct", "fields": [f(n, json_type(t)) for n, t in spec.input]}
    fields = [f("__k0", "long" if spec.key else "integer"), f("__side", "byte")]
    if not insert_only:
        fields += [f("__kind", "byte"), f("__seq", "long")]
    fields.append(f("__in0", row))
    output = [{"name": "__kind", "type": "byte", "nullable": False, "metadata": {}}]
    output += [f(n, json_type(t)) for n, t in spec.output_fields()]
    seq, batches = 0, []
    for now, changes in case["batches"]:
        rows, tasks = [], defaultdict(list)
        for task, kind, r in changes:
            seq += 1
            tags = [0] if insert_only else [0, kind, seq]
            rows.append(to_json([group_key(spec, r), *tags, list(r)]))
            tasks[task].append(rows[-1])
        if spec.two_phase:  # the local phase runs task by task
            batches.append({"now": now, "tasks": [tasks[t] for t in sorted(tasks)]})
        else:
            batches.append({"now": now, "rows": rows})
    spec_json = wire.operator_spec_json(spec, ["__k0"], json.dumps({"type": "struct",
                                                                    "fields": output}))  # fmt: skip
    return {
        "operator": "aggregate",
        "local": spec.two_phase,
        "spec": spec_json,
        "input": json.dumps({"type": "struct", "fields": fields}),
        "key_count": 1,
        "batches": batches,
    }


def jvm_by_key(result: dict[str, Any]) -> list[dict]:
    return [{json.dumps(keyed[0]): keyed[1] for keyed in batch} for batch in result["batches"]]


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[dict], list[list[dict]], list[dict]]]:
    cases = {
        k: [scenario(random.Random(f"agg-{k}-{i}"), k) for i in range(CASES)] for k in KIND_CASES
    }
    results = iter(run_cases([jvm_case(c) for k in KIND_CASES for c in cases[k]]))
    return {
        k: (cases[k], [model_run(c) for c in cases[k]], [next(results) for _ in cases[k]])
        for k in KIND_CASES
    }


@pytest.mark.parametrize("kind", KIND_CASES)
def test_jvm_group_aggregate_emits_flinks_changelog(
    kind: str, runs: dict[str, tuple[list[dict], list[list[dict]], list[dict]]]
) -> None:
    cases, expected, results = runs[kind]
    for i, (case, want, got) in enumerate(zip(cases, expected, results, strict=True)):
        assert "error" not in got, f"case {i}: {got['error']}\n{case}"
        assert jvm_by_key(got) == want, f"case {i} differs:\n{case}"
    emitted = [r for w in expected for batch in w for rows in batch.values() for r in rows]
    kinds = {r[0] for r in emitted}
    assert len(emitted) > CASES  # the cases emit enough to compare
    assert kinds == ({"+I", "-U", "+U"} if kind == "insert-only" else set(KIND_NAMES))


def test_bad_specs_fail_at_plan_time_naming_the_problem() -> None:
    """The operator's factory checks the spec against the union and the output schema."""
    good = AggregateSpec(INPUT, (0,), (AggCall("sum", 1, result_type="INT"),))
    bad_type = AggregateSpec(INPUT, (0,), (AggCall("sum", 4, result_type="STRING"),))
    wrong_result = AggregateSpec(INPUT, (0,), (AggCall("count", 1, result_type="INT"),))
    cases = [scenario(random.Random(1), "grouped") for _ in range(3)]
    for case, spec in zip(cases, (good, bad_type, wrong_result), strict=True):
        case["spec"] = spec
    ok, sums_text, count_int = run_cases([jvm_case(c) for c in cases])
    assert "error" not in ok
    assert "sums numbers, not STRING" in sums_text["error"]
    assert "gives BIGINT, not INT" in count_int["error"]
    with pytest.raises(ValueError, match="COUNT\\(\\*\\) has no DISTINCT form"):
        AggCall("count_star", distinct=True)


def test_the_changelog_flink_2_3_emits() -> None:
    """What PyFlink 2.3 emitted (from_changelog_stream, parallelism 1) for ``SELECT k,
    COUNT(*), SUM(v), MIN(v), MAX(v), AVG(v), COUNT(DISTINCT v) FROM C GROUP BY k``, per key:
    the model and the JVM operator emit the same."""
    spec = AggregateSpec(
        input=(("k", "STRING"), ("v", "INT")),
        key=(0,),
        aggs=(
            AggCall("count_star"),
            AggCall("sum", 1, result_type="INT"),
            AggCall("min", 1, result_type="INT"),
            AggCall("max", 1, result_type="INT"),
            AggCall("avg", 1, result_type="INT"),
            AggCall("count", 1, True),
        ),
    )
    I, UB, UA, D = 0, 1, 2, 3  # noqa: E741
    changes = [(I, ("a", 1)), (I, ("a", 5)), (I, ("b", 2)), (UB, ("a", 5)), (UA, ("a", 3)),
               (D, ("a", 1)), (D, ("a", 3)), (I, ("a", 7)), (D, ("b", 2)), (I, ("c", None)),
               (D, ("c", None)), (D, ("z", 4))]  # fmt: skip
    flink = {
        "a": [("+I", "a", 1, 1, 1, 1, 1, 1), ("-U", "a", 1, 1, 1, 1, 1, 1),
              ("+U", "a", 2, 6, 1, 5, 3, 2), ("-U", "a", 2, 6, 1, 5, 3, 2),
              ("+U", "a", 1, 1, 1, 1, 1, 1), ("-U", "a", 1, 1, 1, 1, 1, 1),
              ("+U", "a", 2, 4, 1, 3, 2, 2), ("-U", "a", 2, 4, 1, 3, 2, 2),
              ("+U", "a", 1, 3, 3, 3, 3, 1), ("-D", "a", 1, 3, 3, 3, 3, 1),
              ("+I", "a", 1, 7, 7, 7, 7, 1)],
        "b": [("+I", "b", 1, 2, 2, 2, 2, 1), ("-D", "b", 1, 2, 2, 2, 2, 1)],
        "c": [("+I", "c", 1, None, None, None, None, 0),
              ("-D", "c", 1, None, None, None, None, 0)],
    }  # fmt: skip
    model = GroupAggModel(spec)
    by_model: dict = defaultdict(list)
    for kind, row in changes:
        by_model[row[0]] += model.process(kind, (row[0], row))
    assert {k: v for k, v in by_model.items() if v} == flink
    case = {"spec": spec, "batches": [(0, [(0, *c) for c in changes])]}
    jvm = jvm_case(case)
    jvm["input"] = jvm["input"].replace('"long"', '"string"', 1)  # the key is k, a STRING
    (got,) = run_cases([jvm])
    assert jvm_by_key(got)[0] == {json.dumps([k]): rows_json(v) for k, v in flink.items()}


def test_mini_batch_and_two_phase_as_flink_2_3_emit() -> None:
    """What PyFlink 2.3 emitted (a Debezium changelog file, parallelism 1,
    table.exec.mini-batch.size and agg-phase-strategy set) for ``SELECT k, SUM(v) FROM C GROUP
    BY k`` and, with retractions of rows that were never there, for ``SELECT k, COUNT(*),
    SUM(v), MIN(v), COUNT(DISTINCT v)``: bundles of ``size`` rows; with a state TTL an
    unchanged result is emitted again (-U/+U) in one phase, as without mini-batch; in two
    phases a retraction for a key without state is counted (a row count of -1 is a result)
    and partials that sum to no row are no output. Per key: the model and the JVM emit the
    same. (Each key's rows come in one run here, so Flink's bundles across keys are each
    key's bundles of ``size`` of its own rows, as the operator folds them.)"""
    I, D = 0, 3  # noqa: E741
    sums = AggregateSpec(
        (("k", "INT"), ("v", "INT")), (0,), (AggCall("sum", 1, result_type="INT"),)
    )
    ones = [(I, (1, 5)), (I, (1, 0)), (I, (1, 0)), (I, (1, 0)), (I, (2, 1)), (I, (2, 0))]
    flink_sums = {  # (two phase, TTL, size) -> per key
        (False, False, 2): {1: [("+I", 1, 5)], 2: [("+I", 2, 1)]},
        (False, True, 2): {1: [("+I", 1, 5), ("-U", 1, 5), ("+U", 1, 5)], 2: [("+I", 2, 1)]},
        (False, True, 1000): {1: [("+I", 1, 5)], 2: [("+I", 2, 1)]},
        (True, False, 2): {1: [("+I", 1, 5)], 2: [("+I", 2, 1)]},
        (True, True, 2): {1: [("+I", 1, 5)], 2: [("+I", 2, 1)]},
    }
    counted = AggregateSpec(
        (("k", "INT"), ("v", "INT")),
        (0,),
        (AggCall("count_star"), AggCall("sum", 1, result_type="INT"),
         AggCall("min", 1, result_type="INT"), AggCall("count", 1, True)),
    )  # fmt: skip
    odd = [(D, (1, 5)), (I, (1, 7)), (I, (2, 1)), (D, (2, 1)), (D, (3, 9)), (I, (4, 2)),
           (D, (4, 3))]  # fmt: skip
    flink_odd = {
        False: {1: [("+I", 1, 1, 7, 7, 1)]},  # one phase: leading retractions dropped
        True: {3: [("+I", 3, -1, -9, None, 0)]},  # two phases: counted
    }
    cases, wants = [], []
    for (two, ttl, size), want in flink_sums.items():
        spec = dataclasses.replace(
            sums,
            mini_batch=True,
            two_phase=two,
            bundle_size=size,
            ttl_ms=3_600_000 if ttl else None,
        )
        cases.append({"spec": spec, "batches": [(0, [(0, *c) for c in ones])]})
        wants.append(want)
    for two, want in flink_odd.items():
        spec = dataclasses.replace(counted, mini_batch=True, two_phase=two, bundle_size=1000)
        # (key 4 emitted nothing in one phase either; the one-phase model keeps the rows it
        # has, so it cannot retract one that is not there)
        changes = [c for c in odd if two or c[1][0] != 4]
        cases.append({"spec": spec, "batches": [(0, [(0, *c) for c in changes])]})
        wants.append(want)
    jvm = [jvm_case(c) for c in cases]
    for j in jvm:
        j["input"] = j["input"].replace('"long"', '"integer"', 1)  # the key is k, an INT
    for case, want, got in zip(cases, wants, run_cases(jvm), strict=True):
        expected = [{json.dumps([k]): rows_json(v) for k, v in want.items()}]
        assert model_run(case) == expected, case["spec"]
        assert "error" not in got, got
        assert jvm_by_key(got) == expected, case["spec"]
