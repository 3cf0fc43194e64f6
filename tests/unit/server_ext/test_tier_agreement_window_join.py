"""The JVM window join (``WindowJoin.java``, run by ``Harness.java``: flatMapGroupsWithState's
calls and event-time timeouts, no Spark) emits what the Python model of Flink's window join
(``tests/models/window_join.py``) emits, key by key, batch by batch, in order: every join
kind, residuals, NULL and null-safe keys, late rows (behind the batch's watermark) and the end
of input (a watermark far ahead joins every window and leaves no state).
``TIER_AGREEMENT_CASES`` sets the number of random cases per kind (default 150); all run in
one JVM (a few seconds).
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest

from server_ext.window_join_spec import WindowJoinSpec
from tests.models.window_join import WindowJoinModel
from tests.unit.server_ext.harness import KINDS, side
from tests.unit.server_ext.jvm_harness import run_cases, to_json
from tests.unit.server_ext.test_tier_agreement_operators import (
    L2,
    R2,
    RESIDUALS,
    by_key,
    jvm_by_key,
    spec_json,
    union_schema,
)

CASES = int(os.environ.get("TIER_AGREEMENT_CASES", "150"))
JOIN_KINDS = ["inner", "left", "right", "full", "semi", "anti"]
KEYS = [1, 1, 2, 3, None]
VALUES = [1, 2, 3, None]
SIZE = 1000  # window ends are multiples of it (the TVF assigned them upstream)
END_OF_INPUT = 10**9


def scenario(rng: random.Random, kind: str) -> dict[str, Any]:
    """A random spec and batches ``(watermark, [(side, key, row, window end)])``; each batch's
    watermark trails the ends seen so far, now and then a row of a fired window (late)."""
    spec = WindowJoinSpec(
        kind, side(fields=L2), side(fields=R2), null_safe=(rng.random() < 0.3,),
        residual=rng.choice(RESIDUALS),
    )  # fmt: skip
    batches: list[tuple[int, list]] = []
    watermark, top = 0, SIZE
    for _ in range(rng.randint(1, 6)):
        rows = []
        for _ in range(rng.randint(0, 10)):
            end = top + SIZE * rng.randint(-2, 2)
            key = rng.choice(KEYS)
            row = (key, rng.choice(VALUES))
            rows.append((rng.choice("LR"), key, row, max(end, SIZE)))
        batches.append((watermark, rows))
        watermark = max(watermark, top - rng.choice([0, 1, SIZE // 2, SIZE]))
        top += rng.choice([0, SIZE, 2 * SIZE])
    if rng.random() < 0.8:
        batches.append((END_OF_INPUT, []))
    return {"spec": spec, "batches": batches}


def model_run(case: dict[str, Any]) -> list[dict]:
    model = WindowJoinModel(case["spec"])
    out = []
    for watermark, rows in case["batches"]:
        emitted = model.batch(watermark, rows)
        out.append(by_key(emitted, _key_of(case["spec"])))
    return out


def _key_of(spec: WindowJoinSpec) -> Any:
    """An output row's join key: the left row's, or the right row's on a padded left."""
    if spec.kind in ("semi", "anti"):
        return lambda r: r[1]
    return lambda r: r[1] if any(v is not None for v in r[1:3]) else r[3]


def jvm_case(case: dict[str, Any]) -> dict[str, Any]:
    spec = case["spec"]
    schema = union_schema([("__l", L2), ("__r", R2)], time=True)
    seq, batches = 0, []
    for watermark, rows in case["batches"]:
        union = []
        for name, key, row, end in rows:
            seq += 1
            left = name == "L"
            union.append(to_json([key, 0 if left else 1, KINDS["+I"], seq,
                                  list(row) if left else None, None if left else list(row),
                                  end]))  # fmt: skip
        batches.append({"now": 0, "watermark": watermark, "rows": union})
    return {"operator": "window_join", "spec": spec_json(spec), "input": schema, "key_count": 1,
            "batches": batches}  # fmt: skip


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[list[dict], list[list[dict]], list[dict]]]:
    cases = {k: [scenario(random.Random(f"wjoin-{k}-{i}"), k) for i in range(CASES)]
             for k in JOIN_KINDS}  # fmt: skip
    results = iter(run_cases([jvm_case(c) for k in JOIN_KINDS for c in cases[k]]))
    return {
        k: (cases[k], [model_run(c) for c in cases[k]], [next(results) for _ in cases[k]])
        for k in JOIN_KINDS
    }


@pytest.mark.parametrize("kind", JOIN_KINDS)
def test_jvm_window_join_emits_the_models_rows(
    kind: str, runs: dict[str, tuple[list[dict], list[list[dict]], list[dict]]]
) -> None:
    cases, expected, results = runs[kind]
    for i, (case, want, got) in enumerate(zip(cases, expected, results, strict=True)):
        assert "error" not in got, f"case {i}: {got['error']}\n{case}"
        assert jvm_by_key(got) == want, f"case {i} differs:\n{case}"
        if case["batches"][-1][0] == END_OF_INPUT:  # every window joined: no state is left
            assert got["state_keys"] == 0, f"case {i} keeps state:\n{case}"
    emitted = [r for w in expected for batch in w for rows in batch.values() for r in rows]
    assert len(emitted) > CASES // 2  # the cases emit enough to compare
    if kind in ("left", "right", "full"):
        assert any(None in r[1:] for r in emitted)  # padded rows


def test_a_retraction_fails_naming_the_operator() -> None:
    case = jvm_case(scenario(random.Random(3), "inner"))
    case["batches"] = [{"now": 0, "watermark": 0,
                        "rows": [to_json([1, 0, KINDS["-D"], 1, [1, 1], None, 2000])]}]  # fmt: skip
    (got,) = run_cases([case])
    assert "window join: the inputs must be insert-only" in got["error"]


def test_bad_specs_fail_at_plan_time_naming_the_problem() -> None:
    good = jvm_case(scenario(random.Random(5), "left"))
    no_time = dict(good, input=good["input"].replace('"__t"', '"__x"'))
    semi_output = dict(good, spec=good["spec"].replace('"kind": "left"', '"kind": "semi"'))
    ok, missing, wrong = run_cases([good, no_time, semi_output])
    assert "error" not in ok
    assert "needs the union's __t column" in missing["error"]
    assert "the output schema has" in wrong["error"]
