"""The generator's draws, without a server or Flink: every table is a valid changelog, the
bursts of changes of one key sit in one file, late rows are drawn and never make Flink's
answer depend on how its inputs interleave (`late_rows`)."""

from __future__ import annotations

import itertools

from tests.conformance.generator import FAMILIES, generate
from tests.conformance.late_rows import fragile, late_positions
from tests.conformance.model import check_table_changelog

SEEDS = range(1, 6)
CASES = 40  # per family and seed


def _cases(family: str) -> list[dict]:
    return [generate(family, seed, n) for seed in SEEDS for n in range(CASES)]


def test_tables_are_valid_changelogs() -> None:
    for family in FAMILIES:
        for case in _cases(family):
            for t in case["tables"]:
                assert not check_table_changelog(t), (case["id"], family, t["name"])
                assert t["files"] == sorted(set(t["files"])), (case["id"], t["files"])
                assert all(0 < c < len(t["rows"]) for c in t["files"]), case["id"]


def _churns(t: dict) -> bool:
    """Some file holds a key inserted, retracted and inserted again (or retracted, inserted,
    retracted): the order within the file decides the key's rows."""
    cuts = [0, *t["files"], len(t["rows"])]
    for start, end in itertools.pairwise(cuts):
        kinds: dict[str, str] = {}
        for kind, values in t["rows"][start:end]:
            kinds[repr(values[0])] = kinds.get(repr(values[0]), "") + kind[0]
        if any("+-+" in k or "-+-" in k for k in kinds.values()):
            return True
    return False


def test_changelog_files_hold_several_changes_of_a_key() -> None:
    for family in ("changelog", "multiway", "lookup"):
        tables = [t for c in _cases(family) for t in c["tables"] if t["changelog"]]
        share = sum(_churns(t) for t in tables) / len(tables)
        assert share > 0.35, (family, share)  # without the bursts: 0.16-0.29


def test_late_rows_are_drawn_and_keep_flink_deterministic() -> None:
    for family in ("interval", "temporal"):
        cases = _cases(family)
        late = 0
        for case in cases:
            assert not fragile(case), (case["id"], fragile(case))
            late += any(late_positions(t) for t in case["tables"] if t["rowtime"])
        assert late / len(cases) > 0.25, (family, late / len(cases))


def test_other_families_have_no_late_rows() -> None:
    for family in ("computed",):
        for case in _cases(family):
            assert not any(late_positions(t) for t in case["tables"] if t["rowtime"]), case["id"]
