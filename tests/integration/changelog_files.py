"""Changelog tables as JSON files that grow between micro-batches, with a plain-Python copy."""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tableapi import Schema, TableDescriptor, TableEnvironment
from tests.integration.files import _jsonable

Change = tuple[str, tuple[Any, ...]]  # ("+I" | "-U" | "+U" | "-D", row)
OPS = {"+I": "+I", "-U": "-U", "+U": "+U", "-D": "-D", "I": "+I", "UB": "-U", "UA": "+U", "D": "-D"}


def fresh_root(env: TableEnvironment, shared_dir: Path, *names: str) -> Path:
    """A new directory for one hypothesis example's tables, with ``names`` dropped from the
    catalog (the examples of one test share its environment and ``shared_dir``)."""
    root = Path(tempfile.mkdtemp(dir=shared_dir))
    root.chmod(0o777)
    for name in names:
        env.drop_temporary_table(name)
    return root


class ChangelogTable:
    """A filesystem table read as a changelog (``changelog.op-column = op``).

    The table is watched for new files (``source.monitor-interval``) unless ``bounded``:
    then a streaming query reads the files present at its start and ends with them.
    ``append`` writes one new file per call (atomically: Spark must never see half a file)
    and applies the same changes to ``rows``, the table's current contents, in Python. Its
    files are numbered in order unless ``random_names`` (as most writers name them: then
    only their modification times order them); ``file_order`` sets ``changelog.file-order``.
    """

    def __init__(
        self,
        env: TableEnvironment,
        root: Path,
        name: str,
        columns: Sequence[tuple[str, str]],
        primary_key: Sequence[str] = (),
        op_column: str | None = "op",
        watermark: tuple[str, str] | None = None,  # (rowtime column, SQL expression)
        computed: Sequence[tuple[str, str]] = (),  # (name, SQL expression)
        bounded: bool = False,
        random_names: bool = False,
        file_order: str | None = None,
    ) -> None:
        self.name = name
        self.random_names = random_names
        self.names = [n for n, _ in columns]
        self.path = root / name
        self.path.mkdir(parents=True, exist_ok=True)
        self.path.chmod(0o777)  # a container server (another uid) may write here (a sink)
        self.op_column = op_column
        self.rows: Counter[tuple[Any, ...]] = Counter()
        self._files = 0
        builder = Schema.new_builder()
        for n, t in columns:
            builder.column(n, t + (" NOT NULL" if n in primary_key else ""))
        for column, sql in computed:
            builder.column_by_expression(column, sql)
        if primary_key:
            builder.primary_key(*primary_key)
        if watermark:
            builder.watermark(*watermark)
        descriptor = (
            TableDescriptor.for_connector("filesystem")
            .schema(builder.build())
            .option("path", str(self.path))
            .option("format", "json")
        )
        if op_column:
            descriptor.option("changelog.op-column", op_column)
        if file_order:
            descriptor.option("changelog.file-order", file_order)
        if not bounded:
            descriptor.option("source.monitor-interval", "100 ms")
        env.create_temporary_table(name, descriptor.build())

    def append(self, changes: Sequence[Change]) -> None:
        if not changes:
            return
        lines = []
        for op, row in changes:
            record = {n: _jsonable(v) for n, v in zip(self.names, row, strict=True)}
            if self.op_column:
                record[self.op_column] = op
            elif op != "+I":
                raise ValueError("an insert-only table takes +I changes only")
            lines.append(json.dumps(record))
            if op not in OPS:
                continue  # not a change: the query must refuse it (tested)
            if OPS[op] in ("+I", "+U"):
                self.rows[tuple(row)] += 1
            else:
                if self.rows[tuple(row)] <= 0:
                    raise ValueError(f"{self.name}: {op} of a row that is not there: {row}")
                self.rows[tuple(row)] -= 1
        self._files += 1
        part = uuid.uuid4().hex if self.random_names else f"{self._files:05d}"
        final = self.path / f"part-{part}.json"
        hidden = self.path / f".{final.name}.tmp"  # Spark ignores names starting with '.'
        hidden.write_text("\n".join(lines) + "\n")
        os.chmod(hidden, 0o666)
        os.replace(hidden, final)

    def current(self) -> list[tuple[Any, ...]]:
        return list(self.rows.elements())


def applied(changelog: Sequence[tuple[str, tuple[Any, ...]]]) -> Counter[tuple[Any, ...]]:
    """The changelog (``(kind, row)`` pairs) applied in order; a retraction of a row that is
    not there fails the test, naming it."""
    rows: Counter[tuple[Any, ...]] = Counter()
    for i, (kind, row) in enumerate(changelog):
        if kind in ("+I", "+U"):
            rows[row] += 1
        else:
            assert rows[row] > 0, f"change {i} {kind}{list(row)} retracts a row not there"
            rows[row] -= 1
    return +rows
