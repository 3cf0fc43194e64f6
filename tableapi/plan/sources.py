"""Where rows come from: the sources of catalog tables, and the scan that reads one.

Example::

    >>> from tableapi.plan import FileSource, Scan
    >>> from tableapi.types import BIGINT, RowType
    >>> orders = Scan("Orders", FileSource("/data/orders", "json"), RowType.of(("id", BIGINT)))
    >>> orders.source.bounded, sorted(orders.table_names())
    (True, ['Orders'])
"""

from __future__ import annotations

from typing import Any

import attrs

from server_ext.lookup.spec import CacheSpec, SourceSpec
from tableapi.errors import FileTable
from tableapi.plan.base import PlanNode
from tableapi.schema import Schema
from tableapi.types import RowType

# ``changelog.file-order``: how a changelog's files are ordered. The first is the default:
# modification times (nanoseconds where the filesystem keeps them; a tie fails the query);
# "name": the files' paths, for writers that number their files.
FILE_ORDERS = ("modification-time", "name")


@attrs.frozen(eq=False)
class FileSource:
    """Files under ``path`` in ``format`` (json, csv, parquet), read with Spark's readers."""

    path: str
    format: str
    options: tuple[tuple[str, str], ...] = ()
    # ``changelog.op-column``: the column holding each row's kind (+I/-U/+U/-D or I/UB/UA/D);
    # read from the files, never part of the table.
    op_column: str | None = None
    # ``source.monitor-interval``: the directory is watched for new files (unbounded);
    # None: bounded, the files present when the query starts (Flink's default).
    monitor_interval_ms: int | None = None
    # ``changelog.file-order``: "modification-time" (ties fail the query) or "name".
    file_order: str = FILE_ORDERS[0]

    @property
    def bounded(self) -> bool:
        return self.monitor_interval_ms is None

    @property
    def read_at_once(self) -> bool:
        """Does a streaming query read all of it in its first micro-batch (bounded, no
        per-trigger limit among Spark's reader options)?"""
        limits = {"maxfilespertrigger", "maxbytespertrigger"}
        return self.bounded and not any(k.lower() in limits for k, _ in self.options)

    def __str__(self) -> str:
        return f"filesystem, path={self.path}, format={self.format}"


@attrs.frozen(eq=False)
class ElementsSource:
    """Rows given inline (``env.from_elements``)."""

    rows: tuple[tuple[Any, ...], ...]

    def __str__(self) -> str:
        return f"values, {len(self.rows)} rows"


@attrs.frozen(eq=False)
class SparkSource:
    """A Spark Connect DataFrame handed in by the user (``env.from_spark``)."""

    dataframe: Any

    def __str__(self) -> str:
        return "spark dataframe"


@attrs.frozen(eq=False)
class JdbcSource:
    """A lookup table (connector ``jdbc``) in PostgreSQL or SQLite: never scanned, only looked
    up by key from a lookup join (``temporal_join`` AS OF a processing-time attribute)."""

    source: SourceSpec  # where the table is (server_ext's wire type)
    cache: CacheSpec  # lookup.cache and its options
    max_retries: int = 3  # lookup.max-retries
    push_filters: bool = True  # filter.handling.policy = always

    def __str__(self) -> str:
        return f"jdbc, {self.source.describe()}"


@attrs.frozen(eq=False)
class NexmarkSource:
    """Nexmark's events of one kind (connector ``nexmark``), generated on the server by the
    plugin jar's data source; ``options``: what that data source reads (kind included)."""

    kind: str
    events_num: int  # 0: unbounded
    options: tuple[tuple[str, str], ...] = ()

    @property
    def bounded(self) -> bool:
        return self.events_num > 0

    @property
    def read_at_once(self) -> bool:
        """Does a streaming query generate all of it in its first micro-batch (bounded, not
        paced by the wall clock: ``rate.limited`` or ``max-emit-speed`` = false)?"""
        options = {k: v.lower() for k, v in self.options}
        paced = options.get("rate.limited") == "true" or options.get("max-emit-speed") == "false"
        return self.bounded and not paced

    def __str__(self) -> str:
        return f"nexmark, kind={self.kind}, events.num={self.events_num}"


Source = FileSource | ElementsSource | SparkSource | JdbcSource | NexmarkSource


@attrs.frozen(eq=False)
class Scan(PlanNode):
    """Reads a table. Before the computed-column rule it shows every column of the schema;
    after it (``physical_only``) just the physical ones, with a projection above."""

    table_name: str
    source: Source
    declared: RowType | Schema
    physical_only: bool = False

    def derive_row_type(self) -> RowType:
        if isinstance(self.declared, Schema):
            return self.declared.physical_row_type if self.physical_only else self.declared.row_type
        return self.declared

    @property
    def schema(self) -> Schema | None:
        return self.declared if isinstance(self.declared, Schema) else None

    def scanned_tables(self) -> frozenset[str]:
        return frozenset((self.table_name,))

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        pk = self.schema.primary_key if self.schema else ()
        return (pk,) if pk else ()


def file_tables(plan: PlanNode, streaming: bool = False) -> tuple[FileTable, ...]:
    """The filesystem tables ``plan`` reads (for the error of a path that does not exist).

    >>> from tableapi.types import BIGINT
    >>> scan = Scan("Orders", FileSource("/data/orders", "json"), RowType.of(("id", BIGINT)))
    >>> file_tables(scan, streaming=True)
    (FileTable(table='Orders', path='/data/orders', streaming=True, watched=False),)
    """
    return tuple(
        FileTable(n.table_name, n.source.path, streaming, not n.source.bounded)
        for n in plan.walk()
        if isinstance(n, Scan) and isinstance(n.source, FileSource)
    )
