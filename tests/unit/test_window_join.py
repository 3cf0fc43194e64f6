"""The window join without a server: the rule that recognizes a join of two window TVFs
equated on both window bounds, its row type, its exec node and spec, explain (Flink's
WindowJoin line), and what stays a regular join (Flink's fallbacks) or is refused."""

from __future__ import annotations

import pytest

from tableapi import TableEnvironment
from tableapi.errors import ValidationError
from tableapi.physical import StreamingOptions, plan_stream
from tableapi.physical.window_join import StreamExecWindowJoin, StreamExecWindowTableFunction
from tableapi.plan import Join

DDL = """
CREATE TABLE {name} (k STRING, v INT, ts TIMESTAMP(3), plain TIMESTAMP(3){extra}
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent/{name}', 'format' = 'json'{options})
"""
TUMBLE = "(SELECT * FROM TABLE(TUMBLE(TABLE {}, DESCRIPTOR(ts), INTERVAL '5' SECOND)))"
ON = "L.window_start = R.window_start AND L.window_end = R.window_end"


def make(mode: str) -> TableEnvironment:
    env = TableEnvironment.create(mode=mode)
    for name in ("L", "R"):
        env.execute_sql(DDL.format(name=name, extra=",", options=""))
    env.execute_sql(DDL.format(name="C", extra=", op STRING,", options=", "
                               "'changelog.op-column' = 'op'"))  # fmt: skip
    return env


@pytest.fixture
def senv() -> TableEnvironment:
    return make("streaming")


@pytest.fixture
def benv() -> TableEnvironment:
    return make("batch")


def query(kind: str = "", on: str = f"{ON} AND L.k = R.k", left: str = TUMBLE,
          right: str = TUMBLE) -> str:  # fmt: skip
    return f"SELECT * FROM {left.format('L')} L {kind} JOIN {right.format('R')} R ON {on}"


def window_join(env: TableEnvironment, sql: str) -> StreamExecWindowJoin:
    root = plan_stream(env.optimize(env.sql_query(sql)._plan).plan, StreamingOptions()).root
    (node,) = [n for n in root.walk() if isinstance(n, StreamExecWindowJoin)]
    return node


def test_explain_shows_flinks_window_join(senv: TableEnvironment) -> None:
    plan = senv.sql_query(query("LEFT", f"{ON} AND L.k = R.k AND L.v < R.v")).explain()
    line = next(x for x in plan.splitlines() if "WindowJoin(" in x)
    assert line.startswith(
        "WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], "
        "size=[5 s])], rightWindow=[TUMBLE(win_start=[window_start0], win_end=[window_end0], "
        "size=[5 s])], joinType=[LeftOuterJoin], where=[((k = k0) AND (v < v0))], "
        "select=[k, v, ts, plain, window_start, window_end, window_time, k0,"
    )
    assert line.endswith(
        "operator=[server_ext window join], stateBackend=[hashmap], changelogMode=[I])"
    )
    assert "WindowTableFunction(window=[TUMBLE(time_col=[ts], size=[5 s])], changelogMode=[I])" in (
        plan
    )
    hop = (
        "(SELECT * FROM TABLE(HOP(TABLE {}, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
        "INTERVAL '6' SECOND)))"
    )
    cumulate = (
        "(SELECT * FROM TABLE(CUMULATE(TABLE {}, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
        "INTERVAL '6' SECOND, INTERVAL '1' SECOND)))"
    )
    plan = senv.sql_query(query(left=hop, right=hop)).explain()
    assert "leftWindow=[HOP(win_start=[window_start], win_end=[window_end], size=[6 s], " in plan
    plan = senv.sql_query(query(left=cumulate, right=cumulate)).explain()
    assert "max_size=[6 s], step=[2 s], offset=[1 s])]" in plan


def test_the_spec_groups_by_the_keys_and_names_windows_by_their_end(
    senv: TableEnvironment,
) -> None:
    node = window_join(senv, query("FULL", f"{ON} AND L.k IS NOT DISTINCT FROM R.k"))
    spec = node.operator_spec()
    assert (spec.operator, spec.kind, spec.null_safe, spec.time_mode) == (
        "window_join", "full", (True,), "EventTime"
    )  # fmt: skip
    left, right = node.operator_inputs()
    assert (left.keys, left.time, right.keys, right.time) == (
        ("k",), "window_end", ("k0",), "window_end0"
    )  # fmt: skip
    assert all(isinstance(i, StreamExecWindowTableFunction) for i in node.walk()
               if "WindowTableFunction" in type(i).__name__)  # fmt: skip
    only_bounds = window_join(senv, query("", f"{ON} AND L.v < R.v"))
    assert [i.keys for i in only_bounds.operator_inputs()] == [(), ()]  # one group
    assert only_bounds.operator_spec().residual is not None


def test_the_output_keeps_window_time_a_rowtime_and_pads_outer_sides(
    senv: TableEnvironment,
) -> None:
    types = {f.name: str(f.type) for f in senv.sql_query(query("LEFT")).row_type}
    assert types["window_time"] == "TIMESTAMP(3) *ROWTIME* NOT NULL"
    assert types["window_time0"] == "TIMESTAMP(3) *ROWTIME*"  # nullable: padded
    assert types["window_start"] == "TIMESTAMP(3) NOT NULL"
    assert types["window_end0"] == "TIMESTAMP(3)"


def test_semi_and_anti_joins_through_exists(senv: TableEnvironment) -> None:
    exists = (
        f"SELECT * FROM {{}} L WHERE {{}} EXISTS (SELECT * FROM {{}} R WHERE {ON} AND L.k = R.k)"
    )
    for negated, kind in (("", "LeftSemiJoin"), ("NOT", "LeftAntiJoin")):
        sql = exists.format(TUMBLE.format("L"), negated, TUMBLE.format("R"))
        assert f"joinType=[{kind}]" in senv.sql_query(sql).explain()
        assert window_join(senv, sql).operator_spec().output_fields()[-1][0] == "window_time"


@pytest.mark.parametrize(
    ("on", "right"),
    [
        ("L.window_start = R.window_start AND L.k = R.k", TUMBLE),  # no window_end equality
        ("L.window_end = R.window_end AND L.k = R.k", TUMBLE),
        (f"{ON} AND L.k = R.k", TUMBLE.replace("'5'", "'10'")),  # other windows
        ("L.window_start = R.window_end AND L.window_end = R.window_start", TUMBLE),
    ],
)
def test_what_flink_runs_as_a_regular_join_stays_one(
    on: str, right: str, benv: TableEnvironment, senv: TableEnvironment
) -> None:
    plan = benv.sql_query(query("", on, right=right)).explain()
    assert "WindowJoin(" not in plan and "Join(joinType=[InnerJoin]" in plan
    with pytest.raises(ValidationError, match="is not a window join: a window join needs the "
                       "same windows on both sides and a condition that equates both"):  # fmt: skip
        senv.sql_query(query("", on, right=right)).execute()


def test_refused_inputs_say_why(senv: TableEnvironment) -> None:
    changelog = "(SELECT * FROM TABLE(TUMBLE(TABLE C, DESCRIPTOR(ts), INTERVAL '5' SECOND)))"
    with pytest.raises(ValidationError, match="window join only supports INSERT_ONLY in input"):
        senv.sql_query(query(right=changelog.replace("{}", "C"))).execute()
    plain = "(SELECT * FROM TABLE(TUMBLE(TABLE {}, DESCRIPTOR(plain), INTERVAL '5' SECOND)))"
    with pytest.raises(ValidationError, match="needs windows over an event-time attribute, but "
                       "plain is TIMESTAMP"):  # fmt: skip
        senv.sql_query(query(left=plain, right=plain)).execute()


def test_batch_runs_a_plain_join_of_the_tvfs_rows(benv: TableEnvironment) -> None:
    plan = benv.optimize(benv.sql_query(query("RIGHT"))._plan).plan
    (join,) = [n for n in plan.walk() if isinstance(n, Join)]
    assert join.window is not None and [k.left for k in join.equi_keys or ()] == [
        "window_start", "window_end", "k"
    ]  # fmt: skip
    assert "WindowJoin(leftWindow=[TUMBLE(" in benv.sql_query(query("RIGHT")).explain()


def test_a_join_of_two_window_aggregations_runs_as_a_regular_join(
    senv: TableEnvironment,
) -> None:
    """Nexmark q8's shape: not a window join yet (docs/windows.md says what differs)."""
    agg = (
        "(SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE {}, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end)"
    )
    plan = senv.sql_query(query(left=agg, right=agg)).explain()
    assert "WindowJoin(" not in plan
    assert "Join(joinType=[InnerJoin]" in plan and plan.count("GlobalWindowAggregate(") == 2


def test_hop_windows_need_no_size_multiple_of_the_slide_in_a_window_join(
    senv: TableEnvironment,
) -> None:
    """Flink 2.3 joins HOP(5 s, 12 s) windows (a window aggregation refuses them)."""
    hop = (
        "(SELECT * FROM TABLE(HOP(TABLE {}, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
        "INTERVAL '12' SECOND)))"
    )
    node = window_join(senv, query(left=hop, right=hop))
    assert "size=[12 s], slide=[5 s]" in node.explain()
