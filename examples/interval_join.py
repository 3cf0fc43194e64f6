"""Interval (time-windowed) join: Orders x Shipments, from Flink's "Joins in Continuous
Queries":

    SELECT * FROM Orders o, Shipments s
    WHERE o.id = s.orderId
      AND o.ordertime BETWEEN s.shiptime - INTERVAL '4' HOUR AND s.shiptime

written the way PyFlink's Table API writes it. In batch mode this is a plain join whose
condition carries the time bound: Spark hashes on the order id and checks the bound on
each match.

Run it with ``python examples/interval_join.py`` (starts an embedded Spark Connect server) or
``python examples/interval_join.py sc://host:port``.
"""

from __future__ import annotations

import datetime as dt
import sys

from tableapi import TableEnvironment, col, lit


def at(hh_mm: str) -> dt.datetime:
    """A time on 2024-01-01: at("10:30")."""
    return dt.datetime.fromisoformat(f"2024-01-01 {hh_mm}")


ORDERS = [  # order_id, amount, o_rowtime
    (1, 30, at("10:00")),
    (2, 12, at("10:30")),
    (3, 25, at("11:00")),
    (4, 7, at("12:00")),
]
SHIPMENTS = [  # s_order_id, carrier, s_rowtime
    (1, "DHL", at("11:00")),  # 1 h after the order: joined
    (2, "UPS", at("15:00")),  # 4 h 30 after the order: too late, not joined
    (3, "DHL", at("15:00")),  # exactly 4 h after: joined (BETWEEN includes its bounds)
    (4, "UPS", at("11:30")),  # before the order was placed: not joined
]


def main(env: TableEnvironment | None = None) -> None:
    own_env = env is None
    env = env or TableEnvironment.create()

    # Quick in-memory tables; the DDL string fixes the column types.
    orders = env.from_elements(ORDERS, "order_id BIGINT, amount INT, o_rowtime TIMESTAMP(3)")
    shipments = env.from_elements(
        SHIPMENTS, "s_order_id BIGINT, carrier STRING, s_rowtime TIMESTAMP(3)"
    )

    # Orders shipped within 4 hours: the join key and the time bound both go in where().
    shipped_in_time = (
        orders.join(shipments)
        .where(
            (col("order_id") == col("s_order_id"))
            & col("o_rowtime").between(col("s_rowtime") - lit(4).hours, col("s_rowtime"))
        )
        .select(col("order_id"), col("amount"), col("o_rowtime"), col("carrier"), col("s_rowtime"))
        .order_by(col("order_id"))
    )

    print("-- Orders shipped within 4 hours (expect orders 1 and 3)")
    shipped_in_time.execute().print()

    # The optimizer folds where() into the join: order_id = s_order_id becomes the equi key,
    # the time bound the non-equi condition Spark checks on each key match.
    print(shipped_in_time.explain(physical=True).rstrip())

    if own_env:
        env.close()


if __name__ == "__main__":  # an optional sc://host:port: else an embedded server
    main(TableEnvironment.create(remote=sys.argv[1]) if len(sys.argv) > 1 else None)
