"""Each row's file's modification time in nanoseconds, the Python twin of the JVM plugin's
``file_time`` relation (``server_ext/jvm/.../FileTimes.java``), for a server without the plugin.

Spark's ``_metadata.file_modification_time`` has milliseconds only; files written back to back
mostly share one, and a changelog's retraction could then be applied before the row it
retracts. A local file's time is read to the nanosecond the filesystem keeps (another
filesystem's, ``hdfs:`` or ``s3a:``, is left to Spark's milliseconds by the caller). Two files
of one directory that hold rows and still tie fail the query, naming both, as the plugin does.

Example::

    >>> import os, tempfile, pandas as pd
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "a.json"), "w") as f:
    ...     _ = f.write("{}")
    >>> times = file_times(pd.Series(["file://" + d + "/a.json"]), pd.Series([0]), pd.Series(["T"]))
    >>> int(times[0]) == os.stat(os.path.join(d, "a.json")).st_mtime_ns
    True
"""

from __future__ import annotations

import os
import threading
from urllib.parse import unquote, urlparse

import pandas as pd

_lock = threading.Lock()
# directory -> (file -> time, time -> files holding rows at that time)
_listings: dict[str, tuple[dict[str, int], dict[int, list[str]]]] = {}


def _listing(directory: str) -> tuple[dict[str, int], dict[int, list[str]]]:
    times: dict[str, int] = {}
    with os.scandir(directory) as entries:
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed while listed (a writer's temporary file)
            # Spark's reader skips names starting with '_' or '.'; an empty file has no rows.
            if e.is_file() and st.st_size > 0 and e.name[0] not in "_.":
                times[e.path] = st.st_mtime_ns
    by_time: dict[int, list[str]] = {}
    for f, t in sorted(times.items()):
        by_time.setdefault(t, []).append(f)
    return times, by_time


def file_time(uri: str, table: str = "") -> int:
    """The modification time in nanoseconds of the local file at ``uri`` (``file:/...``);
    raises when another file of its directory that holds rows has the same time."""
    path = unquote(urlparse(uri).path) if uri.startswith("file:") else uri
    directory = os.path.dirname(path)
    with _lock:
        listing = _listings.get(directory)
        if listing is None or path not in listing[0]:
            listing = _listings[directory] = _listing(directory)
    times, by_time = listing
    if path not in times:
        return os.stat(path).st_mtime_ns  # not listed (removed since?): no tie to check
    time = times[path]
    tied = by_time[time]
    if len(tied) > 1:
        other = tied[1] if tied[0] == path else tied[0]
        of_table = f" of table {table}" if table else ""
        raise RuntimeError(
            f"Changelog files {other} and {path}{of_table} have the same modification time "
            f"({time} ns since the epoch): the order of their changes is unknown. Write each "
            "file after the previous one is complete (distinct modification times), or name "
            "the files in the order they must be applied and set 'changelog.file-order' = "
            "'name' on the table."
        )
    return time


def file_times(paths: pd.Series, micros: pd.Series, tables: pd.Series) -> pd.Series:
    """A pandas UDF's body: :func:`file_time` of each local path, each file asked about once
    per batch; another filesystem's file keeps Spark's time (``micros``, epoch microseconds
    of its milliseconds). ``tables``: the table's name, for the message."""
    table = str(tables.iloc[0]) if len(tables) else ""
    known: dict[str, int] = {}
    out = []
    for p, us in zip(paths, micros, strict=True):
        if p not in known:
            known[p] = file_time(p, table) if p.startswith("file:") else int(us) * 1000
        out.append(known[p])
    return pd.Series(out, dtype="int64")
