"""Temporal joins: the currency example of Flink's docs, and random inputs against a reference."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tableapi import TableEnvironment, ValidationError, call, col
from tests.integration.changelog_files import ChangelogTable, fresh_root
from tests.reference import as_bag

DAY = dt.datetime(2026, 11, 23)


def at(hh_mm: str) -> dt.datetime:
    h, m = map(int, hh_mm.split(":"))
    return DAY.replace(hour=h, minute=m)


ORDERS = [  # amount, currency, o_rowtime
    (2, "Euro", at("10:15")),
    (1, "US Dollar", at("10:30")),
    (50, "Yen", at("10:32")),
    (3, "Euro", at("10:52")),
    (5, "US Dollar", at("11:04")),
]
RATES = [  # r_currency, rate, r_rowtime
    ("US Dollar", 102, at("09:00")),
    ("Euro", 114, at("09:00")),
    ("Yen", 1, at("09:00")),
    ("Euro", 116, at("10:45")),
    ("Euro", 119, at("11:15")),
    ("Pounds", 108, at("11:49")),
]


def register(
    env: TableEnvironment,
    root: Path,
    orders=ORDERS,
    rates=RATES,
    bounded_orders: bool = False,
    bounded_rates: bool = False,
):
    o = ChangelogTable(
        env,
        root,
        "Orders",
        [("amount", "BIGINT"), ("currency", "STRING"), ("o_rowtime", "TIMESTAMP(3)")],
        op_column=None,
        watermark=("o_rowtime", "o_rowtime - INTERVAL '1' SECOND"),
        computed=[("o_proctime", "PROCTIME()")],
        bounded=bounded_orders,
    )
    r = ChangelogTable(
        env,
        root,
        "RatesHistory",
        [("r_currency", "STRING"), ("rate", "BIGINT"), ("r_rowtime", "TIMESTAMP(3)")],
        primary_key=("r_currency",),
        op_column=None,
        watermark=("r_rowtime", "r_rowtime - INTERVAL '1' SECOND"),
        bounded=bounded_rates,
    )
    o.append([("+I", row) for row in orders])
    r.append([("+I", row) for row in rates])
    return o, r


def converted(env: TableEnvironment, how: str = "inner", as_of: str = "o_rowtime"):
    """Orders joined with the rate of their currency valid at ``as_of``."""
    return env.from_path("Orders").temporal_join(
        env.from_path("RatesHistory"),
        col("currency") == col("r_currency"),
        as_of=col(as_of),
        how=how,
    )


def _without_proctime(row) -> tuple:
    return tuple(v for n, v in row.as_dict().items() if n != "o_proctime")


def reference(orders, rates, how: str = "inner") -> list[tuple]:
    """For each order, the rate of its currency with the latest time <= the order's time."""
    out = []
    for amount, currency, t in orders:
        versions = [v for v in rates if v[0] == currency and v[2] <= t]
        if versions:
            out.append((amount, currency, t, *max(versions, key=lambda v: v[2])))
        elif how == "left":
            out.append((amount, currency, t, None, None, None))
    return out


def test_seed_example_join_lateral_batch(env: TableEnvironment, shared_dir: Path) -> None:
    register(env, shared_dir)
    rates = env.from_path("RatesHistory").create_temporal_table_function(
        col("r_rowtime"), col("r_currency")
    )
    env.create_temporary_function("Rates", rates)
    query = (
        env.from_path("Orders")
        .join_lateral(call("Rates", col("o_rowtime")), col("currency") == col("r_currency"))
        .select(col("amount"), col("currency"), (col("amount") * col("rate")).alias("yen"))
    )
    assert "TemporalJoin(joinType=[InnerJoin]" in query.explain()
    assert "leftTimeAttribute=[o_rowtime], rightTimeAttribute=[r_rowtime]" in query.explain()
    got = as_bag(tuple(r) for r in query.execute().collect())
    assert got[(2, "Euro", 228)] == 1 and got[(3, "Euro", 348)] == 1
    want = as_bag((a, c, a * rate) for a, c, _, _, rate, _ in reference(ORDERS, RATES))
    assert got == want


@pytest.mark.parametrize("how", ["inner", "left"])
def test_temporal_join_batch_matches_reference(
    env: TableEnvironment, shared_dir: Path, how: str
) -> None:
    orders = [*ORDERS, (7, "Pounds", at("11:00")), (9, "Franc", at("12:00"))]
    register(env, shared_dir, orders=orders)
    query = env.from_path("Orders").temporal_join(
        env.from_path("RatesHistory"),
        col("currency") == col("r_currency"),
        as_of=col("o_rowtime"),
        how=how,
    )
    got = as_bag(_without_proctime(r) for r in query.execute().collect())
    assert got == as_bag(reference(orders, RATES, how))


def test_processing_time_temporal_join_batch_takes_the_latest_version(
    env: TableEnvironment, shared_dir: Path
) -> None:
    register(env, shared_dir)
    query = env.from_path("Orders").temporal_join(
        env.from_path("RatesHistory"),
        col("currency") == col("r_currency"),
        as_of=col("o_proctime"),
    )
    assert "temporal=[processing time: latest row]" in query.explain()
    got = as_bag((r.amount, r.currency, r.rate) for r in query.execute().collect())
    latest = {}
    for currency, rate, _ in sorted(RATES, key=lambda v: v[2]):
        latest[currency] = rate
    want = as_bag((a, c, latest[c]) for a, c, _ in ORDERS if c in latest)
    assert got == want and got[(3, "Euro", 119)] == 1


def test_temporal_join_needs_the_primary_key_in_the_condition(
    env: TableEnvironment, shared_dir: Path
) -> None:
    register(env, shared_dir)
    with pytest.raises(ValidationError, match=r"primary key \['r_currency'\] in an equality"):
        env.from_path("Orders").temporal_join(
            env.from_path("RatesHistory"), col("amount") == col("rate"), as_of=col("o_rowtime")
        )


versions = st.lists(
    st.tuples(st.sampled_from(["A", "B"]), st.integers(1, 9), st.integers(0, 20)),
    max_size=8,
    unique_by=lambda v: (v[0], v[2]),
)
probes = st.lists(
    st.tuples(st.integers(1, 3), st.sampled_from(["A", "B", "C"]), st.integers(0, 20)), max_size=8
)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rates=versions, orders=probes, how=st.sampled_from(["inner", "left"]))
def test_random_batch_temporal_joins(env: TableEnvironment, shared_dir: Path, rates, orders, how):
    o_rows, r_rows = register_drawn(env, shared_dir, orders, rates)
    got = as_bag(_without_proctime(r) for r in converted(env, how).execute().collect())
    assert got == as_bag(reference(o_rows, r_rows, how))


def register_drawn(
    env: TableEnvironment, shared_dir: Path, orders, rates, bounded: bool = False
) -> tuple[list[tuple], list[tuple]]:
    """Register drawn ``probes``/``versions`` (times in minutes) as fresh Orders and
    RatesHistory tables; their rows, with times."""
    root = fresh_root(env, shared_dir, "Orders", "RatesHistory")
    minute = lambda m: DAY + dt.timedelta(minutes=m)  # noqa: E731
    o_rows = [(a, c, minute(m)) for a, c, m in orders]
    r_rows = [(c, v, minute(m)) for c, v, m in rates]
    register(env, root, o_rows, r_rows, bounded_orders=bounded, bounded_rates=bounded)
    return o_rows, r_rows


# -- streaming --------------------------------------------------------------------------------
def eventually(result, want_rows: int, timeout_s: float = 60.0) -> list[tuple]:
    """Outputs wait for the watermark, which Spark moves in a follow-up micro-batch."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        result.process_all_available()
        rows = [_without_proctime(r) for r in result.collect()]
        if len(rows) >= want_rows or time.monotonic() > deadline:
            return rows
        time.sleep(0.5)


def test_seed_example_streaming_event_time(senv: TableEnvironment, shared_dir: Path) -> None:
    orders, _ = register(senv, shared_dir, orders=ORDERS[:2], rates=RATES)
    query = senv.from_path("Orders").temporal_join(
        senv.from_path("RatesHistory"),
        col("currency") == col("r_currency"),
        as_of=col("o_rowtime"),
    )
    assert "TemporalJoin(joinType=[InnerJoin]" in query.explain()
    result = query.execute()
    try:
        # Watermark: min over both inputs of (max time - 1 s): 10:29:59 after this batch.
        rows = eventually(result, 1)
        assert rows == reference(ORDERS[:1], RATES)  # 10:30 waits for the watermark
        orders.append([("+I", row) for row in ORDERS[2:]])
        rows = eventually(result, 4)
        assert as_bag(rows) == as_bag(reference(ORDERS[:4], RATES))
        assert (3, "Euro", at("10:52"), "Euro", 116, at("10:45")) in rows  # 3 * 116 = 348
        # A late order (behind the watermark, 11:03:59) and one far ahead: the watermark
        # moves to 11:48:59 (the rates' side is behind now), so 11:04 is emitted, 12:00 waits.
        late, ahead = (7, "Euro", at("10:00")), (1, "Pounds", at("12:00"))
        orders.append([("+I", late), ("+I", ahead)])
        rows = eventually(result, 5)
        assert as_bag(rows) == as_bag(reference(ORDERS, RATES))
        assert result.late_rows() == 1
    finally:
        result.cancel()


def test_processing_time_temporal_join_streaming(senv: TableEnvironment, shared_dir: Path) -> None:
    orders = ChangelogTable(
        senv,
        shared_dir,
        "Orders",
        [("amount", "BIGINT"), ("currency", "STRING")],
        op_column=None,
        computed=[("o_proctime", "PROCTIME()")],
    )
    latest = ChangelogTable(
        senv,
        shared_dir,
        "LatestRates",
        [("r_currency", "STRING"), ("rate", "BIGINT")],
        primary_key=("r_currency",),
    )
    query = senv.from_path("Orders").temporal_join(
        senv.from_path("LatestRates"),
        col("currency") == col("r_currency"),
        as_of=col("o_proctime"),
        how="left",
    )
    result = query.execute()
    try:
        latest.append([("+I", ("Euro", 114)), ("+I", ("Yen", 1))])
        result.process_all_available()
        orders.append([("+I", (2, "Euro")), ("+I", (5, "Dollar"))])
        result.process_all_available()
        latest.append([("-U", ("Euro", 114)), ("+U", ("Euro", 119)), ("-D", ("Yen", 1))])
        result.process_all_available()
        orders.append([("+I", (3, "Euro")), ("+I", (50, "Yen"))])
        result.process_all_available()
        got = as_bag((r.amount, r.currency, r.rate) for r in result.collect())
        # Each order joins the rate that was current when it arrived; earlier rows stay.
        assert got == as_bag(
            [(2, "Euro", 114), (5, "Dollar", None), (3, "Euro", 119), (50, "Yen", None)]
        )
    finally:
        result.cancel()


@st.composite
def streaming_script(draw):
    minute = lambda m: DAY + dt.timedelta(minutes=m)  # noqa: E731
    currency = st.sampled_from(["A", "B", "C"])
    first_rates = draw(
        st.lists(
            st.tuples(currency, st.integers(1, 9), st.integers(0, 30)),
            min_size=1,
            max_size=5,
            unique_by=lambda v: (v[0], v[2]),
        )
    )
    first_orders = draw(
        st.lists(st.tuples(st.integers(1, 3), currency, st.integers(0, 30)), min_size=1, max_size=5)
    )
    # Later versions are newer than everything so far: no probe was emitted before them.
    later_rates = draw(
        st.lists(
            st.tuples(currency, st.integers(1, 9), st.integers(31, 60)),
            max_size=4,
            unique_by=lambda v: (v[0], v[2]),
        )
    )
    later_orders = draw(  # some of these are behind the watermark: late
        st.lists(st.tuples(st.integers(1, 3), currency, st.integers(0, 60)), max_size=5)
    )
    as_rows = lambda rows, f: [f(r) for r in rows]  # noqa: E731
    return (
        as_rows(first_orders, lambda r: (r[0], r[1], minute(r[2]))),
        as_rows(first_rates, lambda r: (r[0], r[1], minute(r[2]))),
        as_rows(later_orders, lambda r: (r[0], r[1], minute(r[2]))),
        as_rows(later_rates, lambda r: (r[0], r[1], minute(r[2]))),
    )


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(script=streaming_script())
def test_random_streaming_event_time_temporal_joins(
    senv: TableEnvironment, shared_dir: Path, script
) -> None:
    first_orders, first_rates, later_orders, later_rates = script
    root = fresh_root(senv, shared_dir, "Orders", "RatesHistory")
    orders, rates = register(senv, root, orders=first_orders, rates=first_rates)
    result = converted(senv, "left").execute()
    try:
        result.process_all_available()
        result.process_all_available()  # the watermark moves in a follow-up batch
        watermark = min(max(o[2] for o in first_orders), max(r[2] for r in first_rates))
        watermark -= dt.timedelta(seconds=1)
        on_time = [o for o in later_orders if o[2] >= watermark]
        late = len(later_orders) - len(on_time)
        orders.append([("+I", o) for o in later_orders])
        rates.append([("+I", r) for r in later_rates])
        result.process_all_available()
        flush = DAY + dt.timedelta(days=1)
        orders.append([("+I", (0, "Z", flush))])
        rates.append([("+I", ("Z", 0, flush))])
        all_rates = first_rates + later_rates
        want = reference(first_orders + on_time, all_rates, "left")
        rows = eventually(result, len(want))
        assert as_bag(rows) == as_bag(want)
        assert result.late_rows() == late
    finally:
        result.cancel()
