"""A Flink-style fluent Table API that compiles to Spark Connect plans.

Example::

    from tableapi import TableEnvironment, col

    env = TableEnvironment.create()
    rates = env.from_elements([(1, "Euro", 114)], ["id", "currency", "rate"])
    rates.where(col("rate") > 100).execute().print()
"""

from tableapi.descriptor import TableDescriptor
from tableapi.environment import TableConfig, TableEnvironment
from tableapi.errors import (
    DatabaseError,
    DataError,
    ServerError,
    TableApiError,
    ValidationError,
)
from tableapi.expressions import (
    Expression,
    and_,
    call,
    coalesce,
    col,
    concat,
    if_then_else,
    lit,
    row,
    udf,
)
from tableapi.result import Row, RowKind, TableResult
from tableapi.schema import Schema
from tableapi.session import CLIENT_VERSION as __version__
from tableapi.table import GroupedTable, Table
from tableapi.types import DataType

__all__ = [
    "DataError",
    "DataType",
    "DatabaseError",
    "Expression",
    "GroupedTable",
    "Row",
    "RowKind",
    "Schema",
    "ServerError",
    "Table",
    "TableApiError",
    "TableConfig",
    "TableDescriptor",
    "TableEnvironment",
    "TableResult",
    "ValidationError",
    "__version__",
    "and_",
    "call",
    "coalesce",
    "col",
    "concat",
    "if_then_else",
    "lit",
    "row",
    "udf",
]
