"""The client's way to server_ext's JVM operators, the only runtime of the stateful
operators: a Spark Connect extension relation that the server's
``tableapi.serverext.OperatorPlugin`` turns into a Java ``flatMapGroupsWithState``.

The input is the tagged union the compiler builds (``__k0..``, ``__side``, ``__kind``,
``__seq``, ``__l``, ``__r``: see ``server_ext.joins.spec``); the output is ``__kind`` plus
the operator's fields. The wire format is ``server_ext.jvm.wire``.

Example::

    if not jvm_plugin_on_server(spark):  # asked once per session
        raise ValidationError(NO_PLUGIN)
    out = jvm_join(union, ["__k0"], spec, output_schema)
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections.abc import Sequence
from typing import cast

from pyspark.errors import PySparkException
from pyspark.sql.connect import proto
from pyspark.sql.connect.client import SparkConnectClient
from pyspark.sql.connect.dataframe import DataFrame
from pyspark.sql.connect.plan import LogicalPlan
from pyspark.sql.connect.session import SparkSession
from pyspark.sql.dataframe import DataFrame as SqlDataFrame
from pyspark.sql.types import ByteType, StructField, StructType

from server_ext.aggregate_spec import AggregateSpec
from server_ext.joins.spec import KIND, JoinSpec
from server_ext.jvm import wire
from server_ext.operators import OperatorSpec, registered
from server_ext.window_spec import WindowAggregateSpec

__all__ = [
    "NO_PLUGIN",
    "jvm_executors",
    "jvm_file_time",
    "jvm_join",
    "jvm_local_aggregate",
    "jvm_operator",
    "jvm_operators_available",
    "jvm_plugin_on_server",
    "jvm_position",
    "jvm_unseen_retractions",
]

#: What a stateful streaming query on a server without the plugin is told.
NO_PLUGIN = (
    "Stateful streaming operators (aggregations, distinct(), and joins other than Spark's own "
    "inner ones) run in server_ext's JVM operator plugin only, and this Spark Connect server "
    "does not have it. "
    "Start the server with `python -m server_ext serve` where a JDK 17 is (it builds and loads "
    "the plugin jar), install a wheel built where a JDK was (it carries "
    "server_ext/jvm/tableapi-server-ext.jar), or add the jar to an existing server with "
    "spark.jars and spark.connect.extensions.relation.classes=tableapi.serverext."
    'OperatorPlugin (`python -c "from server_ext.jvm import plugin_conf; print(plugin_conf())"` '
    "prints both)."
)

# session_id -> does its server run the plugin (asked once per session).
_plugin_by_session: dict[str, bool] = {}
_plugin_lock = threading.Lock()


class _JvmOperator(LogicalPlan):
    """An extension relation: ``child`` (may be None for a probe) and a spec, sent as the
    ``JvmOperator`` payload of ``server_ext.jvm.wire``."""

    def __init__(
        self,
        child: LogicalPlan | None,
        operator: str,
        spec: str = "",
        version: int | None = None,
    ) -> None:
        super().__init__(child)
        self._operator = operator
        self._spec = spec
        self._version = version  # an operator's (its spec class's); None: a relation's

    def plan(self, session: SparkConnectClient) -> proto.Relation:
        rel = self._create_proto_relation()
        child = None if self._child is None else self._child.plan(session).SerializeToString()
        rel.extension.type_url = wire.TYPE_URL
        rel.extension.value = wire.encode_payload(self._operator, child, self._spec, self._version)
        return rel


def _check_keys(union: DataFrame, key_names: Sequence[str]) -> None:
    """The grouping keys must be known columns of ``union``."""
    missing = [k for k in key_names if k not in union.columns]
    if missing or not key_names:
        raise ValueError(f"key columns {missing or '(none)'} are not in the union {union.columns}")


def _checked_fields(
    union: DataFrame, key_names: Sequence[str], output: StructType
) -> list[StructField]:
    """``output``'s fields, once the grouping keys are known columns of ``union`` and the
    output starts with ``__kind TINYINT`` (what every JVM operator returns)."""
    _check_keys(union, key_names)
    fields = output.fields
    if not fields or fields[0].name != KIND or not isinstance(fields[0].dataType, ByteType):
        raise ValueError(f"the output schema must start with {KIND} TINYINT, got {output}")
    return fields


def jvm_join(
    union: DataFrame, key_names: Sequence[str], spec: JoinSpec, output: StructType
) -> DataFrame:
    """The join of ``union`` (the tagged union, grouped by ``key_names``) by the JVM operator
    for ``spec``: :func:`jvm_operator` of a :class:`JoinSpec`.

    Example::

        out = jvm_join(union, ["__k0"], spec, _output_schema(node.row_type))
        out.select(*names, "__kind")
    """
    return jvm_operator(union, key_names, spec, output)


def jvm_operator(
    union: DataFrame, key_names: Sequence[str], spec: OperatorSpec, output: StructType
) -> DataFrame:
    """The JVM tier's operator for ``spec`` (any spec of ``server_ext.operators.SPECS``)
    over ``union``, grouped by ``key_names``; ``output`` is ``__kind TINYINT NOT NULL`` then
    the operator's fields. The request is checked here, before it is sent.

    Example::

        out = jvm_operator(union, ["__k0"], temporal_spec, output_schema(node.row_type))
    """
    registered(spec)
    fields = _checked_fields(union, key_names, output)
    width = len(spec.output_fields())
    if len(fields) != 1 + width:
        raise ValueError(
            f"the output schema has {len(fields) - 1} fields, the {spec.operator} operator "
            f"gives {width}"
        )
    spec.check()
    payload = wire.operator_spec_json(spec, key_names, output.json())
    plan = _JvmOperator(union._plan, spec.operator, payload, spec.version)
    return DataFrame(plan, union.sparkSession)


def jvm_local_aggregate(
    union: DataFrame,
    key_names: Sequence[str],
    spec: AggregateSpec | WindowAggregateSpec,
    output: StructType,
) -> DataFrame:
    """The local phase of a two-phase aggregation over ``union`` (the aggregate's tagged
    union, grouped by ``key_names``): the plugin's ``local_aggregate`` relation (a window
    aggregate's spec: ``local_window_aggregate``, grouped by the keys and the slice), whose
    rows (the keys, ``__side``, ``__in0`` and the partial accumulators ``__acc``) the
    operator of ``spec`` merges into ``output`` (checked here as that operator checks it).

    Example::

        output = output_schema(node.row_type)
        partials = jvm_local_aggregate(union, ["__k0"], spec, output)
        out = jvm_operator(partials, ["__k0"], spec, output)
    """
    _check_keys(union, key_names)
    spec.check()
    payload = wire.operator_spec_json(spec, key_names, output.json())
    relation = f"local_{spec.operator}"
    plan = _JvmOperator(union._plan, relation, payload, spec.version)
    return DataFrame(plan, union.sparkSession)


def jvm_position(df: SqlDataFrame, column: str) -> DataFrame:
    """``df`` plus a BIGINT ``column`` that numbers its rows in the order each task reads
    them (the plugin's ``position`` relation; put it right above a file scan).

    Example::

        scan = spark.readStream.json(path).select("*", "_metadata.file_name")
        ordered = jvm_position(scan, "__pos")  # rows of one file split: increasing __pos
    """
    plan = cast(DataFrame, df)._plan  # (the plugin refuses a column name that is taken)
    return DataFrame(_JvmOperator(plan, "position", column), cast(SparkSession, df.sparkSession))


def jvm_file_time(df: SqlDataFrame, path: str, column: str, table: str) -> DataFrame:
    """``df`` plus a BIGINT ``column``: the modification time in nanoseconds of the file each
    row came from (its ``path`` column, Spark's ``_metadata.file_path``); the query fails
    when two files of one directory tie, naming them and ``table`` (the plugin's
    ``file_time`` relation).

    Example::

        scan = spark.readStream.json(path).select("*", "_metadata.file_path")
        timed = jvm_file_time(scan, "file_path", "__file_time", "Orders")
    """
    spec = json.dumps({"path": path, "name": column, "table": table})
    plan = cast(DataFrame, df)._plan
    return DataFrame(_JvmOperator(plan, "file_time", spec), cast(SparkSession, df.sparkSession))


def jvm_executors(spark: SparkSession) -> list[str]:
    """The ids of the executors the server's driver has registered (the plugin's
    ``executors`` relation): none on a local master. Raises what the server says when it has
    no plugin of this wire version.

    Example::

        if len(jvm_executors(spark)) > len(reported):  # an executor has not run a task yet
            ...
    """
    nonce = str(time.time_ns())  # a new relation each call: a cached plan would be stale
    rows = DataFrame(_JvmOperator(None, "executors", nonce), spark).collect()
    return sorted(row[0] for row in rows)


def jvm_operators_available(spark: SparkSession) -> bool:
    """Does the server run server_ext's JVM operator plugin of this client's wire version?
    One analyze round trip: ask :func:`jvm_plugin_on_server` instead, which asks once per
    session. A plugin of another version is warned about and taken as none.

    Example::

        assert jvm_operators_available(spark), NO_PLUGIN
    """
    try:
        schema = DataFrame(_JvmOperator(None, "probe"), spark).schema
    except PySparkException as e:
        text = str(e)
        if wire.NO_HANDLER in text:
            return False
        if "speaks wire version" in text:
            warnings.warn(
                "the server's server_ext JVM plugin is of another version than this client: "
                "install the same flink-tableapi-spark on both",
                stacklevel=2,
            )
            return False
        raise
    return schema.names == [wire.PROBE_COLUMN]


def jvm_unseen_retractions(spark: SparkSession) -> dict[str, int]:
    """How many retractions of rows they held no state for the JVM operators of the
    server's driver JVM (all of them on a local master) have dropped, by operator kind
    (``join``, ``aggregate``); the server's log warns of them too.

    Example::

        before = jvm_unseen_retractions(spark).get("aggregate", 0)
    """
    nonce = str(time.time_ns())  # a new relation each call: a cached plan would be stale
    rows = DataFrame(_JvmOperator(None, "unseen_retractions", nonce), spark).collect()
    return {row[0]: int(row[1]) for row in rows}


def jvm_plugin_on_server(spark: SparkSession) -> bool:
    """:func:`jvm_operators_available`, asked once per session: the one probe of the plugin
    (the streaming executor's options carry its answer to planning and compiling).

    Example::

        options = attrs.evolve(options, jvm_plugin=jvm_plugin_on_server(spark))
    """
    with _plugin_lock:
        known = _plugin_by_session.get(spark.session_id)
        if known is None:
            known = _plugin_by_session[spark.session_id] = jvm_operators_available(spark)
        return known
