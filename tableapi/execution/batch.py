"""Batch execution: a job runs to its end before ``execute()`` returns a result to read."""

from __future__ import annotations

import sys

from pyspark.sql import DataFrame

from tableapi.compiler import compile_plan
from tableapi.compiler.batch import BatchCompiler
from tableapi.config import TableConfig
from tableapi.execution import jdbc
from tableapi.execution.base import BlackholeSink, JdbcSink, PrintSink, Server, Sink
from tableapi.execution.printing import print_line
from tableapi.execution.progress import ProgressDisplay
from tableapi.plan import PlanNode
from tableapi.plan.sources import file_tables
from tableapi.result import RowKind, TableResult
from tableapi.session import reads_local_files
from tableapi.types import RowType

_RERUN = "Start the server again and re-run the job."


class BatchExecutor:
    """Runs optimized plans as Spark batch jobs."""

    def __init__(self, server: Server, config: TableConfig) -> None:
        self._server = server
        self._guard = server.guard(_RERUN)
        self._progress = ProgressDisplay(config.display_progress, server.session)

    def to_spark(self, plan: PlanNode) -> DataFrame:
        session = self._server.session()
        return compile_plan(plan, session, reads_local_files(session))

    def execute(self, plan: PlanNode, row_type: RowType) -> TableResult:
        session = self._server.session()
        compiler = BatchCompiler(session, reads_local_files(session))
        df = compiler.compile(plan)
        guard = self._server.guard(_RERUN, file_tables(plan))
        return TableResult(df, row_type, guard, tuple(compiler.lookups), self._progress)

    def insert(self, plan: PlanNode, sink: Sink, overwrite: bool) -> TableResult:
        if isinstance(sink, PrintSink):
            # The client prints the rows as they are fetched, partition after partition.
            out = sys.stderr if sink.standard_error else sys.stdout
            with self._guard(f"printing {sink.name}"):
                for row in self.to_spark(plan).toLocalIterator():
                    print(print_line(RowKind.INSERT, row, sink.row_type, sink.prefix), file=out)
            out.flush()
        elif isinstance(sink, BlackholeSink):
            with self._guard(f"running the job into {sink.name}"):
                self.to_spark(plan).write.format("noop").mode("overwrite").save()
        elif isinstance(sink, JdbcSink):
            # One transaction for the job's rows (upsert by key, or appended).
            with self._guard(f"writing into {sink.name}"):
                spark = self._server.session()
                job = jdbc.new_job()
                prepared = jdbc.prepare(spark, sink, changelog=False, job=job, checkpoint=None)
                jdbc.write_batch(self.to_spark(plan), sink, prepared.spec)
        else:
            mode = "overwrite" if overwrite else "append"
            with self._guard(f"writing into {sink.name}"):
                self.to_spark(plan).write.format(sink.format).mode(mode).save(sink.path)
        return TableResult(None, sink.row_type)
