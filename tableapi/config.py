"""``TableConfig``: Flink-style string options, each declared once here as a
:class:`~tableapi.options.ConfigOption` (:data:`TABLE_OPTIONS`; docs/options.md lists them).

Example::

    >>> config = TableConfig().set(STATE_TTL, "1 h")
    >>> config.state_ttl_ms, config.get(STATE_TTL), config.get("table.exec.state.ttl")
    (3600000, 3600000, '1 h')
    >>> config.streaming_options().default_ttl_ms
    3600000
    >>> TableConfig().set(NATIVE_JOINS, "maybe")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.options.OptionValueError: Could not parse value 'maybe' for key \
'...spark-native.enabled': it must be true or false.
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

from tableapi.errors import ValidationError
from tableapi.options import ConfigOption, ConfigOptions, OptionGroup
from tableapi.physical.options import AggPhaseStrategy, StateBackend, StreamingOptions

T = TypeVar("T")

# The options the product reads (Flink's names, types and defaults where Flink has the option).
STATE_TTL = (
    ConfigOptions.key("table.exec.state.ttl")
    .duration_type()
    .no_default_value()
    .with_description(
        "How long a stateful operator keeps a key's state after its last change (a join's "
        "rows, an aggregate's accumulators); unset or 0 keeps it forever. A STATE_TTL hint "
        "sets it per input."
    )
)
NATIVE_JOINS = (
    ConfigOptions.key("table.exec.join.spark-native.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "Run a streaming join that Spark's own stream-stream join runs as Flink does (inner "
        "joins of insert-only inputs) on Spark's join; false (the default): on the product's "
        "join operator, which took 0.7x-0.9x Spark's join's time in Nexmark's joins."
    )
)
STATE_BACKEND = (
    ConfigOptions.key("state.backend.type")
    .enum_type(StateBackend)
    .default_value(StateBackend.HASHMAP)
    .with_description(
        "Where streaming queries keep their state: Spark's HDFS-backed store (state in memory) "
        "or its RocksDB store."
    )
)
MULTI_JOIN_ENABLED = (
    ConfigOptions.key("table.optimizer.multi-join.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "In streaming mode, join a chain of regular joins on a common key in one multi-way "
        "join operator (one state per input, no intermediate results)."
    )
)
MULTI_JOIN_MAX_TABLES = (
    ConfigOptions.key("table.optimizer.multi-join.max-tables")
    .int_type()
    .no_default_value()
    .with_requirement(
        "a whole number of at least 3 (a multi-way join joins 3 or more tables)", lambda n: n >= 3
    )
    .with_description("The most inputs one multi-way join takes; unset: no limit.")
)
MINI_BATCH_ENABLED = (
    ConfigOptions.key("table.exec.mini-batch.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "Fold a key's changes of a micro-batch before an aggregation emits (and pre-aggregate "
        "before the shuffle, see table.optimizer.agg-phase-strategy); needs "
        "table.exec.mini-batch.allow-latency and table.exec.mini-batch.size."
    )
)
MINI_BATCH_LATENCY = (
    ConfigOptions.key("table.exec.mini-batch.allow-latency")
    .duration_type()
    .default_value(0)
    .with_description(
        "With mini-batch: the longest a change waits to be emitted (a micro-batch's interval "
        "at least); required, positive."
    )
)
MINI_BATCH_SIZE = (
    ConfigOptions.key("table.exec.mini-batch.size")
    .int_type()
    .no_default_value()
    .with_requirement("> 0 (the most rows a bundle holds)", lambda n: n > 0)
    .with_description("With mini-batch: the most rows a bundle folds; required.")
)
AGG_PHASE_STRATEGY = (
    ConfigOptions.key("table.optimizer.agg-phase-strategy")
    .enum_type(AggPhaseStrategy)
    .default_value(AggPhaseStrategy.AUTO)
    .with_description(
        "In streaming mode with mini-batch, an aggregation runs in two phases (a local one "
        "before the shuffle, a global one after) unless ONE_PHASE; AUTO and TWO_PHASE agree. "
        "An event-time TUMBLE, HOP or CUMULATE window aggregation runs in two phases (local "
        "per key and slice) unless ONE_PHASE, mini-batch or not, as Flink's. "
        "Batch mode runs Spark's aggregate, which always pre-aggregates."
    )
)
CHECKPOINT_DIR = (
    ConfigOptions.key("execution.checkpointing.dir")
    .string_type()
    .no_default_value()
    .with_description(
        "Where streaming queries checkpoint (under a directory per pipeline.name): a query "
        "restarted with the same two resumes; unset: a fresh temporary directory per query."
    )
)
DEFAULT_PARALLELISM = (
    ConfigOptions.key("table.exec.resource.default-parallelism")
    .int_type()
    .default_value(-1)
    .with_requirement(
        "a positive whole number (or -1: the server's default)", lambda n: n > 0 or n == -1
    )
    .with_description(
        "The parallelism of a streaming query's stateful operators: Spark's shuffle "
        "partitions, which its first checkpoint fixes (a resumed query keeps them); -1: the "
        "server's default."
    )
)
PIPELINE_NAME = (
    ConfigOptions.key("pipeline.name")
    .string_type()
    .no_default_value()
    .with_description("The name of the next query or insert (its checkpoint directory's name).")
)
#: Flink's values of ``execution.runtime-mode`` a table environment runs.
RUNTIME_MODES = ("streaming", "batch")
RUNTIME_MODE = (
    ConfigOptions.key("execution.runtime-mode")
    .enum_type(RUNTIME_MODES)
    .no_default_value()
    .with_requirement(
        # Flink's text; its third value, 'automatic', chooses a DataStream program's mode.
        lambda key, value: (
            f"Could not parse value {value!r} for key {key!r}: a table environment runs "
            f"'streaming' or 'batch' (SET '{key}' = 'batch': the next statements run in batch "
            "mode)."
        )
    )
    .with_description(
        "Which mode the next statements run in; unset: the environment's own "
        "(TableEnvironment.create(mode=..)). Flink's 'automatic' is refused."
    )
)
DISPLAY_PROGRESS = (
    ConfigOptions.key("table.display.progress")
    .enum_type(("auto", "true", "false"))
    .default_value("auto")
    .with_description(
        "A one-line progress report on standard error while a query runs longer than a few "
        "seconds; 'auto': only when standard error is a terminal."
    )
)

#: Every option ``TableConfig`` reads (an unknown key is kept, as in Flink).
TABLE_OPTIONS = OptionGroup(
    "Table configuration",
    "Set with `env.config.set(key, value)` or SQL's `SET 'key' = 'value'`; a value an option "
    "cannot take is refused where it is set.",
    (
        STATE_TTL,
        NATIVE_JOINS,
        STATE_BACKEND,
        MULTI_JOIN_ENABLED,
        MULTI_JOIN_MAX_TABLES,
        MINI_BATCH_ENABLED,
        MINI_BATCH_LATENCY,
        MINI_BATCH_SIZE,
        AGG_PHASE_STRATEGY,
        CHECKPOINT_DIR,
        DEFAULT_PARALLELISM,
        PIPELINE_NAME,
        RUNTIME_MODE,
        DISPLAY_PROGRESS,
    ),
)

_NO_LIMIT = 1 << 30


class TableConfig:
    """Flink-style string options: ``env.config.set("table.exec.state.ttl", "1 h")``.

    >>> TableConfig().set("table.exec.state.ttl", "1 h").set("pipeline.name", "rates").to_dict()
    {'table.exec.state.ttl': '1 h', 'pipeline.name': 'rates'}
    """

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def set(self, key: str | ConfigOption[Any], value: object) -> TableConfig:
        """Set an option (by its key or its declaration); values are kept as strings, as in
        Flink. A value a declared option cannot take is refused here, naming the option and
        what it takes.

        >>> TableConfig().set(PIPELINE_NAME, "orders-enrichment").get("pipeline.name")
        'orders-enrichment'
        >>> TableConfig().set(MINI_BATCH_ENABLED, True).to_dict()
        {'table.exec.mini-batch.enabled': 'true'}
        >>> TableConfig().set(STATE_TTL, "soon")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.options.OptionValueError: Could not parse value 'soon' for key \
'table.exec.state.ttl': it must ...
        """
        name = str(key)
        text = str(value).lower() if isinstance(value, bool) else str(value)
        option = TABLE_OPTIONS.find(name)
        if option is not None:
            option.parse(text, name)
        self._values[name] = text
        return self

    def reset(self, key: str | ConfigOption[Any] | None = None) -> TableConfig:
        """Forget an option (every option when ``key`` is None): SQL's ``RESET``.

        >>> TableConfig().set(STATE_TTL, "1 h").reset(STATE_TTL).to_dict()
        {}
        """
        if key is None:
            self._values.clear()
        else:
            self._values.pop(str(key), None)
        return self

    @overload
    def get(self, key: ConfigOption[T]) -> T: ...

    @overload
    def get(self, key: str, default: str | None = None) -> str | None: ...

    def get(self, key: str | ConfigOption[Any], default: str | None = None) -> Any:
        """A declared option's value, typed (its default when unset), as Flink's
        ``get(ConfigOption)``; or a key's text, ``default`` when unset.

        >>> TableConfig().get(DEFAULT_PARALLELISM), TableConfig().get(CHECKPOINT_DIR) is None
        (-1, True)
        >>> TableConfig().set("my.key", "x").get("my.key")
        'x'
        """
        if isinstance(key, ConfigOption):
            return key.read(self._values)
        return self._values.get(key, default)

    def to_dict(self) -> dict[str, str]:
        """Every option set, as a dict.

        >>> TableConfig().set(STATE_TTL, "1 d").to_dict()
        {'table.exec.state.ttl': '1 d'}
        """
        return dict(self._values)

    @property
    def state_ttl_ms(self) -> int | None:
        """``table.exec.state.ttl`` in milliseconds; None (or 0) keeps join state forever.

        >>> TableConfig().set(STATE_TTL, "0").state_ttl_ms is None
        True
        """
        return self.get(STATE_TTL) or None

    def mini_batch_ms(self) -> int | None:
        """With ``table.exec.mini-batch.enabled``: ``table.exec.mini-batch.allow-latency`` in
        milliseconds (Flink requires it and ``table.exec.mini-batch.size`` to be positive);
        None when mini-batch is off.

        >>> config = TableConfig().set(MINI_BATCH_ENABLED, "true")
        >>> config.mini_batch_ms()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: MiniBatch Latency must be greater than 0 ms: set ...
        >>> config.set(MINI_BATCH_LATENCY, "5 s").set(MINI_BATCH_SIZE, "1000").mini_batch_ms()
        5000
        """
        if not self.get(MINI_BATCH_ENABLED):
            return None
        latency = self.get(MINI_BATCH_LATENCY)
        if latency <= 0:
            raise ValidationError(
                f"MiniBatch Latency must be greater than 0 ms: set {MINI_BATCH_LATENCY} "
                f"(e.g. '5 s') with {MINI_BATCH_ENABLED}."
            )
        self._mini_batch_size()
        return latency

    def _mini_batch_size(self) -> int:
        size = self.get(MINI_BATCH_SIZE)
        if size is None:
            raise ValidationError(
                f"MiniBatch Size must be greater than 0: set {MINI_BATCH_SIZE} (the most rows a "
                f"bundle holds, e.g. '1000') with {MINI_BATCH_ENABLED}."
            )
        return size

    def multi_join_max_tables(self, streaming: bool) -> int | None:
        """Streaming with ``table.optimizer.multi-join.enabled``: the most inputs one
        multi-way join takes (``table.optimizer.multi-join.max-tables``, no limit by
        default); None otherwise.

        >>> TableConfig().set(MULTI_JOIN_ENABLED, "true").multi_join_max_tables(True) > 10
        True
        >>> TableConfig().set(MULTI_JOIN_ENABLED, "true").multi_join_max_tables(False) is None
        True
        """
        if not streaming or not self.get(MULTI_JOIN_ENABLED):
            return None
        return self.get(MULTI_JOIN_MAX_TABLES) or _NO_LIMIT

    def parallelism(self) -> int | None:
        """``table.exec.resource.default-parallelism``: how many partitions a streaming query
        splits its state into (Spark's ``spark.sql.shuffle.partitions``, the server's default
        when unset or -1, as in Flink). A query that resumes from a checkpoint must ask for
        the number its checkpoint has.

        >>> TableConfig().set(DEFAULT_PARALLELISM, "8").parallelism()
        8
        >>> TableConfig().set(DEFAULT_PARALLELISM, "-1").parallelism() is None
        True
        >>> TableConfig().set(DEFAULT_PARALLELISM, "0")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: table.exec.resource.default-parallelism must be a ...
        """
        parallelism = self.get(DEFAULT_PARALLELISM)
        return None if parallelism == -1 else parallelism

    def runtime_mode(self, default: str) -> str:
        """``execution.runtime-mode`` (any case, as Flink): ``streaming`` or ``batch``;
        ``default`` when unset. Flink's ``automatic`` (a DataStream program's mode chosen by
        its sources' boundedness) is refused, as any other value.

        >>> TableConfig().set(RUNTIME_MODE, "BATCH").runtime_mode("streaming")
        'batch'
        >>> TableConfig().set(RUNTIME_MODE, "automatic")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Could not parse value 'automatic' for key \
'execution.runtime-mode': a table environment runs 'streaming' or 'batch'...
        """
        return self.get(RUNTIME_MODE) or default

    def display_progress(self) -> bool | None:
        """``table.display.progress``: show a running query's progress on standard error
        (``true``), never (``false``), or only when standard error is a terminal (``auto``,
        the default: None).

        >>> TableConfig().display_progress() is None
        True
        >>> TableConfig().set(DISPLAY_PROGRESS, "False").display_progress()
        False
        >>> TableConfig().set(DISPLAY_PROGRESS, "yes")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.options.OptionValueError: Could not parse value 'yes' for key \
'table.display.progress': it must be one of ['auto', 'true', 'false'] (any case).
        """
        value = self.get(DISPLAY_PROGRESS)
        return None if value == "auto" else value == "true"

    def state_backend(self) -> StateBackend:
        """``state.backend.type``: where streaming queries keep their state, Flink's names:
        ``hashmap`` (the default: Spark's HDFS-backed store, state in memory) or ``rocksdb``.

        >>> TableConfig().state_backend().value
        'hashmap'
        >>> TableConfig().set(STATE_BACKEND, "RocksDB").state_backend().value
        'rocksdb'
        >>> TableConfig().set(STATE_BACKEND, "heap")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.options.OptionValueError: Could not parse value 'heap' for key \
'state.backend.type': it must be one of ['hashmap', 'rocksdb'] (any case).
        """
        return self.get(STATE_BACKEND)

    def agg_phase_strategy(self) -> AggPhaseStrategy:
        """``table.optimizer.agg-phase-strategy``: ``AUTO`` (the default), ``ONE_PHASE`` or
        ``TWO_PHASE`` (any case, as Flink). In streaming mode an aggregation runs in two
        phases when mini-batch is on, unless ``ONE_PHASE``; batch mode runs Spark's aggregate,
        which always pre-aggregates before its shuffle.

        >>> TableConfig().set(AGG_PHASE_STRATEGY, "two_phase").agg_phase_strategy().value
        'TWO_PHASE'
        """
        return self.get(AGG_PHASE_STRATEGY)

    def streaming_options(self) -> StreamingOptions:
        """What streaming planning reads from the options.

        >>> options = TableConfig().set(STATE_TTL, "10 min").streaming_options()
        >>> options.default_ttl_ms, options.state_backend.value
        (600000, 'hashmap')
        """
        mini_batch_ms = self.mini_batch_ms()
        return StreamingOptions(
            default_ttl_ms=self.state_ttl_ms,
            native_joins=self.get(NATIVE_JOINS),
            state_backend=self.state_backend(),
            mini_batch_ms=mini_batch_ms,
            mini_batch_size=self._mini_batch_size() if mini_batch_ms else None,
            agg_phase_strategy=self.agg_phase_strategy(),
        )
