"""Connections to the databases of ``jdbc`` tables: PostgreSQL (psycopg 3) and SQLite (sqlite3).

One driver per dialect (:data:`DRIVERS`), shared by the lookup sources (``lookup/``) and the
jdbc sink (``sink/``). A lookup connection reads (PostgreSQL: autocommit, so each lookup sees
the latest committed rows; SQLite: the file opened read-only); a sink connection writes
(its transactions are explicit). A missing SQLite file is an error in both cases, never a
new empty database. :meth:`Driver.retryable` says which errors a new connection may cure
(the server restarted, the connection was killed, the file was locked).

Example::

    conn = DRIVERS["postgresql"].connect(source)               # a lookup connection
    conn = DRIVERS["sqlite"].connect(source, writable=True)    # a sink connection
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from server_ext.lookup.spec import SourceSpec

Row = tuple
#: What each kind of connection calls itself (PostgreSQL's application_name).
LOOKUP_APPLICATION = "tableapi-lookup"
SINK_APPLICATION = "tableapi-sink"


class Driver:
    """A dialect's connections and its view of errors."""

    dialect = ""

    def connect(self, source: SourceSpec, writable: bool = False) -> Any:
        raise NotImplementedError

    def execute(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        raise NotImplementedError

    def retryable(self, error: BaseException) -> bool:
        raise NotImplementedError

    def hint(self, error: BaseException | None, source: SourceSpec) -> str:
        """What to do about ``error`` beyond trying again ("" when nothing more is known)."""
        return ""

    def close(self, conn: Any) -> None:
        try:
            conn.close()
        except Exception:
            pass


class Postgres(Driver):
    dialect = "postgresql"

    def connect(self, source: SourceSpec, writable: bool = False) -> Any:
        import psycopg

        return psycopg.connect(
            host=source.host,
            port=source.port,
            dbname=source.database,
            user=source.username,
            password=source.password,
            connect_timeout=source.connect_timeout_s,
            # Lookups see the latest committed rows (no transaction held open); the sink
            # opens its transactions itself.
            autocommit=True,
            options="-c TimeZone=UTC",
            application_name=SINK_APPLICATION if writable else LOOKUP_APPLICATION,
        )

    def execute(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def retryable(self, error: BaseException) -> bool:
        import psycopg

        return isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError))


class Sqlite(Driver):
    dialect = "sqlite"

    def connect(self, source: SourceSpec, writable: bool = False) -> Any:
        import sqlite3

        # mode=ro / rw: a missing file is an error (not a new empty database).
        mode = "rw" if writable else "ro"
        try:
            conn = sqlite3.connect(
                f"file:{quote(source.database)}?mode={mode}",
                uri=True,
                timeout=source.connect_timeout_s,
                isolation_level=None,  # autocommit; transactions are explicit (BEGIN)
                check_same_thread=False,
            )
            try:
                conn.execute("SELECT 1").fetchall()  # opens the file now: a missing one fails
            except BaseException:
                conn.close()
                raise
        except sqlite3.OperationalError as e:
            # Each executor opens the file on its own host: on a cluster, name the host.
            raise sqlite3.OperationalError(
                f"{e} (on host {socket.gethostname()}: executors open the file on the host "
                "they run on; on a cluster it must be on a path every worker sees)"
            ) from e
        return conn

    def execute(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return conn.execute(sql, params).fetchall()

    def retryable(self, error: BaseException) -> bool:
        import sqlite3

        text = str(error).lower()
        return isinstance(error, sqlite3.OperationalError) and any(
            s in text for s in ("unable to open", "locked", "busy", "disk i/o", "readonly")
        )

    def hint(self, error: BaseException | None, source: SourceSpec) -> str:
        if "readonly" not in str(error).lower():
            return ""
        directory = os.path.dirname(os.path.abspath(source.database))
        return (
            f" Fix: the server's user (uid {os.getuid()} on host {socket.gethostname()}) must "
            f"be able to write the file and its directory {directory}: SQLite writes a journal "
            "beside the file."
        )


DRIVERS: dict[str, Driver] = {"postgresql": Postgres(), "sqlite": Sqlite()}


def first_line(e: BaseException | None, secret: str | None = None) -> str:
    """A driver's error, first line, for a message that leaves the worker: without the
    password (``secret``), should a driver ever echo its connection settings.

    Example::

        >>> first_line(RuntimeError("password s3cret refused\\ndetail"), "s3cret")
        'password <redacted> refused'
    """
    text = str(e).strip() if e is not None else ""
    line = (text.splitlines() or [type(e).__name__])[0]
    return line.replace(secret, "<redacted>") if secret else line


__all__ = ["DRIVERS", "LOOKUP_APPLICATION", "SINK_APPLICATION", "Driver", "Row", "first_line"]
