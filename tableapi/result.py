"""Results: rows that carry their RowKind, and ``TableResult``.

Example::

    >>> Row.of(RowKind.INSERT, ("id", "name"), (1, "Euro"))
    +I[1, Euro]
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

from pyspark.errors import PySparkException

from server_ext.joins.temporal_spec import LATE_ROWS_METRIC
from server_ext.lookup.metrics import combine
from tableapi.errors import ValidationError
from tableapi.types import RowType


class RowKind(Enum):
    """Flink's RowKind; the byte values are those on the wire.

    >>> RowKind(2)
    <RowKind.UPDATE_AFTER: 2>
    """

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    @property
    def short_string(self) -> str:
        """The kind as a changelog prints it.

        >>> [kind.short_string for kind in RowKind]
        ['+I', '-U', '+U', '-D']
        """
        return ("+I", "-U", "+U", "-D")[self.value]


class Row(tuple):
    """A result row: a tuple with field names and a :class:`RowKind`.

    >>> r = Row.of(RowKind.UPDATE_AFTER, ("id", "name"), (1, "pen"))
    >>> r, r.name, r[0], tuple(r)
    (+U[1, pen], 'pen', 1, (1, 'pen'))
    """

    kind: RowKind
    _names: tuple[str, ...]

    @classmethod
    def of(cls, kind: RowKind, names: Sequence[str], values: Sequence[Any]) -> Row:
        """A row of ``kind`` with these field names and values (NULL prints as ``<NULL>``).

        >>> Row.of(RowKind.DELETE, ("id", "price"), (2, None))
        -D[2, <NULL>]
        """
        row = cls(values)
        row.kind = kind
        row._names = tuple(names)
        return row

    def __getattr__(self, name: str) -> Any:
        # Read _names from __dict__: while copy/pickle rebuild a row it is not set yet, and
        # self._names would call __getattr__ again (endless recursion).
        names = self.__dict__.get("_names", ())
        if name in names:
            return self[names.index(name)]
        raise AttributeError(f"Row has no field {name!r}; fields: {list(names)}")

    def as_dict(self) -> dict[str, Any]:
        """Field name -> value.

        >>> Row.of(RowKind.INSERT, ("id", "name"), (1, "pen")).as_dict()
        {'id': 1, 'name': 'pen'}
        """
        return dict(zip(self._names, self, strict=True))

    def __repr__(self) -> str:
        return f"{self.kind.short_string}[{', '.join(_show(v) for v in self)}]"


def _show(value: Any) -> str:
    if value is None:
        return "<NULL>"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(value, float | decimal.Decimal):
        return str(value)
    return str(value)


def tableau(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Flink's tableau print format: a boxed table, numbers right-aligned."""
    cells = [[_show(v) for v in r] for r in rows]
    widths = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def fmt(values: Sequence[str], raw: Sequence[Any] | None) -> str:
        out = []
        for i, (v, w) in enumerate(zip(values, widths, strict=True)):
            numeric = (
                raw is not None
                and isinstance(raw[i], int | float | decimal.Decimal)
                and not isinstance(raw[i], bool)
            )
            out.append(v.rjust(w) if numeric else v.ljust(w))
        return "| " + " | ".join(out) + " |"

    body = [line, fmt(list(names), None), line]
    body += [fmt(c, r) for c, r in zip(cells, rows, strict=True)]
    body.append(line)
    n = len(rows)
    body.append(f"{n} row{'s' if n != 1 else ''} in set")
    return "\n".join(body)


class TableResult:
    """The result of ``Table.execute()``: collect rows, print them, or get pandas.

    >>> joined = orders.join(products, col("product_id") == col("id"))
    >>> result = joined.select(col("order_id"), col("name")).execute()  # doctest: +SERVER
    >>> result.collect()  # doctest: +SERVER
    [+I[1, pen]]
    """

    def __init__(
        self,
        dataframe: DataFrame | None,
        row_type: RowType,
        guard: Guard | None = None,
        lookups: tuple[tuple[str, Any], ...] = (),
        progress: Progress | None = None,
    ) -> None:
        """``guard(doing)`` wraps each call to the server: it turns the failure of a server
        that went away into an error naming the server and how to resume. ``lookups``: the
        lookup joins' (table, metrics observation). ``progress`` shows a long call's progress
        (``execution/progress.py``)."""
        self._df = dataframe
        self.row_type = row_type
        self._guard: Guard = guard or _unguarded
        self._lookups = lookups
        self._progress: Progress = progress or NO_PROGRESS
        # How print() shows the result when set: execute_sql prints a query's result as
        # Flink's SQL client does (tableau columns as wide as their types, an op column).
        self.printer: Callable[[TableResult], None] | None = None

    def lookup_metrics(self) -> dict[str, dict[str, int]]:
        """Per lookup table, FLIP-221's cache metrics summed over tasks (``hitCount``,
        ``missCount``, ``loadCount``, ``numLoadFailures``, ``latestLoadTime`` in ms (-1
        before any load), ``numCachedRecords``) and ``numQueries``, the database queries.
        A batch job's metrics are there once its rows have been read (``collect()``...).

        >>> enriched = orders.temporal_join(customers, col("product_id") == col("c_id"),
        ...                                 as_of=col("o_proctime"))
        >>> result = enriched.select(col("order_id"), col("c_name")).execute()  # doctest: +SERVER
        >>> result.collect()  # doctest: +SERVER
        [+I[1, Ann]]
        >>> metrics = result.lookup_metrics()["Customers"]  # doctest: +SERVER
        >>> metrics["missCount"], metrics["numQueries"]  # doctest: +SERVER
        (1, 1)
        """
        observed: dict[str, list[Any]] = {}
        for table, observation in self._lookups:
            observed.setdefault(table, []).extend(self._observed(observation))
        return {table: combine(rows) for table, rows in observed.items()}

    def _observed(self, observation: Any) -> list[Any]:
        """One observation's metrics rows (batch: the Observation, filled by the job)."""
        return [observation.get]

    @property
    def column_names(self) -> tuple[str, ...]:
        """The result's column names.

        >>> products.select(col("name"), col("price")).execute().column_names  # doctest: +SERVER
        ('name', 'price')
        """
        return self.row_type.names

    def collect(self) -> list[Row]:
        """All rows (batch results are inserts: ``+I``), as a list (a :class:`CollectedRows`,
        so that PyFlink's ``with result.collect() as rows:`` runs too); to read the rows as
        they arrive, without holding them all, see :meth:`iterate`.

        >>> rows = products.order_by(col("id")).execute().collect()  # doctest: +SERVER
        >>> rows, rows[0].name  # doctest: +SERVER
        ([+I[1, pen, 2.5], +I[2, ink, 7.0]], 'pen')
        >>> with products.execute().collect() as rows:  # doctest: +SERVER
        ...     len(rows)
        2
        """
        with self._progress.job():
            return CollectedRows(self._stream())

    def iterate(self) -> CloseableIterator:
        """The rows as they arrive from the server, an Arrow batch at a time, so that the
        client never holds them all; ``close()`` (or leaving the ``with`` block) stops the
        transfer.

        >>> with products.order_by(col("id")).execute().iterate() as rows:  # doctest: +SERVER
        ...     for row in rows:
        ...         print(row)
        +I[1, pen, 2.5]
        +I[2, ink, 7.0]
        """
        return CloseableIterator(self._stream())

    def _stream(self) -> Iterator[Row]:
        if self._df is None:
            # No job: a subclass whose rows are computed on the client has them in collect().
            if type(self).collect is not TableResult.collect:
                yield from self.collect()
            return
        names = self.row_type.names
        with self._guard("collecting the result"):
            for r in self._df.toLocalIterator():
                yield Row.of(RowKind.INSERT, names, tuple(r))

    def print(self) -> None:
        """Print the rows as a table, as Flink's ``TableResult.print()`` does in batch mode.

        >>> by_price = products.select(col("name"), col("price")).order_by(col("price"))
        >>> by_price.execute().print()  # doctest: +SERVER
        +------+-------+
        | name | price |
        +------+-------+
        | pen  |   2.5 |
        | ink  |   7.0 |
        +------+-------+
        2 rows in set
        """
        if self.printer is not None:
            self.printer(self)
            return
        print(tableau(self.row_type.names, self.collect()))

    def materialize(self) -> pd.DataFrame:
        """The result table as a pandas DataFrame (``to_pandas`` is the same).

        >>> products.order_by(col("id")).execute().materialize()  # doctest: +SERVER
           id name  price
        0   1  pen    2.5
        1   2  ink    7.0
        """
        import pandas as pd

        if self._df is None:
            return pd.DataFrame(columns=list(self.row_type.names))
        with self._guard("collecting the result"), self._progress.job():
            return self._df.toPandas()

    to_pandas = materialize

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until the job is done (a batch job is done when execute() returns).

        >>> products.where(col("price") > 5).execute_insert("Expensive").wait()  # doctest: +SERVER
        >>> env.from_path("Expensive").execute().collect()  # doctest: +SERVER
        [+I[2, ink, 7.0]]
        """

    def cancel(self) -> None:
        """Nothing to stop: a batch job has finished when execute() returns.

        >>> result = products.execute()  # doctest: +SERVER
        >>> result.cancel()  # doctest: +SERVER
        >>> len(result.collect())  # doctest: +SERVER
        2
        """


Guard = Callable[[str], AbstractContextManager[None]]


def _unguarded(doing: str) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


class Progress(Protocol):
    """Shows a long call's progress (``execution/progress.py``): while waiting on a
    streaming query, or while Spark jobs run for a result."""

    def query(self, query: Any) -> AbstractContextManager[None]:
        """Around a wait on the streaming ``query``."""
        ...

    def job(self) -> AbstractContextManager[None]:
        """Around a call that runs Spark jobs."""
        ...


class _NoProgress:
    def query(self, query: Any) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def job(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()


NO_PROGRESS: Progress = _NoProgress()


class CollectedRows(list[Row]):
    """``collect()``'s rows: a list, and a context manager as PyFlink's
    ``with result.collect() as rows:`` is (leaving the block has nothing to release).

    >>> with CollectedRows([Row.of(RowKind.INSERT, ("id",), (1,))]) as rows:
    ...     [row.id for row in rows]
    [1]
    """

    def __enter__(self) -> CollectedRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to stop: the rows are all here (PyFlink's iterator has ``close()``)."""


class CloseableIterator(Iterator[Row]):
    """Rows as they arrive (PyFlink's name): iterate it, and ``close()`` it, or leave its
    ``with`` block, to stop the transfer of the rest.

    >>> rows = CloseableIterator(iter([Row.of(RowKind.INSERT, ("id",), (1,))]))
    >>> with rows:
    ...     next(rows)
    +I[1]
    """

    def __init__(self, rows: Iterator[Row]) -> None:
        self._rows = rows

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Row:
        return next(self._rows)

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading: the server lets go of the rows not read (PyFlink's ``close()``
        also cancels a streaming job; here :meth:`StreamingTableResult.cancel` does)."""
        close = getattr(self._rows, "close", None)
        if close is not None:
            close()


_ADDS = (RowKind.INSERT, RowKind.UPDATE_AFTER)


class ChangelogTable:
    """A changelog applied as it streams: +I/+U add a row, -U/-D remove one. A multiset
    (row -> count), so the order of changes within a batch does not matter; a row whose count
    falls to zero is dropped at once, so it holds the current table, never the changelog.

    >>> table = ChangelogTable()
    >>> for kind, row in [(RowKind.INSERT, ("a", 1)), (RowKind.INSERT, ("b", 1)),
    ...                   (RowKind.UPDATE_BEFORE, ("a", 1)), (RowKind.UPDATE_AFTER, ("a", 2))]:
    ...     table.apply(kind, row)
    >>> table.rows()
    [('b', 1), ('a', 2)]
    """

    def __init__(self) -> None:
        self._counts: dict[tuple[Any, ...], int] = {}

    def apply(self, kind: RowKind, row: tuple[Any, ...]) -> None:
        """One change."""
        n = self._counts.get(row, 0) + (1 if kind in _ADDS else -1)
        if n:
            self._counts[row] = n
        else:
            del self._counts[row]

    def rows(self) -> list[tuple[Any, ...]]:
        """The table now, a row in the order it (last) came in, as Flink's SQL client's
        table view orders it. A row retracted more often than inserted is an error.

        >>> table = ChangelogTable()
        >>> table.apply(RowKind.DELETE, ("a",))
        >>> table.rows()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        RuntimeError: The changelog retracts rows it never inserted, e.g. ('a',): ...
        """
        broken = [k for k, n in self._counts.items() if n < 0]
        if broken:
            raise RuntimeError(
                f"The changelog retracts rows it never inserted, e.g. {broken[0]}: the result "
                "is incomplete (was the query restarted without its checkpoint?)."
            )
        return [k for k, n in self._counts.items() for _ in range(n)]


def apply_changelog(rows: Iterable[Row]) -> list[tuple[Any, ...]]:
    """The table a changelog describes (see :class:`ChangelogTable`).

    >>> apply_changelog([Row.of(RowKind.INSERT, ("n",), (1,)), Row.of(RowKind.INSERT, ("n",), (2,)),
    ...                  Row.of(RowKind.DELETE, ("n",), (1,))])
    [(2,)]
    """
    table = ChangelogTable()
    for r in rows:
        table.apply(r.kind, tuple(r))
    return table.rows()


class StreamingTableResult(TableResult):
    """A running streaming query whose changelog is collected on the server (memory sink).

    With only bounded inputs (filesystem tables without ``source.monitor-interval``),
    ``execute()`` has run the query to the end of its input: the result is complete.

    Example::

        result = orders.left_outer_join(product, col("product_id") == col("id")).execute()
        result.process_all_available()   # wait until every file present has been read
        result.print()                   # +I[...] / -D[...] lines, Flink style
        table = result.materialize()     # the changelog applied: the current result table
        result.cancel()
    """

    def __init__(
        self,
        query: Any,
        output: Callable[[], DataFrame] | None,
        row_type: RowType,
        has_kind: bool,
        on_cancel: Callable[[], None] | None = None,
        guard: Guard | None = None,
        lookups: tuple[tuple[str, Any], ...] = (),
        progress: Progress | None = None,
    ) -> None:
        """``output`` gives the changelog emitted so far (None: the query writes a sink);
        ``on_cancel`` cleans up after the query (once)."""
        super().__init__(None, row_type, guard, lookups, progress)
        self._batches: dict[int, dict[str, Any]] = {}  # micro-batch id -> observed metrics
        self.query = query
        self._output = output
        self._has_kind = has_kind
        self._on_cancel = on_cancel
        self._cancelled = False

    @property
    def finished(self) -> bool:
        """The query has stopped: it read its bounded inputs to the end, or was cancelled."""
        with self._guard("asking whether the query runs"):
            return not self.query.isActive

    def process_all_available(self) -> StreamingTableResult:
        """Block until the query has processed everything its sources hold now (returns at
        once when it has finished). A wait of more than a few seconds shows the query's
        progress on a terminal (``table.display.progress``).

        >>> result = senv.from_path("Products").execute()  # doctest: +SERVER
        >>> result.process_all_available().finished  # doctest: +SERVER
        True
        """
        with self._guard("processing the available input"), self._progress.query(self.query):
            if not self.finished:
                self.query.processAllAvailable()
        return self

    def collect(self) -> list[Row]:
        """Every change emitted so far, each with its :class:`RowKind`, in change order (a
        list; :meth:`iterate` reads them as they arrive).

        >>> senv.from_path("Products").execute().collect()  # doctest: +SERVER
        [+I[1, pen, 2.5], +I[2, ink, 7.0]]
        """
        return super().collect()

    def iterate(self) -> CloseableIterator:
        """The changes emitted so far as they arrive from the server, a batch at a time
        (see :meth:`TableResult.iterate`); changes emitted meanwhile are not included.

        >>> with senv.from_path("Products").execute().iterate() as changes:  # doctest: +SERVER
        ...     [change.name for change in changes]
        ['pen', 'ink']
        """
        return super().iterate()

    def _stream(self) -> Iterator[Row]:
        names = self.row_type.names
        for kind, values in self._changes():
            yield Row.of(kind, names, values)

    def _changes(self) -> Iterator[tuple[RowKind, tuple[Any, ...]]]:
        """The changelog so far, in change order, streamed from the server in Arrow batches."""
        if self._output is None:
            return
        with self._guard("collecting the changelog"):
            try:
                for r in self._output().toLocalIterator():
                    values = tuple(r)
                    if self._has_kind:
                        yield RowKind(values[-1]), values[:-1]
                    else:
                        yield RowKind.INSERT, values
            except PySparkException:
                if self._cancelled:  # cancel() let the rows go on the server
                    raise ValidationError(
                        "The query was cancelled: cancel() frees its result on the server "
                        "(as a cancelled Flink job's result can no longer be collected). "
                        "Collect, print or materialize the result before cancel()."
                    ) from None
                raise

    def print(self) -> None:
        """The changelog so far, one ``+I[...]`` / ``-U[...]`` / ``+U[...]`` / ``-D[...]``
        line per change, printed as the changes arrive.

        >>> senv.from_path("Products").execute().print()  # doctest: +SERVER
        +I[1, pen, 2.5]
        +I[2, ink, 7.0]
        """
        if self.printer is not None:
            self.printer(self)
            return
        for r in self._stream():
            print(repr(r))

    def materialize(self) -> pd.DataFrame:
        """The current result table: the changelog so far, applied as it streams from the
        server (the client holds the table, never the whole changelog; see
        :class:`ChangelogTable` for the rows' order).

        >>> total = senv.from_path("Products").select(col("price").sum.alias("total"))
        >>> total.execute().materialize()  # +I[2.5], -U[2.5], +U[9.5] applied  # doctest: +SERVER
           total
        0    9.5
        """
        import pandas as pd

        table = ChangelogTable()
        with self._progress.job():
            for kind, values in self._changes():
                table.apply(kind, values)
        return pd.DataFrame(table.rows(), columns=list(self.row_type.names))

    to_pandas = materialize

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until the query stops (or ``timeout_s`` passes), showing its progress on a
        terminal after a few seconds (``table.display.progress``).

        >>> result = senv.from_path("Products").execute()  # doctest: +SERVER
        >>> result.wait(timeout_s=10)  # bounded inputs: it has already stopped  # doctest: +SERVER
        """
        with self._guard("waiting for the query"), self._progress.query(self.query):
            if timeout_s is None:
                self.query.awaitTermination()
            else:
                self.query.awaitTermination(timeout_s)

    def cancel(self) -> None:
        """Stop the query (its checkpoint, if configured, lets a new one resume) and free
        what it holds on the server: its state, and its result rows kept in the server's
        memory (a result written to files, with ``execution.checkpointing.dir``, stays)."""
        with self._guard("stopping the query"):
            self.query.stop()
        self._cancelled = True
        if self._on_cancel is not None:
            cleanup, self._on_cancel = self._on_cancel, None
            cleanup()

    def lookup_metrics(self) -> dict[str, dict[str, int]]:
        """The lookup joins' metrics over the micro-batches run so far (see
        :meth:`TableResult.lookup_metrics`). Spark keeps the last 100 micro-batches'
        progress: call it at least that often on a long-running query."""
        with self._guard("reading the query's progress"):
            progresses = self.query.recentProgress
        for progress in progresses:
            metrics = getattr(progress, "observedMetrics", None) or {}
            if metrics:
                self._batches[int(progress.batchId)] = dict(metrics)
        return super().lookup_metrics()

    def _observed(self, observation: Any) -> list[Any]:
        # Each micro-batch observes its own lookups: summed over the batches seen.
        return [b.get(observation) for b in self._batches.values()]

    def late_rows(self) -> int:
        """Probe rows that temporal joins dropped because they came behind the watermark
        (over the query's recent micro-batches)."""
        total = 0
        with self._guard("reading the query's progress"):
            progresses = self.query.recentProgress
        for progress in progresses:
            metrics = getattr(progress, "observedMetrics", None) or {}
            # Rows the processor saw late, and rows Spark dropped before it (same watermark).
            total += int(observed_metric(metrics.get(LATE_ROWS_METRIC), "late_rows") or 0)
            for op in progress.stateOperators or []:
                if "transformWithState" in (op.operatorName or ""):
                    total += int(op.numRowsDroppedByWatermark or 0)
        return total


def observed_metric(row: Any, name: str) -> Any:
    """A field of an observed-metrics row. Over Spark Connect it arrives as
    ``Row(values=[...], schema={...})`` rather than as a Row with the metric's fields."""
    if row is None:
        return None
    fields = getattr(row, "__fields__", ())
    if name in fields:
        return row[name]
    if "values" in fields and "schema" in fields:
        names = [f["name"] for f in row["schema"]["fields"]]
        return row["values"][names.index(name)] if name in names else None
    return None
