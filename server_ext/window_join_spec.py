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

from dataclasses import dataclass, field
from typing import Any, ClassVar

from server_ext.joins.condition import check_residual
from server_ext.joins.spec import JOIN_KINDS, SEMI_ANTI_KINDS, SideSpec, output_struct_ddl
from server_ext.jvm.wire import encode_tree


@dataclass(frozen=True)
class WindowJoinSpec:
    """Everything the window join operator needs, decided at plan time (an ``OperatorSpec``
    of ``server_ext.operators``: the ``window_join`` operator)."""

    operator: ClassVar[str] = "window_join"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    kind: str  # inner | left | right | full | semi | anti
    left: SideSpec
    right: SideSpec
    # Per join key (the window bounds not among them): True when NULLs are equal.
    null_safe: tuple[bool, ...] = ()
    residual: tuple | None = None  # condition tree over (left, right), as in joins/spec.py
    output_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.kind not in JOIN_KINDS:
            raise ValueError(f"window join kind must be one of {JOIN_KINDS}, got {self.kind!r}")

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        """The left fields, then the right ones (not for SEMI / ANTI), named by
        ``output_names``.

        >>> WindowJoinSpec("anti", SideSpec((("a", "INT"),)), SideSpec((("b", "INT"),))
        ...                ).output_fields()
        (('a', 'INT'),)
        """
        fields = self.left.fields
        if self.kind not in SEMI_ANTI_KINDS:
            fields += self.right.fields
        if self.output_names:
            fields = tuple((n, t) for n, (_, t) in zip(self.output_names, fields, strict=True))
        return fields

    def output_struct_ddl(self) -> str:
        """``__kind TINYINT`` and the output fields, as Spark DDL (the module's example)."""
        return output_struct_ddl(self.output_fields())

    def wire_section(self) -> dict[str, Any]:
        """The spec's section of the wire JSON (``server_ext/jvm/wire.py``)."""
        return {
            "kind": self.kind,
            "left": self.left.wire_json(),
            "right": self.right.wire_json(),
            "null_safe": list(self.null_safe),
            "residual": None if self.residual is None else encode_tree(self.residual),
            "output_names": list(self.output_names),
        }

    def check(self) -> None:
        """Plan-time checks before the spec is sent: the residual reads fields that exist
        and compiles.

        >>> bad = ("call", "=", ("col", "l", 0), ("col", "r", 5))
        >>> WindowJoinSpec("inner", SideSpec((("a", "INT"),)), SideSpec((("b", "INT"),)),
        ...                residual=bad).check()
        Traceback (most recent call last):
        ...
        ValueError: ...
        """
        check_residual(self.residual, len(self.left.fields), len(self.right.fields))

    @property
    def time_mode(self) -> str:
        """``EventTime``: windows are joined as the watermark passes their ends."""
        return "EventTime"


__all__ = ["WindowJoinSpec"]
