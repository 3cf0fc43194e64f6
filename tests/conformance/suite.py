"""Running cases on both sides and comparing: what the CLI and the pytest file share.

1. Flink: every case whose answer is not stored (CI's cases: ``flink_answers/``, see
   ``stored_answers.py``) or cached yet goes to ONE Flink process (one JVM,
   ``flink_runner``), in Flink's virtualenv; answers are cached by the case's content (not
   its id) under ``.flink-venv/conformance-cache/``.
2. The product: each case on one Spark Connect server, one fresh TableEnvironment each.
3. Compare; a case that differs is printed (query, data, rows only on one side) and saved
   as ``tests/conformance/failures/<id>.json``, re-runnable alone with ``--case FILE``.

Example:
    >>> from tests.conformance.suite import run_cases  # doctest: +SKIP
    >>> run_cases(cases, "sc://localhost:15002", Path("/tmp/d"))  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.conformance.compare import Comparison, compare
from tests.conformance.flink_env import (
    FLINK_VERSION,
    REPO_ROOT,
    VENV_DIR,
    ensure_flink_venv,
    lookup_source_hash,
)
from tests.conformance.flink_sql import describe
from tests.conformance.generator import describe_tables
from tests.conformance.model import Case, dumps

FAILURES_DIR = Path(__file__).resolve().parent / "failures"
CACHE_DIR = VENV_DIR / "conformance-cache"
#: Flink's answers to CI's fixed cases, kept in the repository (``stored_answers.py``).
STORED_DIR = Path(__file__).resolve().parent / "flink_answers"
FLINK_TIMEOUT_PER_CASE_S = 120
# What a cached answer holds (part of its key): 2 added the result schema's column types.
ANSWER_FORMAT = "answer-2"
# Cases with temporal table functions: their tables get a primary key only for a left join.
FUNCTION_TABLES = "function-tables-2"


def case_key(case: Case) -> str:
    """The cache key of a case's Flink answer: its content, without id, family or the
    product-only settings (mode, feed, options do not change Flink's answer).

    Example:
        >>> case_key({"id": "1", "tables": [], "query": {}}) == case_key(
        ...     {"id": "2", "tables": [], "query": {}})
        True
    """
    content = {k: case.get(k) for k in ("tables", "functions", "query")}
    versions = [FLINK_VERSION, ANSWER_FORMAT]
    if case.get("functions"):  # Flink's DDL of a function's table changed (difference 16)
        versions.append(FUNCTION_TABLES)
    if any(t.get("lookup") for t in case.get("tables", [])):  # Flink reads it with our Java
        versions.append(lookup_source_hash())
    text = json.dumps([*versions, content], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def run_flink(
    cases: Sequence[Case], log: Callable[[str], None] = print, cached: bool = True
) -> dict[str, dict]:
    """Flink's answers to `cases`, by case id (stored and cached answers reused, unless not
    ``cached``; the rest in one JVM)."""
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"case ids must be unique (answers are matched by id): {repeated}")
    answers: dict[str, dict] = {}
    todo = []
    same: dict[str, list[Case]] = {}  # cases of one content (a query via SQL and via the API)
    for case in cases:
        key = case_key(case)
        known = [d / f"{key}.json" for d in (STORED_DIR, CACHE_DIR)] if cached else []
        found = next((p for p in known if p.exists()), None)
        if found is not None:
            answers[case["id"]] = json.loads(found.read_text()) | {"id": case["id"]}
        elif key in same:
            same[key].append(case)  # answered with its twin
        else:
            same[key] = [case]
            todo.append(case)
    if not todo:
        log(f"[flink] all {len(cases)} answers stored or cached")
        return answers
    python = ensure_flink_venv()
    # After the venv: a fresh install removes an unfinished venv, the cache inside it too.
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    log(f"[flink] running {len(todo)} cases in one Flink process ({len(answers)} cached)")
    with tempfile.TemporaryDirectory(prefix="conformance-flink-") as tmp:
        cases_path, results_path = Path(tmp) / "cases.jsonl", Path(tmp) / "results.jsonl"
        cases_path.write_text("".join(json.dumps(c) + "\n" for c in todo))
        results_path.touch()
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        for key in ("VIRTUAL_ENV", "SPARK_HOME", "PYSPARK_PYTHON", "SPARK_REMOTE"):
            env.pop(key, None)
        started = time.monotonic()
        proc = subprocess.run(
            [
                str(python),
                "-m",
                "tests.conformance.flink_runner",
                str(cases_path),
                str(results_path),
            ],
            cwd=REPO_ROOT,
            env=env,
            timeout=60 + FLINK_TIMEOUT_PER_CASE_S * len(todo),
            check=False,
        )
        results = [json.loads(x) for x in results_path.read_text().splitlines() if x.strip()]
        log(
            f"[flink] {len(results)} cases in {time.monotonic() - started:.0f} s "
            f"(exit {proc.returncode})"
        )
    by_id = {c["id"]: c for c in todo}
    for result in results:
        answers[result["id"]] = result
        if not result.get("error"):
            key = case_key(by_id[result["id"]])
            (CACHE_DIR / f"{key}.json").write_text(json.dumps(result))
    for case in todo:
        answers.setdefault(
            case["id"], {"id": case["id"], "error": "the Flink process died before this case"}
        )
        for twin in same[case_key(case)][1:]:
            answers[twin["id"]] = answers[case["id"]] | {"id": twin["id"]}
    return answers


def failure_text(case: Case, flink: dict[str, Any], product: dict[str, Any], c: Comparison) -> str:
    """What a differing case prints: the query, the data, what differs."""
    lines = [
        f"=== case {case['id']} ({case['family']}, {case['mode']}, feed {case['feed']}"
        + (f", options {case['options']}" if case.get("options") else "")
        + (", the product given the SQL text" if case.get("via") == "sql" else "")
        + ")",
        "query (Flink SQL): " + describe(case),
        "data:",
        describe_tables(case),
        c.report(),
    ]
    if product.get("traceback") and c.status == "error":
        lines.append("product traceback (end):\n" + product["traceback"][-1500:])
    if flink.get("traceback") and c.status == "flink-error":
        lines.append("flink traceback (end):\n" + flink["traceback"][-1500:])
    return "\n".join(lines)


def save_failure(case: Case, flink: dict, product: dict, c: Comparison) -> Path:
    """Keep a differing case as a file that `--case` re-runs."""
    FAILURES_DIR.mkdir(parents=True, exist_ok=True)
    path = FAILURES_DIR / f"{case['id']}.json"
    record = dict(case)
    record["outcome"] = {
        "status": c.status,
        "problems": c.problems,
        "only_flink": c.only_flink,
        "only_product": c.only_product,
        "flink_changelog": flink.get("changelog"),
        "product_changelog": product.get("changelog"),
    }
    path.write_text(dumps(record))
    return path


def run_cases(
    cases: Sequence[Case],
    remote: str,
    data_dir: Path,
    save: bool = True,
    log: Callable[[str], None] = print,
) -> list[tuple[Case, Comparison, dict, dict]]:
    """Run `cases` on Flink, then on the product at `remote`; compare each."""
    from tests.conformance.product import run_case

    flink = run_flink(cases, log)
    outcomes = []
    started = time.monotonic()
    for i, case in enumerate(cases, 1):
        workdir = Path(tempfile.mkdtemp(prefix=f"case-{case['id']}-", dir=data_dir))
        workdir.chmod(0o777)
        product = run_case(case, remote, workdir)
        answer = flink[case["id"]]
        c = compare(answer, product)
        outcomes.append((case, c, answer, product))
        log(
            f"[{i}/{len(cases)}] {case['id']:>8} {case['family']:<9} {case['mode']:<9} "
            f"{c.status:<11} product {product['seconds']:.1f} s, "
            f"flink {answer.get('seconds', 0):.1f} s"
        )
        if not c.same:
            log(failure_text(case, answer, product, c))
            if save:
                log(f"saved: {save_failure(case, answer, product, c)}")
    log(f"[product] {len(cases)} cases in {time.monotonic() - started:.0f} s")
    return outcomes


def summary(outcomes: Sequence[tuple[Case, Comparison, dict, dict]]) -> str:
    """Counts per family: cases, same, different (rows or changelog), types (the same rows,
    other column types), errors (product), Flink errors.

    Example:
        >>> print(summary([]).splitlines()[0])
        family     cases  same  different  types  errors  flink-errors
    """
    rows: dict[str, Counter] = {}
    for case, c, _, _ in outcomes:
        counter = rows.setdefault(case["family"], Counter())
        counter["cases"] += 1
        counter[c.status] += 1
    total = sum(rows.values(), Counter())
    head = ("family", "cases", "same", "different", "types", "errors", "flink-errors")
    lines = [
        f"{head[0]:<10} {head[1]:>5} {head[2]:>5} {head[3]:>10} {head[4]:>6} {head[5]:>7} "
        f"{head[6]:>13}"
    ]
    for family, counter in [*sorted(rows.items()), ("total", total)]:
        lines.append(
            f"{family:<10} {counter['cases']:>5} {counter['same']:>5} "
            f"{counter['different']:>10} {counter['types']:>6} {counter['error']:>7} "
            f"{counter['flink-error']:>13}"
        )
    return "\n".join(lines)


def load_case(path: Path) -> Case:
    """A case saved in failures/ (or written by hand)."""
    case = json.loads(path.read_text())
    case.pop("outcome", None)
    return case
