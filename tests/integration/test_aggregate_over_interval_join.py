"""An aggregation over an interval join (issue 24 found it on a cluster; it fails anywhere):
Spark refused the query ("possible 'correctness' issue due to global watermark": a stateful
operator after a stream-stream join), though the GroupAggregate drops no row behind the
watermark. Flink runs it: the left interval join pads the orders not shipped in time once the
watermark passes them, and the count per outcome retracts as they come.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from tableapi import Schema, TableEnvironment, col, lit
from tests.integration.files import register_json
from tests.integration.test_streaming_aggregates import check_changelog

T0 = dt.datetime(2024, 1, 1, 10, 0, 0)


def _table(senv: TableEnvironment, root: Path, name: str, cols: str, rows: list) -> None:
    builder = Schema.new_builder()
    for part in cols.split(","):
        n, t = part.strip().split(None, 1)
        builder.column(n, t)
    rowtime = cols.split(",")[1].split()[0]
    builder.watermark(rowtime, col(rowtime) - lit(1).seconds)
    register_json(senv, root, name, cols, rows, builder.build())


def test_count_per_outcome_of_a_left_interval_join(
    senv: TableEnvironment, shared_dir: Path
) -> None:
    orders = [(k, T0 + dt.timedelta(seconds=5 * k)) for k in range(1, 7)]
    # Shipped within 10 s: orders 1, 2 and 4; order 3 too late, 5 and 6 never.
    ships = [(1, T0 + dt.timedelta(seconds=7)), (2, T0 + dt.timedelta(seconds=12))]
    ships += [(3, T0 + dt.timedelta(seconds=60)), (4, T0 + dt.timedelta(seconds=29))]
    _table(senv, shared_dir, "O", "order_id BIGINT, o_rt TIMESTAMP(3)", orders)
    _table(senv, shared_dir, "S", "s_order_id BIGINT, s_rt TIMESTAMP(3)", ships)
    shipped = senv.from_path("O").left_outer_join(
        senv.from_path("S"),
        (col("order_id") == col("s_order_id"))
        & col("s_rt").between(col("o_rt"), col("o_rt") + lit(10).seconds),
    )
    per_outcome = shipped.group_by(col("s_order_id").is_null.alias("late")).select(
        col("late"), lit(1).count.alias("n")
    )
    result = per_outcome.execute()
    changes = result.collect()
    assert check_changelog(changes, key_width=1) == Counter({(False, 3): 1, (True, 3): 1})
    assert sorted(map(tuple, result.materialize().itertuples(index=False))) == [
        (False, 3),
        (True, 3),
    ]
