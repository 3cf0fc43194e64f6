"""Batch execution: a job runs to its end before ``execute()`` returns a result to read."""

from __future__ import annotations

from pyspark.sql import DataFrame

from tableapi.compiler import compile_plan
from tableapi.compiler.batch import BatchCompiler
from tableapi.execution import FileSink, Server
from tableapi.plan import PlanNode
from tableapi.result import TableResult
from tableapi.types import RowType


class BatchExecutor:
    """Runs optimized plans as Spark batch jobs."""

    def __init__(self, server: Server) -> None:
        self._server = server
        self._guard = server.guard("Start the server again and re-run the job.")

    def to_spark(self, plan: PlanNode) -> DataFrame:
        return compile_plan(plan, self._server.session())

    def execute(self, plan: PlanNode, row_type: RowType) -> TableResult:
        compiler = BatchCompiler(self._server.session())
        df = compiler.compile(plan)
        return TableResult(df, row_type, self._guard, tuple(compiler.lookups))

    def insert(self, plan: PlanNode, sink: FileSink, overwrite: bool) -> TableResult:
        mode = "overwrite" if overwrite else "append"
        with self._guard(f"writing into {sink.name}"):
            self.to_spark(plan).write.format(sink.format).mode(mode).save(sink.path)
        return TableResult(None, sink.row_type)
