"""Streaming planning without a server: changelog modes, join strategy, TTL, specs, errors."""

from __future__ import annotations

import pytest

from server_ext.joins.spec import InputSpec
from tableapi import Schema, TableDescriptor, TableEnvironment, ValidationError, call, col, lit
from tableapi.durations import parse_duration_ms
from tableapi.physical import StreamExecJoin, plan_stream
from tableapi.physical.options import StreamingOptions
from tableapi.physical.specs import condition_tree, join_spec
from tableapi.plan import Filter, Join, PlanNode
from tableapi.plan.changelog import (
    ChangelogKind,
    ChangelogMode,
    all_bounded,
    changelog_mode,
    changelog_traits,
    monitor_interval_ms,
    needs_end_of_input,
)
from tableapi.types import TimeKind


def _table(
    env: TableEnvironment,
    name: str,
    columns: str,
    pk=(),
    op: str | None = "op",
    rowtime: str | None = None,
    monitor: str | None = None,
):
    """A filesystem table (never read) from ``"a BIGINT, b STRING"``; ``rowtime`` gets a
    watermark 5 seconds behind; ``monitor`` is its source.monitor-interval (unbounded)."""
    builder = Schema.new_builder()
    for part in columns.split(","):
        n, t = part.split()
        builder.column(n, t)
    if pk:
        builder.primary_key(*pk)
    if rowtime:
        builder.watermark(rowtime, f"{rowtime} - INTERVAL '5' SECOND")
    d = (
        TableDescriptor.for_connector("filesystem")
        .schema(builder.build())
        .option("path", f"/nonexistent/{name}")
        .option("format", "json")
    )
    if op:
        d.option("changelog.op-column", op)
    if monitor:
        d.option("source.monitor-interval", monitor)
    env.create_temporary_table(name, d.build())
    return env.from_path(name)


@pytest.fixture
def senv() -> TableEnvironment:
    return TableEnvironment.create(mode="streaming")


@pytest.fixture
def tables(senv):
    orders = _table(senv, "Orders", "order_id BIGINT, product_id BIGINT, amount INT", ("order_id",))
    product = _table(senv, "Product", "id BIGINT, name STRING, price INT", ("id",))
    events = _table(senv, "Events", "e_id BIGINT, e_product BIGINT", op=None)
    return orders, product, events


def test_changelog_modes(tables):
    orders, _, events = tables
    assert changelog_mode(orders._plan) is ChangelogMode.ALL
    assert changelog_mode(events._plan) is ChangelogMode.INSERT_ONLY
    assert changelog_mode(events.where(col("e_id") > 1)._plan) is ChangelogMode.INSERT_ONLY
    inner = events.join(events.select(col("e_id").alias("x")), col("e_id") == col("x"))
    assert changelog_mode(inner.optimized().plan) is ChangelogMode.INSERT_ONLY
    outer = events.left_outer_join(events.select(col("e_id").alias("x")), col("e_id") == col("x"))
    assert changelog_mode(outer.optimized().plan) is ChangelogMode.ALL
    assert changelog_mode(events.join(orders, col("e_product") == col("order_id"))._plan) is (
        ChangelogMode.ALL
    )


def test_changelog_traits_are_derived_once_per_node(tables):
    """Insert-only / upsert with its keys / retract, kept on the node once derived; what the
    consumers need (-U rows or not) is derived top-down."""
    from tableapi.plan.changelog import update_before_needed

    orders, product, events = tables
    plan = orders.join(product, col("order_id") == col("id")).optimized().plan
    traits = changelog_traits(plan)
    assert changelog_traits(plan) is traits  # kept, not derived again
    assert traits.kind is ChangelogKind.UPSERT and ("order_id",) in traits.upsert_keys
    assert changelog_traits(events._plan).kind is ChangelogKind.INSERT_ONLY
    outer = events.left_outer_join(events.select(col("e_id").alias("x")), col("e_id") == col("x"))
    assert changelog_traits(outer.optimized().plan).kind is ChangelogKind.RETRACT
    # A filter on a column outside every upsert key needs -U rows even for a keyed sink.
    where = orders.where(col("amount") > 1)._plan
    assert update_before_needed(where, ("order_id",))[id(where.input)] is True
    keyed = orders.where(col("order_id") > 1)._plan
    needed = update_before_needed(keyed, ("order_id",))
    assert needed[id(keyed)] is False and needed[id(keyed.input)] is False
    assert update_before_needed(keyed)[id(keyed.input)] is True  # a result needs them


def join_strategy(plan: PlanNode, options: StreamingOptions) -> str:
    """The strategy the physical plan's join holds (decided once, when it is built)."""
    joins = [n for n in plan_stream(plan, options).root.walk() if isinstance(n, StreamExecJoin)]
    return str(joins[0].strategy.value)


def test_strategy_native_only_for_insert_only_inner_equi_joins_without_ttl(senv, tables):
    orders, product, events = tables
    other = events.select(col("e_id").alias("x"))
    native = events.join(other, col("e_id") == col("x")).optimized().plan
    on = StreamingOptions(native_joins=True)
    assert join_strategy(native, on) == "native"
    assert join_strategy(native, StreamingOptions(1000, native_joins=True)) == "operator"  # TTL
    assert join_strategy(native, StreamingOptions()) == "operator"  # the default
    changelog = orders.join(product, col("product_id") == col("id")).optimized().plan
    assert join_strategy(changelog, on) == "operator"
    no_key = events.join(other, col("e_id") > col("x")).optimized().plan
    assert join_strategy(no_key, on) == "operator"


def test_explain_shows_operator_modes_specs_and_ttl(senv, tables):
    orders, product, _ = tables
    senv.config.set("table.exec.state.ttl", "1 h")
    q = orders.left_outer_join(product, col("product_id") == col("id")).with_hint(
        "STATE_TTL", Product="12h"
    )
    text = q.explain()
    assert "leftInputSpec=[HasUniqueKey], rightInputSpec=[JoinKeyContainsUniqueKey]" in text
    assert "operator=[server_ext join processor]" in text
    assert "leftStateTtl=[3600000 ms], rightStateTtl=[43200000 ms]" in text
    assert "changelogMode=[I,UB,UA,D]" in text


def test_join_spec_layouts_and_residual(tables):
    orders, product, events = tables
    q = orders.full_outer_join(
        product, (col("product_id") == col("id")) & (col("amount") > col("price") + 1)
    )
    spec = join_spec(plan_stream(q.optimized().plan, StreamingOptions()).root)
    assert spec.kind == "full"
    assert spec.left.input_spec is InputSpec.HAS_UNIQUE_KEY and spec.left.unique_key == (0,)
    assert spec.right.input_spec is InputSpec.JOIN_KEY_CONTAINS_UNIQUE_KEY
    assert spec.null_safe == (False,)
    assert spec.residual == (
        "call",
        ">",
        ("col", "l", 2),
        ("call", "+", ("col", "r", 2), ("lit", 1)),
    )
    assert spec.output_struct_ddl().startswith("__kind TINYINT, `order_id` BIGINT")
    semi = events.semi_join(orders, col("e_product") == col("product_id"))
    plain = join_spec(plan_stream(semi.optimized().plan, StreamingOptions()).root)
    assert plain.left.input_spec is InputSpec.NO_UNIQUE_KEY
    assert plain.output_fields() == (("e_id", "BIGINT"), ("e_product", "BIGINT"))


def test_condition_tree_rewrites_between_in_and_rejects_the_unknown(tables):
    orders, product, _ = tables
    left, right = orders.row_type, product.row_type
    tree = condition_tree(col("amount").between(col("price"), lit(9)), left, right)
    assert tree == (
        "call",
        "and",
        ("call", ">=", ("col", "l", 2), ("col", "r", 2)),
        ("call", "<=", ("col", "l", 2), ("lit", 9)),
    )
    assert condition_tree(col("name").in_("a", "b"), left, right)[1] == "or"
    with pytest.raises(ValidationError, match=r"cannot evaluate .* in the non-equi join condition"):
        condition_tree(col("name").like("a%"), left, right)


def test_state_ttl_hint_validation(tables):
    orders, product, _ = tables
    q = orders.join(product, col("product_id") == col("id"))
    with pytest.raises(ValidationError, match="STATE_TTL takes a TTL per table name"):
        q.with_hint("STATE_TTL", "Orders")
    with pytest.raises(ValidationError, match=r"names table 'Nope', but this query reads only"):
        q.with_hint("STATE_TTL", Nope="1d")
    with pytest.raises(ValidationError, match=r"Cannot read STATE_TTL of Orders 'soon'"):
        q.with_hint("STATE_TTL", Orders="soon")


def test_durations():
    assert parse_duration_ms("1 d") == 86_400_000
    assert parse_duration_ms("30 min") == 1_800_000
    assert parse_duration_ms("250") == 250
    with pytest.raises(ValidationError, match="a number and a unit"):
        parse_duration_ms("1 fortnight")


def test_streaming_refuses_from_elements(senv, tables):
    with pytest.raises(ValidationError, match="from_elements\\(\\), a bounded input"):
        senv.from_elements([(1,)], ["a"]).explain()


def test_aggregates_need_the_jvm_plugin(senv, tables):
    """An aggregation compiles to the JVM GroupAggregate; without the plugin it is refused
    with how to get the jar, before anything runs."""
    from tableapi.compiler.streaming import compile_stream

    orders, _, events = tables
    grouped = orders.group_by(col("product_id")).select(
        col("product_id"), col("amount").sum.alias("s"), col("amount").avg.alias("a")
    )
    text = grouped.explain()
    assert (
        "GroupAggregate(groupBy=[product_id], select=[product_id, SUM(amount) AS $agg0, "
        "AVG(amount) AS $agg1], operator=[server_ext group aggregate], stateBackend=[hashmap]"
    ) in text
    assert "changelogMode=[I,UB,UA,D]" in text
    assert (
        "GroupAggregate(select=[COUNT(e_id) AS $agg0]" in events.select(col("e_id").count).explain()
    )
    plan = grouped.optimized().plan
    with pytest.raises(ValidationError, match=r"Aggregate cannot run.*python -m server_ext serve"):
        compile_stream(plan_stream(plan, StreamingOptions(jvm_plugin=False)), None)  # type: ignore[arg-type]


def test_explain_shows_which_aggregation_phases_run(senv, tables):
    """Flink's rule: two phases (LocalGroupAggregate under GlobalGroupAggregate, with the
    partial results' names) when mini-batch is on and the strategy is not ONE_PHASE; AUTO
    and TWO_PHASE agree; without mini-batch one phase, whatever the strategy says."""
    orders, _, events = tables
    grouped = orders.group_by(col("product_id")).select(
        col("product_id"), col("amount").sum.alias("s"), col("amount").count.distinct.alias("d")
    )

    def optimized() -> list[str]:
        text = grouped.explain()
        return text[text.index("== Optimized Physical Plan ==") :].splitlines()[1:]

    senv.config.set("table.optimizer.agg-phase-strategy", "TWO_PHASE")
    assert optimized()[1].startswith("+- GroupAggregate(groupBy=[product_id]")  # no mini-batch
    senv.config.set("table.exec.mini-batch.enabled", "true")
    senv.config.set("table.exec.mini-batch.allow-latency", "1 s")
    senv.config.set("table.exec.mini-batch.size", "500")
    for strategy in ("TWO_PHASE", "auto"):
        senv.config.set("table.optimizer.agg-phase-strategy", strategy)
        lines = optimized()
        assert lines[1].startswith(
            "+- GlobalGroupAggregate(groupBy=[product_id], select=[product_id, "
            "SUM(sum$0) AS $agg0, COUNT(DISTINCT count$1) AS $agg1], operator=[server_ext "
            "group aggregate], stateBackend=[hashmap], miniBatch=[1000 ms], "
            "changelogMode=[I,UB,UA,D])"
        ), lines
        assert lines[2] == (
            "   +- LocalGroupAggregate(groupBy=[product_id], select=[product_id, SUM(amount) "
            "AS sum$0, COUNT(DISTINCT amount) AS count$1], changelogMode=[I])"
        )
        assert lines[3].startswith("      +- TableSourceScan(")
    assert "+- LocalGroupAggregate(select=[COUNT(e_id) AS count$0]" in (
        events.select(col("e_id").count).explain()
    )
    senv.config.set("table.optimizer.agg-phase-strategy", "ONE_PHASE")
    assert optimized()[1].startswith("+- GroupAggregate(groupBy=[product_id]")
    with pytest.raises(ValidationError, match="must be one of \\['AUTO', 'ONE_PHASE'"):
        senv.config.set("table.optimizer.agg-phase-strategy", "THREE_PHASE")


def test_op_column_is_not_part_of_the_table(senv):
    t = _table(senv, "T", "a BIGINT, op STRING", op="op")
    with pytest.raises(ValidationError, match="is also a column of its schema"):
        plan_stream(t._plan, StreamingOptions())


# -- interval joins ------------------------------------------------------------------------------
def _timed(env: TableEnvironment, name: str, cols: str, time_col: str, op: str | None = None):
    return _table(env, name, cols, op=op, rowtime=time_col)


@pytest.fixture
def timed(senv):
    orders = _timed(senv, "TOrders", "order_id BIGINT, o_rowtime TIMESTAMP(3)", "o_rowtime")
    ships = _timed(senv, "TShip", "s_order_id BIGINT, s_rowtime TIMESTAMP(3)", "s_rowtime")
    return orders, ships


@pytest.mark.parametrize(
    ("bound", "lower", "upper"),
    [
        (
            col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime")),
            -14_400_000,
            0,
        ),
        (
            (col("o_rowtime") >= col("s_rowtime") - lit(4).hours)
            & (col("o_rowtime") < col("s_rowtime")),
            -14_400_000,
            -1,
        ),
        (  # written from the right side's point of view
            (col("s_rowtime") <= col("o_rowtime") + lit(10).minutes)
            & (col("s_rowtime") > col("o_rowtime")),
            -600_000,
            -1,
        ),
    ],
)
def test_interval_bounds_are_found(timed, bound, lower, upper):
    orders, ships = timed
    q = orders.join(ships).where((col("order_id") == col("s_order_id")) & bound)
    join = q.optimized().plan
    while not isinstance(join, Join):
        join = join.inputs[0]
    assert (join.interval.lower_ms, join.interval.upper_ms) == (lower, upper)
    text = q.explain()
    assert (
        "IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, "
        f"leftLowerBound={lower}, leftUpperBound={upper}" in text
    )
    assert "operator=[server_ext interval join processor]" in text


def test_one_sided_or_keyless_bounds_are_regular_joins(timed):
    orders, ships = timed
    one_sided = orders.left_outer_join(
        ships, (col("order_id") == col("s_order_id")) & (col("o_rowtime") >= col("s_rowtime"))
    )
    keyless = orders.join(ships, col("o_rowtime").between(col("s_rowtime"), col("s_rowtime")))
    for query in (one_sided, keyless):
        # Regular joins, which Flink runs over rowtime inputs (they materialize the time
        # attribute: Flink's schema still says *ROWTIME*); they used to be refused here
        # (issue 11).
        plan = query.explain().split("== Optimized Physical Plan ==")[1]
        assert "IntervalJoin" not in plan and "operator=[server_ext join processor]" in plan
        rowtime = query.row_type.field("o_rowtime").type
        assert rowtime.time_kind is TimeKind.MATERIALIZED_ROWTIME
        assert str(rowtime) == "TIMESTAMP(3) *ROWTIME*"


def test_an_interval_join_keeps_a_rowtime_equality_out_of_its_keys(timed):
    """As a join key the rowtime would carry a watermark beside the operator's event time:
    Spark's MULTIPLE_EVENT_TIME_COLUMNS (README of tests/conformance, difference 18)."""
    orders, ships = timed
    q = orders.right_outer_join(
        ships,
        (col("order_id") == col("s_order_id"))
        & (col("o_rowtime") > col("s_rowtime") - lit(3).seconds)
        & (col("o_rowtime") < col("s_rowtime") - lit(1).seconds)
        & (col("o_rowtime") == col("s_rowtime")),
    )
    join = q.optimized().plan
    assert isinstance(join, Join) and join.interval is not None
    assert [str(k) for k in join.equi_keys] == ["order_id = s_order_id"]
    assert "(o_rowtime = s_rowtime)" in str(join.residual)


def _time_marks(table) -> dict[str, str]:
    return {f.name: f.type.time_kind.name for f in table.row_type if f.type.is_timestamp}


def test_join_outputs_keep_rowtime_marks_but_only_interval_joins_keep_event_time(senv, timed):
    """Flink 2.3's resolved schema (checked on Flink) marks every rowtime of a join's output
    *ROWTIME*; its optimizer materializes those of a regular join, so a later join bounding
    them is a regular join there, and after an interval join an interval join again
    (README of tests/conformance, difference 14)."""
    orders, ships = timed
    third = _timed(senv, "TThird", "t_id BIGINT, t_rowtime TIMESTAMP(3)", "t_rowtime")
    keys = col("order_id") == col("s_order_id")
    bound = col("o_rowtime").between(col("s_rowtime") - lit(1).hours, col("s_rowtime"))
    later = (col("order_id") == col("t_id")) & col("o_rowtime").between(
        col("t_rowtime") - lit(1).hours, col("t_rowtime")
    )
    for kind in ("join", "left_outer_join", "full_outer_join"):
        interval = getattr(orders, kind)(ships, keys & bound)
        regular = getattr(orders, kind)(ships, keys)
        for joined in (interval, regular):
            for name in ("o_rowtime", "s_rowtime"):
                assert str(joined.row_type.field(name).type) == "TIMESTAMP(3) *ROWTIME*"
        assert _time_marks(interval.optimized().plan) == {
            "o_rowtime": "ROWTIME",
            "s_rowtime": "ROWTIME",
        }
        assert set(_time_marks(regular.optimized().plan).values()) == {"MATERIALIZED_ROWTIME"}
        assert interval.join(third, later).explain().count("IntervalJoin(") == 2
        assert "IntervalJoin(" not in regular.join(third, later).explain()
    semi = orders.semi_join(ships, keys)
    assert _time_marks(semi) == {"o_rowtime": "MATERIALIZED_ROWTIME"}
    assert "IntervalJoin(" not in semi.join(third, later).explain()


def test_interval_join_of_a_changelog_is_an_error(senv):
    orders = _timed(senv, "COrders", "order_id BIGINT, o_rowtime TIMESTAMP(3)", "o_rowtime", "op")
    ships = _timed(senv, "CShip", "s_order_id BIGINT, s_rowtime TIMESTAMP(3)", "s_rowtime")
    q = orders.join(
        ships,
        (col("order_id") == col("s_order_id"))
        & col("o_rowtime").between(col("s_rowtime") - lit(1).hours, col("s_rowtime")),
    )
    with pytest.raises(
        ValidationError, match=r"interval join needs insert-only inputs, but \[COrders\]"
    ):
        q.explain()


# -- temporal joins -------------------------------------------------------------------------------
@pytest.fixture
def rates_env():
    env = TableEnvironment.create(mode="batch")
    orders = Schema.new_builder().column("amount", "BIGINT").column("currency", "STRING")
    orders.column("o_rowtime", "TIMESTAMP(3)").column_by_expression("o_proctime", "PROCTIME()")
    orders.column("plain_ts", "TIMESTAMP(3)")
    orders.watermark("o_rowtime", "o_rowtime - INTERVAL '5' SECOND")
    rates = Schema.new_builder().column("r_currency", "STRING").column("rate", "BIGINT")
    rates.column("r_rowtime", "TIMESTAMP(3)").watermark("r_rowtime", "r_rowtime")
    rates.primary_key("r_currency")
    for name, schema in (("Orders", orders), ("Rates", rates)):
        env.create_temporary_table(
            name,
            TableDescriptor.for_connector("filesystem")
            .schema(schema.build())
            .option("path", f"/nonexistent/{name}")
            .option("format", "json")
            .build(),
        )
    return env


def test_temporal_join_explain_event_and_processing_time(rates_env):
    orders, rates = rates_env.from_path("Orders"), rates_env.from_path("Rates")
    on = col("currency") == col("r_currency")
    event = orders.temporal_join(rates, on, as_of=col("o_rowtime"), how="left").explain()
    assert "TemporalJoin(joinType=[LeftOuterJoin]" in event
    assert "leftTimeAttribute=[o_rowtime], rightTimeAttribute=[r_rowtime]" in event
    assert "rightPrimaryKey=[r_currency]" in event
    latest = orders.temporal_join(rates, on, as_of=col("o_proctime")).explain()
    assert "temporal=[processing time: latest row]" in latest


def test_temporal_joins_keep_single_side_terms(rates_env):
    # Filtering the versioned table first would change which version is valid when.
    orders, rates = rates_env.from_path("Orders"), rates_env.from_path("Rates")
    on = (col("currency") == col("r_currency")) & (col("rate") > 100)
    join = orders.temporal_join(rates, on, as_of=col("o_rowtime")).optimized().plan
    assert str(join.residual) == "(rate > 100)"
    assert not any(isinstance(n, Filter) for n in join.walk())


def test_temporal_join_errors(rates_env):
    orders, rates = rates_env.from_path("Orders"), rates_env.from_path("Rates")
    on = col("currency") == col("r_currency")
    with pytest.raises(ValidationError, match=r"as_of must be a time attribute .* plain_ts"):
        orders.temporal_join(rates, on, as_of=col("plain_ts"))
    with pytest.raises(ValidationError, match="only support INNER JOIN and LEFT JOIN, but was"):
        orders.temporal_join(rates, on, as_of=col("o_rowtime"), how="full")
    with pytest.raises(ValidationError, match="the right table has no primary key"):
        orders.temporal_join(orders.select(col("currency").alias("c2")), on, as_of="o_rowtime")
    with pytest.raises(ValidationError, match=r"join_lateral\(\) takes call"):
        orders.join_lateral(call("Nope", col("o_rowtime")), on)


def test_temporal_join_keeps_the_probe_rowtime_and_materializes_the_versions(rates_env):
    """Flink 2.3: both rowtimes of an event-time temporal join are *ROWTIME* in its schema,
    the probe's stays event time (an interval join over it is one), the versioned table's is
    materialized (README of tests/conformance, difference 14)."""
    orders, rates = rates_env.from_path("Orders"), rates_env.from_path("Rates")
    on = col("currency") == col("r_currency")
    for how in ("inner", "left"):
        joined = orders.temporal_join(rates, on, as_of=col("o_rowtime"), how=how)
        assert str(joined.row_type.field("r_rowtime").type) == "TIMESTAMP(3) *ROWTIME*"
        assert _time_marks(joined)["o_rowtime"] == "ROWTIME"
        assert _time_marks(joined)["r_rowtime"] == "MATERIALIZED_ROWTIME"
    regular = orders.join(rates.select(col("r_currency").alias("c"), col("r_rowtime")))
    regular = regular.where(col("c") == col("currency"))
    with pytest.raises(ValidationError, match="o_rowtime is a rowtime that a regular join"):
        regular.temporal_join(rates.rename_columns(*(col(n).alias("x_" + n) for n in (
            "r_currency", "rate", "r_rowtime"))), col("currency") == col("x_r_currency"),
            as_of=col("o_rowtime"))  # fmt: skip


def test_join_lateral_resolves_a_registered_temporal_table_function(rates_env):
    orders, rates = rates_env.from_path("Orders"), rates_env.from_path("Rates")
    rates_env.create_temporary_function(
        "R", rates.create_temporal_table_function(col("r_rowtime"), col("r_currency"))
    )
    t = orders.left_outer_join_lateral(
        call("R", col("o_rowtime")), col("currency") == col("r_currency")
    )
    assert t.row_type.names[-3:] == ("r_currency", "rate", "r_rowtime")
    assert t.row_type.field("rate").type.nullable


def test_tables_are_bounded_unless_watched(senv):
    files = _table(senv, "Files", "a BIGINT, t TIMESTAMP(3)", op=None, rowtime="t")
    plain = _table(senv, "Plain", "b BIGINT", op=None)
    watched = _table(
        senv, "Watched", "c BIGINT, u TIMESTAMP(3)", op=None, rowtime="u", monitor="2 s"
    )
    fast = _table(senv, "Fast", "d BIGINT", op=None, monitor="500 ms")
    assert senv.descriptor("Watched").monitor_interval_ms == 2000
    # A bounded table with a watermark reads the end-of-input signal; one without needs none.
    assert all_bounded(files._plan) and needs_end_of_input(files._plan)
    assert all_bounded(plain._plan) and not needs_end_of_input(plain._plan)
    assert monitor_interval_ms(files._plan) is None
    both = files.join(watched, col("a") == col("c")).optimized().plan
    assert not all_bounded(both) and needs_end_of_input(both)
    assert monitor_interval_ms(both) == 2000
    watched_only = watched.join(fast, col("c") == col("d")).optimized().plan
    assert not all_bounded(watched_only) and not needs_end_of_input(watched_only)
    assert monitor_interval_ms(watched_only) == 500  # the shortest interval is the trigger


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("soon", "Could not parse value 'soon' for key 'source.monitor-interval'"),
        ("0 s", "must be positive"),
    ],
)
def test_bad_monitor_interval_is_refused_when_the_descriptor_is_built(value, error):
    builder = (
        TableDescriptor.for_connector("filesystem")
        .schema(Schema.new_builder().column("a", "INT").build())
        .option("path", "/data/a")
        .option("format", "json")
        .option("source.monitor-interval", value)
    )
    with pytest.raises(ValidationError, match=error):
        builder.build()


def test_monitor_interval_is_not_handed_to_sparks_reader():
    d = (
        TableDescriptor.for_connector("filesystem")
        .schema(Schema.new_builder().column("a", "INT").build())
        .option("path", "/data/a")
        .option("format", "csv")
        .option("csv.header", "true")
        .option("source.monitor-interval", "10 s")
        .build()
    )
    assert d.reader_options == (("header", "true"), ("mode", "FAILFAST"))


def test_join_unique_keys_follow_flinks_upsert_keys(senv):
    orders = _table(senv, "O", "order_id BIGINT, product_id BIGINT", ("order_id",))
    ships = _table(senv, "S", "s_id BIGINT, carrier STRING", ("s_id",))
    product = _table(senv, "P", "id BIGINT, name STRING", ("id",))

    def keys(t):
        return t.optimized().plan.unique_keys

    on_order = col("order_id") == col("s_id")
    # Both sides unique on the join key: the pair, and each side's key alone.
    assert keys(orders.join(ships, on_order)) == (("order_id", "s_id"), ("order_id",), ("s_id",))
    # Outer joins keep a side's key only where that side is never null-padded.
    assert keys(orders.left_outer_join(ships, on_order)) == (("order_id", "s_id"), ("order_id",))
    assert keys(orders.right_outer_join(ships, on_order)) == (("order_id", "s_id"), ("s_id",))
    assert keys(orders.full_outer_join(ships, on_order)) == (("order_id", "s_id"),)
    # A key that does not contain the join key is no upsert key: an order that changes its
    # product is retracted in one group and added in another, in no guaranteed order.
    assert keys(orders.join(product, col("product_id") == col("id"))) == ()
    assert keys(orders.semi_join(product, col("product_id") == col("id"))) == ()
    assert keys(orders.semi_join(ships, on_order)) == (("order_id",),)
    # Before the join-condition rule the keys are unknown.
    assert orders.join(ships, on_order)._plan.unique_keys == ()


def test_a_join_over_a_join_keeps_state_by_the_inner_joins_key(senv):
    orders = _table(senv, "O", "order_id BIGINT, amount INT", ("order_id",))
    ships = _table(senv, "S", "s_id BIGINT, carrier STRING", ("s_id",))
    pays = _table(senv, "P", "p_id BIGINT, paid INT", ("p_id",))
    two = orders.join(ships, col("order_id") == col("s_id"))
    text = two.left_outer_join(pays, col("order_id") == col("p_id")).explain()
    assert "leftInputSpec=[JoinKeyContainsUniqueKey], rightInputSpec=[Join" in text
    # Joined on another column, the key is still unique within each join key's state.
    text = two.left_outer_join(pays, col("amount") == col("p_id")).explain()
    assert "leftInputSpec=[HasUniqueKey]" in text.split("LeftOuterJoin")[1]
    # A join without upsert keys gives the next join none.
    product = _table(senv, "Q", "id BIGINT, name STRING", ("id",))
    text = (
        orders.join(product, col("amount") == col("id"))
        .left_outer_join(pays, col("order_id") == col("p_id"))
        .explain()
    )
    assert "leftInputSpec=[NoUniqueKey]" in text.split("LeftOuterJoin")[1]


def test_multi_join_is_off_by_default_and_bounded_by_max_tables(senv):
    a, b, c, d = (_table(senv, n, f"{n.lower()} BIGINT", op=None) for n in "ABCD")
    chain = (
        a.join(b, col("a") == col("b")).join(c, col("b") == col("c")).join(d, col("d") == col("a"))
    )
    assert "MultiJoin" not in chain.explain()
    senv.config.set("table.optimizer.multi-join.enabled", "true")
    text = chain.explain()
    assert "MultiJoin(joinTypes=[INNER, INNER, INNER]" in text
    assert "commonJoinKey=[(a), (b), (c), (d)]" in text
    assert "changelogMode=[I]" in text  # inner joins of insert-only inputs
    senv.config.set("table.optimizer.multi-join.max-tables", "3")
    optimized = chain.explain().split("== Optimized Physical Plan ==")[1].lstrip()
    assert optimized.startswith("Join(") and "MultiJoin(joinTypes=[INNER, INNER]" in optimized
    # A value it cannot take is refused where it is set (and the option keeps its value).
    with pytest.raises(ValidationError, match="max-tables must be a whole number of at least 3"):
        senv.config.set("table.optimizer.multi-join.max-tables", "2")
    assert senv.config.get("table.optimizer.multi-join.max-tables") == "3"
    # A state TTL applies to the multi-way join too; a STATE_TTL hint keeps joins binary.
    senv.config.set("table.optimizer.multi-join.max-tables", "3")
    senv.config.set("table.exec.state.ttl", "1 h")
    assert "MultiJoin(" in chain.explain()
    assert "MultiJoin" not in chain.with_hint("STATE_TTL", A="1 h").explain()


def test_multi_join_takes_only_chains_on_one_common_key(senv):
    senv.config.set("table.optimizer.multi-join.enabled", "true")
    a = _table(senv, "A", "a BIGINT, x BIGINT", op=None)
    b = _table(senv, "B", "b BIGINT", op=None)
    c = _table(senv, "C", "c BIGINT", op=None)
    # c joins on x, not on the a = b key: two binary joins.
    other_key = a.join(b, col("a") == col("b")).join(c, col("x") == col("c"))
    assert "MultiJoin" not in other_key.explain()
    # Right and full joins (and semi/anti) are not multi-joined (FLIP-516's limits).
    right = a.right_outer_join(b, col("a") == col("b")).join(c, col("b") == col("c"))
    assert "MultiJoin" not in right.explain()
    # In batch mode the chain stays binary: Spark's joins do the work.
    batch = TableEnvironment.create(mode="batch")
    batch.config.set("table.optimizer.multi-join.enabled", "true")
    ba, bb, bc = (_table(batch, n, f"{n.lower()} BIGINT", op=None) for n in "ABC")
    plan = ba.join(bb, col("a") == col("b")).join(bc, col("b") == col("c")).explain()
    assert "MultiJoin" not in plan


# -- the physical plan ---------------------------------------------------------------------------
def test_exec_nodes_name_and_version_themselves_and_hold_their_decisions(senv, tables):
    """Every exec node class is registered once by name and version (Flink's
    ExecNodeMetadata); the plan holds each decision, which the compiler and explain read."""
    from tableapi.physical import EXEC_NODES, StreamExecGroupAggregate, StreamExecJoin

    names = {cls.NAME for cls in EXEC_NODES.values()}
    assert len(names) == len(EXEC_NODES) and all(n.startswith("stream-exec-") for n in names)
    assert all(cls.VERSION >= 1 for cls in EXEC_NODES.values())
    orders, product, _ = tables
    senv.config.set("table.exec.state.ttl", "1 h")
    q = orders.left_outer_join(product, col("product_id") == col("id"))
    root = plan_stream(q.optimized().plan, senv.streaming_options()).root
    join = next(n for n in root.walk() if isinstance(n, StreamExecJoin))
    assert join.metadata == "stream-exec-join_1" and join.stateful
    assert (join.left.input_spec, join.left.unique_key, join.left.ttl_ms) == (
        "HasUniqueKey",
        ("order_id",),
        3_600_000,
    )
    grouped = orders.group_by(col("product_id")).select(col("amount").sum.alias("s"))
    agg = next(
        n
        for n in plan_stream(grouped.optimized().plan, senv.streaming_options()).root.walk()
        if isinstance(n, StreamExecGroupAggregate)
    )
    assert agg.state.ttl_ms == 3_600_000 and agg.state.update_before and not agg.two_phase


def test_the_physical_layer_reads_down_only_and_has_no_node_ladders():
    """tableapi.physical imports neither the compiler nor the executors (one-way flow);
    explain, the changelog inference and the hint rule dispatch by node type through
    tables, not isinstance ladders over plan nodes."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "tableapi"
    for path in (root / "physical").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("tableapi.compiler", "tableapi.execution")), (
                    f"{path.name} imports {node.module}"
                )
    plan_nodes = {
        "Scan", "Project", "Filter", "Aggregate", "Distinct", "Join", "MultiJoin",
        "TemporalJoin", "LookupJoin", "Exchange", "Union", "Sort", "Limit", "QueryHints",
    }  # fmt: skip
    for module in ("plan/explain.py", "plan/changelog.py", "rules/hints.py"):
        tree = ast.parse((root / module).read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            tested = {
                ast.unparse(call.args[1])
                for call in ast.walk(fn)
                if isinstance(call, ast.Call)
                and getattr(call.func, "id", None) == "isinstance"
                and len(call.args) == 2
            }
            kinds = {t for text in tested for t in plan_nodes if t in text.split(" | ")}
            assert len(kinds) <= 1, f"{module}:{fn.name} tests node types {sorted(kinds)}"
