"""Helpers that write test tables as files and register them."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tableapi import Schema, TableDescriptor, TableEnvironment


def write_json(path: Path, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "part-0.json", "w") as f:
        for r in rows:
            f.write(json.dumps({n: _jsonable(v) for n, v in zip(names, r, strict=True)}) + "\n")


def _jsonable(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return v


def register_json(
    env: TableEnvironment,
    root: Path,
    name: str,
    ddl: str,
    rows: Sequence[Sequence[Any]],
    schema: Schema | None = None,
) -> Path:
    """Write ``rows`` as JSON lines under root/name and register the table ``name``."""
    columns = [part.strip().split(None, 1) for part in ddl.split(",")]
    if schema is None:
        builder = Schema.new_builder()
        for n, t in columns:
            builder.column(n, t)
        schema = builder.build()
    path = root / name
    write_json(path, [n for n, _ in columns], rows)
    env.create_temporary_table(
        name,
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", str(path))
        .option("format", "json")
        .build(),
    )
    return path
