"""Property: for any valid changelog, the emitted changelog materializes to the batch join.

Random insert / delete / update sequences on both sides (unique keys respected where the
layout promises them, duplicates where it does not, null keys, nullable values) are cut into
micro-batches. After every micro-batch, applying everything emitted so far as a multiset
(+I/+U add, -D/-U subtract) must give exactly the batch join, computed in plain Python, of
the input multisets so far, with no negative counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server_ext.joins.spec import JoinSpec
from tests.unit.server_ext.harness import HUK, JKCUK, NUK, JoinHarness, side

FIELDS_L = (("lk", "BIGINT"), ("lv", "BIGINT"))
FIELDS_R = (("rk", "BIGINT"), ("rw", "BIGINT"))
KEYS = st.sampled_from([0, 0, 0, 1, None])  # mostly one key: more matches
VALUES = st.sampled_from([1, 2, 3, None])
# Residual trees with an independent Python oracle (True = match; unknown is no match).
RESIDUALS: list[tuple[tuple | None, Callable[[tuple, tuple], bool]]] = [
    (None, lambda lrow, rrow: True),
    (
        ("call", "<", ("col", "l", 1), ("col", "r", 1)),
        lambda lrow, rrow: None not in (lrow[1], rrow[1]) and lrow[1] < rrow[1],
    ),
    (
        (
            "call",
            "or",
            ("call", "is_null", ("col", "l", 1)),
            ("call", "=", ("col", "r", 1), ("lit", 2)),
        ),
        lambda lrow, rrow: lrow[1] is None or rrow[1] == 2,
    ),
]
Scenario = tuple[JoinSpec, Callable[[tuple, tuple], bool], list[list[tuple]]]
# The unique key of each layout, as field indexes: the join key itself, or the value field.
UNIQUE = {JKCUK: (0,), HUK: (1,), NUK: ()}


def batch_join(
    spec: JoinSpec, cond: Callable[[tuple, tuple], bool], left: Counter, right: Counter
) -> Counter:
    """The join of two multisets of rows, the way a batch engine computes it."""
    null_safe = spec.null_safe[0]

    def match(lrow: tuple, rrow: tuple) -> bool:
        lk, rk = lrow[0], rrow[0]
        if lk is None or rk is None:
            keys_equal = null_safe and lk is None and rk is None
        else:
            keys_equal = lk == rk
        return keys_equal and cond(lrow, rrow)

    out: Counter = Counter()
    right_matched: Counter = Counter()
    for lrow, ln in left.items():
        matched = 0
        for rrow, rn in right.items():
            if match(lrow, rrow):
                matched += rn
                right_matched[rrow] += 1
                if spec.projects_right:
                    out[lrow + rrow] += ln * rn
        if spec.kind == "semi" and matched:
            out[lrow] += ln
        elif spec.kind == "anti" and not matched:
            out[lrow] += ln
        elif spec.left_outer and not matched:
            out[(*lrow, None, None)] += ln
    if spec.right_outer:
        for rrow, rn in right.items():
            if not right_matched[rrow]:
                out[(None, None, *rrow)] += rn
    return out


@st.composite
def scenarios(draw: Any) -> Scenario:
    kind = draw(st.sampled_from(["inner", "left", "right", "full", "semi", "anti"]))
    layouts = [draw(st.sampled_from([JKCUK, HUK, NUK, NUK])) for _ in range(2)]
    residual, oracle = draw(st.sampled_from(RESIDUALS))
    spec = JoinSpec(
        kind,
        side(layouts[0], FIELDS_L, UNIQUE[layouts[0]]),
        side(layouts[1], FIELDS_R, UNIQUE[layouts[1]]),
        null_safe=(draw(st.booleans()),),
        residual=residual,
    )
    present: list[Counter] = [Counter(), Counter()]
    changes: list[tuple] = []

    def unique_ok(s: int, row: tuple, removed: tuple | None = None) -> bool:
        uk = UNIQUE[layouts[s]]
        if not uk:
            return True
        taken = {tuple(r[i] for i in uk) for r, n in present[s].items() if n and r != removed}
        return tuple(row[i] for i in uk) not in taken

    for _ in range(draw(st.integers(1, 20))):
        s = draw(st.integers(0, 1))
        name = "LR"[s]
        action = draw(st.sampled_from(["insert", "insert", "copy", "copy", "delete", "update"]))
        rows = sorted((r for r, n in present[s].items() if n), key=repr)
        if action in ("insert", "copy") or not rows:
            # "copy" inserts a row that is already there: duplicates where the layout allows
            row = (
                draw(st.sampled_from(rows))
                if action == "copy" and rows
                else (draw(KEYS), draw(VALUES))
            )
            if unique_ok(s, row):
                present[s][row] += 1
                changes.append((name, "+I", row))
        elif action == "delete":
            row = draw(st.sampled_from(rows))
            present[s][row] -= 1
            changes.append((name, "-D", row))
        else:
            old, new = draw(st.sampled_from(rows)), (draw(KEYS), draw(VALUES))
            if unique_ok(s, new, removed=old):
                present[s][old] -= 1
                present[s][new] += 1
                changes.append((name, "-U", old))
                changes.append((name, "+U", new))
    cuts = sorted(draw(st.sets(st.integers(0, len(changes)), max_size=3)))
    bounds = [0, *cuts, len(changes)]
    batches = [changes[a:b] for a, b in pairwise(bounds) if b > a]
    return spec, oracle, batches


@settings(
    max_examples=800, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(scenarios())
def test_emitted_changelog_materializes_to_the_batch_join(scenario: Scenario) -> None:
    spec, oracle, batches = scenario
    h = JoinHarness(spec)
    inputs = {"L": Counter(), "R": Counter()}
    result: Counter = Counter()
    for batch in batches:
        for kind, *row in h.process(*batch):
            result[tuple(row)] += 1 if kind in ("+I", "+U") else -1
        for name, kind, row in batch:
            inputs[name][row] += 1 if kind in ("+I", "+U") else -1
        assert all(n >= 0 for n in result.values()), result
        expected = batch_join(spec, oracle, +inputs["L"], +inputs["R"])
        assert +result == expected
