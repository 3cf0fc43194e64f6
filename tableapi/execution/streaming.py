"""Streaming execution: start a query over the compiled stream and hand back its result.

A query whose inputs are all bounded runs to their end before ``execute()`` returns (the
end moves event time to +infinity, see ``compiler/end_of_input.py``); otherwise it keeps
running and the result reads what it has emitted so far. The state store is chosen per
query (``state.backend.type``; server_ext's Python processors need RocksDB), the operator
tier once the server was asked whether it has the JVM plugin (once per session), and with
``execution.checkpointing.dir`` + ``pipeline.name`` a restarted job resumes from its checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import attrs
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql.connect import functions as F
from pyspark.sql.connect.session import SparkSession

from server_ext.conf import (
    CHECK_CORRECTNESS,
    HDFS_PROVIDER,
    NO_DATA_MICRO_BATCHES,
    ROCKSDB_PROVIDER,
    SHUFFLE_PARTITIONS,
    STATE_STORE_PROVIDER,
)
from server_ext.joins.spec import SEQ
from tableapi.compiler import CompiledStream, compile_stream
from tableapi.compiler.end_of_input import EndOfInput
from tableapi.compiler.jvm_operators import jvm_plugin_on_server
from tableapi.config import CHECKPOINT_DIR, DEFAULT_PARALLELISM, PIPELINE_NAME, TableConfig
from tableapi.errors import ValidationError
from tableapi.execution import jdbc
from tableapi.execution.base import BlackholeSink, FileSink, JdbcSink, PrintSink, Server, Sink
from tableapi.execution.printing import Printer, PrintingTableResult
from tableapi.execution.progress import ProgressDisplay
from tableapi.execution.release import release
from tableapi.physical import check_streaming, plan_stream
from tableapi.physical.options import StateBackend, StreamingOptions
from tableapi.plan import PlanNode
from tableapi.plan.changelog import (
    ChangelogMode,
    changelog_mode,
    needs_end_of_input,
    read_at_once,
)
from tableapi.plan.explain import optimized_text
from tableapi.plan.sources import file_tables
from tableapi.result import RowKind, StreamingTableResult
from tableapi.session import reads_local_files
from tableapi.types import RowType


def server_options(config: TableConfig, spark: SparkSession) -> StreamingOptions:
    """What streaming planning reads from ``config``, plus whether the server of ``spark``
    has the JVM operator plugin: the one place that asks (once per session), for explain
    and for compiling alike; a stateful plan is refused without it (``check_plugin``).

    Example::

        options = server_options(env.config, env.spark)
        options.jvm_plugin  # True on a server started by `python -m server_ext serve`
    """
    return attrs.evolve(config.streaming_options(), jvm_plugin=jvm_plugin_on_server(spark))


class StreamingExecutor:
    """Runs optimized plans as Spark streaming queries."""

    def __init__(self, server: Server, config: TableConfig) -> None:
        self._server = server
        self._spark: Callable[[], SparkSession] = server.session
        self._config = config
        self._server_partitions: str | None = None  # the session's shuffle partitions at first
        self._progress = ProgressDisplay(config.display_progress, server.session)

    def _resume_advice(self, job: str | None) -> str:
        """What to do after the server of a running query went away."""
        checkpoints = self._config.get(CHECKPOINT_DIR)
        if checkpoints and job:
            return (
                f"Start the server again and re-submit the same query with "
                f"{CHECKPOINT_DIR}={checkpoints} and {PIPELINE_NAME}={job}: it resumes from "
                "its last checkpoint, with no change lost or repeated."
            )
        return (
            f"The query had no checkpoint: start the server again and re-run it from the start "
            f"(set {CHECKPOINT_DIR} and {PIPELINE_NAME} to make a restarted query resume)."
        )

    def options(self) -> StreamingOptions:
        """The options plans compile with (:func:`server_options`)."""
        return server_options(self._config, self._spark())

    def to_spark(self, plan: PlanNode) -> DataFrame:
        spark = self._spark()
        physical = plan_stream(plan, self.options())
        compiled = compile_stream(physical, spark, local_files=reads_local_files(spark))
        self._configure_for(compiled)
        return compiled.dataframe

    def execute(self, plan: PlanNode, row_type: RowType) -> StreamingTableResult:
        check_streaming(plan)
        advice = self._resume_advice(self._config.get(PIPELINE_NAME))
        guard = self._server.guard(advice, file_tables(plan, streaming=True))
        with self._compiled(plan) as compiled:
            writer, output = self._result_sink(compiled)
            with guard("running the query"):
                query, cleanup = self._start(compiled, writer)
        has_kind = compiled.mode is ChangelogMode.ALL
        on_cancel = self._on_cancel(query, cleanup)
        return StreamingTableResult(
            query, output, row_type, has_kind, on_cancel, guard, compiled.lookups, self._progress
        )

    def insert(self, plan: PlanNode, sink: Sink, overwrite: bool) -> StreamingTableResult:
        check_streaming(plan)
        if isinstance(sink, JdbcSink):
            return self._insert_into_jdbc(plan, sink)
        if not isinstance(sink, FileSink):
            return self._insert_into_connector(plan, sink)
        if changelog_mode(plan) is not ChangelogMode.INSERT_ONLY:
            raise ValidationError(
                f"Table sink '{sink.name}' doesn't support consuming update and delete changes "
                f"which are produced by {_first_updating_node(plan)}. The filesystem sink is "
                "append-only: insert an insert-only query (e.g. an inner join of insert-only "
                "tables), or use execute() to see the changelog."
            )
        if overwrite:
            raise ValidationError("overwrite=True is for batch mode; a streaming insert appends.")
        checkpoints = self._config.get(CHECKPOINT_DIR)
        job = self._config.get(PIPELINE_NAME) or f"insert-into-{sink.name}"
        # A file sink needs a checkpoint; by default it sits beside the data ('_' names are
        # not read as data).
        location = (
            f"{checkpoints.rstrip('/')}/{job}"
            if checkpoints
            else f"{sink.path.rstrip('/')}/_checkpoint"
        )
        guard = self._server.guard(self._resume_advice(job if checkpoints else None))
        with self._compiled(plan) as compiled:
            writer = (
                compiled.dataframe.writeStream.format(sink.format)
                .option("path", sink.path)
                .option("checkpointLocation", self._resumable(location))
            )
            with guard(f"inserting into {sink.name}"):
                query, cleanup = self._start(compiled, writer)
        on_cancel = self._on_cancel(query, cleanup)
        return StreamingTableResult(
            query, None, sink.row_type, False, on_cancel, guard, progress=self._progress
        )

    def _insert_into_jdbc(self, plan: PlanNode, sink: JdbcSink) -> StreamingTableResult:
        """An insert into a ``jdbc`` table: each micro-batch in one transaction (see
        ``execution/jdbc.py``). With ``execution.checkpointing.dir`` + ``pipeline.name`` the
        query resumes from its checkpoint and a replayed micro-batch is skipped (its id is
        recorded with it); without, it starts over when re-submitted."""
        if changelog_mode(plan) is not ChangelogMode.INSERT_ONLY and not sink.key:
            jdbc.refuse_changelog_without_key(sink, _first_updating_node(plan))
        checkpoints = self._config.get(CHECKPOINT_DIR)
        job = self._config.get(PIPELINE_NAME) or f"insert-into-{sink.name}"
        location = f"{checkpoints.rstrip('/')}/{job}" if checkpoints else None
        guard = self._server.guard(self._resume_advice(job if checkpoints else None))
        spark = self._spark()
        with self._compiled(plan, sink.key) as compiled:
            with guard(f"inserting into {sink.name}"):
                changes = compiled.changelog
                run = location or jdbc.new_job()
                prepared = jdbc.prepare(
                    spark, sink, changelog=changes is not None, job=run, checkpoint=location
                )
                df = changes if changes is not None else compiled.dataframe
                writer = jdbc.stream_writer(df, sink, prepared.spec)
                checkpoint = location or prepared.scratch_checkpoint()
                writer = writer.option("checkpointLocation", checkpoint)
                query, cleanup = self._start(compiled, writer)
        on_cancel = self._on_cancel(query, cleanup)
        return StreamingTableResult(
            query, None, sink.row_type, False, on_cancel, guard, progress=self._progress
        )

    def _insert_into_connector(
        self, plan: PlanNode, sink: PrintSink | BlackholeSink
    ) -> StreamingTableResult:
        """An insert into a ``blackhole`` (Spark's noop sink; with ``execution.checkpointing.
        dir`` + ``pipeline.name`` a restarted job resumes from its checkpoint) or a ``print``
        table (a memory sink that the client's printer follows; it starts over when
        re-submitted). Both take every change kind."""
        checkpoints = self._config.get(CHECKPOINT_DIR)
        job = self._config.get(PIPELINE_NAME) or f"insert-into-{sink.name}"
        guard = self._server.guard(self._resume_advice(job if checkpoints else None))
        with self._compiled(plan) as compiled:
            if isinstance(sink, BlackholeSink):
                writer = compiled.dataframe.writeStream.format("noop")
                if checkpoints:
                    location = f"{checkpoints.rstrip('/')}/{job}"
                    writer = writer.option("checkpointLocation", self._resumable(location))
                with guard(f"inserting into {sink.name}"):
                    query, cleanup = self._start(compiled, writer)
                on_cancel = self._on_cancel(query, cleanup)
                return StreamingTableResult(
                    query, None, sink.row_type, False, on_cancel, guard, progress=self._progress
                )
            writer, read_from = self._print_sink(compiled)
            printer = Printer(read_from, sink.row_type, sink.prefix, sink.standard_error)
            with guard(f"inserting into {sink.name}"):
                query, cleanup = self._start(compiled, writer, started=printer.start)
                if compiled.bounded:  # the query has ended: print what is left now
                    printer.finish()
                    release(self._spark(), None, query.name)  # and let its rows go
        on_cancel = self._on_cancel(query, cleanup)  # after the printer has finished
        return PrintingTableResult(
            printer, query, None, sink.row_type, False, on_cancel, guard, progress=self._progress
        )

    def _print_sink(
        self, compiled: CompiledStream
    ) -> tuple[Any, Callable[[int], list[tuple[RowKind, tuple[Any, ...]]]]]:
        """A memory sink for a print insert, and how to read its changes after the first
        ``n``: new micro-batches are appended to the sink, so its rows past ``n`` are the
        new batches', put in change order (``__seq``) as a result is."""
        spark = self._spark()
        changes = compiled.changelog
        df = changes if changes is not None else compiled.dataframe
        name = f"tableapi_print_{uuid.uuid4().hex[:12]}"
        writer = df.writeStream.format("memory").queryName(name)

        def read_from(n: int) -> list[tuple[RowKind, tuple[Any, ...]]]:
            new = spark.table(name).offset(n)
            if changes is None:
                return [(RowKind.INSERT, tuple(r)) for r in new.collect()]
            rows = _in_change_order(new, [F.col(SEQ)]).collect()
            return [(RowKind(r[-1]), tuple(r)[:-1]) for r in rows]

        return writer, read_from

    @contextlib.contextmanager
    def _compiled(
        self, plan: PlanNode, sink_keys: tuple[str, ...] | None = None
    ) -> Iterator[CompiledStream]:
        """The compiled query, with the end-of-input table of a query reading bounded tables
        with watermarks: created before compiling (the compiler analyzes plans that read
        it), dropped if the query does not start. ``sink_keys``: the primary key of the
        upsert sink the query writes into (see ``plan_stream``)."""
        physical = plan_stream(plan, self.options(), sink_keys)
        spark = self._spark()
        # Only a node that waits for event time needs the end of its bounded inputs: without
        # one, the answer is whole once the inputs are read (no table, no extra micro-batch).
        waits = physical.waits_for_watermark
        end = None
        if waits and needs_end_of_input(plan):
            end = EndOfInput.new(at_start=physical.bounded and read_at_once(plan))
        if end:
            end.create(spark)
        try:
            yield compile_stream(physical, spark, end, reads_local_files(spark))
        except BaseException:
            if end:
                end.drop(spark)
            raise

    def _result_sink(self, compiled: CompiledStream) -> tuple[Any, Callable[[], DataFrame]]:
        """Where ``execute()`` keeps the changelog, and how the result reads it back."""
        spark = self._spark()
        changes = compiled.changelog  # with __seq, to read the changes back in order
        ordered = changes is not None
        df = changes if changes is not None else compiled.dataframe
        by_seq = [F.col(SEQ)] if ordered else []
        checkpoints = self._config.get(CHECKPOINT_DIR)
        name = f"tableapi_result_{uuid.uuid4().hex[:12]}"
        if not checkpoints:
            writer = df.writeStream.format("memory").queryName(name)
            if not ordered:  # insert-only: the memory sink's order is the result's
                return writer, lambda: spark.table(name)
            return writer, lambda: _in_change_order(spark.table(name), by_seq)
        # Spark's memory sink cannot resume from a checkpoint: a checkpointed job writes its
        # changelog as Parquet beside the checkpoint, and a restarted job appends to it.
        base = f"{checkpoints.rstrip('/')}/{self._config.get(PIPELINE_NAME) or name}"
        changelog = f"{base}/changelog"
        writer = (
            df.writeStream.format("parquet")
            .option("path", changelog)
            .option("checkpointLocation", self._resumable(f"{base}/checkpoint"))
        )
        schema = df.schema  # no data files yet: nothing to infer from

        def output() -> DataFrame:
            # Files are written batch after batch: their times give the changelog's order.
            read = spark.read.schema(schema).parquet(changelog)
            files = [F.col("_metadata.file_modification_time"), F.col("_metadata.file_name")]
            return _in_change_order(read, [*by_seq, *files])

        return writer, output

    def _start(
        self,
        compiled: CompiledStream,
        writer: Any,
        started: Callable[[Any], None] | None = None,
    ) -> tuple[Any, Callable[[], None] | None]:
        """Start a streaming query (``started(query)`` is called as soon as it runs). With
        only bounded inputs it runs to their end (event time then moves to +infinity) and
        stops; with some, their end is signalled once they are read. Returns the query and
        what to clean up when it is cancelled (if anything)."""
        spark = self._spark()
        end = compiled.end_of_input
        if compiled.trigger_ms:
            writer = writer.trigger(processingTime=f"{compiled.trigger_ms} milliseconds")
        self._configure_for(compiled)
        query = None
        try:
            query = writer.outputMode("append").start()
            if started is not None:
                started(query)
            with self._progress.query(query):
                self._run_bounded(compiled, query)
            if compiled.bounded:
                query.stop()
                release(spark, query.runId, None)  # its state; its rows are the result
        except BaseException:
            if query is not None:
                query.stop()
                release(spark, query.runId, query.name)
            raise
        if end and compiled.bounded:
            end.drop(spark)
            return query, None
        return query, (lambda: end.drop(spark)) if end else None

    def _run_bounded(self, compiled: CompiledStream, query: Any) -> None:
        """Run a started query through its bounded inputs (and signal their end)."""
        spark = self._spark()
        end = compiled.end_of_input
        if compiled.bounded or end:
            # Spark reads every file present in the first micro-batch: once it is done,
            # the bounded inputs are read.
            query.processAllAvailable()
        if end and not end.at_start:  # (at_start: read with the inputs, run at +infinity)
            end.signal(spark)
            if compiled.bounded:
                query.processAllAvailable()
        if end:
            if compiled.bounded and compiled.processing_time:
                # No-data micro-batches are off (ProcessingTime queries): a second signal
                # runs the batch that sees the watermark at +infinity.
                end.signal(spark)
                query.processAllAvailable()

    def _resumable(self, checkpoint: str) -> str:
        """``checkpoint``, once it is clear a query resuming from it gets the parallelism it
        asks for: Spark keeps the shuffle partitions of a query's first checkpoint whatever
        the session says (its state is split that way), so a different number asked for is
        refused rather than quietly ignored."""
        wanted = self._config.parallelism()
        if wanted is None:
            return checkpoint
        has = checkpoint_partitions(self._spark(), checkpoint)
        if has is not None and has != wanted:
            raise ValidationError(
                f"The query resumes from the checkpoint {checkpoint}, whose state is split into "
                f"{has} partitions, but {DEFAULT_PARALLELISM} asks for {wanted}. A checkpointed "
                f"query keeps its partitions: set {DEFAULT_PARALLELISM}={has} (or leave it "
                f"unset) to resume, or start afresh under another {PIPELINE_NAME} (or "
                f"{CHECKPOINT_DIR})."
            )
        return checkpoint

    def _on_cancel(self, query: Any, cleanup: Callable[[], None] | None) -> Callable[[], None]:
        """What ``cancel()`` does once the query has stopped: its memory on the server goes
        (its memory sink's rows and its state, see ``release.py``), then ``cleanup``."""
        spark = self._spark()

        def cancelled() -> None:
            release(spark, query.runId, query.name)
            if cleanup is not None:
                cleanup()

        return cancelled

    def _configure_for(self, compiled: CompiledStream) -> None:
        """Session settings the next streaming query needs (they apply at its start)."""
        conf = self._spark().conf
        rocksdb = compiled.state_backend is StateBackend.ROCKSDB
        conf.set(STATE_STORE_PROVIDER, ROCKSDB_PROVIDER if rocksdb else HDFS_PROVIDER)
        conf.set(CHECK_CORRECTNESS, "false")
        if self._server_partitions is None:  # before this executor ever set it
            self._server_partitions = conf.get(SHUFFLE_PARTITIONS)
        # The server's own value when unset (unset() would give Spark's default, 200).
        partitions = self._config.parallelism()
        conf.set(SHUFFLE_PARTITIONS, str(partitions or self._server_partitions))
        # Spark runs a micro-batch without data when the watermark moves: only worth it where
        # an operator waits for the watermark (its timers fire), never for processing-time
        # queries (they would run without end). Set each time: a query keeps what its start saw.
        no_data = not compiled.processing_time and not (compiled.bounded and not compiled.waits)
        conf.set(NO_DATA_MICRO_BATCHES, str(no_data).lower())


def checkpoint_partitions(spark: SparkSession, checkpoint: str) -> int | None:
    """The shuffle partitions a streaming checkpoint was started with (its offset log
    records the query's SQL confs in every batch), or None for a checkpoint with no batch
    yet. Read by the server: the checkpoint is where the server writes."""
    try:
        lines = (
            spark.read.text(f"{checkpoint.rstrip('/')}/offsets")
            .where(F.col("value").contains(f'"{SHUFFLE_PARTITIONS}"'))
            .limit(1)
            .collect()
        )
    except Exception as e:  # no offset log: the query has not run a batch
        if "PATH_NOT_FOUND" in str(e) or "does not exist" in str(e):
            return None
        raise
    if not lines:
        return None
    conf = json.loads(lines[0]["value"]).get("conf", {})
    value = conf.get(SHUFFLE_PARTITIONS)
    return int(value) if value is not None else None


def _in_change_order(read: DataFrame, order: list[SparkColumn]) -> DataFrame:
    """A result sink's rows sorted by ``order`` (``__seq`` first where the sink has it: a
    stateless pipeline's changes carry their source file's), rows that tie in the order
    read; without the internal columns."""
    keys = [f"__order{i}" for i in range(len(order) + 1)]
    position = F.monotonically_increasing_id()  # taken before the sort
    read = read.select("*", *(c.alias(k) for c, k in zip([*order, position], keys, strict=True)))
    return read.orderBy(*keys).drop(SEQ, *keys)


def _first_updating_node(plan: PlanNode) -> str:
    """The lowest node that turns insert-only inputs into updates (for error messages)."""
    for node in reversed(list(plan.walk())):
        inputs_insert_only = all(
            changelog_mode(i) is ChangelogMode.INSERT_ONLY for i in node.inputs
        )
        if changelog_mode(node) is ChangelogMode.ALL and inputs_insert_only:
            return optimized_text(node)
    return "its input"
