"""The ``print`` sink's side of execution: Flink's print format, and the client-side printer
that follows a streaming insert.

Flink's print connector writes ``Row.toString()``: the row kind, then the fields as Java
prints them (``null``, ``true``, ``2.5``, ``1.0E7``, ``2026-01-01T10:00``, ...). The lines
are printed by the client (see :mod:`tableapi.connectors.print_sink` for why): a batch
insert prints its rows as they are fetched; a streaming insert has a :class:`Printer` that
prints each micro-batch's changes once the batch has committed them to the query's memory
sink, in change order.

Example::

    >>> from tableapi.types import BIGINT, DOUBLE, STRING, RowType
    >>> row_type = RowType.of(("id", BIGINT), ("name", STRING), ("price", DOUBLE))
    >>> print_line(RowKind.UPDATE_BEFORE, (1, None, 1e7), row_type, "shop> ")
    'shop> -U[1, null, 1.0E7]'
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tableapi.execution.progress import TERMINAL
from tableapi.result import RowKind, StreamingTableResult
from tableapi.types import DataType, RowType

#: How often the printer asks a running query whether a micro-batch has committed.
POLL_SECONDS = 0.2


def flink_string(value: Any, data_type: DataType) -> str:
    """``value`` as Flink's print connector shows a field of ``data_type``: Java's
    ``toString`` of the field's external type.

    >>> from tableapi.types import DataType
    >>> [flink_string(v, DataType.parse(t)) for v, t in [
    ...     (None, "INT"), (True, "BOOLEAN"), (0.1, "DOUBLE"), (1e-5, "DOUBLE"),
    ...     (1.100000023841858, "FLOAT"), (decimal.Decimal("1.50"), "DECIMAL(3, 2)"),
    ...     (dt.datetime(2026, 1, 1, 10, 0), "TIMESTAMP(3)"),
    ...     (dt.datetime(2026, 1, 1, 10, 0, 5, 120000), "TIMESTAMP(3)"),
    ...     (dt.datetime(2026, 1, 1, 10, 0), "TIMESTAMP_LTZ(3)"), (dt.date(2026, 1, 2), "DATE"),
    ...     (b"x\\xff", "BYTES"), (dt.timedelta(hours=26, seconds=4.5), "INTERVAL")]]
    ['null', 'true', '0.1', '1.0E-5', '1.1', '1.50', '2026-01-01T10:00', \
'2026-01-01T10:00:05.120', '2026-01-01T10:00:00Z', '2026-01-02', '[120, -1]', 'PT26H4.5S']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_float(value, single=data_type.name == "FLOAT")
    if isinstance(value, dt.datetime):
        if data_type.name == "TIMESTAMP_LTZ":
            if value.tzinfo is not None:
                value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return _java_time(value, seconds_always=True) + "Z"
        return _java_time(value, seconds_always=False)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if isinstance(value, dt.timedelta):
        return _java_duration(value)
    return str(value)  # integers, DECIMAL (Python's and Java's decimal strings agree), STRING


def print_line(kind: RowKind, values: Sequence[Any], row_type: RowType, prefix: str = "") -> str:
    """One line of the print sink: ``<prefix><kind>[<field>, ...]``.

    >>> from tableapi.types import BIGINT, STRING, RowType
    >>> print_line(RowKind.INSERT, (1, "pen"), RowType.of(("id", BIGINT), ("name", STRING)))
    '+I[1, pen]'
    """
    fields = ", ".join(flink_string(v, f.type) for v, f in zip(values, row_type, strict=True))
    return f"{prefix}{kind.short_string}[{fields}]"


#: Flink's tableau: the widest a column gets (longer values end in "..."), how NULL shows.
TABLEAU_MAX_WIDTH = 30
TABLEAU_NULL = "<NULL>"


def tableau_string(value: Any, data_type: DataType) -> str:
    """``value`` as Flink's ``TableResult.print()`` (and its SQL client) shows it: SQL's
    text for a type (``TRUE``, ``2024-01-01 10:00:00.500`` to the type's precision), Java's
    for a floating-point number (``1.0E7``).

    >>> from tableapi.types import DataType
    >>> [tableau_string(v, DataType.parse(t)) for v, t in [(None, "INT"), (True, "BOOLEAN"),
    ...     (1e7, "DOUBLE"), (dt.datetime(2024, 1, 1, 10, 0, 0, 500000), "TIMESTAMP(3)"),
    ...     (dt.datetime(2024, 1, 1, 10), "TIMESTAMP(0)"), (dt.date(2024, 1, 2), "DATE")]]
    ['<NULL>', 'TRUE', '1.0E7', '2024-01-01 10:00:00.500', '2024-01-01 10:00:00', '2024-01-02']
    """
    if value is None:
        return TABLEAU_NULL
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone().replace(tzinfo=None)  # the session's time zone
        precision = data_type.params[0] if data_type.params else 6
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{value.microsecond:06d}"[: precision + 1] if precision else "")
    return flink_string(value, data_type)


def _tableau_width(data_type: DataType) -> int:
    """Flink's column width by type (PrintStyle's): the longest value of the type."""
    name, params = data_type.name, data_type.params
    fixed = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "BOOLEAN": 5, "DATE": 10}
    if name in fixed:
        return fixed[name]
    if name == "DECIMAL":
        return params[0] + 2  # a sign and a point
    if name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        precision = params[0] if params else 6
        return 19 + (precision + 1 if precision else 0)
    return TABLEAU_MAX_WIDTH


def sql_client_tableau(
    row_type: RowType,
    rows: Sequence[tuple[RowKind, Sequence[Any]]],
    kinds: bool,
    by_content: bool = False,
) -> str:
    """Rows as Flink's ``TableResult.print()`` and SQL client print them: a box whose
    columns are as wide as their type's longest value (at most 30), every value
    right-aligned, an ``op`` column of row kinds for a streaming result; ``Empty set``.

    >>> from tableapi.types import INT, STRING, RowType
    >>> print(sql_client_tableau(RowType.of(("n", INT), ("s", STRING)),
    ...                          [(RowKind.INSERT, (1, "pen")), (RowKind.DELETE, (2, None))],
    ...                          kinds=True))  # doctest: +NORMALIZE_WHITESPACE
    +----+-------------+--------------------------------+
    | op |           n |                              s |
    +----+-------------+--------------------------------+
    | +I |           1 |                            pen |
    | -D |           2 |                         <NULL> |
    +----+-------------+--------------------------------+
    2 rows in set

    ``by_content``: columns as wide as their longest value, uncut (how Flink prints the
    result of SHOW and DESCRIBE).
    """
    if not rows:
        return "Empty set"
    names = (["op"] if kinds else []) + list(row_type.names)
    widths = [2] if kinds else []
    if by_content:
        shown = [[tableau_string(v, f.type) for v, f in zip(r, row_type, strict=True)]
                 for _, r in rows]  # fmt: skip
        widths += [max([len(n), *(len(t[i]) for t in shown)]) for i, n in enumerate(row_type.names)]
    else:
        widths += [
            max(len(f.name), _tableau_width(f.type), len(TABLEAU_NULL)) for f in row_type.fields
        ]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def cells(values: Sequence[str]) -> str:
        cut = [
            v if len(v) <= w else v[: w - 3] + "..." for v, w in zip(values, widths, strict=True)
        ]
        return "| " + " | ".join(v.rjust(w) for v, w in zip(cut, widths, strict=True)) + " |"

    body = [line, cells(names), line]
    for kind, values in rows:
        texts = [tableau_string(v, f.type) for v, f in zip(values, row_type, strict=True)]
        body.append(cells(([kind.short_string] if kinds else []) + texts))
    body += [line, f"{len(rows)} row{'s' if len(rows) != 1 else ''} in set"]
    return "\n".join(body)


def _java_float(x: float, single: bool) -> str:
    """Java's ``Double.toString`` (``Float.toString`` when ``single``): the shortest digits
    that read back as the same number, plain between 10^-3 and 10^7, else ``d.dddE<n>``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    shortest = _shortest_single(x) if single else repr(x)
    sign, digit_tuple, exponent = decimal.Decimal(shortest).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # where the decimal point goes, counted from the left
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            text = "0." + "0" * -point + digits
        elif point >= len(digits):
            text = digits + "0" * (point - len(digits)) + ".0"
        else:
            text = digits[:point] + "." + digits[point:]
    else:
        text = f"{digits[0]}.{digits[1:] or '0'}E{point - 1}"
    return ("-" if sign else "") + text


def _shortest_single(x: float) -> str:
    """The shortest decimal text that reads back as the same 32-bit float as ``x``."""
    single = struct.unpack("f", struct.pack("f", x))[0]
    for precision in range(1, 10):
        text = f"{x:.{precision}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return text
    return repr(x)


def _java_time(v: dt.datetime, seconds_always: bool) -> str:
    """``LocalDateTime.toString`` (seconds only when not zero), or ``Instant.toString``'s
    date and time (``seconds_always``); the fraction in groups of three digits."""
    text = f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}"
    if seconds_always or v.second or v.microsecond:
        text += f":{v.second:02d}"
    if v.microsecond:
        millis, micros = divmod(v.microsecond, 1000)
        text += f".{millis:03d}" if micros == 0 else f".{v.microsecond:06d}"
    return text


def _java_duration(d: dt.timedelta) -> str:
    """``java.time.Duration.toString``: ``PT26H3M4.5S``, ``PT0S``, ``PT-1.5S``."""
    total_us = d // dt.timedelta(microseconds=1)
    if total_us == 0:
        return "PT0S"
    seconds, micros = divmod(total_us, 1_000_000)  # floor: micros >= 0, as Java's nanos
    effective = seconds + 1 if seconds < 0 and micros > 0 else seconds
    hours = int(effective / 3600)  # Java's division truncates toward zero
    minutes = int((effective - hours * 3600) / 60)
    secs = effective - hours * 3600 - minutes * 60
    text = "PT"
    if hours:
        text += f"{hours}H"
    if minutes:
        text += f"{minutes}M"
    if secs == 0 and micros == 0 and len(text) > 2:
        return text
    text += "-0" if seconds < 0 and micros > 0 and secs == 0 else str(secs)
    if micros:
        fraction = (2_000_000 - micros) if seconds < 0 else (micros + 1_000_000)
        text += "." + str(fraction)[1:].rstrip("0")
    return text + "S"


class Printer:
    """Prints a streaming insert's changes on the client, micro-batch after micro-batch.

    ``read_from(n)`` returns the changes the query has committed after its first ``n``, in
    change order, each as ``(kind, values)``; ``write`` prints one line. A background thread
    reads whenever the query reports a new micro-batch; :meth:`finish` stops it and prints
    what is left (call it once the query has stopped).

    >>> from tableapi.types import BIGINT, RowType
    >>> changes = [(RowKind.INSERT, (1,)), (RowKind.UPDATE_BEFORE, (1,))]
    >>> printer = Printer(lambda n: changes[n:], RowType.of(("id", BIGINT)), "ids> ", False)
    >>> printer.drain()
    ids> +I[1]
    ids> -U[1]
    >>> changes.append((RowKind.UPDATE_AFTER, (2,)))
    >>> printer.drain()  # only what is new
    ids> +U[2]
    """

    def __init__(
        self,
        read_from: Callable[[int], list[tuple[RowKind, tuple[Any, ...]]]],
        row_type: RowType,
        prefix: str,
        standard_error: bool,
    ) -> None:
        self._read_from = read_from
        self._row_type = row_type
        self._prefix = prefix
        self._standard_error = standard_error
        self._printed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, query: Any) -> None:
        """Follow ``query`` (a started streaming query) until it stops or :meth:`finish`.

        >>> from tableapi.types import BIGINT, RowType
        >>> class Stopped:  # a query that has ended
        ...     lastProgress, isActive = None, False
        >>> printer = Printer(lambda n: [(RowKind.INSERT, (7,))][n:],
        ...                   RowType.of(("id", BIGINT)), "", False)
        >>> printer.start(Stopped())
        >>> printer.finish()
        +I[7]
        >>> printer.finish()  # once
        """
        self._thread = threading.Thread(
            target=self._follow, args=(query,), name="tableapi-print-sink", daemon=True
        )
        self._thread.start()

    def _follow(self, query: Any) -> None:
        seen: Any = None
        try:
            while not self._stop.wait(POLL_SECONDS):
                progress = query.lastProgress
                batch = progress.batchId if progress is not None else None
                if batch != seen:
                    seen = batch
                    self.drain()
                if not query.isActive:
                    return
        except Exception:
            # The query failed or the server went away: the caller's wait() or cancel()
            # reports it; the printer just stops following.
            return

    def drain(self) -> None:
        """Print the changes committed since the last call (see the class's example)."""
        with self._lock:
            changes = self._read_from(self._printed)
            if not changes:
                return
            # A progress line on the same terminal is cleared first, not written over.
            with TERMINAL.paused():
                out = sys.stderr if self._standard_error else sys.stdout
                for kind, values in changes:
                    print(print_line(kind, values, self._row_type, self._prefix), file=out)
                out.flush()
            self._printed += len(changes)

    def finish(self) -> None:
        """Stop following and print the rest, once: later calls do nothing (the query's
        rows may be gone from the server by then). See :meth:`start`'s example."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self.drain()


class PrintingTableResult(StreamingTableResult):
    """A streaming insert into a ``print`` table: waiting for it, or cancelling it, prints
    the changes the query has committed so far (the printer prints the others as they
    come).

    >>> result = senv.from_path("Products").execute_insert("Printed")  # doctest: +SERVER
    items> +I[1, pen, 2.5]
    items> +I[2, ink, 7.0]
    >>> result.finished  # doctest: +SERVER
    True
    """

    def __init__(self, printer: Printer, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._printer = printer

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until the query stops (or ``timeout_s`` passes), printing its changes.

        >>> senv.from_path("Products").execute_insert("Printed").wait()  # doctest: +SERVER
        items> +I[1, pen, 2.5]
        items> +I[2, ink, 7.0]
        """
        super().wait(timeout_s)
        if self.finished:
            self._printer.finish()
        else:
            self._printer.drain()

    def cancel(self) -> None:
        """Stop the query and print what it committed before it stopped.

        >>> result = senv.from_path("Products").execute_insert("Printed")  # doctest: +SERVER
        items> +I[1, pen, 2.5]
        items> +I[2, ink, 7.0]
        >>> result.cancel()  # doctest: +SERVER
        """
        with self._guard("stopping the query"):
            self.query.stop()
        self._printer.finish()  # before cancel() lets the query's rows go on the server
        super().cancel()


__all__ = ["Printer", "PrintingTableResult", "flink_string", "print_line"]
