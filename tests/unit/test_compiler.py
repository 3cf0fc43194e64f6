"""Plan-only compiler tests: compile to a Spark Connect plan and assert on it, no server.

The session points at a port nothing listens on; compiling must not need the server (a
round trip would hang in its retries), so these tests also guard that the compilers stay
on the client.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql.connect.proto import relations_pb2 as rel
from pyspark.sql.connect.session import SparkSession

from server_ext.joins import spec as wire
from server_ext.joins import temporal_spec as tw
from server_ext.jvm import wire as jvm_wire
from tableapi import Schema, TableDescriptor, TableEnvironment, ValidationError, call, col, lit, udf
from tableapi.compiler import compile_plan, compile_stream
from tableapi.compiler.end_of_input import EndOfInput
from tableapi.compiler.expressions import to_spark
from tableapi.compiler.operators import key_types
from tableapi.config import MULTI_JOIN_ENABLED
from tableapi.expressions import InTable, UnresolvedCall
from tableapi.physical import plan_stream
from tableapi.physical.options import StateBackend, StreamingOptions
from tableapi.physical.specs import condition_tree
from tableapi.plan import ElementsSource, Scan
from tableapi.plan.changelog import ChangelogMode
from tableapi.types import BIGINT, INT, STRING, DataType, RowType


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = SparkSession.builder.remote("sc://localhost:1").create()
    yield session
    session.client.close()  # no server to release the session on: close the channel only


def plan_of(df: Any, spark: SparkSession) -> rel.Relation:
    return df._plan.plan(spark.client)


def walk(relation: rel.Relation) -> Iterator[tuple[str, Any]]:
    """Every relation of the tree, pre-order: (its kind, its message); a JVM operator's
    extension relation has its input below it."""
    kind = relation.WhichOneof("rel_type")
    message = getattr(relation, kind)
    yield kind, message
    if kind == "extension" and message.type_url == jvm_wire.TYPE_URL:
        child = jvm_wire.decode_payload(message.value).get(3)
        if isinstance(child, bytes):
            yield from walk(rel.Relation.FromString(child))
        return
    for _, value in message.ListFields():
        children = value if isinstance(value, list | tuple) or hasattr(value, "extend") else [value]
        for child in children:
            if isinstance(child, rel.Relation):
                yield from walk(child)


def kinds(relation: rel.Relation) -> list[str]:
    return [k for k, _ in walk(relation)]


def first(relation: rel.Relation, kind: str) -> Any:
    return next(m for k, m in walk(relation) if k == kind)


def table(env: TableEnvironment, name: str, schema: Schema, **options: str) -> Any:
    builder = (
        TableDescriptor.for_connector("filesystem")
        .schema(schema)
        .option("path", f"/nonexistent/{name}")
        .option("format", options.pop("format", "json"))
    )
    for k, v in options.items():
        builder = builder.option(k, v)
    env.create_temporary_table(name, builder.build())
    return env.from_path(name)


def schema(ddl: str, pk: str | None = None, rowtime: str | None = None) -> Schema:
    builder = Schema.new_builder()
    for part in ddl.split(","):
        name, type_ = part.split()
        builder.column(name, type_)
    if rowtime:
        builder.watermark(rowtime, f"{rowtime} - INTERVAL '1' SECOND")
    if pk:
        builder.primary_key(pk)
    return builder.build()


@pytest.fixture
def benv() -> TableEnvironment:
    return TableEnvironment.create(mode="batch")


@pytest.fixture
def senv() -> TableEnvironment:
    return TableEnvironment.create(mode="streaming")


def batch(t: Any, spark: SparkSession) -> rel.Relation:
    return plan_of(compile_plan(t.optimized().plan, spark), spark)


def stream(t: Any, spark: SparkSession, options: StreamingOptions | None = None) -> Any:
    physical = plan_stream(t.optimized().plan, options or StreamingOptions())
    return compile_stream(physical, spark)


def jvm_request(plan: rel.Relation, operator: str = "join") -> tuple[rel.Relation, dict[str, Any]]:
    """The JVM operator's extension relation in ``plan``: its input and its spec."""
    extension = first(plan, "extension")
    assert extension.type_url == jvm_wire.TYPE_URL
    fields = jvm_wire.decode_payload(extension.value)
    assert fields[1] == jvm_wire.WIRE_VERSION and fields[2] == operator.encode()
    assert isinstance(fields[3], bytes) and isinstance(fields[4], bytes)
    return rel.Relation.FromString(fields[3]), json.loads(fields[4])


# -- batch -------------------------------------------------------------------------------------
def test_file_scan_reads_with_the_declared_schema_and_options(benv, spark):
    t = table(benv, "T", schema("a BIGINT, b STRING"), format="csv", **{"csv.header": "true"})
    read = first(batch(t, spark), "read").data_source
    assert read.format == "csv"
    assert read.schema == "`a` BIGINT, `b` STRING"
    assert dict(read.options) == {"header": "true", "mode": "FAILFAST"}  # never PERMISSIVE
    assert list(read.paths) == ["/nonexistent/T"]


def test_inline_rows_become_a_local_relation(benv, spark):
    t = benv.from_elements([(1, "a", dt.datetime(2024, 1, 1))], ["id", "s", "ts"])
    plan = batch(t, spark)
    assert kinds(plan) == ["local_relation"]
    assert plan.local_relation.data  # Arrow IPC bytes, built on the client


def test_relational_nodes_compile_one_relation_each(benv, spark):
    t = table(benv, "T", schema("a BIGINT, b STRING, c INT"))
    q = (
        t.where(col("a") > 1)
        .select(col("a"), (col("c") + 1).alias("d"), col("b"))
        .distinct()
        .order_by(col("d").desc)
        .limit(5, offset=2)
    )
    assert kinds(batch(q, spark)) == [
        "limit",
        "offset",
        "sort",
        "deduplicate",
        "project",
        "filter",
        "read",
    ]


def test_aggregates_with_and_without_aggregate_calls(benv, spark):
    t = table(benv, "T", schema("a BIGINT, b STRING, c INT"))
    agg = first(
        batch(t.group_by(col("b")).select(col("b"), col("c").sum.alias("s")), spark), "aggregate"
    )
    assert len(agg.grouping_expressions) == 1 and len(agg.aggregate_expressions) == 1
    keys_only = batch(t.group_by(col("b")).select(col("b")), spark)
    assert kinds(keys_only)[:2] == ["project", "project"] or "aggregate" in kinds(keys_only)


def test_union_and_union_all(benv, spark):
    t = table(benv, "T", schema("a BIGINT"))
    assert first(batch(t.union_all(t), spark), "set_op").is_all
    distinct = batch(t.union(t), spark)
    assert kinds(distinct)[0] == "deduplicate"


@pytest.mark.parametrize(
    ("method", "join_type"),
    [
        ("join", rel.Join.JOIN_TYPE_INNER),
        ("left_outer_join", rel.Join.JOIN_TYPE_LEFT_OUTER),
        ("right_outer_join", rel.Join.JOIN_TYPE_RIGHT_OUTER),
        ("full_outer_join", rel.Join.JOIN_TYPE_FULL_OUTER),
        ("semi_join", rel.Join.JOIN_TYPE_LEFT_SEMI),
        ("anti_join", rel.Join.JOIN_TYPE_LEFT_ANTI),
    ],
)
def test_batch_joins_use_sparks_join_types(benv, spark, method, join_type):
    a = table(benv, "A", schema("a_k BIGINT, a_v INT"))
    b = table(benv, "B", schema("b_k BIGINT, b_v INT"))
    q = getattr(a, method)(b, (col("a_k") == col("b_k")) & (col("a_v") < col("b_v")))
    join = first(batch(q, spark), "join")
    assert join.join_type == join_type
    assert "a_v" in str(join.join_condition) and "b_k" in str(join.join_condition)


def test_join_hints_null_safe_keys_and_cross_joins(benv, spark):
    a = table(benv, "A", schema("a_k BIGINT"))
    b = table(benv, "B", schema("b_k BIGINT"))
    hinted = a.join(b, col("a_k").is_not_distinct_from(col("b_k"))).with_hint("BROADCAST", "B")
    plan = batch(hinted, spark)
    assert first(plan, "hint").name == "broadcast"
    assert "<=>" in str(first(plan, "join").join_condition)
    cross = first(batch(a.join(b), spark), "join")
    assert cross.join_type == rel.Join.JOIN_TYPE_CROSS
    left_no_key = first(batch(a.left_outer_join(b, col("a_k") > 1), spark), "join")
    assert left_no_key.join_type == rel.Join.JOIN_TYPE_LEFT_OUTER


def _rates_and_orders(env: TableEnvironment) -> tuple[Any, Any]:
    orders = table(
        env, "Orders", schema("o_id BIGINT, cur STRING, o_t TIMESTAMP(3)", rowtime="o_t")
    )
    rates = table(
        env, "Rates", schema("r_cur STRING, rate INT, r_t TIMESTAMP(3)", "r_cur", rowtime="r_t")
    )
    return orders, rates


def test_batch_event_time_temporal_join_is_an_as_of_join(benv, spark):
    orders, rates = _rates_and_orders(benv)
    q = orders.temporal_join(
        rates, (col("cur") == col("r_cur")) & (col("rate") > 1), as_of=col("o_t"), how="left"
    )
    plan = batch(q, spark)
    as_of = first(plan, "as_of_join")
    assert as_of.direction == "backward" and as_of.join_type == "left"
    assert "CASE WHEN" in str(plan.project).upper() or "when" in str(plan.project).lower()


def test_batch_processing_time_temporal_join_takes_the_latest_version(benv, spark):
    rates = table(
        benv, "Rates", schema("r_cur STRING, rate INT, r_t TIMESTAMP(3)", "r_cur", rowtime="r_t")
    )
    orders = table(
        benv,
        "Orders",
        Schema.new_builder()
        .column("o_id", "BIGINT")
        .column("cur", "STRING")
        .column_by_expression("o_p", "PROCTIME()")
        .build(),
    )
    q = orders.temporal_join(rates, (col("cur") == col("r_cur")) & (col("rate") > 0), as_of="o_p")
    plan = batch(q, spark)
    assert "row_number" in str(plan)
    assert kinds(plan)[:2] == ["project", "filter"]


# -- expressions --------------------------------------------------------------------------------
def test_expressions_compile_flink_semantics():
    row = RowType.of(("a", INT), ("b", INT), ("s", STRING))

    def text(e: Any) -> str:
        return str(to_spark(e, row))

    # Integer division stays integral (Flink), Spark's / would give a DOUBLE.
    assert text(col("a") / col("b")) == "Column<'CAST(CallFunction('div', `a`, `b`) AS INT)'>"
    assert text(col("s").cast("BIGINT")) == "Column<'CAST(`s` AS BIGINT)'>"
    assert text((col("a") + 1).alias("x")) == "Column<'+(`a`, 1) AS x'>"
    assert text(lit(None).cast("INT")) == "Column<'CAST(CAST(NULL AS VOID) AS INT)'>"
    # HOUR is a BIGINT in Flink: Spark's INT result is cast.
    assert text(call("hour", lit(dt.datetime(2024, 1, 1, 5)))).endswith("AS BIGINT)'>")
    plus = udf(lambda x: x + 1, result_type="BIGINT", name="plus_one", deterministic=False)
    assert text(plus(col("a"))).endswith("(`a`)'>")


def test_decimal_arithmetic_gives_spark_flinks_operand_types():
    """Spark's DECIMAL rules are Flink's for DECIMAL operands, not for an integral side (its
    BIGINT is DECIMAL(20, 0), an integer literal DECIMAL(1, 0)): the compiler casts integral
    sides to Flink's DECIMAL and the result to the type the plan derives (difference 15)."""
    row = RowType.of(("d", DataType.parse("DECIMAL(10, 2)")), ("b", DataType.parse("BIGINT")))

    def text(e: Any) -> str:
        return str(to_spark(e, row))

    assert text(col("d") / col("b")) == (
        "Column<'CAST(/(`d`, CAST(`b` AS DECIMAL(19,0))) AS DECIMAL(30,22))'>"
    )
    assert text(col("d") * 3) == "Column<'CAST(*(`d`, CAST(3 AS DECIMAL(10,0))) AS DECIMAL(21,2))'>"
    assert text(col("d") - col("d")) == "Column<'CAST(-(`d`, `d`) AS DECIMAL(11,2))'>"


def test_unresolved_expressions_are_errors():
    row = RowType.of(("a", INT))
    scan = Scan("T", ElementsSource(((1,),)), row)
    with pytest.raises(ValidationError, match="resolved before compiling"):
        to_spark(InTable(col("a"), scan), row)
    with pytest.raises(ValidationError, match="resolved before compiling"):
        to_spark(UnresolvedCall("nope", ()), row)


# -- streaming ----------------------------------------------------------------------------------
def test_changelog_scans_map_the_op_column_and_order_by_file_split_and_position(senv, spark):
    t = table(senv, "T", schema("a BIGINT, b STRING"), **{"changelog.op-column": "op"})
    compiled = stream(t, spark)
    plan = plan_of(compiled.dataframe, spark)
    assert compiled.mode is ChangelogMode.ALL
    assert first(plan, "read").data_source.schema == "`a` BIGINT, `b` STRING, `op` STRING"
    text = str(plan)
    assert "raise_error" in text and "file_path" in text
    assert "file_block_start" in text  # the split, and the row's position in it:
    ext = [jvm_wire.decode_payload(m.value) for k, m in walk(plan) if k == "extension"]
    assert [e[2] for e in ext] == [b"file_time", b"position"]  # the file's time in ns
    assert b'"table": "T"' in ext[0][4] and ext[1][4] == b"__position"
    python = str(plan_of(stream(t, spark, StreamingOptions(jvm_plugin=False)).dataframe, spark))
    assert "extension" not in python  # the Python twins:
    assert "next_positions" in python and "file_times" in python
    named = table(
        senv,
        "N",
        schema("a BIGINT"),
        **{"changelog.op-column": "op", "changelog.file-order": "name"},
    )
    ext = [k for k, m in walk(plan_of(stream(named, spark).dataframe, spark)) if k == "extension"]
    assert len(ext) == 1  # the position only: the paths order the files
    csv = table(senv, "C", schema("a BIGINT"), format="csv", **{"changelog.op-column": "op"})
    assert first(
        plan_of(stream(csv, spark).dataframe, spark), "read"
    ).data_source.schema.startswith("`op` STRING")


def test_watermarks_and_the_end_of_input(senv, spark):
    t = table(senv, "T", schema("a BIGINT, t TIMESTAMP(3)", rowtime="t"))
    wm = first(plan_of(stream(t, spark).dataframe, spark), "with_watermark")
    assert wm.event_time == "t" and wm.delay_threshold == "1000 milliseconds"
    end = EndOfInput.new()
    compiled = compile_stream(plan_stream(t.optimized().plan, StreamingOptions()), spark, end)
    plan = plan_of(compiled.dataframe, spark)
    assert compiled.bounded and compiled.end_of_input is end
    assert end.table in str(plan)  # the bounded scan also reads the end-of-input table
    assert kinds(plan).index("with_watermark") < kinds(plan).index("set_op")


def test_watermarks_must_be_a_bounded_delay(senv, spark):
    t = table(
        senv,
        "T",
        Schema.new_builder()
        .column("t", "TIMESTAMP(3)")
        .watermark("t", "t + INTERVAL '1' SECOND")
        .build(),
    )
    with pytest.raises(ValidationError, match="a bounded delay"):
        stream(t, spark)


def test_watched_tables_set_the_trigger(senv, spark):
    t = table(senv, "T", schema("a BIGINT"), **{"source.monitor-interval": "2 s"})
    compiled = stream(t, spark)
    assert not compiled.bounded and compiled.trigger_ms == 2000


def test_native_stream_stream_join(senv, spark):
    a = table(senv, "A", schema("a_k BIGINT"))
    b = table(senv, "B", schema("b_k BIGINT"))
    query = a.join(b, col("a_k") == col("b_k"))
    compiled = stream(query, spark, StreamingOptions(native_joins=True))
    plan = plan_of(compiled.dataframe, spark)
    assert "join" in kinds(plan) and "extension" not in kinds(plan)
    assert compiled.state_backend is StateBackend.HASHMAP
    default = plan_of(stream(query, spark).dataframe, spark)  # the operator's
    assert "join" not in kinds(default) and "extension" in kinds(default)


@pytest.mark.parametrize("method", ["left_outer_join", "full_outer_join", "semi_join", "anti_join"])
def test_operator_joins_tag_union_and_group_by_the_key(senv, spark, method):
    a = table(senv, "A", schema("a_k BIGINT, a_v STRING", "a_k"), **{"changelog.op-column": "op"})
    b = table(senv, "B", schema("b_k INT, b_v STRING"))
    q = getattr(a, method)(b, (col("a_k") == col("b_k")) & (col("a_v") != col("b_v")))
    compiled = stream(q, spark)
    plan = plan_of(compiled.dataframe, spark)
    union, spec = jvm_request(plan)
    assert spec["keys"] == ["__k0"]
    assert first(union, "set_op").set_op_type == rel.SetOperation.SET_OP_TYPE_UNION
    assert compiled.state_backend is StateBackend.HASHMAP and not compiled.processing_time
    assert plan.project.expressions[-1].unresolved_attribute.unparsed_identifier == f"`{wire.KIND}`"


def test_a_changelog_result_keeps_its_order_for_the_sink(senv, spark):
    # A stateless pipeline over a changelog: the sink gets __seq, by which the result reads
    # the changes back (Spark writes a micro-batch partition by partition, files largest first)
    a = table(senv, "A", schema("a_k BIGINT, a_v STRING"), **{"changelog.op-column": "op"})
    compiled = stream(a.where(col("a_v") != "x"), spark)
    assert compiled.mode is ChangelogMode.ALL and compiled.changelog is not None
    names = [e.unresolved_attribute.unparsed_identifier for e in
             plan_of(compiled.changelog, spark).project.expressions]  # fmt: skip
    assert names == ["`a_k`", "`a_v`", f"`{wire.KIND}`", f"`{wire.SEQ}`"]
    assert stream(table(senv, "B", schema("b BIGINT")), spark).changelog is None  # insert-only


def test_insert_only_operator_output_has_only_the_tables_columns(senv, spark):
    a = table(senv, "A", schema("a_k BIGINT"))
    b = table(senv, "B", schema("b_k BIGINT"))
    compiled = stream(a.semi_join(b, col("a_k") == col("b_k")), spark)
    assert compiled.mode is ChangelogMode.INSERT_ONLY
    project = plan_of(compiled.dataframe, spark).project
    assert [e.unresolved_attribute.unparsed_identifier for e in project.expressions] == ["`a_k`"]


def test_a_join_without_equi_keys_is_one_group(senv, spark):
    a = table(senv, "A", schema("a_k BIGINT"))
    b = table(senv, "B", schema("b_k BIGINT"))
    compiled = stream(a.left_outer_join(b, col("a_k") < col("b_k")), spark)
    union, spec = jvm_request(plan_of(compiled.dataframe, spark))
    assert spec["keys"] == ["__k0"]
    keys = [m.expressions[0].alias for k, m in walk(union) if k == "project"]
    assert any(key.name == ["__k0"] and key.expr.HasField("literal") for key in keys)  # constant


def test_multi_way_join_is_one_operator(senv, spark):
    senv.config.set(MULTI_JOIN_ENABLED, "true")
    a = table(senv, "A", schema("a_k BIGINT", "a_k"))
    b = table(senv, "B", schema("b_k BIGINT", "b_k"))
    c = table(senv, "C", schema("c_k BIGINT", "c_k"))
    q = a.join(b, col("a_k") == col("b_k")).left_outer_join(c, col("b_k") == col("c_k"))
    plan = plan_of(stream(q, spark).dataframe, spark)
    assert kinds(plan).count("extension") == 1
    assert kinds(plan).count("set_op") == 2  # three tagged inputs


def test_streaming_temporal_join_counts_late_rows(senv, spark):
    orders, rates = _rates_and_orders(senv)
    q = orders.temporal_join(rates, col("cur") == col("r_cur"), as_of=col("o_t"))
    compiled = stream(q, spark)
    plan = plan_of(compiled.dataframe, spark)
    assert first(plan, "collect_metrics").name == tw.LATE_ROWS_METRIC
    assert jvm_request(plan, "temporal")[1]["temporal"]["time"] == "event"
    assert compiled.mode is ChangelogMode.INSERT_ONLY


def _interval_tables(env: TableEnvironment) -> tuple[Any, Any]:
    a = table(env, "A", schema("a_k BIGINT, a_v INT, a_t TIMESTAMP(3)", rowtime="a_t"))
    b = table(env, "B", schema("b_k BIGINT, b_v INT, b_t TIMESTAMP(3)", rowtime="b_t"))
    return a, b


WITHIN = col("a_t").between(col("b_t") - lit(1).seconds, col("b_t") + lit(2).seconds)


def epoch_millis_columns(plan: rel.Relation) -> list[str]:
    """The columns each tagged input turns into ``__t`` (with unix_millis)."""
    found = []
    for kind, message in walk(plan):
        for e in message.expressions if kind == "project" else ():
            if e.HasField("alias") and list(e.alias.name) == [tw.TIME]:
                fn = e.alias.expr.unresolved_function
                assert fn.function_name == "unix_millis"
                found.append(fn.arguments[0].unresolved_attribute.unparsed_identifier)
    return found


@pytest.mark.parametrize(
    "method, kind",
    [("left_outer_join", "left"), ("right_outer_join", "right"), ("full_outer_join", "full")],
)
def test_outer_interval_joins_run_the_interval_operator(senv, spark, method, kind):
    a, b = _interval_tables(senv)
    q = getattr(a, method)(b, (col("a_k") == col("b_k")) & WITHIN & (col("a_v") < col("b_v")))
    text = q.explain()
    assert "windowBounds=[isRowTime=true, leftLowerBound=-1000, leftUpperBound=2000" in text
    assert "operator=[server_ext interval join processor]" in text
    compiled = stream(q, spark)
    plan = plan_of(compiled.dataframe, spark)
    _, spec = jvm_request(plan, "interval")
    assert spec["keys"] == ["__k0"]
    # No Spark join, and no filter: rows with a NULL key reach the operator.
    # No Spark join, and no filter but the pushdown barrier above each watermark (no
    # isnotnull() that would drop a NULL-key row).
    filters = [str(m.condition) for k, m in walk(plan) if k == "filter"]
    assert "join" not in kinds(plan) and all("spark_partition_id" in f for f in filters), filters
    assert kinds(plan).count("with_watermark") == 2  # upstream of the union, on each input
    assert epoch_millis_columns(plan) == ["`a_t`", "`b_t`"]
    section = spec["interval"]
    assert (section["kind"], section["lower_ms"], section["upper_ms"]) == (kind, -1000, 2000)
    assert ["call", "<", ["col", "l", 1], ["col", "r", 1]] in section["residual"][2:]
    # Insert-only output: the table's columns only.
    assert compiled.mode is ChangelogMode.INSERT_ONLY
    assert compiled.state_backend is StateBackend.HASHMAP and not compiled.processing_time
    names = [e.unresolved_attribute.unparsed_identifier for e in plan.project.expressions]
    assert names == ["`a_k`", "`a_v`", "`a_t`", "`b_k`", "`b_v`", "`b_t`"]


def test_inner_interval_joins_run_the_interval_operator(senv, spark):
    # Not Spark's stream-stream join: the operator took 0.4x its engine time
    # (bench/interval_join.py), with native joins on (the default) or off.
    a, b = _interval_tables(senv)
    q = a.join(b).where((col("a_k") == col("b_k")) & WITHIN)
    assert "operator=[server_ext interval join processor]" in q.explain()
    for options in (StreamingOptions(), StreamingOptions(native_joins=False)):
        compiled = stream(q, spark, options)
        plan = plan_of(compiled.dataframe, spark)
        assert "join" not in kinds(plan) and compiled.state_backend is StateBackend.HASHMAP
        assert jvm_request(plan, "interval")[1]["interval"]["kind"] == "inner"


def test_interval_operator_spec_strict_bounds_and_null_safe_keys(senv, spark):
    a, b = _interval_tables(senv)
    strict = (col("a_t") > col("b_t") - lit(1).seconds) & (col("a_t") < col("b_t") + lit(2).seconds)
    q = a.left_outer_join(b, col("a_k").is_not_distinct_from(col("b_k")) & strict)
    section = jvm_request(plan_of(stream(q, spark).dataframe, spark), "interval")[1]["interval"]
    assert (section["lower_ms"], section["upper_ms"]) == (-999, 1999)
    assert section["null_safe"] == [True]


def test_streaming_union_of_a_changelog_and_an_insert_only_table(senv, spark):
    a = table(senv, "A", schema("k BIGINT"), **{"changelog.op-column": "op"})
    b = table(senv, "B", schema("k BIGINT"))
    compiled = stream(a.union_all(b), spark)
    assert compiled.mode is ChangelogMode.ALL
    with pytest.raises(ValidationError, match="use union_all"):
        stream(a.union(b), spark)


# -- operator specs -----------------------------------------------------------------------------
def test_condition_trees():
    row_l, row_r = RowType.of(("a", INT)), RowType.of(("b", INT))
    assert condition_tree(col("a").between(1, col("b")), row_l, row_r)[1] == "and"
    assert condition_tree(col("a").not_between(1, 2), row_l, row_r)[1] == "not"
    assert condition_tree(col("a").is_distinct_from(col("b")), row_l, row_r)[1] == "not"
    assert condition_tree(col("a").in_(1, 2, 3), row_l, row_r)[1] == "or"
    with pytest.raises(ValidationError, match="cannot evaluate"):
        condition_tree(col("a").power(2) > 1, row_l, row_r)


def test_key_types_widen_or_fail():
    assert key_types([[INT, BIGINT]]) == [BIGINT]
    with pytest.raises(ValidationError, match="no common type"):
        key_types([[INT, DataType.parse("BOOLEAN")]])


# -- the JVM operators --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["left_outer_join", "semi_join", "anti_join"])
def test_regular_joins_run_the_jvm_operator(senv, spark, method):
    a = table(senv, "A", schema("a_k BIGINT, a_v STRING", "a_k"), **{"changelog.op-column": "op"})
    b = table(senv, "B", schema("b_k INT, b_v STRING"))
    q = getattr(a, method)(b, (col("a_k") == col("b_k")) & (col("a_v") != col("b_v")))
    compiled = stream(q, spark)
    plan = plan_of(compiled.dataframe, spark)
    union, spec = jvm_request(plan)
    assert spec["keys"] == ["__k0"]
    assert spec["join"]["kind"] == {"left_outer_join": "left"}.get(method, method[:4])
    assert spec["join"]["left"]["input_spec"] == "JoinKeyContainsUniqueKey"
    assert spec["join"]["residual"] == ["call", "<>", ["col", "l", 1], ["col", "r", 1]]
    assert "set_op" in kinds(union)  # the tagged union of both inputs
    assert compiled.state_backend is StateBackend.HASHMAP and not compiled.processing_time
    text = q.explain()
    assert "operator=[server_ext join processor], stateBackend=[hashmap]" in text


def test_an_insert_only_union_leaves_out_kind_and_seq(senv, spark):
    a = table(senv, "A", schema("a_k BIGINT"))
    b = table(senv, "B", schema("b_k BIGINT"))
    c = table(senv, "C", schema("c_k BIGINT"), **{"changelog.op-column": "op"})
    q = a.left_outer_join(b, col("a_k") == col("b_k"))
    union, _ = jvm_request(plan_of(stream(q, spark).dataframe, spark))
    names = [e.unresolved_attribute.unparsed_identifier for e in union.project.expressions]
    assert names == ["__k0", "__side", "__l", "__r"]  # all +I, in arrival order
    q = a.left_outer_join(c, col("a_k") == col("c_k"))
    union, _ = jvm_request(plan_of(stream(q, spark).dataframe, spark))
    assert union.WhichOneof("rel_type") == "set_op"  # a changelog input: every column


def test_state_ttl_runs_in_processing_time(senv, spark):
    a = table(senv, "A", schema("a_k BIGINT"))
    b = table(senv, "B", schema("b_k BIGINT"))
    q = a.join(b, col("a_k") == col("b_k")).with_hint("STATE_TTL", A="1 h")
    compiled = stream(q, spark)
    _, spec = jvm_request(plan_of(compiled.dataframe, spark))
    assert spec["join"]["left"]["ttl_ms"] == 3_600_000 and spec["join"]["right"]["ttl_ms"] is None
    assert compiled.processing_time  # the JVM operator's TTL timeout is processing time


def test_a_server_without_the_plugin_refuses_stateful_queries(senv, spark):
    a = table(senv, "A", schema("a_k BIGINT"))
    b = table(senv, "B", schema("b_k BIGINT"))
    no_plugin = StreamingOptions(jvm_plugin=False)
    with pytest.raises(ValidationError, match=r"This query's Join cannot run: .*server_ext serve"):
        stream(a.left_outer_join(b, col("a_k") == col("b_k")), spark, no_plugin)
    # An inner join of insert-only inputs falls back to Spark's own join (Flink's answer).
    native = stream(a.join(b, col("a_k") == col("b_k")), spark, no_plugin)
    assert "extension" not in kinds(plan_of(native.dataframe, spark))


def test_state_backend_option_chooses_the_store(senv, spark):
    a = table(senv, "A", schema("a_k BIGINT"))
    b = table(senv, "B", schema("b_k BIGINT"))
    native = a.join(b, col("a_k") == col("b_k"))
    rocks = StreamingOptions(state_backend=StateBackend.ROCKSDB)
    assert stream(native, spark).state_backend is StateBackend.HASHMAP
    assert stream(native, spark, rocks).state_backend is StateBackend.ROCKSDB
    senv.config.set("state.backend.type", "rocksdb")
    assert "join processor], stateBackend=[rocksdb]" in native.explain()
    senv.config.set("table.exec.join.spark-native.enabled", "true")
    assert "operator=[spark stream-stream join], stateBackend=[rocksdb]" in native.explain()
    outer = a.left_outer_join(b, col("a_k") == col("b_k"))
    assert "join processor], stateBackend=[rocksdb]" in outer.explain()
    compiled = stream(outer, spark, rocks)
    assert "extension" in kinds(plan_of(compiled.dataframe, spark))
    assert compiled.state_backend is StateBackend.ROCKSDB


def test_multi_way_temporal_and_interval_joins_run_the_jvm_operators(senv, spark):
    senv.config.set(MULTI_JOIN_ENABLED, "true")
    a = table(senv, "MA", schema("a_k BIGINT", "a_k"))
    b = table(senv, "MB", schema("b_k BIGINT", "b_k"))
    c = table(senv, "MC", schema("c_k BIGINT", "c_k"))
    multi = a.join(b, col("a_k") == col("b_k")).left_outer_join(c, col("b_k") == col("c_k"))
    compiled = stream(multi, spark)
    plan = plan_of(compiled.dataframe, spark)
    assert compiled.state_backend is StateBackend.HASHMAP
    spec = json.loads(jvm_wire.decode_payload(first(plan, "extension").value)[4])
    assert spec["multi"]["kinds"] == ["inner", "left"] and len(spec["multi"]["inputs"]) == 3
    assert "multi-way join processor], stateBackend=[hashmap]" in multi.explain()
    orders, rates = _rates_and_orders(senv)
    temporal = orders.temporal_join(rates, col("cur") == col("r_cur"), as_of=col("o_t"))
    plan = plan_of(stream(temporal, spark).dataframe, spark)
    assert first(plan, "collect_metrics").name == tw.LATE_ROWS_METRIC
    fields = jvm_wire.decode_payload(first(plan, "extension").value)
    assert fields[2] == b"temporal" and json.loads(fields[4])["temporal"]["time"] == "event"
    x, y = _interval_tables(senv)
    interval = x.left_outer_join(y, (col("a_k") == col("b_k")) & WITHIN)
    plan = plan_of(stream(interval, spark).dataframe, spark)
    fields = jvm_wire.decode_payload(first(plan, "extension").value)
    section = json.loads(fields[4])["interval"]
    assert fields[2] == b"interval" and (section["lower_ms"], section["upper_ms"]) == (-1000, 2000)


def _join_node(plan: Any) -> Any:
    from tableapi.plan import Join

    while not isinstance(plan, Join):
        (plan,) = plan.inputs
    return plan


def test_a_jvm_operator_request_is_checked_before_it_is_sent(senv, spark):
    """Bad keys, output schemas and residuals are refused on the client, with the reason."""
    import pyspark.sql.types as T

    from tableapi.compiler.jvm_operators import jvm_join, jvm_operator
    from tableapi.compiler.operators import output_schema
    from tableapi.physical.specs import join_spec

    a = table(senv, "A", schema("a_k BIGINT, a_v STRING"))
    b = table(senv, "B", schema("b_k BIGINT"))
    join = _join_node(a.left_outer_join(b, col("a_k") == col("b_k")).optimized().plan)
    spec = join_spec(plan_stream(join, StreamingOptions()).root)
    union = spark.range(1)
    union._cached_schema = T.StructType([T.StructField("__k0", T.LongType())])
    output = output_schema(join.row_type)
    request = jvm_operator(union, ["__k0"], spec, output)  # a JoinSpec: jvm_join
    assert jvm_request(plan_of(request, spark))[1]["keys"] == ["__k0"]
    with pytest.raises(ValueError, match=r"key columns \['__k9'\] are not in the union"):
        jvm_join(union, ["__k9"], spec, output)
    with pytest.raises(ValueError, match="key columns \\(none\\)"):
        jvm_join(union, [], spec, output)
    with pytest.raises(ValueError, match="must start with __kind TINYINT"):
        jvm_join(union, ["__k0"], spec, T.StructType(output.fields[1:]))
    with pytest.raises(ValueError, match="has 1 fields, the join operator gives 3"):
        jvm_join(union, ["__k0"], spec, T.StructType(output.fields[:2]))
    bad = dataclasses.replace(spec, residual=("call", "=", ("col", "l", 7), ("col", "r", 0)))
    with pytest.raises(ValueError, match=r"residual refers to field 7 of the l row \(2\)"):
        jvm_join(union, ["__k0"], bad, output)


def test_other_jvm_operators_are_checked_and_the_plugin_is_asked_once(senv, spark):
    import pyspark.sql.types as T

    from tableapi.compiler import jvm_operators
    from tableapi.compiler.operators import output_schema
    from tableapi.physical.specs import interval_join_spec
    from tableapi.plan import Join, JoinKind
    from tableapi.rules import optimize
    from tableapi.types import TimeKind

    rowtime = DataType.parse("TIMESTAMP(3)").with_time_kind(TimeKind.ROWTIME)
    o = Scan("O", ElementsSource(()), RowType.of(("o_k", BIGINT), ("o_t", rowtime)))
    s = Scan("S", ElementsSource(()), RowType.of(("s_k", BIGINT), ("s_t", rowtime)))
    bound = col("o_t").between(col("s_t") - lit(1).hours, col("s_t"))
    node = optimize(Join(o, s, JoinKind.LEFT, (col("o_k") == col("s_k")) & bound)).plan
    spec = interval_join_spec(node)
    union = spark.range(1)
    union._cached_schema = T.StructType([T.StructField("__k0", T.LongType())])
    output = output_schema(node.row_type)
    with pytest.raises(ValueError, match=r"key columns \['__k1'\] are not in the union"):
        jvm_operators.jvm_operator(union, ["__k1"], spec, output)
    with pytest.raises(ValueError, match="must start with __kind TINYINT"):
        jvm_operators.jvm_operator(union, ["__k0"], spec, T.StructType(output.fields[1:]))
    with pytest.raises(ValueError, match="has 1 fields, the interval operator gives 4"):
        jvm_operators.jvm_operator(union, ["__k0"], spec, T.StructType(output.fields[:2]))
    # Asked once per session: a known answer is not asked again (no server here to ask).
    jvm_operators._plugin_by_session[spark.session_id] = True
    try:
        assert jvm_operators.jvm_plugin_on_server(spark) is True
    finally:
        del jvm_operators._plugin_by_session[spark.session_id]
