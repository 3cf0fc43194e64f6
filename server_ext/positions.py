"""Row positions in reading order, the Python twin of the JVM plugin's ``position`` relation
(``server_ext/jvm/.../Positions.java``), for a server without the plugin.

A pandas UDF right above a file scan sees a task's rows batch after batch, in the order the
task reads them; a counter per task attempt, from 0, numbers them in that order, so a task that
runs again (its executor lost) numbers the same rows the same way and its shuffle output stays
the same (Spark's shuffle checksums would otherwise fail the micro-batch as indeterminate). A
Python worker runs one task at a time. The client puts the file's time, name and split start in
front of it (``__seq``): the changes of one file then keep their order through any shuffle or
sort.

Example (outside a task, one running count)::

    >>> import pandas as pd
    >>> first = list(next_positions(pd.Series([0, 0, 0])))
    >>> second = list(next_positions(pd.Series([0, 0])))
    >>> first[1] - first[0], second[0] == first[-1] + 1
    (1, True)
"""

from __future__ import annotations

import threading

import pandas as pd

_lock = threading.Lock()
_task: int | None = None  # the task attempt the worker numbers rows for
_next = 0  # its next position


def next_positions(anything: pd.Series) -> pd.Series:
    """As many new positions as ``anything`` has rows (its values are not read: a pandas UDF
    needs an argument to know the batch's length)."""
    global _task, _next
    from pyspark import TaskContext

    context = TaskContext.get()
    task = context.taskAttemptId() if context is not None else None
    n = len(anything)
    with _lock:
        if _task != task:
            _task, _next = task, 0
        start = _next
        _next = start + n
    return pd.Series(range(start, start + n), dtype="int64")
