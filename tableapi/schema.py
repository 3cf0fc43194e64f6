"""Table schemas: physical and computed columns (FLIP-70), watermarks, primary keys.

Example::

    >>> schema = (Schema.new_builder()
    ...     .column("a", "INT")
    ...     .column_by_expression("b", "a + 1")
    ...     .column_by_expression("pt", "PROCTIME()")
    ...     .build())
    >>> [str(f) for f in schema.row_type]
    ['a INT', 'b INT', 'pt TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL']
"""

from __future__ import annotations

from typing import Any

import attrs

from tableapi.errors import ValidationError
from tableapi.expressions import (
    Column,
    Expression,
    InTable,
    UnresolvedCall,
    contains_aggregate,
)
from tableapi.sql_expressions import parse_expression
from tableapi.types import DataType, Field, RowType, TimeKind


@attrs.frozen
class PhysicalColumn:
    """A column the source stores and a sink writes."""

    name: str
    type: DataType

    def __str__(self) -> str:
        return f"`{self.name}` {self.type}"


@attrs.frozen(eq=False)
class ComputedColumn:
    """``name AS expr``: virtual, computed on read from physical columns, never written."""

    name: str
    expr: Expression
    type: DataType

    def __str__(self) -> str:
        return f"`{self.name}` AS {self.expr}"


@attrs.frozen(eq=False)
class WatermarkSpec:
    """``WATERMARK FOR column AS expr``: the column becomes the rowtime attribute."""

    column: str
    expr: Expression

    def __str__(self) -> str:
        return f"WATERMARK FOR `{self.column}` AS {self.expr}"


@attrs.frozen(eq=False)
class Schema:
    """A table's declared schema. Build it with :meth:`new_builder`.

    >>> print(env.descriptor("Products").table_schema)
    (
      `id` BIGINT,
      `name` STRING,
      `price` DOUBLE,
      CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
    )
    """

    columns: tuple[PhysicalColumn | ComputedColumn, ...]
    watermark: WatermarkSpec | None = None
    primary_key: tuple[str, ...] = ()

    @staticmethod
    def new_builder() -> SchemaBuilder:
        """A builder to add columns, a watermark and a primary key to, then ``build()``.

        >>> Schema.new_builder().column("id", "BIGINT").column("name", "STRING").build().row_type
        RowType(id BIGINT, name STRING)
        """
        return SchemaBuilder()

    @property
    def physical_row_type(self) -> RowType:
        """What the source reads and a sink writes: physical columns only.

        >>> env.descriptor("Orders").table_schema.physical_row_type.names
        ('order_id', 'product_id', 'amount', 'currency', 'o_rowtime')
        """
        return RowType(
            tuple(
                Field(c.name, self._column_type(c))
                for c in self.columns
                if isinstance(c, PhysicalColumn)
            )
        )

    @property
    def row_type(self) -> RowType:
        """All columns as a query sees them, with time attributes marked (and primary key
        columns NOT NULL).

        >>> schema = (Schema.new_builder().column("id", "BIGINT").column("ts", "TIMESTAMP(3)")
        ...     .watermark("ts", "ts - INTERVAL '1' SECOND").primary_key("id").build())
        >>> schema.row_type
        RowType(id BIGINT NOT NULL, ts TIMESTAMP(3) *ROWTIME*)
        """
        return RowType(tuple(Field(c.name, self._column_type(c)) for c in self.columns))

    @property
    def computed_columns(self) -> tuple[ComputedColumn, ...]:
        """The computed (virtual) columns, in declaration order.

        >>> [str(c) for c in env.descriptor("Orders").table_schema.computed_columns]
        ['`o_proctime` AS PROCTIME()']
        """
        return tuple(c for c in self.columns if isinstance(c, ComputedColumn))

    def _column_type(self, c: PhysicalColumn | ComputedColumn) -> DataType:
        t = c.type
        if c.name in self.primary_key:
            t = t.with_nullable(False)
        if self.watermark is not None and c.name == self.watermark.column:
            t = t.with_time_kind(TimeKind.ROWTIME)
        return t

    # -- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form; computed columns and the watermark are kept as SQL text.

        >>> schema = Schema.new_builder().column("a", "INT").column_by_expression("b", "a * 2")
        >>> schema.build().to_dict()["columns"]
        [{'name': 'a', 'type': 'INT'}, {'name': 'b', 'expr': '(a * 2)'}]
        """
        return {
            "columns": [
                {"name": c.name, "type": str(c.type.plain())}
                if isinstance(c, PhysicalColumn)
                else {"name": c.name, "expr": str(c.expr)}
                for c in self.columns
            ],
            "watermark": None
            if self.watermark is None
            else {"column": self.watermark.column, "expr": str(self.watermark.expr)},
            "primary_key": list(self.primary_key),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Schema:
        """The schema :meth:`to_dict` gave (validated again, as ``build()`` does).

        >>> schema = env.descriptor("Orders").table_schema
        >>> Schema.from_dict(schema.to_dict()).row_type == schema.row_type
        True
        """
        builder = cls.new_builder()
        for c in data["columns"]:
            if "expr" in c:
                builder.column_by_expression(c["name"], c["expr"])
            else:
                builder.column(c["name"], c["type"])
        if data.get("watermark"):
            builder.watermark(data["watermark"]["column"], data["watermark"]["expr"])
        if data.get("primary_key"):
            builder.primary_key(*data["primary_key"])
        return builder.build()

    def __str__(self) -> str:
        lines = [str(c) for c in self.columns]
        if self.watermark:
            lines.append(str(self.watermark))
        if self.primary_key:
            keys = ", ".join(f"`{k}`" for k in self.primary_key)
            lines.append(
                f"CONSTRAINT `PK_{'_'.join(self.primary_key)}` PRIMARY KEY ({keys}) NOT ENFORCED"
            )
        return "(\n  " + ",\n  ".join(lines) + "\n)"


class SchemaBuilder:
    """Collects columns in order; :meth:`build` validates everything at once."""

    def __init__(self) -> None:
        self._columns: list[tuple[str, DataType | None, Expression | None]] = []
        self._watermark: tuple[str, Expression] | None = None
        self._primary_key: tuple[str, ...] = ()

    def column(self, name: str, data_type: str | DataType) -> SchemaBuilder:
        """A physical column: ``.column("amount", "INT")``."""
        self._columns.append((name, DataType.parse(data_type), None))
        return self

    def column_by_expression(self, name: str, expr: str | Expression) -> SchemaBuilder:
        """A computed column: ``.column_by_expression("b", "a + 1")`` or ``col("a") + 1``."""
        self._columns.append((name, None, _as_expression(expr, f"computed column {name!r}")))
        return self

    def watermark(self, column_name: str, watermark_expr: str | Expression) -> SchemaBuilder:
        """``.watermark("ts", col("ts") - lit(5).seconds)``; ``ts`` becomes the rowtime."""
        self._watermark = (column_name, _as_expression(watermark_expr, "the watermark"))
        return self

    def primary_key(self, *column_names: str) -> SchemaBuilder:
        if not column_names:
            raise ValidationError("primary_key() needs at least one column name.")
        self._primary_key = tuple(column_names)
        return self

    def from_row_type(self, row: RowType) -> SchemaBuilder:
        for f in row:
            self.column(f.name, f.type.plain())
        return self

    def build(self) -> Schema:
        names = [n for n, _, _ in self._columns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValidationError(f"Schema declares column(s) {dupes} more than once.")
        physical = RowType(tuple(Field(n, t) for n, t, _ in self._columns if t is not None))
        columns: list[PhysicalColumn | ComputedColumn] = []
        for name, data_type, expr in self._columns:
            if expr is None:
                assert isinstance(data_type, DataType)
                columns.append(PhysicalColumn(name, data_type))
                continue
            columns.append(ComputedColumn(name, expr, _computed_type(name, expr, physical, names)))
        schema_row = RowType(tuple(Field(c.name, c.type) for c in columns))
        watermark = None
        if self._watermark is not None:
            watermark = _watermark_spec(*self._watermark, schema_row)
        for key in self._primary_key:
            if key not in names:
                raise ValidationError(
                    f"Primary key column {key!r} is not a column. Columns: [{', '.join(names)}]."
                )
            if key not in physical:
                raise ValidationError(
                    f"Primary key column {key!r} is a computed column; a PRIMARY KEY must be "
                    "declared on physical columns."
                )
        return Schema(tuple(columns), watermark, self._primary_key)


def _as_expression(expr: str | Expression, what: str) -> Expression:
    if isinstance(expr, Expression):
        return expr
    if isinstance(expr, str):
        return parse_expression(expr)
    raise ValidationError(f"{what} needs an expression or SQL text, got {expr!r}.")


def _computed_type(
    name: str, expr: Expression, physical: RowType, all_names: list[str]
) -> DataType:
    where = f"computed column {name!r}"
    for node in expr.walk():
        if isinstance(node, InTable):
            raise ValidationError(f"The {where} may not contain a subquery: {expr}.")
        if isinstance(node, UnresolvedCall):
            raise ValidationError(
                f"The {where} calls unknown function {node.name!r}. Use a built-in function "
                "or pass a registered udf(...) object in the expression."
            )
        if isinstance(node, Column) and node.name not in physical:
            kind = "another computed column" if node.name in all_names else "no column"
            raise ValidationError(
                f"The {where} refers to {node.name!r}, which is {kind}: computed columns may "
                f"use only physical columns of the same table: [{', '.join(physical.names)}]."
            )
    if contains_aggregate(expr):
        raise ValidationError(f"The {where} may not contain an aggregate function: {expr}.")
    return expr.type_in(physical)


def _watermark_spec(column: str, expr: Expression, row: RowType) -> WatermarkSpec:
    field = row.field(column, "the watermark declaration")
    if field.type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ") or field.type.params[0] > 3:
        raise ValidationError(
            f"The rowtime column {column!r} is {field.type}, but a watermark needs a "
            "TIMESTAMP(3) or TIMESTAMP_LTZ(3) column; declare it as TIMESTAMP(3) or add a "
            f"computed column CAST({column} AS TIMESTAMP(3))."
        )
    if not expr.type_in(row).is_timestamp:
        raise ValidationError(
            f"The watermark expression {expr} must give a timestamp, "
            f"e.g. col({column!r}) - lit(5).seconds."
        )
    return WatermarkSpec(column, expr)
