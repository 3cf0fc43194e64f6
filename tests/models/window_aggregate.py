"""Flink's window aggregation over a window TVF (SlicingWindowOperator with
SliceSharedWindowAggProcessor / SliceUnsharedWindowAggProcessor) in plain Python: the model the
JVM operator (``WindowAggregate.java``) is compared with, batch by batch.

Unlike the operator (one set of accumulators per window), the model keeps Flink's slices: a
row goes into ONE slice (TUMBLE: its window; HOP: its slide-sized slice; CUMULATE: its step-
sized slice), and a window's result is computed, when it fires, from the rows of the slices
it spans. A micro-batch's watermark arrives before its rows (it fires what it passes first,
as Flink does when a watermark comes). Timers as Flink's: a row registers its slice's end
(the end of the first window that holds it); firing window ``E`` registers the next window
``E + slide`` (HOP: if one of its slices has rows; CUMULATE: until the max size), then
purges the slices no later window needs. A window fires once the watermark reaches ``E - 1``
(``isWindowFired``). A row whose slice has fired is late: dropped if the last window of its
slice has fired too, else kept in its slice with a timer at the first window not yet fired.
Results come from ``tests.models.aggregate.result`` (COUNT(*), COUNT, SUM, AVG, MIN, MAX)
over the rows; the DISTINCT forms over their distinct values. A changelog input: a row
``(key, row, time, kind)`` of kind ``-U``/``-D`` takes one equal row out of its slice (as
late as an insert would be: dropped when its slice's last window has fired); a window left
without rows emits nothing.

Example::

    >>> from server_ext.aggregate_spec import AggCall
    >>> from server_ext.window_spec import WindowAggregateSpec
    >>> spec = WindowAggregateSpec((("k", "BIGINT"), ("v", "INT")), 1,
    ...     (AggCall("count_star"), AggCall("sum", 1, result_type="INT")), "hop", 10, 5,
    ...     columns=("key0", "window_start", "window_end", "agg0", "agg1"))
    >>> m = WindowAggModel(spec)
    >>> m.batch(None, [(1, (1, 3), 7)]), m.batch(9, []), m.batch(20, [])
    ([], [('+I', 1, 0, 10, 1, 3)], [('+I', 1, 5, 15, 1, 3)])
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from server_ext.window_spec import WindowAggregateSpec
from tests.models.aggregate import result


class WindowAggModel:
    """One operator's keys: per key its slices (slice end -> rows) and its window timers;
    times are epoch ms. ``batch(watermark, rows)``: the rows ``(key, row, time)`` of a
    micro-batch seen with ``watermark`` (None: none yet): the windows that watermark fires, then the
    rows."""

    def __init__(self, spec: WindowAggregateSpec) -> None:
        self.spec = spec
        self.slices: dict[Any, dict[int, list[tuple]]] = defaultdict(lambda: defaultdict(list))
        self.timers: dict[Any, set[int]] = defaultdict(set)
        kind, size, step = spec.window, spec.size_ms, spec.step_ms
        self.slice = size if kind == "tumble" else step or size  # a slice's length
        self.interval = self.slice  # between window ends

    # -- Flink's SliceAssigners ------------------------------------------------------------------
    def _start(self, ts: int, size: int) -> int:
        return ts - (ts - self.spec.offset_ms) % size

    def slice_end(self, ts: int) -> int:
        return self._start(ts, self.slice) + self.slice

    def window_start(self, window_end: int) -> int:
        if self.spec.window == "cumulate":
            return self._start(window_end - 1, self.spec.size_ms)
        return window_end - self.spec.size_ms

    def last_window_end(self, slice_end: int) -> int:
        if self.spec.window == "hop":
            return slice_end - self.slice + self.spec.size_ms
        if self.spec.window == "cumulate":
            return self._start(slice_end - 1, self.spec.size_ms) + self.spec.size_ms
        return slice_end

    def window_slices(self, window_end: int) -> range:
        """The ends of the slices a window spans."""
        return range(self.window_start(window_end) + self.slice, window_end + 1, self.slice)

    # -- the operator ----------------------------------------------------------------------------
    def batch(self, watermark: int | None, rows: list[tuple[Any, tuple, int | None]]) -> list:
        def fired(end: int) -> bool:
            return watermark is not None and end - 1 <= watermark

        # Flink fires the timers a watermark passes when it arrives, before the rows after it
        out = self.fire_due(fired)
        for key, row, ts, *kind in rows:
            if ts is None:
                continue
            end = self.slice_end(ts)
            if fired(end):
                if fired(self.last_window_end(end)):
                    continue  # late for every window of its slice: dropped
                first = end
                while fired(first):
                    first += self.interval
                self.timers[key].add(first)
            else:
                self.timers[key].add(end)
            rows_of_slice = self.slices[key][end]
            if kind and kind[0] in ("-U", "-D"):
                if row in rows_of_slice:  # (the test changelogs retract only rows they added)
                    rows_of_slice.remove(row)
            else:
                rows_of_slice.append(row)
        return out + self.fire_due(fired)  # (rows register no timer the watermark passed)

    def fire_due(self, fired: Any) -> list[tuple]:
        """Fires every key's timers the watermark has passed, in time order."""
        out = []
        for key in list(self.timers):
            while True:
                due = sorted(e for e in self.timers[key] if fired(e))
                if not due:
                    break
                window_end = due[0]
                self.timers[key].discard(window_end)
                out += self.fire(key, window_end)
            if not self.timers[key]:
                del self.timers[key]
                self.slices.pop(key, None)
        return out

    def fire(self, key: Any, window_end: int) -> list[tuple]:
        slices = self.slices[key]
        rows = [r for s in self.window_slices(window_end) for r in slices.get(s, [])]
        out = [self.output(key, window_end, rows)] if rows else []
        kind, start = self.spec.window, self.window_start(window_end)
        following = window_end + self.interval
        if kind == "hop" and any(slices.get(s) for s in self.window_slices(following)):
            self.timers[key].add(following)
        if kind == "cumulate" and following <= start + self.spec.size_ms:
            self.timers[key].add(following)
        # purge what no later window reads
        if kind == "hop":
            slices.pop(window_end - self.spec.size_ms + self.slice, None)
        elif kind == "tumble" or window_end == start + self.spec.size_ms:
            for s in self.window_slices(window_end):
                slices.pop(s, None)
        return out

    def output(self, key: Any, window_end: int, rows: list[tuple]) -> tuple:
        return _output(self.spec, key, self.window_start(window_end), window_end, rows)


class SessionAggModel:
    """Flink's session window aggregation (UnsliceWindowAggProcessor over a MergingWindowSet
    with a session assigner), per key (the session's partition): a row at ``ts`` adds the
    window ``[ts, ts + gap)`` to the key's set, which merges it with every window it
    intersects (``TimeWindow.intersects``: bounds included) into their cover, their rows
    together. If the resulting window is late (``end - 1 <= watermark``: it could only be so
    when nothing merged) the row is dropped (``isWindowLate``, then ``retireWindow``). A
    window fires (``+I``, then is purged) once the watermark reaches ``end - 1``; a
    micro-batch's watermark fires before its rows, as in ``WindowAggModel``.

    >>> from server_ext.aggregate_spec import AggCall
    >>> from server_ext.window_spec import WindowAggregateSpec
    >>> spec = WindowAggregateSpec((("k", "BIGINT"), ("v", "INT")), 1,
    ...     (AggCall("count_star"),), "session", 5,
    ...     columns=("key0", "window_start", "window_end", "agg0"))
    >>> m = SessionAggModel(spec)
    >>> m.batch(None, [(1, (1, 3), 1), (1, (1, 4), 6), (1, (1, 5), 20)])
    []
    >>> m.batch(11, [(1, (1, 6), 2)])  # fires [1, 11); the row at 2 is late then
    [('+I', 1, 1, 11, 2)]
    """

    def __init__(self, spec: WindowAggregateSpec) -> None:
        self.spec = spec
        self.gap = spec.size_ms
        self.windows: dict[Any, dict[tuple[int, int], list[tuple]]] = defaultdict(dict)

    def batch(self, watermark: int | None, rows: list[tuple[Any, tuple, int | None]]) -> list:
        def fired(end: int) -> bool:
            return watermark is not None and end - 1 <= watermark

        out = self.fire_due(fired)
        for key, row, ts in rows:
            if ts is None:
                continue
            windows = self.windows[key]
            start, end = ts, ts + self.gap
            touching = [w for w in windows if w[0] <= end and w[1] >= start]
            merged = [row]
            for w in touching:
                start, end = min(start, w[0]), max(end, w[1])
                merged = windows.pop(w) + merged
            if fired(end):
                continue  # late: retired
            windows[(start, end)] = merged
        return out + self.fire_due(fired)

    def fire_due(self, fired: Any) -> list[tuple]:
        out = []
        for key in list(self.windows):
            windows = self.windows[key]
            for w in sorted((w for w in windows if fired(w[1])), key=lambda w: (w[1], w[0])):
                out.append(_output(self.spec, key, w[0], w[1], windows.pop(w)))
            if not windows:
                del self.windows[key]
        return out


def window_model(spec: WindowAggregateSpec) -> WindowAggModel | SessionAggModel:
    """The model of the operator ``spec`` runs.

    >>> from server_ext.aggregate_spec import AggCall
    >>> spec = WindowAggregateSpec((("v", "INT"),), 0, (AggCall("count_star"),), "session", 5)
    >>> type(window_model(spec)).__name__
    'SessionAggModel'
    """
    return SessionAggModel(spec) if spec.window == "session" else WindowAggModel(spec)


def _output(spec: WindowAggregateSpec, key: Any, start: int, end: int, rows: list) -> tuple:
    """A window's ``+I`` row: the spec's columns over the window's rows."""
    keys = key if isinstance(key, tuple) else (key,)
    values = []
    for c in spec.columns:
        if c == "window_start":
            values.append(start)
        elif c == "window_end":
            values.append(end)
        elif c == "window_time":
            values.append(end - 1)
        elif c.startswith("key"):
            values.append(keys[int(c[3:])])
        else:
            a = spec.aggs[int(c[3:])]
            args = [r[a.arg] if a.arg is not None else None for r in rows]
            if a.distinct:
                args = list(dict.fromkeys(v for v in args if v is not None))
            values.append(result(a.function, a.result_type, args, len(rows)))
    return ("+I", *values)


__all__ = ["SessionAggModel", "WindowAggModel", "window_model"]
