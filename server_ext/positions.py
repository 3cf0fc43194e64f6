"""Row positions in reading order, the Python twin of the JVM plugin's ``position`` relation
(``server_ext/jvm/.../Positions.java``), for a server without the plugin.

A pandas UDF right above a file scan sees a task's rows batch after batch, in the order the
task reads them; one counter per worker process only grows, so within a task the numbers
follow that order. The client puts the file's time, name and split start in front of it
(``__seq``): the changes of one file then keep their order through any shuffle or sort.

Example::

    >>> import pandas as pd
    >>> first = list(next_positions(pd.Series([0, 0, 0])))
    >>> second = list(next_positions(pd.Series([0, 0])))
    >>> first[1] - first[0], second[0] > first[-1]
    (1, True)
"""

from __future__ import annotations

import threading

import pandas as pd

_next = [0]  # the worker's next position
_lock = threading.Lock()


def next_positions(anything: pd.Series) -> pd.Series:
    """As many new positions as ``anything`` has rows (its values are not read: a pandas UDF
    needs an argument to know the batch's length)."""
    n = len(anything)
    with _lock:
        start = _next[0]
        _next[0] = start + n
    return pd.Series(range(start, start + n), dtype="int64")
