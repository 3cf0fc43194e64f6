"""The contract of the multi-way join operator (FLIP-516): N inputs on a common key.

A left-deep chain ``((in0 JOIN in1 ON c1) JOIN in2 ON c2) ...`` of INNER and LEFT joins whose
equi keys all reach one common key runs as one operator. The client tags every input row
with its input's index, unions the inputs and runs the JVM ``multi`` operator over::

    union.groupBy(*key_columns) -> OperatorPlugin "multi" -> spec.output_struct_ddl()

Input rows, columns in this order (names as in ``spec.py``, plus one struct per input):

=============  ==========  ==================================================================
``__k0..``     key types   the common key's values (the grouping columns)
``__side``     TINYINT     the input's index, 0 .. N-1
``__kind``     TINYINT     Flink RowKind: 0 = +I, 1 = -U, 2 = +U, 3 = -D
``__seq``      STRING      arrival order in the micro-batch (rows sort by it; ties stay)
``__in0..``    STRUCT      the row, in its input's column (the others null)
=============  ==========  ==================================================================

Output rows: ``__kind`` then the fields of every input in order (null-padded where a LEFT
join found no match). Level ``i`` (joining input ``i``) evaluates ``conditions[i-1]``, a
condition tree of ``spec.py`` where ``"l"`` indexes the joined fields of inputs ``0..i-1``
and ``"r"`` the fields of input ``i``; its equi keys are in the tree too, so a key that
meets a null-padded row does not match.

Like ``spec.py``, this module must not import ``tableapi``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from server_ext.joins.condition import compile_condition
from server_ext.joins.spec import INNER, LEFT_OUTER, output_struct_ddl
from server_ext.jvm.wire import encode_tree

INPUT_PREFIX = "__in"
MULTI_JOIN_KINDS = (INNER, LEFT_OUTER)


@dataclass(frozen=True)
class MultiJoinSpec:
    """Everything the multi-way join operator needs, decided at plan time (an
    ``OperatorSpec`` of ``server_ext.operators``: the ``multi`` operator)."""

    operator: ClassVar[str] = "multi"
    #: The spec JSON's and state format's version (bump it, and the Java registry's, on a change).
    version: ClassVar[int] = 1

    inputs: tuple[tuple[tuple[str, str], ...], ...]  # per input: its (name, Spark DDL) fields
    kinds: tuple[str, ...]  # kinds[i-1] joins input i: "inner" or "left"
    conditions: tuple[tuple, ...]  # conditions[i-1]: the condition tree of level i
    # State retention (table.exec.state.ttl): a stored row expires this long after it was
    # last written, without retracting what it joined (Flink's state TTL); None: never.
    ttl_ms: int | None = None

    def __post_init__(self) -> None:
        if self.ttl_ms is not None and self.ttl_ms <= 0:
            raise ValueError(f"ttl_ms must be positive, got {self.ttl_ms}")
        n = len(self.inputs)
        if n < 2 or len(self.kinds) != n - 1 or len(self.conditions) != n - 1:
            raise ValueError(
                f"{n} inputs need {n - 1} join kinds and conditions, got "
                f"{len(self.kinds)} and {len(self.conditions)}"
            )
        bad = [k for k in self.kinds if k not in MULTI_JOIN_KINDS]
        if bad:
            raise ValueError(f"multi-way join kinds are {MULTI_JOIN_KINDS}, got {bad}")

    def output_fields(self) -> tuple[tuple[str, str], ...]:
        return tuple(f for fields in self.inputs for f in fields)

    def output_struct_ddl(self) -> str:
        return output_struct_ddl(self.output_fields())

    @property
    def time_mode(self) -> str:
        """The operator's time mode: the TTL needs the processing time."""
        return "None" if self.ttl_ms is None else "ProcessingTime"

    def wire_section(self) -> dict[str, Any]:
        """The spec's section of the wire JSON (``server_ext/jvm/wire.py``)."""
        return {
            "inputs": [[list(f) for f in fields] for fields in self.inputs],
            "kinds": list(self.kinds),
            "conditions": [None if c is None else encode_tree(c) for c in self.conditions],
            "ttl_ms": self.ttl_ms,
        }

    def check(self) -> None:
        """Plan-time checks before the spec is sent: every level's condition compiles."""
        for tree in self.conditions:
            compile_condition(tree)


def input_column(index: int) -> str:
    """The struct column that carries input ``index``'s rows."""
    return f"{INPUT_PREFIX}{index}"
