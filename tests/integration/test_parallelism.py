"""A streaming query's parallelism (``table.exec.resource.default-parallelism``, issue 24):
its state is split into that many partitions (Spark's shuffle partitions), which its first
checkpoint fixes; a resumed query that asks for another number is refused before it runs,
naming both numbers, rather than quietly run with the checkpoint's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from server_ext.conf import SHUFFLE_PARTITIONS
from tableapi import Table, TableEnvironment, col
from tableapi.config import CHECKPOINT_DIR, DEFAULT_PARALLELISM, PIPELINE_NAME
from tableapi.errors import ValidationError
from tableapi.execution.streaming import checkpoint_partitions
from tableapi.result import apply_changelog
from tests.integration.files import register_json


def _left_join(senv: TableEnvironment, root: Path, rows: int) -> Table:
    register_json(senv, root, "A", "a_k BIGINT, a_v STRING", [(k, f"a{k}") for k in range(rows)])
    register_json(
        senv, root, "B", "b_k BIGINT, b_v STRING", [(k, f"b{k}") for k in range(0, rows, 2)]
    )
    return senv.from_path("A").left_outer_join(senv.from_path("B"), col("a_k") == col("b_k"))


def test_parallelism_splits_state_and_a_resumed_query_must_keep_it(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    joined = _left_join(senv, shared_dir, 10)
    senv.config.set(CHECKPOINT_DIR, str(shared_dir / "checkpoints"))
    senv.config.set(PIPELINE_NAME, "split-in-three")
    senv.config.set(DEFAULT_PARALLELISM, "3")
    first = joined.execute()
    want = Counter(
        (k, f"a{k}", k if k % 2 == 0 else None, f"b{k}" if k % 2 == 0 else None) for k in range(10)
    )
    assert Counter(apply_changelog(first.collect())) == want  # a valid changelog, applied
    checkpoint = str(shared_dir / "checkpoints" / "split-in-three" / "checkpoint")
    assert checkpoint_partitions(senv.spark, checkpoint) == 3
    state = shared_dir / "checkpoints" / "split-in-three" / "checkpoint" / "state" / "0"
    assert sorted(p.name for p in state.iterdir() if p.name.isdigit()) == ["0", "1", "2"]

    senv.config.set(DEFAULT_PARALLELISM, "5")
    with pytest.raises(ValidationError) as refused:
        joined.execute()
    text = str(refused.value)
    assert "split into 3 partitions" in text and "asks for 5" in text, text
    assert f"{DEFAULT_PARALLELISM}=3" in text, text

    senv.config.set(DEFAULT_PARALLELISM, "3")  # the checkpoint's own number resumes
    again = joined.execute()
    assert len(again.materialize()) == 10


def test_a_fresh_query_takes_the_parallelism_it_asks_for_and_the_servers_without(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    server_default = int(senv.spark.conf.get(SHUFFLE_PARTITIONS))
    assert server_default == 4  # python -m server_ext serve's
    joined = _left_join(senv, shared_dir, 6)
    senv.config.set(CHECKPOINT_DIR, str(shared_dir / "checkpoints"))
    for job, asked, want in (("two", "2", 2), ("unset", "-1", server_default)):
        senv.config.set(PIPELINE_NAME, job)
        senv.config.set(DEFAULT_PARALLELISM, asked)
        joined.execute()
        checkpoint = str(shared_dir / "checkpoints" / job / "checkpoint")
        assert checkpoint_partitions(senv.spark, checkpoint) == want, job
    assert checkpoint_partitions(senv.spark, str(shared_dir / "nothing-here")) is None
