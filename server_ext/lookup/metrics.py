"""How the lookup metrics reach the client, in batch and in streaming, over Spark Connect.

The operator ends each output batch with a marker row whose ``__lookup_metrics`` struct
holds that batch's counts (``spec.py``). The client sums the markers with
``DataFrame.observe`` and then drops them::

    from pyspark.sql.connect import functions as F
    from pyspark.sql.connect.observation import Observation

    out = probe.mapInArrow(LookupJoinFunction(spec), spec.output_ddl())
    name = observation_name(spec.table, 0)
    obs = Observation(name)                       # batch; a plain string in streaming
    out = out.observe(obs, *(F.expr(e).alias(a) for a, e in aggregate_exprs()))
    out = out.where(F.col(METRICS).isNull()).drop(METRICS)

- Batch: after the action, ``obs.get`` is a dict of the sums (measured: works over Connect).
- Streaming: each micro-batch's sums are in ``query.recentProgress[i].observedMetrics[name]``
  (over Connect a ``Row(values=[...], schema={...})``); :func:`combine` adds them up.
  ``recentProgress`` keeps the last ``spark.sql.streaming.numRecentProgressUpdates`` (100)
  batches: a long-running query should add them up as they come (a client-side
  ``StreamingQueryListener``'s ``onQueryProgress``).

Counters are per-batch deltas, so sums over tasks and micro-batches are right.
``numCachedRecords`` is sent as the change of each cache's size since that cache last
reported, so the sum over everything reported is the current number of cached keys over all
caches (per worker, per partition). ``latestLoadTime`` is the time of the latest load, picked
with ``max_by(..., latestLoadEnd)``; -1 (Flink's "uninitialized") before any load.

Example::

    >>> combine([{"hitCount": 3, "missCount": 1, "latestLoadTime": 5, "latestLoadEnd": 10},
    ...          {"hitCount": 4, "missCount": 0, "latestLoadTime": None}])["hitCount"]
    7
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from server_ext.lookup.spec import METRIC_FIELDS, METRICS

#: The metrics ``result.lookup_metrics()`` returns per lookup table.
REPORTED = (
    "hitCount",
    "missCount",
    "loadCount",
    "numLoadFailures",
    "latestLoadTime",
    "numCachedRecords",
    "numQueries",
)


def aggregate_exprs() -> list[tuple[str, str]]:
    """``(alias, Spark SQL aggregate)`` for ``DataFrame.observe``.

    Example::

        >>> aggregate_exprs()[0]
        ('hitCount', 'coalesce(sum(__lookup_metrics.hitCount), 0)')
    """
    out = []
    for m in METRIC_FIELDS:
        field = f"{METRICS}.{m}"
        if m == "latestLoadTime":
            out.append((m, f"max_by({field}, {METRICS}.latestLoadEnd)"))
        elif m == "latestLoadEnd":
            out.append((m, f"max({field})"))
        else:
            out.append((m, f"coalesce(sum({field}), 0)"))
    return out


def observation_name(table: str, index: int = 0) -> str:
    """A unique observation name per lookup join of a query (``index`` tells them apart).

    Example::

        >>> observation_name("cat.db.Customers", 1)
        'tableapi_lookup_1_cat_db_Customers'
    """
    return f"tableapi_lookup_{index}_" + re.sub(r"[^A-Za-z0-9_]", "_", table)


def observed_row(row: Any) -> dict[str, Any]:
    """One observed-metrics value as a dict: a Row, or over Connect a
    ``Row(values=[...], schema={...})``, or already a dict.

    Example::

        >>> observed_row({"hitCount": 1})
        {'hitCount': 1}
    """
    if row is None:
        return {}
    if isinstance(row, Mapping):
        return dict(row)
    fields = getattr(row, "__fields__", ())
    if "values" in fields and "schema" in fields:
        names = [f["name"] for f in row["schema"]["fields"]]
        return dict(zip(names, row["values"], strict=True))
    return row.asDict() if hasattr(row, "asDict") else {}


def combine(observed: Iterable[Any]) -> dict[str, int]:
    """The metrics over several observations (micro-batches, or several queries)."""
    totals = dict.fromkeys(REPORTED, 0)
    latest_end, latest = None, -1
    for raw in observed:
        o = observed_row(raw)
        for m in REPORTED:
            if m != "latestLoadTime":
                totals[m] += int(o.get(m) or 0)
        end, t = o.get("latestLoadEnd"), o.get("latestLoadTime")
        if t is not None and (latest_end is None or (end or 0) >= latest_end):
            latest_end, latest = end or 0, int(t)
    totals["latestLoadTime"] = latest
    return totals
