"""Window TVFs and window aggregation without a server: the SQL that builds them, their row
types, the rule that makes a WindowAggregate, its exec node and spec, explain, and what is
refused (with the columns there are, or "not supported yet")."""

from __future__ import annotations

import pytest

from tableapi import TableEnvironment
from tableapi.errors import SqlValidationError, ValidationError
from tableapi.physical import StreamingOptions, plan_stream
from tableapi.physical.windows import StreamExecWindowAggregate
from tableapi.plan.windows import Window, WindowAggregate, WindowKind
from tableapi.rules import optimize
from tableapi.types import TimeKind

EVENTS = """
CREATE TABLE Events (k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent/events', 'format' = 'json')
"""
CHANGES = """
CREATE TABLE Changes (k STRING, v INT, ts TIMESTAMP(3), op STRING,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent/changes', 'format' = 'json',
      'changelog.op-column' = 'op')
"""
TUMBLE = "TABLE(TUMBLE(TABLE Events, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
AGG = (
    "SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m, "
    "AVG(v) AS a, MIN(v) AS lo, COUNT(DISTINCT v) AS d FROM {} "
    "GROUP BY window_start, window_end, k"
)


def make(mode: str) -> TableEnvironment:
    env = TableEnvironment.create(mode=mode)
    env.execute_sql(EVENTS)
    env.execute_sql(CHANGES)
    return env


@pytest.fixture
def senv() -> TableEnvironment:
    return make("streaming")


@pytest.fixture
def benv() -> TableEnvironment:
    return make("batch")


def test_a_window_tvf_adds_the_window_columns_and_moves_the_rowtime(benv: TableEnvironment) -> None:
    t = benv.sql_query(f"SELECT * FROM {TUMBLE}")
    types = {f.name: str(f.type) for f in t.row_type}
    # Flink 2.3's schema keeps the mark (PyFlink: `ts TIMESTAMP(3) *ROWTIME*`); the product's
    # event time downstream is window_time alone
    assert types["ts"] == "TIMESTAMP(3) *ROWTIME*"
    assert t.row_type.field("ts").type.time_kind is TimeKind.MATERIALIZED_ROWTIME
    assert types["window_start"] == types["window_end"] == "TIMESTAMP(3) NOT NULL"
    assert types["window_time"] == "TIMESTAMP(3) *ROWTIME* NOT NULL"
    assert t.column_names[-3:] == ("window_start", "window_end", "window_time")


def test_named_parameters_build_the_positional_call(benv: TableEnvironment) -> None:
    positional = "HOP(TABLE Events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"
    named = (
        "HOP(DATA => TABLE Events, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '10' SECOND, "
        "SLIDE => INTERVAL '5' SECOND)"
    )
    plans = [benv.sql_query(f"SELECT * FROM TABLE({c})").explain() for c in (positional, named)]
    assert plans[0] == plans[1]
    assert "HOP(time_col=[ts], size=[10 s], slide=[5 s])" in plans[0]


def test_a_window_aggregate_in_streaming_explains_as_flinks(senv: TableEnvironment) -> None:
    """Two phases by default (AUTO), as Flink plans them: its LocalWindowAggregate and
    GlobalWindowAggregate lines; ONE_PHASE: one WindowAggregate."""
    plan = senv.sql_query(AGG.format(TUMBLE)).explain()
    assert (
        "+- GlobalWindowAggregate(groupBy=[k], window=[TUMBLE(slice_end=[$slice_end], "
        "size=[10 s])], select=[k, COUNT(count1$0) AS $agg0, SUM(sum$1) AS $agg1" in plan
    )
    assert (
        "+- LocalWindowAggregate(groupBy=[k], window=[TUMBLE(time_col=[ts], size=[10 s])], "
        "select=[k, COUNT(*) AS count1$0, SUM(v) AS sum$1" in plan
    )
    assert "slice_end('w$) AS $slice_end], changelogMode=[I])" in plan
    line = next(x for x in plan.splitlines() if "GlobalWindowAggregate(" in x)
    assert "start('w$) AS window_start, end('w$) AS window_end]" in line
    assert "operator=[server_ext window aggregate]" in line
    assert line.endswith("changelogMode=[I])")  # insert-only: final rows only
    senv.config.set("table.optimizer.agg-phase-strategy", "ONE_PHASE")
    plan = senv.sql_query(AGG.format(TUMBLE)).explain()
    assert "LocalWindowAggregate" not in plan and "GlobalWindowAggregate" not in plan
    assert (
        "+- WindowAggregate(groupBy=[k], window=[TUMBLE(time_col=[ts], size=[10 s])], "
        "select=[k, COUNT() AS $agg0, SUM(v) AS $agg1" in plan
    )
    cumulate = "CUMULATE(TABLE Events, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND, "
    plan = senv.sql_query(AGG.format(f"TABLE({cumulate}INTERVAL '1' SECOND))")).explain()
    assert "CUMULATE(time_col=[ts], max_size=[10 s], step=[2 s], offset=[1 s])" in plan


def test_the_rule_folds_the_tvf_into_the_aggregate_and_the_spec_says_the_window(
    senv: TableEnvironment,
) -> None:
    table = senv.sql_query(AGG.format(TUMBLE))
    plan = optimize(table._plan).plan
    (agg,) = [n for n in plan.walk() if isinstance(n, WindowAggregate)]
    assert agg.keys == ("k",) and agg.window == Window(WindowKind.TUMBLE, "ts", 10_000)
    root = plan_stream(plan, StreamingOptions()).root
    (node, local) = [n for n in root.walk() if isinstance(n, StreamExecWindowAggregate)]
    assert (node.NAME, local.NAME, local.stateful) == (
        "stream-exec-global-window-aggregate", "stream-exec-local-window-aggregate", False
    )  # fmt: skip
    spec = node.operator_spec()
    assert (spec.operator, spec.window, spec.size_ms, spec.key_count, spec.two_phase) == (
        "window_aggregate", "tumble", 10_000, 1, True
    )  # fmt: skip
    assert [a.function for a in spec.aggs] == ["count_star", "sum", "max", "avg", "min", "count"]
    assert spec.columns[:3] == ("window_start", "window_end", "key0")
    assert spec.time_mode == "EventTime"
    (source,) = local.operator_inputs()
    assert source.keys == ("k",) and source.time == "ts"


def test_window_assignment_is_flinks() -> None:
    assert Window(WindowKind.TUMBLE, "t", 10, offset_ms=3).assign(2) == [(-7, 3)]
    assert Window(WindowKind.TUMBLE, "t", 10, offset_ms=-16).assign(5) == [(4, 14)]
    assert Window(WindowKind.HOP, "t", 15, 5).assign(6) == [(5, 20), (0, 15), (-5, 10)]
    assert Window(WindowKind.CUMULATE, "t", 15, 5).assign(11) == [(0, 15)]
    assert Window(WindowKind.CUMULATE, "t", 15, 5).assign(4) == [(0, 5), (0, 10), (0, 15)]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE Events PARTITION BY k, DESCRIPTOR(ts), "
            "INTERVAL '5' SECOND))",
            "PARTITION BY partitions SESSION windows; TUMBLE takes none",
        ),
        (
            "SELECT * FROM TABLE(SESSION(TABLE Events PARTITION BY nope, DESCRIPTOR(ts), "
            "INTERVAL '5' SECOND))",
            r"PARTITION BY names no column nope; the table has \[k, v, ts, pt\]",
        ),
        (
            "SELECT k, COUNT(*), TUMBLE_START(ts, INTERVAL '6' SECOND) FROM Events "
            "GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)",
            "Call to auxiliary group function 'TUMBLE_START' must have matching call to "
            r"group function '\$TUMBLE' in GROUP BY clause",
        ),
        (
            "SELECT k, COUNT(*), SESSION_END(ts, INTERVAL '5' SECOND) FROM Events "
            "GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)",
            r"'SESSION_END' must have matching call to group function '\$SESSION'",
        ),
        (
            "SELECT k, TUMBLE_END(ts, INTERVAL '5' SECOND) FROM Events",
            r"'TUMBLE_END' must have matching call to group function '\$TUMBLE'",
        ),
        (
            "SELECT COUNT(*) FROM Events GROUP BY TUMBLE(ts, INTERVAL '5' SECOND), "
            "HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
            "Only a single window group function may be used in GROUP BY",
        ),
        (
            "SELECT COUNT(*) FROM Events GROUP BY TUMBLE(ts)",
            r"The group window TUMBLE\(time_attr, size\) takes 2 arguments, got 1",
        ),
        (
            "SELECT COUNT(*), TUMBLE_PROCTIME(pt, INTERVAL '5' SECOND) FROM Events "
            "GROUP BY TUMBLE(pt, INTERVAL '5' SECOND)",
            "not supported",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE Events, DESCRIPTOR(nope), INTERVAL '5' SECOND))",
            r"DESCRIPTOR\(nope\) names no column; the input has \[k, v, ts, pt\]",
        ),
        (
            "SELECT * FROM TABLE(SESSION(TABLE Events, DESCRIPTOR(pt), INTERVAL '5' SECOND))",
            "A SESSION window over the processing-time attribute pt is not supported yet",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE Events, DESCRIPTOR(v), INTERVAL '5' SECOND))",
            "must be a TIMESTAMP",
        ),
        (
            "SELECT * FROM TABLE(CUMULATE(TABLE Events, DESCRIPTOR(ts), INTERVAL '3' SECOND, "
            "INTERVAL '10' SECOND))",
            "Cumulative Window requires maxSize must be an integral multiple of step",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE Events, DESCRIPTOR(ts), 10))",
            "sizes and offset are INTERVAL literals",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE Events, DESCRIPTOR(ts), SPAN => INTERVAL '1' "
            "SECOND))",
            "TUMBLE has no parameter SPAN .* its parameters are DATA, TIMECOL, SIZE, OFFSET",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE Events, DESCRIPTOR(ts)))",
            r"TUMBLE\(DATA, TIMECOL, SIZE, OFFSET\) lacks SIZE",
        ),
    ],
)  # fmt: skip
def test_what_is_not_built_is_refused_clearly(
    benv: TableEnvironment, query: str, message: str
) -> None:
    with pytest.raises(SqlValidationError, match=message):
        benv.sql_query(query).explain()


SESSION = "TABLE(SESSION(TABLE Events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))"


def test_a_session_window_aggregate_explains_as_flinks(senv: TableEnvironment) -> None:
    plan = senv.sql_query(AGG.format(SESSION)).explain()
    assert (
        "WindowAggregate(groupBy=[k], window=[SESSION(time_col=[ts], gap=[5 s], "
        "partition keys=[k])], select=[k, COUNT() AS $agg0" in plan
    )
    named = (
        "TABLE(SESSION(DATA => TABLE Events PARTITION BY (k), TIMECOL => DESCRIPTOR(ts), "
        "GAP => INTERVAL '5' SECOND))"
    )
    assert senv.sql_query(AGG.format(named)).explain() == plan
    table = senv.sql_query(AGG.format(SESSION))
    root = plan_stream(optimize(table._plan).plan, StreamingOptions()).root
    (node,) = [n for n in root.walk() if isinstance(n, StreamExecWindowAggregate)]
    spec = node.operator_spec()
    assert (spec.window, spec.size_ms, spec.step_ms, spec.version) == ("session", 5000, None, 3)


def test_a_session_is_grouped_by_its_partition_keys(senv: TableEnvironment) -> None:
    """Flink runs other groupings of sessions as an updating aggregation; refused here."""
    unkeyed = "TABLE(SESSION(TABLE Events, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
    with pytest.raises(ValidationError, match=r"PARTITION BY keys \[k\], whose calls"):
        senv.sql_query(
            f"SELECT window_start, window_end, COUNT(*) FROM {SESSION} "
            "GROUP BY window_start, window_end"
        ).explain()
    with pytest.raises(ValidationError, match=r"PARTITION BY keys \[\]"):
        senv.sql_query(AGG.format(unkeyed)).explain()
    plan = senv.sql_query(  # no key, no partition: one session over every row
        f"SELECT window_start, window_end, COUNT(*) FROM {unkeyed} "
        "GROUP BY window_start, window_end"
    ).explain()
    assert "window=[SESSION(time_col=[ts], gap=[5 s])]" in plan


def test_legacy_group_windows_plan_the_window_aggregate(senv: TableEnvironment) -> None:
    """GROUP BY TUMBLE(ts, ..) / HOP / SESSION run as the window TVF's aggregation; the
    auxiliary functions are the window's columns, with Flink's types."""
    legacy = senv.sql_query(
        "SELECT E.k, COUNT(*) AS n, SESSION_START(E.ts, INTERVAL '5' SECOND) AS st, "
        "SESSION_END(E.ts, INTERVAL '5' SECOND) AS en, SESSION_ROWTIME(E.ts, INTERVAL '5' "
        "SECOND) AS rt FROM Events E GROUP BY E.k, SESSION(E.ts, INTERVAL '5' SECOND)"
    )
    types = [(f.name, str(f.type)) for f in legacy.row_type]
    assert types == [("k", "STRING"), ("n", "BIGINT NOT NULL"),
                     ("st", "TIMESTAMP(3) NOT NULL"), ("en", "TIMESTAMP(3) NOT NULL"),
                     ("rt", "TIMESTAMP(3) *ROWTIME* NOT NULL")]  # fmt: skip
    plan = legacy.explain()
    assert "window=[SESSION(time_col=[ts], gap=[5 s], partition keys=[k])]" in plan
    assert "operator=[server_ext window aggregate]" in plan
    hop = senv.sql_query(
        "SELECT k, SUM(v) AS s, HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS e "
        "FROM Events GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), k"
    ).explain()
    assert "WindowAggregate(groupBy=[k], window=[HOP(time_col=[ts], size=[10 s], " in hop
    proctime = senv.sql_query(
        "SELECT k, COUNT(*) FROM Events GROUP BY TUMBLE(pt, INTERVAL '5' SECOND), k"
    ).explain()
    assert "window=[TUMBLE(time_col=[pt], size=[5 s])]" in proctime


def test_processing_time_windows_run_by_the_servers_clock(senv: TableEnvironment) -> None:
    """A window over a PROCTIME() column (Nexmark q12's): its window_time is a proctime
    attribute, and the operator runs in processing time."""
    senv.execute_sql("CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM Events")
    tvf = "TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))"
    types = {f.name: str(f.type) for f in senv.sql_query(f"SELECT * FROM {tvf}").row_type}
    assert types["window_time"] == "TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL"
    assert types["window_start"] == "TIMESTAMP(3) NOT NULL"
    table = senv.sql_query(AGG.format(tvf))
    assert "WindowAggregate(groupBy=[k], window=[TUMBLE(time_col=[p_time], size=[10 s])]" in (
        table.explain()
    )
    root = plan_stream(optimize(table._plan).plan, StreamingOptions()).root
    (node,) = [n for n in root.walk() if isinstance(n, StreamExecWindowAggregate)]
    spec = node.operator_spec()
    assert spec.proctime and spec.time_mode == "ProcessingTime"
    assert node.operator_inputs()[0].time is None  # the rows' time is not read


def test_a_changelog_input_runs_flinks_retracting_calls(senv: TableEnvironment) -> None:
    """Flink 1.19+ takes a changelog in a TUMBLE, HOP or CUMULATE window aggregation (its
    calls *_RETRACT, in two phases as Flink plans them); a SESSION one is refused yet."""
    senv.execute_sql("DROP TABLE Changes")
    senv.execute_sql(CHANGES.replace("op STRING,", ""))
    changes = "TABLE(TUMBLE(TABLE Changes, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
    plan = senv.sql_query(AGG.format(changes)).explain()
    assert (
        "LocalWindowAggregate(groupBy=[k], window=[TUMBLE(time_col=[ts], size=[10 s])], "
        + ("select=[k, COUNT_RETRACT(*) AS count1$0, SUM_RETRACT(v) AS sum$1")
        in plan
    )
    assert "fields=[k, v, ts], changelogMode=[I,UB,UA,D])" in plan
    table = senv.sql_query(AGG.format(changes))
    root = plan_stream(optimize(table._plan).plan, StreamingOptions()).root
    (node, _) = [n for n in root.walk() if isinstance(n, StreamExecWindowAggregate)]
    assert node.operator_spec().retractions and node.operator_spec().two_phase
    session = "TABLE(SESSION(TABLE Changes PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
    with pytest.raises(ValidationError, match=r"A SESSION window aggregation over a changelog"):
        senv.sql_query(AGG.format(session)).explain()


def test_streaming_refuses_a_tvf_on_its_own(senv: TableEnvironment) -> None:
    with pytest.raises(ValidationError, match="runs only as a window aggregation"):
        senv.sql_query(f"SELECT * FROM {TUMBLE}").explain()
    with pytest.raises(ValidationError, match="runs only as a window aggregation"):
        senv.sql_query(f"SELECT k, COUNT(*) FROM {TUMBLE} GROUP BY k").explain()
    reads_window = f"SELECT window_start, window_end, MAX(window_time) FROM {TUMBLE} " + (
        "GROUP BY window_start, window_end"
    )
    with pytest.raises(ValidationError, match="whose calls read the input's columns"):
        senv.sql_query(reads_window).explain()
    hop = "TABLE(HOP(TABLE Events, DESCRIPTOR(ts), INTERVAL '3' SECOND, INTERVAL '10' SECOND))"
    with pytest.raises(ValidationError, match="Slicing Hopping Window requires size must be"):
        senv.sql_query(AGG.format(hop)).explain()


def test_batch_mode_runs_what_streaming_refuses_yet(benv: TableEnvironment) -> None:
    plan = benv.sql_query(f"SELECT k, COUNT(*) FROM {TUMBLE} GROUP BY k").explain()
    assert "GroupAggregate(groupBy=[k]" in plan and "WindowTableFunction(window=[TUMBLE" in plan


def test_a_window_join_of_sessions_is_refused(senv: TableEnvironment) -> None:
    side = "(SELECT * FROM TABLE(SESSION(TABLE Events PARTITION BY k, DESCRIPTOR(ts), " + (
        "INTERVAL '5' SECOND)))"
    )
    query = (
        f"SELECT L.k, L.v, R.v AS rv FROM {side} L JOIN {side} R ON L.window_start = "
        "R.window_start AND L.window_end = R.window_end AND L.k = R.k"
    )
    with pytest.raises(ValidationError, match="A window join of SESSION window TVFs is not"):
        senv.sql_query(query).explain()
