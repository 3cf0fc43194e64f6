"""Results: rows that carry their RowKind, and ``TableResult``.

Example::

    >>> Row.of(RowKind.INSERT, ("id", "name"), (1, "Euro"))
    +I[1, Euro]
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from enum import Enum
from typing import TYPE_CHECKING, Any

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
    ) -> None:
        """``guard(doing)`` wraps each call to the server: it turns the failure of a server
        that went away into an error naming the server and how to resume. ``lookups``: the
        lookup joins' (table, metrics observation)."""
        self._df = dataframe
        self.row_type = row_type
        self._guard: Guard = guard or _unguarded
        self._lookups = lookups
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
        """All rows (batch results are inserts: ``+I``).

        >>> rows = products.order_by(col("id")).execute().collect()  # doctest: +SERVER
        >>> rows, rows[0].name  # doctest: +SERVER
        ([+I[1, pen, 2.5], +I[2, ink, 7.0]], 'pen')
        """
        if self._df is None:
            return []
        names = self.row_type.names
        with self._guard("collecting the result"):
            rows = self._df.collect()
        return [Row.of(RowKind.INSERT, names, tuple(r)) for r in rows]

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
        with self._guard("collecting the result"):
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


def apply_changelog(rows: Sequence[Row]) -> list[tuple[Any, ...]]:
    """The table a changelog describes: +I/+U add a row, -U/-D remove one (a multiset, so
    the order of changes within a batch does not matter). Rows in first-insert order."""
    counts: dict[tuple[Any, ...], int] = {}
    for r in rows:
        key = tuple(r)
        delta = 1 if r.kind in (RowKind.INSERT, RowKind.UPDATE_AFTER) else -1
        counts[key] = counts.get(key, 0) + delta
    broken = [k for k, n in counts.items() if n < 0]
    if broken:
        raise RuntimeError(
            f"The changelog retracts rows it never inserted, e.g. {broken[0]}: the result is "
            "incomplete (was the query restarted without its checkpoint?)."
        )
    return [k for k, n in counts.items() for _ in range(n)]


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
    ) -> None:
        """``output`` gives the changelog emitted so far (None: the query writes a sink);
        ``on_cancel`` cleans up after the query (once)."""
        super().__init__(None, row_type, guard, lookups)
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
        once when it has finished)."""
        with self._guard("processing the available input"):
            if not self.finished:
                self.query.processAllAvailable()
        return self

    def collect(self) -> list[Row]:
        """Every change emitted so far, each with its :class:`RowKind`."""
        if self._output is None:
            return []
        names = self.row_type.names
        with self._guard("collecting the changelog"):
            try:
                rows = self._output().collect()
            except PySparkException:
                if self._cancelled:  # cancel() let the rows go on the server
                    raise ValidationError(
                        "The query was cancelled: cancel() frees its result on the server "
                        "(as a cancelled Flink job's result can no longer be collected). "
                        "Collect, print or materialize the result before cancel()."
                    ) from None
                raise
        if not self._has_kind:
            return [Row.of(RowKind.INSERT, names, tuple(r)) for r in rows]
        return [Row.of(RowKind(r[-1]), names, tuple(r)[:-1]) for r in rows]

    def print(self) -> None:
        """The changelog so far, one ``+I[...]`` / ``-U[...]`` / ``+U[...]`` / ``-D[...]``
        line per change."""
        if self.printer is not None:
            self.printer(self)
            return
        for r in self.collect():
            print(repr(r))

    def materialize(self) -> pd.DataFrame:
        """The current result table: the changelog so far, applied."""
        import pandas as pd

        return pd.DataFrame(apply_changelog(self.collect()), columns=list(self.row_type.names))

    to_pandas = materialize

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until the query stops (or ``timeout_s`` passes)."""
        with self._guard("waiting for the query"):
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
