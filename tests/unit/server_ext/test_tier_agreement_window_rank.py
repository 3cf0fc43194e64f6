"""The JVM window rank (``WindowRank.java``, run by ``Harness.java``: flatMapGroupsWithState's
calls and event-time timeouts, no Spark) emits what the Python model of Flink's window Top-N
and window deduplication (``tests/models/window_rank.py``) emits, key by key, batch by batch,
in order: one or two sort keys either way with ties and NULLs, rank ranges, the row number
kept or left out, keep-last deduplication, late rows (behind the batch's watermark), a fired
input (a window aggregation's rows) and the end of input (a watermark far ahead ranks every
window and leaves no state). ``TIER_AGREEMENT_CASES`` sets the number of random cases per
family (default 60 in the suite; 150 by hand); all run in one JVM (a few seconds).
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

import pytest

from server_ext.jvm import wire
from server_ext.window_rank_spec import WindowRankSpec
from tests.models.window_rank import WindowRankModel
from tests.unit.server_ext.jvm_harness import json_type, run_cases, to_json
from tests.unit.server_ext.test_tier_agreement_operators import by_key, jvm_by_key

CASES = int(os.environ.get("TIER_AGREEMENT_CASES", "60"))
FAMILIES = ["top-n", "deduplicate", "fired-input"]
FIELDS = (("k", "BIGINT"), ("v", "BIGINT"), ("s", "STRING"), ("t", "BIGINT"))
KEYS = [1, 1, 2, 3]
VALUES = [1, 2, 3, None]
STRINGS = ["a", "b", "é", None]
SIZE = 1000  # window ends are multiples of it (the TVF assigned them upstream)
END_OF_INPUT = 10**9


def scenario(rng: random.Random, family: str) -> dict[str, Any]:
    """A random spec and batches ``(watermark, [(key, row, window end)])``; each batch's
    watermark trails the ends seen so far, now and then a row of a fired window (late)."""
    if family == "deduplicate":  # one time key, the first row only
        order: tuple[tuple[int, bool], ...] = ((3, rng.random() < 0.5),)
        start, end, keep_last = 1, 1, not order[0][1]
    else:
        order = tuple((f, rng.random() < 0.5) for f in rng.sample([1, 2, 3], rng.randint(1, 2)))
        start = rng.choice([1, 1, 2, 3])
        end, keep_last = start + rng.randint(0, 3), False
    spec = WindowRankSpec(
        input=FIELDS, order=order, rank_end=end, rank_start=start,
        output_rank=rng.random() < 0.7, keep_last=keep_last,
        fired_input=family == "fired-input",
    )  # fmt: skip
    batches: list[tuple[int, list]] = []
    watermark, top = 0, SIZE
    for _ in range(rng.randint(1, 6)):
        rows = []
        for _ in range(rng.randint(0, 12)):
            window = top + SIZE * rng.randint(-2, 2)
            if family == "fired-input":
                window = top  # a window aggregation emits its fired windows' rows
            key = rng.choice(KEYS)
            row = (key, rng.choice(VALUES), rng.choice(STRINGS), rng.choice(VALUES))
            rows.append((key, row, max(window, SIZE)))
        batches.append((watermark, rows))
        watermark = max(watermark, top - rng.choice([0, 1, SIZE // 2, SIZE]))
        top += rng.choice([0, SIZE, 2 * SIZE])
    if rng.random() < 0.8:
        batches.append((END_OF_INPUT, []))
    return {"spec": spec, "batches": batches}


def model_run(case: dict[str, Any]) -> list[dict]:
    model = WindowRankModel(case["spec"])
    return [by_key(model.batch(w, rows), lambda r: r[1]) for w, rows in case["batches"]]


def jvm_case(case: dict[str, Any]) -> dict[str, Any]:
    spec = case["spec"]

    def f(name: str, t: Any) -> dict:
        return {"name": name, "type": t, "nullable": True, "metadata": {}}

    row = {"type": "struct", "fields": [f(n, json_type(t)) for n, t in spec.input]}
    fields = [f("__k0", "long"), f("__side", "byte"), f("__in0", row), f("__t", "long")]
    output = [{"name": "__kind", "type": "byte", "nullable": False, "metadata": {}}]
    output += [f(n, json_type(t)) for n, t in spec.output_fields()]
    batches = [
        {"now": 0, "watermark": w, "rows": [to_json([k, 0, list(r), t]) for k, r, t in rows]}
        for w, rows in case["batches"]
    ]
    out = json.dumps({"type": "struct", "fields": output})
    return {
        "operator": "window_rank",
        "spec": wire.operator_spec_json(spec, ["__k0"], out),
        "input": json.dumps({"type": "struct", "fields": fields}),
        "key_count": 1,
        "batches": batches,
    }


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[dict], list[list[dict]], list[dict]]]:
    cases = {k: [scenario(random.Random(f"wrank-{k}-{i}"), k) for i in range(CASES)]
             for k in FAMILIES}  # fmt: skip
    results = iter(run_cases([jvm_case(c) for k in FAMILIES for c in cases[k]]))
    return {
        k: (cases[k], [model_run(c) for c in cases[k]], [next(results) for _ in cases[k]])
        for k in FAMILIES
    }


@pytest.mark.parametrize("family", FAMILIES)
def test_jvm_window_rank_emits_the_models_rows(
    family: str, runs: dict[str, tuple[list[dict], list[list[dict]], list[dict]]]
) -> None:
    cases, expected, results = runs[family]
    for i, (case, want, got) in enumerate(zip(cases, expected, results, strict=True)):
        assert "error" not in got, f"case {i}: {got['error']}\n{case}"
        assert jvm_by_key(got) == want, f"case {i} differs:\n{case}"
        if case["batches"][-1][0] == END_OF_INPUT:  # every window ranked: no state is left
            assert got["state_keys"] == 0, f"case {i} keeps state:\n{case}"
    emitted = [r for w in expected for batch in w for rows in batch.values() for r in rows]
    assert len(emitted) > CASES  # the cases emit enough to compare


def test_a_retraction_fails_naming_the_operator() -> None:
    case = jvm_case(scenario(random.Random(3), "top-n"))
    case["batches"] = [{"now": 0, "watermark": 0,
                        "rows": [to_json([1, 0, [1, 1, "a", 1], 2000])]}]  # fmt: skip
    case["input"] = case["input"].replace('"__side"', '"__kind", "type": "byte", "nullable": '
                                          'true, "metadata": {}}, {"name": "__side"')  # fmt: skip
    case["batches"][0]["rows"] = [to_json([1, 3, 0, [1, 1, "a", 1], 2000])]
    (got,) = run_cases([case])
    assert "window rank: the inputs must be insert-only" in got["error"]


def test_bad_specs_fail_at_plan_time_naming_the_problem() -> None:
    good = jvm_case(scenario(random.Random(5), "top-n"))
    no_time = dict(good, input=good["input"].replace('"__t"', '"__x"'))
    bad_range = dict(good, spec=good["spec"].replace('"rank_start": ', '"rank_start": 9'))
    ok, missing, empty = run_cases([good, no_time, bad_range])
    assert "error" not in ok
    assert "needs the union's __t column" in missing["error"]
    assert "a rank range 1 <= start <= end" in empty["error"]
