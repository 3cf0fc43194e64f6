"""The contract between the client's compiler and the server's join operators.

The client (``tableapi/compiler``) builds a :class:`JoinSpec`, tags each input row with its
side and row kind, unions the two inputs, groups the union by the join key and hands it to
the JVM ``join`` operator (``server_ext/jvm/wire.py``: the spec travels as JSON)::

    union.groupBy(*key_columns) -> OperatorPlugin "join" -> spec.output_struct_ddl()

This module must not import ``tableapi`` (the server may run without the client package
layers above it).

Input rows (the union of both sides), columns in this order:

=============  ==========  ==================================================================
``__k0..``     key types   the equi-join key values (the grouping columns), one per key
``__side``     TINYINT     0 = left input, 1 = right input
``__kind``     TINYINT     Flink RowKind: 0 = +I, 1 = -U, 2 = +U, 3 = -D
``__seq``      STRING      arrival order in the micro-batch (rows sort by it; ties stay)
``__l``        STRUCT      the left row (null on right rows)
``__r``        STRUCT      the right row (null on left rows)
=============  ==========  ==================================================================

Output rows: ``__kind`` (TINYINT, as above) then the left fields then the right fields
(null-padded on the side without a match); semi and anti joins output the left fields only.

Conditions (residual, non-equi predicates) travel as a small expression tree of tuples:

- ``("col", "l" | "r", index)``: a field of the left or right row
- ``("lit", value)``: a Python constant (None is SQL NULL)
- ``("call", name, *args)``: ``= <> < <= > >= and or not is_null is_not_null
  is_not_distinct_from + - * / mod neg abs upper lower coalesce if``

evaluated with SQL's three-valued logic: a row pair matches only when the tree is True.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from server_ext.joins.condition import check_residual
from server_ext.jvm.wire import encode_tree

# Column names on the wire (one place).
KEY_PREFIX = "__k"
SIDE = "__side"
KIND = "__kind"
SEQ = "__seq"
LEFT_ROW = "__l"
RIGHT_ROW = "__r"

# Flink's RowKind bytes.
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
LEFT, RIGHT = 0, 1


class InputSpec(str, Enum):
    """How one side's rows are kept in state (Flink's JoinInputSideSpec)."""

    JOIN_KEY_CONTAINS_UNIQUE_KEY = "JoinKeyContainsUniqueKey"  # one row per join key
    HAS_UNIQUE_KEY = "HasUniqueKey"  # map unique key -> row
    NO_UNIQUE_KEY = "NoUniqueKey"  # map row -> count


# Join kinds, as the operators name them.
INNER, LEFT_OUTER, RIGHT_OUTER, FULL_OUTER, SEMI, ANTI = (
    "inner",
    "left",
    "right",
    "full",
    "semi",
    "anti",
)
JOIN_KINDS = (INNER, LEFT_OUTER, RIGHT_OUTER, FULL_OUTER, SEMI, ANTI)
REGULAR_KINDS = (INNER, LEFT_OUTER, RIGHT_OUTER, FULL_OUTER)
SEMI_ANTI_KINDS = (SEMI, ANTI)


@dataclass(frozen=True)
class SideSpec:
    """One input: its fields (name, Spark DDL type), state layout and state TTL."""

    fields: tuple[tuple[str, str], ...]
    input_spec: InputSpec = InputSpec.NO_UNIQUE_KEY
    unique_key: tuple[int, ...] = ()  # field indexes; required unless NO_UNIQUE_KEY
    ttl_ms: int | None = None  # state retention; None keeps rows forever

    def __post_init__(self) -> None:
        if self.input_spec is not InputSpec.NO_UNIQUE_KEY and not self.unique_key:
            raise ValueError(f"{self.input_spec.value} needs the unique key's field indexes")
        bad = [i for i in self.unique_key if not 0 <= i < len(self.fields)]
        if bad:
            raise ValueError(f"unique key indexes {bad} out of range for {len(self.fields)} fields")
        if self.ttl_ms is not None and self.ttl_ms <= 0:
            raise ValueError(f"ttl_ms must be positive, got {self.ttl_ms}")

    def wire_json(self) -> dict[str, Any]:
        """The side as the JVM operators read it.

        >>> SideSpec((("a", "BIGINT"),)).wire_json()["input_spec"]
        'NoUniqueKey'
        """
        return {
            "fields": [list(f) for f in self.fields],
            "input_spec": self.input_spec.value,
            "unique_key": list(self.unique_key),
            "ttl_ms": self.ttl_ms,
        }


@dataclass(frozen=True)
class TwoInputSpec:
    """What the operators joining two tagged inputs share (``JoinSpec``, the window join's
    spec): the join kind, each side's fields, null-safe keys, the residual, output names;
    their output schema, wire section and plan-time checks."""

    operator: ClassVar[str]

    kind: str
    left: SideSpec
    right: SideSpec
    # Per equi key: True when nulls are equal (is_not_distinct_from), False when a null key
    # never matches (Flink's filterNulls).
    null_safe: tuple[bool, ...] = ()
    residual: tuple | None = None  # condition tree (see the module docstring), or None
    output_names: tuple[str, ...] = field(default=())  # names of the output fields

    def __post_init__(self) -> None:
        if self.kind not in JOIN_KINDS:
            name = self.operator.replace("_", " ")
            raise ValueError(f"{name} kind must be one of {JOIN_KINDS}, got {self.kind!r}")

    @property
    def projects_right(self) -> bool:
        return self.kind not in SEMI_ANTI_KINDS

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        """The left fields, then the right ones (not for SEMI / ANTI), named by
        ``output_names``.

        >>> JoinSpec("anti", SideSpec((("a", "INT"),)), SideSpec((("b", "INT"),))).output_fields()
        (('a', 'INT'),)
        """
        fields = self.left.fields + (self.right.fields if self.projects_right else ())
        if self.output_names:
            if len(self.output_names) != len(fields):
                raise ValueError("output_names must name every output field")
            fields = tuple((n, t) for n, (_, t) in zip(self.output_names, fields, strict=True))
        return fields

    def output_struct_ddl(self) -> str:
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
        and compiles."""
        check_residual(self.residual, len(self.left.fields), len(self.right.fields))


@dataclass(frozen=True)
class JoinSpec(TwoInputSpec):
    """Everything a join operator needs to know, decided at plan time (an ``OperatorSpec``
    of ``server_ext.operators``: the ``join`` operator)."""

    operator: ClassVar[str] = "join"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    @property
    def left_outer(self) -> bool:
        """The left side emits null-padded rows (left / full outer; semi/anti track matches)."""
        return self.kind in (LEFT_OUTER, FULL_OUTER)

    @property
    def right_outer(self) -> bool:
        return self.kind in (RIGHT_OUTER, FULL_OUTER)

    @property
    def time_mode(self) -> str:
        """The operator's time mode (see :func:`time_mode`)."""
        return time_mode(self)


def output_struct_ddl(fields: tuple[tuple[str, str], ...]) -> str:
    """``__kind TINYINT, a BIGINT, ...``: a join operator's output schema."""
    return ", ".join([f"{KIND} TINYINT"] + [f"`{n}` {t}" for n, t in fields])


def time_mode(spec: JoinSpec) -> str:
    """The operator's time mode: ``"ProcessingTime"`` when a side has a state TTL (rows
    expire by the batch's processing time), else ``"None"``, kept where it can be because
    ProcessingTime queries never finish ``availableNow`` / ``processAllAvailable()`` unless
    ``spark.sql.streaming.noDataMicroBatches.enabled=false``.

    >>> time_mode(JoinSpec("inner", SideSpec((("a", "BIGINT"),), ttl_ms=1000),
    ...                    SideSpec((("b", "BIGINT"),))))
    'ProcessingTime'
    """
    has_ttl = spec.left.ttl_ms is not None or spec.right.ttl_ms is not None
    return "ProcessingTime" if has_ttl else "None"
