"""The ``blackhole`` connector: a sink table that swallows every row, as Flink's does.

``table.execute_insert("Sink")`` into a ``blackhole`` table runs the query and discards its
result: what a benchmark writes to, so that it measures the query and not a sink. Batch jobs
run to their end; streaming queries run as any insert (to the end of bounded inputs, or until
cancelled) and accept every change kind (+I, -U, +U, -D). On the server it is Spark's
``noop`` format. The table cannot be read (``from_path`` refuses it, as Flink does).

Options: none but ``connector`` (and Flink's ``property-version``); any other is refused.

Example::

    >>> validate_blackhole_options({})
    BlackholeOptions()
    >>> validate_blackhole_options({"path": "/tmp/out"}, "Sink")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.errors.ValidationError: Unsupported options found for 'blackhole' of table 'Sink'...
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from tableapi.connectors.common import CONNECTOR, PROPERTY_VERSION, check_supported_options
from tableapi.options import OptionGroup

#: The connector's options (it has nothing to configure).
OPTIONS = OptionGroup(
    "Connector 'blackhole'",
    "A sink that discards every row (Spark's noop format).",
    (CONNECTOR, PROPERTY_VERSION),
)


@attrs.frozen
class BlackholeOptions:
    """A validated ``blackhole`` table (it has nothing to configure)."""


def validate_blackhole_options(options: Mapping[str, str], table: str = "") -> BlackholeOptions:
    """Check a ``blackhole`` table's options: an unknown one is refused with the list of
    those the connector has.

    >>> validate_blackhole_options({"connector": "blackhole", "property-version": "1"})
    BlackholeOptions()
    """
    check_supported_options("blackhole", options, OPTIONS.keys(), table)
    return BlackholeOptions()


__all__ = ["OPTIONS", "BlackholeOptions", "validate_blackhole_options"]
