"""The contract between the client's compiler and the JVM window join operator
(``WindowJoin.java``, Flink's WindowJoinOperator): the ``window_join`` operator of
``server_ext.operators``.

The client runs it over both inputs tagged as in ``joins/spec.py``::

    union.groupBy(__k0, ...) -> OperatorPlugin "window_join" -> spec.output_struct_ddl()

grouped by the join keys other than the window bounds (none: one constant key), with
``__t`` (BIGINT) = the row's ``window_end`` in epoch ms: both inputs come from the same
window TVF, so a window's end names it. Each window's rows of each side are buffered until
the watermark reaches ``window_end - 1``; then they are joined (the residual must be True;
a NULL key that is not null-safe matches nothing), the pairs emitted ``+I``, the unmatched
rows of an outer side padded with NULLs (SEMI: the left rows with a match; ANTI: those
without), and the window dropped. A row whose window has fired is late and dropped.

Output rows: ``__kind`` (always +I) then the left fields then the right fields (SEMI and
ANTI: the left fields only).

Like ``joins/spec.py``, this module must not import ``tableapi``.

Example::

    >>> from server_ext.joins.spec import SideSpec
    >>> spec = WindowJoinSpec("left", SideSpec((("k", "STRING"),)), SideSpec((("k0", "STRING"),)),
    ...                       null_safe=(False,))
    >>> spec.output_struct_ddl(), spec.time_mode
    ('__kind TINYINT, `k` STRING, `k0` STRING', 'EventTime')
    >>> spec.wire_section()["kind"]
    'left'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from server_ext.joins.spec import TwoInputSpec


@dataclass(frozen=True)
class WindowJoinSpec(TwoInputSpec):
    """Everything the window join operator needs, decided at plan time (an ``OperatorSpec``
    of ``server_ext.operators``: the ``window_join`` operator). Its fields are
    ``TwoInputSpec``'s; ``null_safe`` is per join key, the window bounds not among them.

    >>> from server_ext.joins.spec import SideSpec
    >>> WindowJoinSpec("anti", SideSpec((("a", "INT"),)), SideSpec((("b", "INT"),))
    ...                ).output_fields()
    (('a', 'INT'),)
    >>> bad = ("call", "=", ("col", "l", 0), ("col", "r", 5))
    >>> WindowJoinSpec("inner", SideSpec((("a", "INT"),)), SideSpec((("b", "INT"),)),
    ...                residual=bad).check()
    Traceback (most recent call last):
    ...
    ValueError: ...
    """

    operator: ClassVar[str] = "window_join"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    @property
    def time_mode(self) -> str:
        """``EventTime``: windows are joined as the watermark passes their ends."""
        return "EventTime"


__all__ = ["WindowJoinSpec"]
