"""The options streaming physical planning reads (``TableConfig.streaming_options()`` makes
them from the declared options), plus what the session knows of its server.

Example::

    >>> StreamingOptions(default_ttl_ms=1000).state_backend.value
    'hashmap'
"""

from __future__ import annotations

from enum import Enum

import attrs


class StateBackend(str, Enum):
    """Where a streaming query keeps its state (Flink's ``state.backend.type``), chosen per
    query as Spark's state store provider."""

    HASHMAP = "hashmap"  # Spark's HDFS-backed store: state in memory, checkpointed to files
    ROCKSDB = "rocksdb"  # Spark's RocksDB store


class AggPhaseStrategy(str, Enum):
    """``table.optimizer.agg-phase-strategy`` (Flink's values): in streaming mode a group
    aggregation runs in two phases (a local pre-aggregation before the shuffle, a global one
    after it) unless ``ONE_PHASE``, when mini-batch is on and every aggregate function can
    merge partial results (``aggregates.two_phase``); ``AUTO`` and ``TWO_PHASE`` then agree."""

    AUTO = "AUTO"
    ONE_PHASE = "ONE_PHASE"
    TWO_PHASE = "TWO_PHASE"


@attrs.frozen
class StreamingOptions:
    """The configuration streaming planning reads (from ``TableConfig``), plus what the
    session knows of its server."""

    default_ttl_ms: int | None = None  # table.exec.state.ttl
    native_joins: bool = False  # table.exec.join.spark-native.enabled
    state_backend: StateBackend = StateBackend.HASHMAP  # state.backend.type
    # Does the server run server_ext's JVM plugin (the only runtime of stateful operators)?
    # None: not asked yet (explain before connecting), taken as yes; the streaming executor
    # asks once per session before it compiles, and a stateful query without it is refused.
    jvm_plugin: bool | None = None
    # table.exec.mini-batch.enabled: its allow-latency (the micro-batch interval at least),
    # and aggregations fold a key's changes of a micro-batch before emitting; None: off
    mini_batch_ms: int | None = None
    mini_batch_size: int | None = None  # table.exec.mini-batch.size: the most rows a bundle folds
    agg_phase_strategy: AggPhaseStrategy = AggPhaseStrategy.AUTO  # table.optimizer.agg-phase-..
