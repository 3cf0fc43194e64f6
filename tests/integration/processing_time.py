"""Tests of a state TTL that do not depend on how loaded the machine is.

A TTL runs on the engine's processing time: each micro-batch's timestamp, which Spark takes
once it has listed the files the batch reads (``state.getCurrentProcessingTimeMs()``). So a
batch's timestamp is at or after the wall-clock time at which the test wrote its files, and
at or before the time ``process_all_available()`` returned. From those readings a test knows,
whatever the load:

- ``within_ttl``: two batches ran within the TTL of each other when the wall-clock time from
  before the first's files to after the second ran is under it (else it tries again, with
  the step's next attempt: a loaded machine only costs another try);
- ``wait_past``: a batch whose files are written after ``ran_by + ttl`` runs more than the
  TTL after any batch that had run by ``ran_by``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

# What a machine so loaded that no two small micro-batches fit in a TTL gets: a failure
# that says so (a test must end), not a wrong verdict on the product.
ATTEMPTS = 5
MARGIN_S = 0.1  # the engine's timestamps are whole milliseconds


def within_ttl(ttl_s: float, step: Callable[[int], None]) -> tuple[int, float]:
    """Run ``step(attempt)`` (it writes files and processes them in two or more
    micro-batches) until an attempt's batches all ran within ``ttl_s`` of each other;
    return that attempt and the wall-clock time by which its batches had run."""
    for attempt in range(ATTEMPTS):
        started = time.time()
        step(attempt)
        ended = time.time()
        print(f"attempt {attempt}: its micro-batches ran within {ended - started:.1f} s")
        if ended - started < ttl_s - MARGIN_S:
            return attempt, ended
    pytest.fail(f"no attempt of {ATTEMPTS} ran its micro-batches within {ttl_s} s")


def wait_past(ran_by: float, ttl_s: float) -> None:
    """Sleep until a micro-batch whose files are written now runs more than ``ttl_s``
    after every batch that had run by ``ran_by`` (a wall-clock reading)."""
    time.sleep(max(0.0, ran_by + ttl_s + MARGIN_S - time.time()))
