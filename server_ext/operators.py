"""One protocol for server_ext's operator specs and the one registry of them: the client's
side of the wire (the JVM's twin is ``OperatorPlugin.OPERATORS``).

An operator's spec is everything it needs, decided at plan time; it names its operator, gives
its output fields and its own section of the wire JSON (``server_ext/jvm/wire.py``), checks
itself before it is sent, and gives its time mode. The operators run on the JVM only (their
Python models, the tests' oracles, are in ``tests/models``). A new operator
(a window, a Top-N, a deduplication) needs one spec class (with its ``operator`` name and
``version``), one line in :data:`SPECS`, and one Java class with its line in
``OperatorPlugin.OPERATORS``.

Example::

    >>> from server_ext.joins.spec import JoinSpec, SideSpec
    >>> spec = JoinSpec("inner", SideSpec((("a", "BIGINT"),)), SideSpec((("b", "BIGINT"),)))
    >>> registered(spec).operator, sorted(SPECS)[-3:]
    ('join', ['window_aggregate', 'window_join', 'window_rank'])
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from server_ext.aggregate_spec import AggregateSpec
from server_ext.joins.interval_spec import IntervalSpec
from server_ext.joins.multi_spec import MultiJoinSpec
from server_ext.joins.spec import JoinSpec
from server_ext.joins.temporal_spec import TemporalSpec
from server_ext.jvm import wire
from server_ext.window_join_spec import WindowJoinSpec
from server_ext.window_rank_spec import WindowRankSpec
from server_ext.window_spec import WindowAggregateSpec


class OperatorSpec(Protocol):
    """What every operator spec gives (the spec classes of :data:`SPECS`)."""

    #: The operator's name on the wire (a key of ``OperatorPlugin.OPERATORS``).
    operator: ClassVar[str]
    #: Its version on the wire (its spec JSON and state format): ``OperatorPlugin.OPERATORS``
    #: has the same; bump both when either changes, and only this operator's changes.
    version: ClassVar[int]

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        """The operator's output fields after ``__kind``: (name, Spark DDL type)."""
        ...

    def wire_section(self) -> dict[str, Any]:
        """The operator's own section of the spec JSON, JSON-ready."""
        ...

    def check(self) -> None:
        """Plan-time checks before the spec is sent (``ValueError`` naming the problem)."""
        ...

    @property
    def time_mode(self) -> str:
        """``"None"``, ``"ProcessingTime"`` (state TTL) or ``"EventTime"`` (watermarks)."""
        ...


#: The operator specs by their wire name.
SPECS: dict[str, type[OperatorSpec]] = {
    cls.operator: cls
    for cls in (
        JoinSpec,
        TemporalSpec,
        IntervalSpec,
        MultiJoinSpec,
        AggregateSpec,
        WindowAggregateSpec,
        WindowJoinSpec,
        WindowRankSpec,
    )
}


def operator_versions() -> dict[str, int]:
    """Every relation's version on the wire by name: the operators' (their spec classes'),
    ``local_aggregate``'s (the aggregate's: its partials are the aggregate's state format),
    ``local_window_aggregate``'s (the window aggregate's, likewise)
    and the other relations' (``wire.RELATION_VERSIONS``); the twin of the plugin's
    ``OperatorPlugin.versions()``.

    >>> operator_versions()["join"], operator_versions()["probe"]
    (1, 1)
    """
    return {
        **{name: cls.version for name, cls in SPECS.items()},
        "local_aggregate": AggregateSpec.version,
        "local_window_aggregate": WindowAggregateSpec.version,
        **wire.RELATION_VERSIONS,
    }


def registered(spec: Any) -> OperatorSpec:
    """``spec``, once it is an instance of the spec class registered under its operator name.

    >>> registered(object())
    Traceback (most recent call last):
    ...
    ValueError: object is not an operator spec of server_ext.operators.SPECS
    """
    name = getattr(spec, "operator", None)
    if not isinstance(name, str) or SPECS.get(name) is not type(spec):
        raise ValueError(
            f"{type(spec).__name__} is not an operator spec of server_ext.operators.SPECS"
        )
    return spec


__all__ = ["SPECS", "OperatorSpec", "operator_versions", "registered"]
