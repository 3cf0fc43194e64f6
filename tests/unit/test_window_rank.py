"""Window Top-N and window deduplication without a server: the SQL that becomes a window
rank (``ROW_NUMBER() OVER (PARTITION BY window_start, window_end, ..)``), the rule folding
``rn <= N`` / ``rn < N`` / ``rn = N`` / ``rn > M AND ..`` into its range, explain (Flink's
WindowRank and WindowDeduplicate lines), its exec node and spec, and what is refused: OVER
shapes that are no window Top-N (with the message they had before), no filter on the row
number in streaming, changelog input, a SESSION TVF right below, no event time."""

from __future__ import annotations

import pytest

from tableapi import TableEnvironment
from tableapi.errors import SqlValidationError, ValidationError
from tableapi.physical import StreamingOptions, plan_stream
from tableapi.physical.window_rank import StreamExecWindowRank
from tableapi.plan.window_rank import WindowRank

DDL = """
CREATE TABLE {name} (k STRING, v INT, ts TIMESTAMP(3), plain TIMESTAMP(3){extra}
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent/{name}', 'format' = 'json'{options})
"""
TUMBLE = "TABLE(TUMBLE(TABLE {}, DESCRIPTOR({}), INTERVAL '5' SECOND))"


def make(mode: str) -> TableEnvironment:
    env = TableEnvironment.create(mode=mode)
    env.execute_sql(DDL.format(name="E", extra=",", options=""))
    env.execute_sql(DDL.format(name="C", extra=", op STRING,", options=", "
                               "'changelog.op-column' = 'op'"))  # fmt: skip
    return env


@pytest.fixture
def senv() -> TableEnvironment:
    return make("streaming")


def ranked(where: str, partition: str = ", k", order: str = "v DESC", source: str = "") -> str:
    source = source or TUMBLE.format("E", "ts")
    return (
        f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end"
        f"{partition} ORDER BY {order}) AS rn FROM {source}) WHERE {where}"
    )


def rank_node(env: TableEnvironment, sql: str) -> StreamExecWindowRank:
    root = plan_stream(env.optimize(env.sql_query(sql)._plan).plan, StreamingOptions()).root
    (node,) = [n for n in root.walk() if isinstance(n, StreamExecWindowRank)]
    return node


@pytest.mark.parametrize(
    ("where", "expected"),
    [("rn <= 3", (1, 3)), ("rn < 3", (1, 2)), ("rn = 2", (2, 2)), ("3 >= rn", (1, 3)),
     ("rn > 1 AND rn <= 4", (2, 4)), ("rn >= 2 AND rn < 4 AND rn <= 9", (2, 3))],
)  # fmt: skip
def test_the_filter_on_the_row_number_becomes_the_rank_range(
    senv: TableEnvironment, where: str, expected: tuple[int, int]
) -> None:
    node = rank_node(senv, ranked(where)).rank
    assert (node.rank_start, node.rank_end) == expected
    assert node.keys == ("k",) and node.order == (("v", False),)


def test_other_conjuncts_stay_a_filter_above_the_rank(senv: TableEnvironment) -> None:
    plan = senv.optimize(senv.sql_query(ranked("rn <= 2 AND k <> 'x'"))._plan).plan
    assert "(k <> 'x')" in str(plan.condition) and "rn" not in str(plan.condition)
    # an empty range keeps no row (Flink plans an empty Values)
    empty = senv.optimize(senv.sql_query(ranked("rn <= 1 AND rn >= 2"))._plan).plan
    assert str(empty.condition) == "FALSE" and empty.input.input.rank_end == 1


def test_explain_shows_flinks_window_rank_and_deduplicate(senv: TableEnvironment) -> None:
    plan = senv.sql_query(ranked("rn <= 2", "", "v DESC, k")).explain()
    assert (
        "WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 s])]"
        ", rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], partitionBy=[], "
        "orderBy=[v DESC, k ASC], select=[k, v, ts, plain, window_start, window_end, "
        "window_time, w0$o0], operator=[server_ext window rank], stateBackend=[hashmap], "
        "changelogMode=[I])"
    ) in plan
    assert "WindowTableFunction(window=[TUMBLE(time_col=[ts], size=[5 s])], changelogMode=[I])" in (
        plan
    )
    assert "ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC, k ASC)" in (
        plan
    )  # the abstract syntax tree's LogicalProject
    first = senv.sql_query(ranked("rn = 1", order="ts")).explain()
    assert (
        "WindowDeduplicate(window=[TUMBLE(win_start=[window_start], win_end=[window_end], "
        "size=[5 s])], keep=[FirstRow], partitionKeys=[k], orderKey=[ts], order=[ROWTIME]"
    ) in first
    assert "keep=[LastRow]" in senv.sql_query(ranked("rn < 2", order="ts DESC")).explain()
    # ordered by another column, or a Top-2 by time: a window rank, not a deduplication
    assert "WindowRank(" in senv.sql_query(ranked("rn = 1", order="plain")).explain()
    assert "WindowRank(" in senv.sql_query(ranked("rn <= 2", order="ts")).explain()


def test_a_row_number_nobody_reads_is_left_out_of_the_ranks_rows(senv: TableEnvironment) -> None:
    """Flink's "no ranking output": the operator emits no row number nobody selects."""
    sql = "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, " + (
        f"window_end ORDER BY v DESC) AS rn FROM {TUMBLE.format('E', 'ts')}) WHERE rn <= 2"
    )
    node = rank_node(senv, sql)
    assert not node.rank.output_rank and not node.operator_spec().output_rank
    assert "window_time], operator=[server_ext window rank]" in senv.sql_query(sql).explain()
    assert node.rank.row_type.names[-1] == "window_time"
    assert rank_node(senv, ranked("rn <= 2")).rank.output_rank  # SELECT *: kept


def test_the_spec_names_fields_by_index_and_the_keep_last_tie_rule(
    senv: TableEnvironment,
) -> None:
    spec = rank_node(senv, ranked("rn = 1", order="ts DESC")).operator_spec()
    assert spec.order == ((2, False),) and spec.keep_last and not spec.fired_input
    assert (spec.rank_start, spec.rank_end) == (1, 1)
    assert spec.output_fields()[-1] == ("w0$o0", "BIGINT")


def test_over_a_window_aggregation_the_input_has_fired(senv: TableEnvironment) -> None:
    agg = (
        "(SELECT window_start AS ws, window_end AS we, k, SUM(v) AS s FROM "
        f"{TUMBLE.format('E', 'ts')} GROUP BY window_start, window_end, k)"
    )
    sql = (
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY ws, we ORDER BY s DESC) AS rn "
        f"FROM {agg}) WHERE rn <= 1"
    )
    node = rank_node(senv, sql)
    assert node.rank.bounds == ("ws", "we") and node.rank.keys == ()
    assert node.operator_spec().fired_input
    assert [i.time for i in node.operator_inputs()] == ["we"]
    assert "WindowRank(window=[TUMBLE(win_start=[ws], win_end=[we], size=[5 s])]" in (
        senv.sql_query(sql).explain()
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, k ORDER BY v) "
        f"AS rn FROM {TUMBLE.format('E', 'ts')}) WHERE rn <= 2",  # no window_end: a Top-N
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM E) "
        "WHERE rn <= 1",  # no window: a Top-N
        "SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY v) FROM "
        + TUMBLE.format("E", "ts"),
        "SELECT SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT "
        "ROW) FROM E",
    ],
    ids=["no-window-end", "no-window", "rank", "over-aggregation"],
)
def test_other_over_shapes_are_refused_as_before(senv: TableEnvironment, sql: str) -> None:
    with pytest.raises(SqlValidationError, match=r"OVER aggregation \(\.\.\. OVER \(PARTITION BY"):
        senv.sql_query(sql)


def test_streaming_refuses_what_flinks_window_rank_does_not_run(senv: TableEnvironment) -> None:
    unfiltered = ranked("k <> 'x'")
    with pytest.raises(ValidationError, match=r"keep its first rows with WHERE rn <= N"):
        senv.sql_query(unfiltered).explain()
    with pytest.raises(ValidationError, match=r"changelog input \[C\] is not supported"):
        senv.sql_query(ranked("rn <= 1", source=TUMBLE.format("C", "ts"))).explain()
    session = "TABLE(SESSION(TABLE E PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
    with pytest.raises(ValidationError, match=r"right over a SESSION window TVF"):
        senv.sql_query(ranked("rn <= 1", source=session)).explain()
    with pytest.raises(ValidationError, match=r"declare a WATERMARK"):
        senv.sql_query(ranked("rn <= 1", source=TUMBLE.format("E", "plain"))).explain()
    with pytest.raises(SqlValidationError, match=r"ordered by the expression"):
        senv.sql_query(ranked("rn <= 1", order="v + 1"))


def test_batch_mode_plans_the_rank_without_a_filter_too() -> None:
    env = make("batch")
    table = env.sql_query(ranked("k <> 'x'"))
    plan = env.optimize(table._plan).plan
    (node,) = [n for n in plan.walk() if isinstance(n, WindowRank)]
    assert node.rank_end is None and "rankEnd=None" in table.explain()
