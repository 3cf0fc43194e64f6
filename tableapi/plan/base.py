"""The base of logical plan nodes, and of the nodes with one input.

A node is immutable: it derives its row type (and validates) when it is built, so a bad
program fails where it is written. Rules rebuild nodes with ``with_inputs``/``attrs.evolve``.

Example::

    >>> from tableapi.plan import ElementsSource, Filter, Scan
    >>> from tableapi.types import INT, STRING, RowType
    >>> from tableapi.expressions import col
    >>> scan = Scan("T", ElementsSource(((1, "a"),)), RowType.of(("id", INT), ("s", STRING)))
    >>> Filter(scan, col("id") > 0).row_type.names
    ('id', 's')
    >>> sorted(Filter(scan, col("id") > 0).table_names())
    ['T']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import Expression, InTable
from tableapi.types import DataType, RowType


class PlanNode:
    """Base of plan nodes. Subclasses derive ``row_type`` in :meth:`derive_row_type`, which
    runs (and validates) when the node is built."""

    row_type: RowType

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "row_type", self.derive_row_type())

    def derive_row_type(self) -> RowType:
        raise NotImplementedError

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return ()

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return self

    def walk(self) -> Iterator[PlanNode]:
        yield self
        for i in self.inputs:
            yield from i.walk()

    def transform_up(self, fn: Callable[[PlanNode], PlanNode | None]) -> PlanNode:
        """Rebuild bottom-up; ``fn(node)`` returns a replacement or None to keep the node."""
        inputs = tuple(i.transform_up(fn) for i in self.inputs)
        node = (
            self
            if all(a is b for a, b in zip(inputs, self.inputs, strict=True))
            else self.with_inputs(inputs)
        )
        replaced = fn(node)
        return node if replaced is None else replaced

    def scanned_tables(self) -> frozenset[str]:
        """The catalog tables this node itself reads (scans override it)."""
        return frozenset()

    def table_names(self) -> set[str]:
        """The catalog tables this subtree reads."""
        return {t for n in self.walk() for t in n.scanned_tables()}

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        """Column sets that are unique in this node's output (Flink's upsert keys)."""
        return ()

    def check_expr(
        self, e: Expression, row: RowType, where: str, in_table_ok: bool = False
    ) -> DataType:
        """Type an expression against ``row``, naming ``where`` in errors."""
        if not in_table_ok and any(isinstance(x, InTable) for x in e.walk()):
            raise ValidationError(
                f"IN with a table is supported only in where() (a semi join); {where} has "
                f"{e}. Filter with where(col(...).in_(table)), or use semi_join()/anti_join()."
            )
        for c in e.column_names():
            if c not in row:
                row.field(c, where)
        return e.type_in(row)


@attrs.frozen(eq=False)
class UnaryNode(PlanNode):
    """A node with one input: by default it keeps the input's columns and unique keys."""

    input: PlanNode

    def derive_row_type(self) -> RowType:
        return self.input.row_type

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return attrs.evolve(self, input=inputs[0])

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        return self.input.unique_keys


class BinaryNode(PlanNode):
    """A node with a left and a right input (attrs subclasses declare both fields)."""

    left: PlanNode
    right: PlanNode

    @property
    def inputs(self) -> tuple[PlanNode, ...]:
        return (self.left, self.right)

    def with_inputs(self, inputs: tuple[PlanNode, ...]) -> PlanNode:
        return attrs.evolve(self, left=inputs[0], right=inputs[1])  # type: ignore[misc]
