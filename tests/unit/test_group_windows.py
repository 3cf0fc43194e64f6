"""The Table API's group windows without a server: the plan they become (the window TVF under
the window aggregation), their row types, and Flink's errors for what is not a group window."""

from __future__ import annotations

import pytest

from tableapi import TableEnvironment, col, lit
from tableapi.errors import ValidationError
from tableapi.table import Table
from tableapi.window import Session, Slide, Tumble

EVENTS = """
CREATE TABLE Events (k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '/nonexistent/events', 'format' = 'json')
"""


@pytest.fixture
def events() -> Table:
    env = TableEnvironment.create(mode="streaming")
    env.execute_sql(EVENTS)
    return env.from_path("Events")


def test_each_group_window_is_its_window_aggregate(events: Table) -> None:
    cases = {
        "TUMBLE(time_col=[ts], size=[10 s])": Tumble.over(lit(10).seconds),
        "HOP(time_col=[ts], size=[10 s], slide=[5 s])": Slide.over(lit(10).seconds).every(
            lit(5).seconds
        ),
        "SESSION(time_col=[ts], gap=[5 s], partition keys=[k])": Session.with_gap(lit(5).seconds),
    }
    for text, window in cases.items():
        t = (
            events.window(window.on(col("ts")).alias("w"))
            .group_by(col("w"), col("k"))
            .select(col("k"), col("w").start, col("w").rowtime.alias("r"), col("v").sum)
        )
        plan = t.explain()
        assert f"WindowAggregate(groupBy=[k], window=[{text}]" in plan, plan
        assert str(t.row_type) == (
            "(k STRING, EXPR$1 TIMESTAMP(3) NOT NULL, r TIMESTAMP(3) *ROWTIME* NOT NULL, "
            "EXPR$3 INT)"
        )


def test_a_processing_time_group_window(events: Table) -> None:
    t = (
        events.window(Tumble.over(lit(1).minutes).on(col("pt")).alias("w"))
        .group_by(col("w"))
        .select(col("w").end.alias("e"), col("w").proctime.alias("p"), col("v").count)
    )
    assert str(t.row_type.field("p").type) == "TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL"
    with pytest.raises(ValidationError, match=r"rowtime\(w\): the window on pt is not a rowtime"):
        events.window(Tumble.over(lit(1).minutes).on(col("pt")).alias("w")).group_by(
            col("w")
        ).select(col("w").rowtime)


def test_group_window_errors_name_the_fix(events: Table) -> None:
    w = Tumble.over(lit(10).seconds).on(col("ts")).alias("w")
    with pytest.raises(ValidationError, match="GroupBy must contain exactly one window alias"):
        events.window(w).group_by(col("k"))
    with pytest.raises(ValidationError, match="Window properties can only be used on windowed"):
        events.select(col("w").start)
    with pytest.raises(ValidationError, match=r"start\(x\) names no window; .* is 'w'"):
        events.window(w).group_by(col("w")).select(col("x").start)
    with pytest.raises(ValidationError, match=r"neither grouped nor aggregated"):
        events.window(w).group_by(col("w")).select(col("v"))
    with pytest.raises(ValidationError, match="interval literal such as lit"):
        Tumble.over(lit(10)).on(col("ts")).alias("w").window()
    with pytest.raises(ValidationError, match="must be positive"):
        events.window(Tumble.over(lit(0).seconds).on(col("ts")).alias("w")).group_by(
            col("w")
        ).select(col("v").sum)
    with pytest.raises(ValidationError, match="names no column; the table has"):
        events.window(Tumble.over(lit(1).seconds).on(col("t")).alias("w")).group_by(
            col("w")
        ).select(col("v").sum)
    session = Session.with_gap(lit(5).seconds).on(col("ts")).alias("w")
    with pytest.raises(ValidationError, match="Session group window with group_by expressions"):
        events.window(session).group_by(col("w"), (col("v") + 1).alias("v1")).select(col("v1"))
    with pytest.raises(ValidationError, match=r"window\(\) takes a group window"):
        events.window("w")  # type: ignore[arg-type]
