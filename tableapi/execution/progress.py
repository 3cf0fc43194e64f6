"""A long call's sign of life: one line on standard error, rewritten in place.

A streaming query that runs for more than a few seconds (``execute()`` of bounded inputs,
``process_all_available()``, ``wait()``) shows its micro-batches and the rows it has read,
from the query's progress reports; a Spark job run for a result (a batch result's rows, a
streaming result's changelog read back) shows its tasks and the bytes read, from Spark
Connect's execution progress. Shown only when standard error is a terminal, unless
``table.display.progress`` says ``true`` or ``false``; the line is cleared when the call returns.

Example::

    >>> import io
    >>> out = io.StringIO()
    >>> terminal = Terminal()
    >>> terminal.show(query_text(12.4, 8, 1_234_567, running=False), out)
    >>> terminal.clear()
    >>> out.getvalue().split("\\r")[1]
    '[tableapi] running 12 s, 8 micro-batches, 1,234,567 rows read'
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from pyspark.sql.connect.session import SparkSession

#: How long a call runs before its progress shows, and how often the line is rewritten.
SHOW_AFTER_S = 3.0
EVERY_S = 1.0


def query_text(elapsed_s: float, batches: int, rows: int, running: bool) -> str:
    """The line for a streaming query: time since it started, the micro-batches it has
    completed and the input rows they read.

    >>> query_text(61.2, 1, 1, running=True)
    '[tableapi] running 61 s, 1 micro-batch, 1 row read; one running'
    """
    text = (
        f"[tableapi] running {elapsed_s:.0f} s, {batches:,} micro-batch{'es' * (batches != 1)}, "
        f"{rows:,} row{'s' * (rows != 1)} read"
    )
    return text + ("; one running" if running else "")


def job_text(elapsed_s: float, done: int, tasks: int, bytes_read: int) -> str:
    """The line for a Spark job: its tasks done and the input it has read.

    >>> job_text(4.0, 37, 200, 1_500_000)
    '[tableapi] running 4 s, 37 of 200 tasks, 1.5 MB read'
    """
    size = float(bytes_read)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            break
        size /= 1000
    shown = f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
    return f"[tableapi] running {elapsed_s:.0f} s, {done:,} of {tasks:,} tasks, {shown} read"


class Terminal:
    """The one progress line: shown, rewritten and cleared under one lock, so that lines
    printed meanwhile (a print sink's) can first clear it (:meth:`paused`).

    >>> import io
    >>> out, terminal = io.StringIO(), Terminal()
    >>> terminal.show("[tableapi] running 3 s", out)
    >>> with terminal.paused():  # the line is gone while something else prints
    ...     out.write("+I[1]\\n") and None
    >>> out.getvalue().split("\\r")[1:]
    ['[tableapi] running 3 s', '                      ', '+I[1]\\n']
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._out: TextIO | None = None
        self._width = 0  # of the line shown; 0: none

    def show(self, text: str, out: TextIO) -> None:
        """Write ``text`` over the line shown (padded to cover a longer one)."""
        with self._lock:
            out.write("\r" + text.ljust(self._width))
            out.flush()
            self._out, self._width = out, len(text)

    def clear(self) -> None:
        """Blank the line, leaving the cursor at its start (nothing when none is shown)."""
        with self._lock:
            if self._out is not None and self._width:
                self._out.write("\r" + " " * self._width + "\r")
                self._out.flush()
            self._out, self._width = None, 0

    def held(self) -> contextlib.AbstractContextManager[Any]:
        """The line's lock: no other thread writes or clears it meanwhile."""
        return self._lock

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Clear the line and keep it off while the block prints (the next tick redraws)."""
        with self._lock:
            self.clear()
            yield


#: The process's progress line (one terminal: every display shares it).
TERMINAL = Terminal()
_watching = threading.Lock()  # held while a display's ticker runs: one line at a time


class QueryStats:
    """A streaming query's completed micro-batches and the rows they read, from its
    progress reports (Spark keeps the last 100: a gap since the last look is filled from
    them), and whether a micro-batch is running.

    >>> class Report:  # a progress report's fields read here
    ...     def __init__(self, batch, rows):
    ...         self.batchId, self.numInputRows = batch, rows
    >>> stats = QueryStats()
    >>> stats.add([Report(0, 10), Report(1, 5), Report(1, 5)])
    >>> stats.batches, stats.rows
    (2, 15)
    """

    def __init__(self) -> None:
        self.batches = 0
        self.rows = 0
        self.running = False
        self._seen: set[int] = set()
        self._last = -1

    def add(self, reports: Iterable[Any]) -> None:
        """Count the reports of batches not counted yet."""
        for report in reports:
            batch = int(report.batchId)
            if batch not in self._seen:
                self._seen.add(batch)
                self.batches += 1
                self.rows += int(report.numInputRows or 0)
                self._last = max(self._last, batch)

    def poll(self, query: Any) -> None:
        """Read the query's latest report (and the recent ones when batches were missed)."""
        last = query.lastProgress
        if last is not None and int(last.batchId) > self._last:
            if self._last >= 0 and int(last.batchId) == self._last + 1:
                self.add([last])
            else:  # the first look, or batches went by since the last one
                self.add(query.recentProgress)
        self.running = bool(query.status.get("isTriggerActive"))


class ProgressDisplay:
    """Shows a call's progress while it runs (see the module's docstring).

    ``setting()`` reads ``table.display.progress`` at each call (True, False, or None:
    when standard error is a terminal); ``spark()`` is the session whose jobs are shown.

    Example::

        display = ProgressDisplay(config.display_progress, server.session)
        with display.query(query):
            query.processAllAvailable()   # after 3 s: [tableapi] running 4 s, 1 micro-batch, ...
        with display.job():
            rows = df.collect()           # after 3 s: [tableapi] running 5 s, 37 of 200 tasks, ...
    """

    def __init__(
        self,
        setting: Callable[[], bool | None],
        spark: Callable[[], SparkSession],
        show_after_s: float = SHOW_AFTER_S,
        every_s: float = EVERY_S,
    ) -> None:
        self._setting = setting
        self._spark = spark
        self._show_after_s = show_after_s
        self._every_s = every_s

    def _enabled(self) -> bool:
        wanted = self._setting()
        return sys.stderr.isatty() if wanted is None else wanted

    @contextlib.contextmanager
    def query(self, query: Any) -> Iterator[None]:
        """While the block waits on streaming ``query``: its micro-batches and rows read."""
        stats = QueryStats()

        def text(elapsed_s: float) -> str:
            stats.poll(query)
            return query_text(elapsed_s, stats.batches, stats.rows, stats.running)

        with self._ticking(text):
            yield

    @contextlib.contextmanager
    def job(self) -> Iterator[None]:
        """While the block runs Spark jobs of this session: their tasks and bytes read."""
        latest: dict[int, Any] = {}  # stage id -> its latest StageInfo

        def handler(stages: Iterable[Any] | None = None, **_: Any) -> None:
            # pyspark passes keywords: stages, inflight_tasks, operation_id, done.
            for stage in stages or ():
                latest[stage.stage_id] = stage

        def text(elapsed_s: float) -> str:
            now = list(latest.values())
            done = sum(s.num_completed_tasks for s in now)
            tasks = sum(s.num_tasks for s in now)
            return job_text(elapsed_s, done, tasks, sum(s.num_bytes_read for s in now))

        if not self._enabled():
            yield
            return
        spark = self._spark()
        spark.registerProgressHandler(handler)  # type: ignore[arg-type]
        try:
            with self._ticking(text):
                yield
        finally:
            spark.removeProgressHandler(handler)  # type: ignore[arg-type]

    @contextlib.contextmanager
    def _ticking(self, text: Callable[[float], str]) -> Iterator[None]:
        """Rewrite the line with ``text(elapsed)`` every second, from the third, until the
        block ends; nothing when progress is off or another call's line is showing."""
        if not self._enabled() or not _watching.acquire(blocking=False):
            yield
            return
        started = time.monotonic()
        stop = threading.Event()

        def tick() -> None:
            if stop.wait(self._show_after_s):
                return
            while True:
                try:
                    line = text(time.monotonic() - started)
                except Exception:  # the query failed or the server went away: the call says
                    return
                with TERMINAL.held():
                    if stop.is_set():  # the call ended while the line was being made
                        return
                    TERMINAL.show(line, sys.stderr)
                if stop.wait(self._every_s):
                    return

        ticker = threading.Thread(target=tick, name="tableapi-progress", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            # A ticker still waiting on a progress RPC sees stop before it would write.
            ticker.join(timeout=self._every_s)
            TERMINAL.clear()
            _watching.release()


__all__ = ["TERMINAL", "ProgressDisplay", "QueryStats", "Terminal", "job_text", "query_text"]
