"""The compilers' common ground: one dispatch style and the operators both modes share.

A compiler turns a plan into a Spark Connect DataFrame with one ``visit_<Node>`` method per
node type (ibis's style); :meth:`Compiler.compile` dispatches and memoizes, so an input
shared by two parents is compiled once. ``BatchCompiler`` (``batch.py``) visits the
optimized logical plan; ``StreamingCompiler`` (``streaming.py``) visits the physical plan's
exec nodes (``tableapi.physical``). The operators both build (a calc, an exchange, a lookup
join, Spark's join) are methods here that take their inputs' DataFrames.
"""

from __future__ import annotations

import itertools
import uuid
from functools import reduce
from typing import Any

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.session import SparkSession

from server_ext.lookup.metrics import observation_name
from tableapi.compiler.expressions import ref, to_spark
from tableapi.compiler.lookup import compile_lookup
from tableapi.connectors.filesystem import local_path_missing
from tableapi.errors import FileTable, ValidationError, missing_path
from tableapi.expressions import Column, Expression
from tableapi.physical import ExecNode
from tableapi.plan import FileSource, Join, JoinKind, LookupJoin, PlanNode
from tableapi.types import RowType

# Table API hint name -> Spark's join strategy hint.
SPARK_JOIN_HINTS = {
    "BROADCAST": "broadcast",
    "SHUFFLE_HASH": "shuffle_hash",
    "SHUFFLE_MERGE": "merge",
    "MERGE": "merge",
    "SHUFFLE_REPLICATE_NL": "shuffle_replicate_nl",
}
# Join kind -> the ``how`` of Spark's ``DataFrame.join``.
SPARK_HOW = {
    JoinKind.INNER: "inner",
    JoinKind.LEFT: "left",
    JoinKind.RIGHT: "right",
    JoinKind.FULL: "full",
    JoinKind.SEMI: "left_semi",
    JoinKind.ANTI: "left_anti",
}


_observations = itertools.count()  # unique observation names within a session


class Compiler:
    """Plan -> DataFrame, one ``visit_<Node>`` method per node type."""

    mode = ""  # named in the error for a node this compiler has no method for

    def __init__(self, spark: SparkSession, local_files: bool = False) -> None:
        self.spark = spark
        # Does the server read this machine's files (the embedded server)? The caller knows,
        # from the session (``session.reads_local_files``); a compiler never asks it.
        self.local_files = local_files
        self._memo: dict[int, DataFrame] = {}
        # The lookup joins' metrics: (lookup table, its observation), read by the result.
        self.lookups: list[tuple[str, Any]] = []
        self._cache_id = uuid.uuid4().hex  # one query's lookup caches are its own

    def compile(self, node: PlanNode | ExecNode) -> DataFrame:
        """The DataFrame of ``node`` (compiled once per compiler, however often it is read),
        by the ``visit_`` method of its class or of its nearest base class that has one."""
        key = id(node)
        if key not in self._memo:
            # The node's own visit, else its nearest base class's (every StreamExecOperator
            # without a visit of its own is visit_StreamExecOperator's).
            visit = next(
                (
                    v
                    for c in type(node).__mro__
                    if (v := getattr(self, f"visit_{c.__name__}", None)) is not None
                ),
                None,
            )
            if visit is None:
                raise ValidationError(
                    f"{type(node).__name__} cannot be compiled in {self.mode} mode."
                )
            self._memo[key] = visit(node)
        return self._memo[key]

    def check_path(self, table: str, source: FileSource) -> None:
        """Refuse a filesystem table whose path does not exist, before anything runs, when
        the server reads this machine's files (the embedded server); a remote server's
        PATH_NOT_FOUND is translated when it comes back (``session.server_call``)."""
        if self.local_files and local_path_missing(source.path):
            streaming = self.mode == "streaming"
            raise missing_path(FileTable(table, source.path, streaming, not source.bounded))

    def carried_columns(self, node: Any) -> list[SparkColumn]:
        """Columns a node's rows carry besides its own (streaming: the row kind)."""
        return [ref(n) for n, _ in self.carried_fields(node)]

    def carried_fields(self, node: Any) -> list[tuple[str, str]]:
        """The carried columns as (name, Spark DDL type)."""
        return []

    def observation(self, name: str) -> Any:
        """What ``DataFrame.observe`` takes to report metrics under ``name`` (batch: an
        ``Observation`` read after the job; streaming: the name, read from the progress)."""
        raise NotImplementedError

    # -- operators both modes build ------------------------------------------------------------
    def project(
        self,
        columns: tuple[tuple[Expression, str], ...],
        row: RowType,
        df: DataFrame,
        carried: list[SparkColumn],
    ) -> DataFrame:
        """``columns`` (expression and name) computed over ``df`` (of ``row``), plus the
        ``carried`` ones."""
        cols = [
            ref(n) if isinstance(e, Column) and e.name == n else to_spark(e, row).alias(n)
            for e, n in columns
        ]
        return df.select(*cols, *carried)

    def filter(self, condition: Expression, row: RowType, df: DataFrame) -> DataFrame:
        return df.filter(to_spark(condition, row))

    def exchange(self, keys: tuple[Expression, ...], row: RowType, df: DataFrame) -> DataFrame:
        return df.repartition(*(to_spark(k, row) for k in keys))

    def lookup(self, node: LookupJoin, df: DataFrame, carried: list[tuple[str, str]]) -> DataFrame:
        """server_ext's lookup operator over the probe input's ``df`` (see ``lookup.py``)."""
        name = observation_name(node.table_name, next(_observations))
        observation = self.observation(name)
        self.lookups.append((node.table_name, observation))

        def observe(df: DataFrame, aggregates: list[SparkColumn]) -> DataFrame:
            return df.observe(observation, *aggregates)

        return compile_lookup(node, df, carried, self._cache_id, observe)

    def spark_join(self, node: Join, left: DataFrame, right: DataFrame) -> DataFrame:
        """``node`` as Spark's own join of its inputs' DataFrames, with its Spark join hints."""
        if node.equi_keys is None:
            raise ValidationError("compile the optimized plan: join conditions are not split")
        for hint, side in node.hints:
            if hint.name in SPARK_JOIN_HINTS:
                if side == "left":
                    left = left.hint(SPARK_JOIN_HINTS[hint.name])
                else:
                    right = right.hint(SPARK_JOIN_HINTS[hint.name])
        combined = node.left.row_type.fields + tuple(
            f for f in node.right.row_type.fields if f.name not in node.left.row_type
        )
        terms = [
            ref(k.left).eqNullSafe(ref(k.right)) if k.null_safe else ref(k.left) == ref(k.right)
            for k in node.equi_keys
        ]
        if node.residual is not None:
            terms.append(to_spark(node.residual, RowType(combined)))
        if not terms:
            if node.kind is JoinKind.INNER:
                return left.crossJoin(right)
            terms = [F.lit(True)]
        condition = reduce(lambda a, b: a & b, terms)
        return left.join(right, on=condition, how=SPARK_HOW[node.kind])
