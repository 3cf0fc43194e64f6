"""Issue 30.9: a long call shows its progress on a terminal, and results stream to the client.

- A streaming query waited on for more than a few seconds shows one line on standard error
  (``[tableapi] running 4 s, 1 micro-batch, 2 rows read``), rewritten in place and cleared
  when the wait ends: on a terminal (a pseudo-terminal here), or anywhere when
  ``table.display.progress`` is ``true``; never on a pipe or when it is ``false``. A batch
  job shows its tasks.
- ``materialize()`` applies the changelog as it streams from the server: the same table as
  the whole changelog collected and applied, and the client's peak memory a fraction of
  what collecting the changelog takes.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import textwrap
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from tableapi import TableEnvironment, col
from tableapi.config import DISPLAY_PROGRESS
from tableapi.execution.progress import SHOW_AFTER_S
from tableapi.result import apply_changelog
from tests.integration.changelog_files import ChangelogTable

#: Long enough for the line to show (after SHOW_AFTER_S) and be rewritten at least once.
WAIT_S = SHOW_AFTER_S + 2.5
QUERY_LINE = re.compile(
    r"\[tableapi\] running \d+ s, \d+ micro-batch(es)?, 2 rows read(; one running)? *"
)


def _watched(senv: TableEnvironment, shared_dir: Path) -> ChangelogTable:
    table = ChangelogTable(senv, shared_dir, "Watched", [("k", "BIGINT"), ("v", "BIGINT")])
    table.append([("+I", (1, 10)), ("+I", (2, 20))])
    return table


def test_a_forced_progress_line_shows_a_waiting_query_then_is_cleared(
    senv: TableEnvironment, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _watched(senv, shared_dir)
    senv.config.set(DISPLAY_PROGRESS, "true")
    result = senv.from_path("Watched").execute().process_all_available()
    capsys.readouterr()
    result.wait(timeout_s=WAIT_S)  # an unbounded query: runs on for the whole wait
    err = capsys.readouterr().err
    shown = [part for part in err.split("\r") if part.strip()]
    assert len(shown) >= 2, repr(err)  # shown, then rewritten
    assert all(QUERY_LINE.fullmatch(line) for line in shown), repr(err)
    assert err.endswith("\r") and not err.split("\r")[-2].strip(), repr(err)  # cleared
    result.cancel()


@pytest.mark.parametrize("setting", ["auto", "false"])
def test_no_progress_line_off_a_terminal_or_when_off(
    senv: TableEnvironment, shared_dir: Path, capsys: pytest.CaptureFixture[str], setting: str
) -> None:
    # Under pytest's capture, standard error is no terminal: auto shows nothing.
    _watched(senv, shared_dir)
    senv.config.set(DISPLAY_PROGRESS, setting)
    result = senv.from_path("Watched").execute().process_all_available()
    capsys.readouterr()
    result.wait(timeout_s=WAIT_S)
    assert capsys.readouterr().err == ""
    result.cancel()


_WAITING_PROGRAM = textwrap.dedent(
    """
    import sys
    from tableapi import Schema, TableDescriptor, TableEnvironment

    env = TableEnvironment.create(mode="streaming", remote=sys.argv[1])
    schema = Schema.new_builder().column("k", "BIGINT").column("v", "BIGINT").build()
    env.create_temporary_table("Watched", TableDescriptor.for_connector("filesystem")
        .schema(schema).option("path", sys.argv[2]).option("format", "json")
        .option("changelog.op-column", "op").option("source.monitor-interval", "100 ms").build())
    result = env.from_path("Watched").execute()
    result.wait(timeout_s=float(sys.argv[3]))
    result.cancel()
    print("waited", file=sys.stderr)
    """
)


def _run_waiting_program(server_url: str, table: Path, stderr_on_a_terminal: bool) -> str:
    """The program's standard error, from a pseudo-terminal or a pipe."""
    command = [sys.executable, "-c", _WAITING_PROGRAM, server_url, str(table), str(WAIT_S)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    if not stderr_on_a_terminal:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stderr
    parent, child = pty.openpty()
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=child, env=env
    )
    os.close(child)
    out = bytearray()
    while True:
        try:
            chunk = os.read(parent, 4096)
        except OSError:  # the program closed the terminal (Linux: EIO)
            break
        if not chunk:
            break
        out += chunk
    os.close(parent)
    assert process.wait(timeout=300) == 0, out.decode(errors="replace")[-3000:]
    return out.decode(errors="replace")


def test_auto_shows_the_line_on_a_terminal_and_not_on_a_pipe(
    senv: TableEnvironment, shared_dir: Path, server_url: str
) -> None:
    table = _watched(senv, shared_dir)
    on_terminal = _run_waiting_program(server_url, table.path, stderr_on_a_terminal=True)
    assert "waited" in on_terminal
    assert re.search(r"\r\[tableapi\] running \d+ s, \d+ micro-batch", on_terminal), on_terminal
    on_pipe = _run_waiting_program(server_url, table.path, stderr_on_a_terminal=False)
    assert "waited" in on_pipe
    assert "[tableapi]" not in on_pipe


def test_a_forced_progress_line_shows_a_batch_jobs_tasks(
    env: TableEnvironment, capsys: pytest.CaptureFixture[str]
) -> None:
    env.config.set(DISPLAY_PROGRESS, "true")
    # Two tasks that sleep: a job that runs past the line's delay on any number of cores.
    sleep = f"reflect('java.lang.Thread', 'sleep', cast({int(WAIT_S * 1000)} as bigint))"
    sleeping = env.spark.range(0, 2, 1, 2).selectExpr(f"id + 0 * length(coalesce({sleep}, '')) n")
    capsys.readouterr()
    assert sorted(r.n for r in env.from_spark(sleeping).execute().collect()) == [0, 1]
    err = capsys.readouterr().err
    shown = [part for part in err.split("\r") if part.strip()]
    assert shown, repr(err)
    assert all(
        re.fullmatch(r"\[tableapi\] running \d+ s, \d of \d tasks, \d+ B read *", line)
        for line in shown
    ), repr(err)
    assert any(" of 2 tasks" in line for line in shown), repr(err)


def test_materialize_applies_the_changelog_as_it_streams(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    # 10 keys, each updated 12,000 times: a changelog of 240,010 changes for a 10-row table.
    table = ChangelogTable(
        senv, shared_dir, "Updates", [("k", "BIGINT"), ("v", "BIGINT")], bounded=True
    )
    keys, updates = 10, 12_000
    changes = [("+I", (k, 0)) for k in range(keys)]
    for v in range(updates):
        for k in range(keys):
            changes += [("-U", (k, v)), ("+U", (k, v + 1))]
    table.append(changes)
    result = senv.from_path("Updates").select(col("k"), col("v")).execute()

    tracemalloc.start()
    frame = result.materialize()
    _, streamed_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    changelog = result.collect()
    _, collected_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    got = Counter(tuple(int(v) for v in row) for row in frame.itertuples(index=False))
    assert got == table.rows == Counter((k, updates) for k in range(keys))
    assert len(changelog) == len(changes)
    assert Counter(apply_changelog(changelog)) == got  # what materialize() used to compute
    # The whole changelog in the client is tens of MB; streamed, a batch of it at a time.
    assert streamed_peak * 5 < collected_peak, (streamed_peak, collected_peak)
    result.cancel()
