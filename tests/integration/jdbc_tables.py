"""Databases that the server's workers write into and the tests read: a real PostgreSQL
(tests/postgres.py) or a SQLite file in the shared directory, behind one small interface."""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tableapi import Schema, TableDescriptor, TableEnvironment
from tests.postgres import PostgresServer


class SinkDatabase:
    """One database of a test, seen from the test (``execute``) and from the server
    (``register``: a ``jdbc`` table with the address the server's workers reach)."""

    def __init__(
        self, backend: str, root: Path, server_kind: str, pg: PostgresServer | None = None
    ) -> None:
        self.backend = backend
        self.pg = pg
        self.server_kind = server_kind
        self.path = root / f"sink-{uuid.uuid4().hex[:8]}.db"
        if backend == "sqlite":
            sqlite3.connect(self.path).close()
            self.path.chmod(0o666)  # a container server (another uid) writes it

    @property
    def placeholder(self) -> str:
        return "%s" if self.pg is not None else "?"

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        if self.pg is not None:
            return self.pg.execute(sql, params)
        with contextlib.closing(sqlite3.connect(self.path)) as conn, conn:
            return conn.execute(sql, params).fetchall()

    def create(self, ddl: str) -> str:
        """A new table (``ddl``: its columns and keys); returns its (unique) name."""
        name = f"t_{uuid.uuid4().hex[:10]}"
        self.execute(f"CREATE TABLE {name} ({ddl})")
        return name

    def rows(self, table: str, columns: str = "*") -> list[tuple]:
        """The table's rows, sorted (values as Python sees them: SQLite's REAL is a float)."""
        return sorted(self.execute(f"SELECT {columns} FROM {table}"), key=repr)

    def url(self) -> str:
        if self.pg is None:
            return f"jdbc:sqlite:{self.path}"
        address = self.pg.address_from(self.server_kind)
        assert address is not None, f"a {self.server_kind} server cannot reach this PostgreSQL"
        host, port = address
        return f"jdbc:postgresql://{host}:{port}/{self.pg.database}"

    def register(
        self,
        env: TableEnvironment,
        name: str,
        table: str,
        columns: Sequence[tuple[str, str]],
        key: Sequence[str] = (),
        **options: str,
    ) -> None:
        """``name``: a jdbc table of ``env`` over the database table ``table``."""
        schema = Schema.new_builder()
        for n, t in columns:
            schema.column(n, t)
        if key:
            schema.primary_key(*key)
        descriptor = (
            TableDescriptor.for_connector("jdbc")
            .schema(schema.build())
            .option("url", self.url())
            .option("table-name", table)
        )
        if self.pg is not None:
            descriptor.option("username", self.pg.user).option("password", self.pg.password)
        for k, v in options.items():
            descriptor.option(k, v)
        env.create_temporary_table(name, descriptor.build())


def upserted(changes: Sequence[tuple[str, tuple]], key: int = 0) -> list[tuple]:
    """A changelog applied as an upsert sink applies it, in plain Python: +I/+U replace the
    key's row, -D deletes the key, -U is dropped. Sorted rows."""
    table: dict[Any, tuple] = {}
    for op, row in changes:
        if op in ("+I", "+U"):
            table[row[key]] = tuple(row)
        elif op == "-D":
            table.pop(row[key], None)
    return sorted(table.values(), key=repr)
