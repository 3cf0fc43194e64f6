"""Shrink a differing case to a minimal reproduction (greedy, one change at a time).

    python -m tests.conformance.minimize tests/conformance/failures/1-12.json [--remote URL]

Tries, over and over until none applies: dropping a projection or a filter, dropping a
residual term, a second equi key or a computed column nobody reads (for lookup joins also a
constant key, a dimension filter, a pre-filter, a hint, the cache), and removing table rows
(a -U/+U pair together; only candidates that are still valid changelogs). A candidate is kept
when it still differs the same way (same status; for errors, the same error type). Flink
runs in one long-lived process (``flink_runner --serve``). Writes ``<file>.min.json`` and
prints the minimal case.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conformance.compare import Comparison, compare
from tests.conformance.flink_env import REPO_ROOT, ensure_flink_venv
from tests.conformance.flink_runner import RESULT_PREFIX
from tests.conformance.model import Case, Query, check_table_changelog, dumps
from tests.conformance.suite import CACHE_DIR, case_key, failure_text, load_case


class FlinkProcess:
    """A Flink runner kept alive: one case in, one answer out (answers cached as in suite)."""

    def __init__(self) -> None:
        python = ensure_flink_venv()
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        env.pop("VIRTUAL_ENV", None)
        self.proc = subprocess.Popen(
            [str(python), "-m", "tests.conformance.flink_runner", "--serve"],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, case: Case) -> dict[str, Any]:
        cached = CACHE_DIR / f"{case_key(case)}.json"
        if cached.exists():
            return json.loads(cached.read_text()) | {"id": case["id"]}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith(RESULT_PREFIX):
                result = json.loads(line[len(RESULT_PREFIX) :])
                if not result.get("error"):
                    CACHE_DIR.mkdir(parents=True, exist_ok=True)
                    cached.write_text(json.dumps(result))
                return result
        raise RuntimeError("the Flink process ended")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def signature(c: Comparison, product: dict[str, Any]) -> tuple[str, str]:
    """How a case differs, coarsely: status, and the error type for errors."""
    if c.status == "error":
        return c.status, (product.get("error") or "").split(":")[0]
    return c.status, ""


def _queries(q: Query) -> Iterator[tuple[Query, str]]:
    yield q, ""
    for key in ("input", "left", "right", "sub"):
        if key in q:
            for sub, path in _queries(q[key]):
                yield sub, f"{key}.{path}"


def candidates(case: Case) -> Iterator[tuple[str, Case]]:
    """Smaller cases, the biggest cuts first."""
    # the query: a projection or a filter replaced by its input; residual terms; keys
    for i, (q, _) in enumerate(_queries(case["query"])):
        if q["op"] in ("select", "where"):
            c = copy.deepcopy(case)
            target = list(_queries(c["query"]))[i][0]
            inner = target["input"]
            target.clear()
            target.update(inner)
            yield f"drop {q['op']}", c
        for j in range(len(q.get("residual", []))):
            c = copy.deepcopy(case)
            del list(_queries(c["query"]))[i][0]["residual"][j]
            yield "drop a residual term", c
        n_keys = len(q.get("keys", [])) + len(q.get("constants", []))  # lookup keys too
        if len(q.get("keys", [])) > 1 or (q["op"] == "lookup" and n_keys > 1):
            for j in range(len(q["keys"])):
                c = copy.deepcopy(case)
                del list(_queries(c["query"]))[i][0]["keys"][j]
                yield "drop an equi key", c
        # a lookup join's other terms and settings (at least one key stays)
        for field in ("constants", "dim_filter", "pre_filter", "hints"):
            for j in range(len(q.get(field) or [])):
                if field == "constants" and n_keys <= 1:
                    continue
                c = copy.deepcopy(case)
                del list(_queries(c["query"]))[i][0][field][j]
                yield f"drop a {field} entry", c
        if q["op"] == "lookup" and (q.get("cache", "NONE") != "NONE" or q.get("cache_options")):
            c = copy.deepcopy(case)
            target = list(_queries(c["query"]))[i][0]
            target["cache"], target["cache_options"] = "NONE", {}
            yield "no lookup cache", c
    # rows (a -U/+U pair together), then computed columns
    for ti, t in enumerate(case["tables"]):
        rows = t["rows"]
        j = 0
        while j < len(rows):
            width = 2 if rows[j][0] == "-U" else 1
            c = copy.deepcopy(case)
            ct = c["tables"][ti]
            del ct["rows"][j : j + width]
            ct["files"] = sorted({f - width if f > j else f for f in ct["files"]} - {0})
            ct["files"] = [f for f in ct["files"] if 0 < f < len(ct["rows"])]
            if not check_table_changelog(ct):
                yield f"drop row {j} of {t['name']}", c
            j += width
    text = json.dumps(case["query"])
    for ti, t in enumerate(case["tables"]):
        for k, (name, _, _) in enumerate(t["computed"]):
            if f'"{name}"' not in text:
                c = copy.deepcopy(case)
                del c["tables"][ti]["computed"][k]
                yield f"drop computed column {name}", c


def minimize(case: Case, remote: str, data_dir: Path, log=print) -> Case:
    """The smallest case found that still differs as `case` does."""
    from tests.conformance.product import run_case

    flink = FlinkProcess()
    try:

        def verdict(c: Case) -> tuple[Comparison, dict, dict]:
            workdir = Path(tempfile.mkdtemp(prefix="min-", dir=data_dir))
            product = run_case(c, remote, workdir)
            answer = flink.run(c)
            return compare(answer, product), answer, product

        comparison, _, product = verdict(case)
        want = signature(comparison, product)
        if comparison.same:
            log("the case does not differ (any more): nothing to minimize")
            return case
        log(f"differs as {want}; shrinking")
        changed = True
        while changed:
            changed = False
            for what, candidate in candidates(case):
                c, _, p = verdict(candidate)
                if not c.same and signature(c, p) == want:
                    log(f"  kept: {what}")
                    case = candidate
                    changed = True
                    break
        c, answer, product = verdict(case)
        log(failure_text(case, answer, product, c))
        return case
    finally:
        flink.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.minimize")
    parser.add_argument("case", type=Path)
    parser.add_argument("--remote")
    args = parser.parse_args(argv)
    case = load_case(args.case)
    data_dir = Path(tempfile.mkdtemp(prefix="conformance-min-"))
    server = None
    remote = args.remote
    if remote is None:
        from tableapi.session import EmbeddedServer

        server = EmbeddedServer.start(master="local[2]")
        remote = server.url
    try:
        small = minimize(case, remote, data_dir, log=lambda s: print(s, flush=True))
    finally:
        if server is not None:
            server.stop()
    out = args.case.with_suffix(".min.json")
    out.write_text(dumps(small))
    print(f"saved: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
