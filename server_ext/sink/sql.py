"""The jdbc sink's SQL, per dialect (PostgreSQL, SQLite): staging, the commit, the commits table.

Identifiers are written as Flink's JDBC dialects write them (``lookup/sql.py``'s
:func:`quote_ident`: PostgreSQL leaves plain names unquoted, so they fold to lower case);
every value is a parameter.

A micro-batch reaches the target table in one transaction (:meth:`SinkSql.commit_statements`):

- upsert mode: the last change of each key among the staged rows (``ROW_NUMBER()`` over the
  key, latest ``__seq``, then write task and position first), then ``DELETE`` of the keys
  whose last change is ``-D`` and ``INSERT ... ON CONFLICT (key) DO UPDATE`` of the others;
- append mode: ``INSERT ... SELECT`` of the staged rows in their order.

Example::

    >>> from server_ext.sink.spec import SinkSpec
    >>> from server_ext.lookup.spec import SourceSpec
    >>> spec = SinkSpec(SourceSpec("postgresql", "totals", "shop"), "Totals",
    ...                 ("country", "total"), ("STRING", "BIGINT"), key=("country",))
    >>> print(SinkSql(spec).upsert_sql())
    INSERT INTO totals (country, total) SELECT country, total FROM tableapi_last \
WHERE __kind <> 3 ON CONFLICT (country) DO UPDATE SET total = EXCLUDED.total
"""

from __future__ import annotations

from server_ext.lookup.sql import quote_ident
from server_ext.sink.spec import CONTROL_COLUMNS, JOB, KIND, POS, SEQ, TOKEN, SinkSpec

DELETE = 3  # Flink's RowKind byte of -D (server_ext/joins/spec.py)
LAST = "tableapi_last"  # the commit's temporary table: the last change of each key


class SinkSql:
    """The statements of one sink, in its dialect."""

    def __init__(self, spec: SinkSpec) -> None:
        self.spec = spec
        self.pg = spec.source.dialect == "postgresql"
        self.p = "%s" if self.pg else "?"

        def q(name: str) -> str:
            return quote_ident(spec.source.dialect, name)

        self.target = q(spec.source.table_name)
        self.stage = q(spec.stage_table)
        self.commits = q(spec.commits_table)
        self.cols = [q(c) for c in spec.columns]
        self.keys = [q(k) for k in spec.key]

    # -- setting up --------------------------------------------------------------------------
    def prepare(self) -> list[str]:
        """The staging table (the target's column types, no constraints) and the commits
        table, unless they exist."""
        cols = ", ".join(self.cols)
        if self.pg:
            control = "NULL::text AS __job, NULL::text AS __token, NULL::text AS __seq, " + (
                "NULL::bigint AS __pos, NULL::smallint AS __kind"
            )
            return [
                f"CREATE UNLOGGED TABLE IF NOT EXISTS {self.stage} AS SELECT {control}, {cols} "
                f"FROM {self.target} WITH NO DATA",
                f"CREATE TABLE IF NOT EXISTS {self.commits} (query_id text NOT NULL, "
                "target text NOT NULL, batch_id bigint NOT NULL, checkpoint text, "
                "committed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (query_id, target))",
            ]
        control = ", ".join(f"NULL AS {c}" for c in CONTROL_COLUMNS)
        return [
            f"CREATE TABLE IF NOT EXISTS {self.stage} AS SELECT {control}, {cols} "
            f"FROM {self.target} WHERE 0",
            f"CREATE TABLE IF NOT EXISTS {self.commits} (query_id TEXT NOT NULL, "
            "target TEXT NOT NULL, batch_id INTEGER NOT NULL, checkpoint TEXT, "
            "committed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (query_id, target))",
        ]

    # -- staging -----------------------------------------------------------------------------
    @property
    def stage_columns(self) -> str:
        return ", ".join([*CONTROL_COLUMNS, *self.cols])

    def copy_sql(self) -> str:
        """PostgreSQL: the staged rows arrive as CSV."""
        return f"COPY {self.stage} ({self.stage_columns}) FROM STDIN WITH (FORMAT csv)"

    def insert_stage_sql(self) -> str:
        """SQLite: the staged rows arrive as parameters."""
        marks = ", ".join("?" for _ in range(len(CONTROL_COLUMNS) + len(self.cols)))
        return f"INSERT INTO {self.stage} ({self.stage_columns}) VALUES ({marks})"

    def _tokens(self, n: int) -> str:
        """Rows of this job's write tasks whose commit message came (``n`` tokens)."""
        if self.pg:
            return f"{JOB} = %s AND {TOKEN} = ANY(%s)"
        return f"{JOB} = ? AND {TOKEN} IN ({', '.join('?' for _ in range(n))})"

    def token_params(self, tokens: list[str]) -> list[object]:
        return [self.spec.job, tokens] if self.pg else [self.spec.job, *tokens]

    def count_sql(self, n: int) -> str:
        """How many rows each write task staged (a lost row fails the commit)."""
        return (
            f"SELECT {TOKEN}, count(*) FROM {self.stage} WHERE {self._tokens(n)} GROUP BY {TOKEN}"
        )

    def clear_stage_sql(self) -> str:
        """Every staged row of the job (this batch's, and those of failed write tasks)."""
        return f"DELETE FROM {self.stage} WHERE {JOB} = {self.p}"

    # -- the commits table -------------------------------------------------------------------
    def claim_sql(self) -> str:
        """The query's row in the commits table (batch -1 until its first commit)."""
        verb = "INSERT" if self.pg else "INSERT OR IGNORE"
        tail = " ON CONFLICT DO NOTHING" if self.pg else ""
        p = self.p
        return (
            f"{verb} INTO {self.commits} (query_id, target, batch_id, checkpoint) "
            f"VALUES ({p}, {p}, -1, {p}){tail}"
        )

    def last_batch_sql(self) -> str:
        """The last committed batch, locked until the transaction ends (SQLite: the
        transaction holds the database's write lock already)."""
        lock = " FOR UPDATE" if self.pg else ""
        p = self.p
        return f"SELECT batch_id FROM {self.commits} WHERE query_id = {p} AND target = {p}{lock}"

    def record_batch_sql(self) -> str:
        now = "now()" if self.pg else "CURRENT_TIMESTAMP"
        p = self.p
        return (
            f"UPDATE {self.commits} SET batch_id = {p}, committed_at = {now} "
            f"WHERE query_id = {p} AND target = {p}"
        )

    # -- the commit --------------------------------------------------------------------------
    def last_changes_sql(self, n: int) -> str:
        """The temporary table of each key's last staged change (upsert mode)."""
        cols = ", ".join(self.cols)
        keys = ", ".join(self.keys)
        order = f"{SEQ} DESC, {TOKEN} DESC, {POS} DESC"
        ranked = (
            f"SELECT {cols}, {KIND}, ROW_NUMBER() OVER (PARTITION BY {keys} ORDER BY {order}) "
            f"AS __rn FROM {self.stage} WHERE {self._tokens(n)}"
        )
        temp = "CREATE TEMP TABLE " + LAST + (" ON COMMIT DROP" if self.pg else "")
        return f"{temp} AS SELECT {cols}, {KIND} FROM ({ranked}) ranked WHERE __rn = 1"

    def delete_sql(self) -> str:
        keys = ", ".join(self.keys)
        return (
            f"DELETE FROM {self.target} WHERE ({keys}) IN "
            f"(SELECT {keys} FROM {LAST} WHERE {KIND} = {DELETE})"
        )

    def upsert_sql(self) -> str:
        cols = ", ".join(self.cols)
        keys = ", ".join(self.keys)
        others = [c for c in self.cols if c not in self.keys]
        action = (
            "DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in others)
            if others
            else "DO NOTHING"
        )
        return (
            f"INSERT INTO {self.target} ({cols}) SELECT {cols} FROM {LAST} "
            f"WHERE {KIND} <> {DELETE} ON CONFLICT ({keys}) {action}"
        )

    def drop_last_sql(self) -> str | None:
        return None if self.pg else f"DROP TABLE {LAST}"

    def append_sql(self, n: int) -> str:
        cols = ", ".join(self.cols)
        return (
            f"INSERT INTO {self.target} ({cols}) SELECT {cols} FROM {self.stage} "
            f"WHERE {self._tokens(n)} ORDER BY {TOKEN}, {POS}"
        )


__all__ = ["DELETE", "LAST", "SinkSql"]
