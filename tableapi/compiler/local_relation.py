"""Inline rows (``env.from_elements``) -> a Spark Connect ``LocalRelation``, built client-side.

``SparkSession.createDataFrame`` asks the server for a batch of configs (and parses a DDL
schema remotely) on every call: several milliseconds per inline table. The schema here is
known, the session time zone is UTC (set at connect) and small tables need none of the
chunking and caching settings, so the relation is built locally with no round trip.
Large inputs still go through ``createDataFrame``, which knows how to cache them server-side.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
from pyspark.sql.connect.plan import LocalRelation
from pyspark.sql.connect.session import SparkSession
from pyspark.sql.conversion import LocalDataToArrowConversion

from tableapi.types import RowType, to_spark_struct

# Above this many cells, leave it to createDataFrame (server-side relation cache).
_INLINE_CELLS = 100_000


def local_dataframe(
    rows: Sequence[tuple[Any, ...]], row: RowType, spark: SparkSession
) -> DataFrame:
    """A DataFrame over ``rows`` with the columns of ``row``.

    A naive ``datetime`` is a wall-clock time (Flink's TIMESTAMP), so it is read as UTC, the
    session time zone, whatever the client machine's zone is.
    """
    struct = to_spark_struct(row)
    stamps = [i for i, f in enumerate(row.fields) if f.type.is_timestamp]
    data = [_as_utc(r, stamps) for r in rows] if stamps else [tuple(r) for r in rows]
    if not data or len(data) * len(row) > _INLINE_CELLS:
        return spark.createDataFrame(data, schema=struct)
    table = LocalDataToArrowConversion.convert(data, struct, False)
    return ConnectDataFrame(LocalRelation(table, schema=struct.json()), spark)


def _as_utc(values: tuple[Any, ...], stamps: list[int]) -> tuple[Any, ...]:
    out = list(values)
    for i in stamps:
        v = out[i]
        if isinstance(v, dt.datetime) and v.tzinfo is None:
            out[i] = v.replace(tzinfo=dt.timezone.utc)
    return tuple(out)
