"""``TableConfig``: Flink-style string options, and the one place their keys are spelled.

Example::

    >>> config = TableConfig().set(STATE_TTL, "1 h")
    >>> config.state_ttl_ms
    3600000
    >>> config.streaming_options().default_ttl_ms
    3600000
    >>> TableConfig().set(NATIVE_JOINS, "maybe").streaming_options()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: ...spark-native.enabled must be true or false, got 'maybe'.
"""

from __future__ import annotations

from typing import TypeVar

from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError
from tableapi.plan.changelog import (
    AggPhaseStrategy,
    StateBackend,
    StreamingOptions,
)

# The options the product reads (Flink's names where Flink has the option).
STATE_TTL = "table.exec.state.ttl"
NATIVE_JOINS = "table.exec.join.spark-native.enabled"
STATE_BACKEND = "state.backend.type"
MULTI_JOIN_ENABLED = "table.optimizer.multi-join.enabled"
MULTI_JOIN_MAX_TABLES = "table.optimizer.multi-join.max-tables"
MINI_BATCH_ENABLED = "table.exec.mini-batch.enabled"
MINI_BATCH_LATENCY = "table.exec.mini-batch.allow-latency"
MINI_BATCH_SIZE = "table.exec.mini-batch.size"
AGG_PHASE_STRATEGY = "table.optimizer.agg-phase-strategy"
CHECKPOINT_DIR = "execution.checkpointing.dir"
#: The parallelism of a streaming query's stateful operators: Spark's shuffle partitions,
#: which its first checkpoint fixes (a resumed query keeps them).
DEFAULT_PARALLELISM = "table.exec.resource.default-parallelism"
PIPELINE_NAME = "pipeline.name"
#: Flink's: which mode the next statements run in (``streaming`` or ``batch``); the
#: environment's own mode (``TableEnvironment.create(mode=..)``) when unset.
RUNTIME_MODE = "execution.runtime-mode"
RUNTIME_MODES = ("streaming", "batch")
#: A one-line progress report on standard error while a query runs longer than a few
#: seconds: ``auto`` (the default: only when standard error is a terminal), ``true``, ``false``.
DISPLAY_PROGRESS = "table.display.progress"
DISPLAY_PROGRESS_VALUES = ("auto", "true", "false")

_NO_LIMIT = 1 << 30


class TableConfig:
    """Flink-style string options: ``env.config.set("table.exec.state.ttl", "1 h")``.

    >>> TableConfig().set("table.exec.state.ttl", "1 h").set("pipeline.name", "rates").to_dict()
    {'table.exec.state.ttl': '1 h', 'pipeline.name': 'rates'}
    """

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def set(self, key: str, value: object) -> TableConfig:
        """Set an option; values are kept as strings, as in Flink. A value an option of the
        product cannot take is refused here, naming the option and what it takes.

        >>> TableConfig().set("pipeline.name", "orders-enrichment").get("pipeline.name")
        'orders-enrichment'
        >>> TableConfig().set(STATE_TTL, "soon")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Cannot read table.exec.state.ttl 'soon': ...
        """
        previous = self._values.get(key)
        self._values[key] = str(value)
        try:
            self._check(key)
        except ValidationError:
            if previous is None:
                del self._values[key]
            else:
                self._values[key] = previous
            raise
        return self

    def reset(self, key: str | None = None) -> TableConfig:
        """Forget an option (every option when ``key`` is None): SQL's ``RESET``.

        >>> TableConfig().set(STATE_TTL, "1 h").reset(STATE_TTL).to_dict()
        {}
        """
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)
        return self

    def _check(self, key: str) -> None:
        """Read ``key`` the way the planner will, so that a bad value fails now."""
        if key == STATE_TTL:
            _ = self.state_ttl_ms
        elif key in (NATIVE_JOINS, MULTI_JOIN_ENABLED, MINI_BATCH_ENABLED):
            self.flag(key, False)
        elif key == MINI_BATCH_LATENCY:
            parse_duration_ms(self._values[key], key)
        elif key == MINI_BATCH_SIZE:
            self._mini_batch_size(must=False)
        elif key == MULTI_JOIN_MAX_TABLES:
            self._max_tables()
        elif key == STATE_BACKEND:
            self.state_backend()
        elif key == DEFAULT_PARALLELISM:
            self.parallelism()
        elif key == AGG_PHASE_STRATEGY:
            self.agg_phase_strategy()
        elif key == DISPLAY_PROGRESS:
            self.display_progress()
        elif key == RUNTIME_MODE:
            self.runtime_mode("streaming")

    def get(self, key: str, default: str | None = None) -> str | None:
        """The option's value, or ``default``.

        >>> TableConfig().get("execution.checkpointing.dir") is None
        True
        """
        return self._values.get(key, default)

    def to_dict(self) -> dict[str, str]:
        """Every option set, as a dict.

        >>> TableConfig().set(STATE_TTL, "1 d").to_dict()
        {'table.exec.state.ttl': '1 d'}
        """
        return dict(self._values)

    def flag(self, key: str, default: bool) -> bool:
        """A true/false option; anything else is an error naming the option.

        >>> TableConfig().flag(MULTI_JOIN_ENABLED, False)
        False
        """
        value = self._values.get(key)
        if value is None:
            return default
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            raise ValidationError(f"{key} must be true or false, got {value!r}.")
        return lowered == "true"

    @property
    def state_ttl_ms(self) -> int | None:
        """``table.exec.state.ttl`` in milliseconds; None (or 0) keeps join state forever.

        >>> TableConfig().set(STATE_TTL, "0").state_ttl_ms is None
        True
        """
        value = self._values.get(STATE_TTL)
        return (parse_duration_ms(value, STATE_TTL) or None) if value else None

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
        if not self.flag(MINI_BATCH_ENABLED, False):
            return None
        value = self._values.get(MINI_BATCH_LATENCY)
        latency = parse_duration_ms(value, MINI_BATCH_LATENCY) if value else 0
        if latency <= 0:
            raise ValidationError(
                f"MiniBatch Latency must be greater than 0 ms: set {MINI_BATCH_LATENCY} "
                f"(e.g. '5 s') with {MINI_BATCH_ENABLED}."
            )
        self._mini_batch_size(must=True)
        return latency

    def _mini_batch_size(self, must: bool) -> int | None:
        value = self._values.get(MINI_BATCH_SIZE)
        if value is None and not must:
            return None
        if value is None or not value.strip().isdigit() or int(value) <= 0:
            raise ValidationError(
                f"{MINI_BATCH_SIZE} must be > 0 (the most rows a bundle holds), got {value!r}."
            )
        return int(value)

    def multi_join_max_tables(self, streaming: bool) -> int | None:
        """Streaming with ``table.optimizer.multi-join.enabled``: the most inputs one
        multi-way join takes (``table.optimizer.multi-join.max-tables``, no limit by
        default); None otherwise.

        >>> TableConfig().set(MULTI_JOIN_ENABLED, "true").multi_join_max_tables(True) > 10
        True
        >>> TableConfig().set(MULTI_JOIN_ENABLED, "true").multi_join_max_tables(False) is None
        True
        """
        if not streaming or not self.flag(MULTI_JOIN_ENABLED, False):
            return None
        return self._max_tables()

    def _max_tables(self) -> int:
        value = self._values.get(MULTI_JOIN_MAX_TABLES)
        if value is None:
            return _NO_LIMIT
        if not value.strip().isdigit() or int(value) < 3:
            raise ValidationError(
                f"{MULTI_JOIN_MAX_TABLES} must be a whole number of at least 3 "
                f"(a multi-way join joins 3 or more tables), got {value!r}."
            )
        return int(value)

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
        value = self._values.get(DEFAULT_PARALLELISM)
        if value is None or value.strip() == "-1":
            return None
        if not value.strip().isdigit() or int(value) <= 0:
            raise ValidationError(
                f"{DEFAULT_PARALLELISM} must be a positive whole number (or -1: the server's "
                f"default), got {value!r}."
            )
        return int(value)

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
        value = self._values.get(RUNTIME_MODE)
        if value is None:
            return default
        mode = value.strip().lower()
        if mode not in RUNTIME_MODES:
            raise ValidationError(
                f"Could not parse value {value!r} for key {RUNTIME_MODE!r}: a table environment "
                f"runs 'streaming' or 'batch' (SET '{RUNTIME_MODE}' = 'batch': the next "
                "statements run in batch mode)."
            )
        return mode

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
        tableapi.errors.ValidationError: table.display.progress must be auto, true or false, ...
        """
        value = self._values.get(DISPLAY_PROGRESS, "auto").strip().lower()
        if value not in DISPLAY_PROGRESS_VALUES:
            raise ValidationError(
                f"{DISPLAY_PROGRESS} must be auto, true or false, got "
                f"{self._values[DISPLAY_PROGRESS]!r}."
            )
        return None if value == "auto" else value == "true"

    def state_backend(self) -> StateBackend:
        """``state.backend.type``: where streaming queries keep their state, Flink's names:
        ``hashmap`` (the default: Spark's HDFS-backed store, state in memory) or ``rocksdb``.

        >>> TableConfig().state_backend().value
        'hashmap'
        >>> TableConfig().set(STATE_BACKEND, "rocksdb").state_backend().value
        'rocksdb'
        >>> TableConfig().set(STATE_BACKEND, "heap")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: state.backend.type must be one of ['hashmap', ...
        """
        return _choice(self._values.get(STATE_BACKEND), STATE_BACKEND, StateBackend.HASHMAP)

    def agg_phase_strategy(self) -> AggPhaseStrategy:
        """``table.optimizer.agg-phase-strategy``: ``AUTO`` (the default), ``ONE_PHASE`` or
        ``TWO_PHASE`` (any case, as Flink). In streaming mode an aggregation runs in two
        phases when mini-batch is on, unless ``ONE_PHASE``; batch mode runs Spark's aggregate,
        which always pre-aggregates before its shuffle.

        >>> TableConfig().set(AGG_PHASE_STRATEGY, "two_phase").agg_phase_strategy().value
        'TWO_PHASE'
        >>> TableConfig().set(AGG_PHASE_STRATEGY, "both")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: table.optimizer.agg-phase-strategy must be one of ...
        """
        value = self._values.get(AGG_PHASE_STRATEGY)
        return _choice(value, AGG_PHASE_STRATEGY, AggPhaseStrategy.AUTO)

    def streaming_options(self) -> StreamingOptions:
        """What streaming planning reads from the options.

        >>> options = TableConfig().set(STATE_TTL, "10 min").streaming_options()
        >>> options.default_ttl_ms, options.state_backend.value
        (600000, 'hashmap')
        """
        return StreamingOptions(
            self.state_ttl_ms,
            self.flag(NATIVE_JOINS, True),
            self.state_backend(),
            mini_batch_ms=self.mini_batch_ms(),
            mini_batch_size=self._mini_batch_size(must=True) if self.mini_batch_ms() else None,
            agg_phase_strategy=self.agg_phase_strategy(),
        )


_E = TypeVar("_E", StateBackend, AggPhaseStrategy)


def _choice(value: str | None, key: str, default: _E) -> _E:
    """An option with a fixed set of values (case-insensitive); anything else is an error
    naming the option and its values."""
    if value is None:
        return default
    kind = type(default)
    for choice in kind:
        if choice.value.lower() == value.strip().lower():
            return choice
    raise ValidationError(
        f"{key} must be one of {[v.value for v in kind]} (default {default.value!r}), "
        f"got {value!r}."
    )
