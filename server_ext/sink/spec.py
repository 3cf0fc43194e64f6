"""The contract between the client and the jdbc sink: what to write where, decided at plan time.

The client writes a query's rows through the Python data source ``tableapi_jdbc_sink``
(``writer.py``) with two options: ``spec``, this spec as JSON without the password, and
``password`` (Spark redacts options of that name in plans and logs). Rows are the sink's
columns, in order; a changelog also carries ``__kind`` (Flink's RowKind byte, ``-U`` rows
already dropped) and ``__seq`` (the change's place in its table, ``''`` for an operator's
output; see ``tableapi/compiler/streaming.py``).

This module must not import ``tableapi`` and everything here pickles by reference.

Example::

    >>> spec = SinkSpec(SourceSpec("sqlite", "totals", "/data/shop.db"), "Totals",
    ...                 ("country", "total"), ("STRING", "BIGINT"), key=("country",))
    >>> SinkSpec.from_options(spec.to_options()) == spec, spec.upsert
    (True, True)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from server_ext.lookup.spec import SourceSpec

#: The name the sink's Python data source is registered under.
DATA_SOURCE = "tableapi_jdbc_sink"
SPEC_OPTION = "spec"
PASSWORD_OPTION = "password"
#: The database table that records each streaming query's last committed micro-batch.
COMMITS_TABLE = "tableapi_sink_commits"
#: A staging table's name starts so; the rest is a hash of the target table and columns.
STAGE_PREFIX = "tableapi_stage_"
#: PostgreSQL: the setting the commit transaction sets to its micro-batch id (``SET LOCAL``:
#: triggers can read it with ``current_setting('tableapi.sink_batch', true)``).
BATCH_SETTING = "tableapi.sink_batch"
#: The control columns of a staging table, before the sink's columns.
JOB, TOKEN, SEQ, POS, KIND = "__job", "__token", "__seq", "__pos", "__kind"
CONTROL_COLUMNS = (JOB, TOKEN, SEQ, POS, KIND)


@dataclass(frozen=True)
class SinkSpec:
    """A ``jdbc`` sink table: its database table, its columns and Flink's sink options."""

    source: SourceSpec  # the database and its table ('table-name')
    table: str  # the catalog table's name (messages)
    columns: tuple[str, ...]  # the sink's physical columns, in order
    types: tuple[str, ...]  # their Spark DDL types
    key: tuple[str, ...] = ()  # the primary key: upsert mode; () append mode
    changelog: bool = False  # rows carry __kind and __seq
    max_rows: int = 100  # sink.buffer-flush.max-rows: rows per write (0: all at once)
    flush_interval_ms: int = 1000  # sink.buffer-flush.interval (0: off)
    max_retries: int = 3  # sink.max-retries: retries of a statement after a connection error
    retry_backoff_ms: int = 1000  # sleep before retry i is i * this (Flink: 1 s * i)
    # Whose micro-batches these are: the checkpoint's location for a checkpointed streaming
    # query (its Spark query id, read there, names it in the commits table), else a fresh id
    # per run (a query without a checkpoint starts over and skips nothing).
    job: str = ""
    checkpoint: str | None = None

    def __post_init__(self) -> None:
        if len(self.columns) != len(self.types) or not self.columns:
            raise ValueError("a sink needs its columns, each with a type")
        missing = [k for k in self.key if k not in self.columns]
        if missing:
            raise ValueError(f"key columns {missing} are not columns of the sink")
        if self.max_rows < 0 or self.flush_interval_ms < 0 or self.max_retries < 0:
            raise ValueError("max_rows, flush_interval_ms and max_retries must be >= 0")

    @property
    def upsert(self) -> bool:
        """Upsert mode (a primary key): +I/+U upsert by key, -D deletes by key."""
        return bool(self.key)

    @property
    def stage_table(self) -> str:
        """The staging table (beside the target, in its schema): named by a hash of the
        target and the columns, so a changed sink gets its own."""
        text = json.dumps([self.source.table_name, list(self.columns)])
        name = STAGE_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:16]
        schema, dot, _ = self.source.table_name.rpartition(".")
        return f"{schema}{dot}{name}"

    @property
    def commits_table(self) -> str:
        """The commits table, in the target's schema."""
        schema, dot, _ = self.source.table_name.rpartition(".")
        return f"{schema}{dot}{COMMITS_TABLE}"

    def to_options(self) -> dict[str, str]:
        """The data source's options: the spec as JSON without the password, and the
        password on its own."""
        data = dataclasses.asdict(self)
        password = data["source"].pop("password")
        options = {SPEC_OPTION: json.dumps(data)}
        if password is not None:
            options[PASSWORD_OPTION] = password
        return options

    @classmethod
    def from_options(cls, options: dict[str, str]) -> SinkSpec:
        data: dict[str, Any] = json.loads(options[SPEC_OPTION])
        source = SourceSpec(**data.pop("source"), password=options.get(PASSWORD_OPTION))
        for name in ("columns", "types", "key"):
            data[name] = tuple(data[name])
        return cls(source=source, **data)


__all__ = [
    "BATCH_SETTING",
    "COMMITS_TABLE",
    "CONTROL_COLUMNS",
    "DATA_SOURCE",
    "JOB",
    "KIND",
    "PASSWORD_OPTION",
    "POS",
    "SEQ",
    "SPEC_OPTION",
    "STAGE_PREFIX",
    "TOKEN",
    "SinkSpec",
]
