"""Dimension tables in a real database, the operator run on Arrow batches, and the same
join computed in plain Python to compare with."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from server_ext.lookup.operator import LookupJoinFunction, arrow_type
from server_ext.lookup.spec import METRIC_FIELDS, METRICS, LookupSpec, SourceSpec
from tests.postgres import PostgresServer

_names = itertools.count()

_PG_TYPES = {"BIGINT": "BIGINT", "INT": "INTEGER", "STRING": "TEXT", "DOUBLE": "DOUBLE PRECISION"}
_SQLITE_TYPES = {"BIGINT": "INTEGER", "INT": "INTEGER", "STRING": "TEXT", "DOUBLE": "REAL"}


class Dim:
    """A dimension table in PostgreSQL or SQLite that tests can change while they run."""

    def __init__(self, backend: str, pg: PostgresServer | None, tmp: Path) -> None:
        self.backend = backend
        self.pg = pg
        self.name = f"dim_{next(_names)}"
        self.path = str(tmp / f"{self.name}.db")

    def create(self, columns: Sequence[tuple[str, str]], rows: Sequence[tuple]) -> Dim:
        types = _PG_TYPES if self.backend == "postgresql" else _SQLITE_TYPES
        ddl = ", ".join(f"{n} {types[t]}" for n, t in columns)
        self.execute(f"CREATE TABLE {self.name} ({ddl})")
        self.insert(rows)
        return self

    def insert(self, rows: Sequence[tuple]) -> None:
        if not rows:
            return
        if self.backend == "postgresql":
            assert self.pg is not None
            ph = ", ".join(["%s"] * len(rows[0]))
            self.pg.executemany(f"INSERT INTO {self.name} VALUES ({ph})", list(rows))
        else:
            ph = ", ".join(["?"] * len(rows[0]))
            with sqlite3.connect(self.path) as c:
                c.executemany(f"INSERT INTO {self.name} VALUES ({ph})", rows)

    def execute(self, sql: str) -> None:
        if self.backend == "postgresql":
            assert self.pg is not None
            self.pg.execute(sql)
        else:
            with sqlite3.connect(self.path) as c:
                c.execute(sql)

    def source(self) -> SourceSpec:
        if self.backend == "postgresql":
            assert self.pg is not None
            return self.pg.source(self.name)
        return SourceSpec("sqlite", self.name, self.path)


def batch(fields: Sequence[tuple[str, str]], rows: Sequence[tuple]) -> pa.RecordBatch:
    """An Arrow batch as Spark hands it to mapInArrow."""
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in fields]
    arrays = [pa.array(list(c), arrow_type(t)) for c, (_, t) in zip(cols, fields, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, names=[n for n, _ in fields])


class Run:
    """The operator's output over some batches: data rows, markers, summed metrics."""

    def __init__(self, out: list[pa.RecordBatch]) -> None:
        self.rows: list[tuple] = []
        self.markers: list[dict[str, Any]] = []
        for b in out:
            d = b.to_pylist()
            for r in d:
                m = r.pop(METRICS)
                if m is None:
                    self.rows.append(tuple(r.values()))
                else:
                    assert all(v is None for v in r.values()), "a marker row carries data"
                    self.markers.append(m)

    def metric(self, name: str) -> int:
        assert name in METRIC_FIELDS
        return sum(m[name] or 0 for m in self.markers)


def run(
    spec: LookupSpec,
    batches: Sequence[pa.RecordBatch],
    clock: Callable[[], int] | None = None,
    partition: int | None = 0,
) -> Run:
    fn = LookupJoinFunction(spec, clock=clock, partition=partition)
    return Run(list(fn(iter(batches))))


def reference_join(
    kind: str,
    probe: Sequence[tuple],
    dim: Sequence[tuple],
    keys: Sequence[tuple[int | None, int, Any]],  # (probe index or None, dim index, constant)
    dim_pred: Callable[[tuple], bool] = lambda d: True,
    pre: Callable[[tuple], bool] = lambda p: True,
    residual: Callable[[tuple, tuple], bool] = lambda p, d: True,
    n_dim: int | None = None,
) -> list[tuple]:
    """The lookup join in plain Python, straight from Flink's rules (reference section 3)."""
    pad = (None,) * (n_dim if n_dim is not None else len(dim[0]))
    out = []
    for p in probe:
        if not pre(p):
            if kind == "left":
                out.append(p + pad)
            continue
        values = [p[pi] if pi is not None else c for pi, _, c in keys]
        matches = []
        if all(v is not None for v in values):
            pairs = [(di, v) for (_, di, _), v in zip(keys, values, strict=True)]
            for d in dim:
                if all(d[di] is not None and d[di] == v for di, v in pairs):
                    if dim_pred(d) and residual(p, d):
                        matches.append(p + d)
        if matches:
            out.extend(matches)
        elif kind == "left":
            out.append(p + pad)
    return out


def by_value(rows: Sequence[tuple]) -> list[tuple]:
    return sorted(rows, key=repr)
