"""The lookup join (Flink's processing-time ``JOIN D FOR SYSTEM_TIME AS OF L.proctime``
against a lookup table): one probe input, the lookup table embedded in the node.

The node splits its condition at construction, by Flink's rules (docs/lookup-joins.md,
section 3), so a bad program fails where it is written:

- lookup keys: ``left_expr = D.col`` (a physical dimension column, or an interoperable CAST
  of one) and constant equalities ``D.col = 'x'``; a second equality on a keyed column is a
  remaining condition; at least one key is needed;
- dimension-only terms filter the fetched rows (``where``; pushed into the SQL);
- probe-only terms: a left join's pre-filter (failing rows are padded without a lookup); an
  inner join's are pushed below the join by the lookup rule;
- the rest is the remaining join condition, per joined row.

Example::

    >>> from tableapi.expressions import col, lit
    >>> from tableapi.plan import ElementsSource, JdbcSource, Scan
    >>> from tableapi.schema import Schema
    >>> from tableapi.types import BIGINT, DataType, RowType, TimeKind
    >>> from server_ext.lookup.spec import CacheSpec, SourceSpec
    >>> proctime = DataType.parse("TIMESTAMP_LTZ(3)").with_time_kind(TimeKind.PROCTIME)
    >>> orders = Scan("Orders", ElementsSource(()),
    ...               RowType.of(("o_id", BIGINT), ("c_id", BIGINT), ("pt", proctime)))
    >>> schema = Schema.new_builder().column("id", "BIGINT").column("age", "INT").build()
    >>> customers = Scan("Customers", JdbcSource(SourceSpec("sqlite", "c", "/d.db"),
    ...                  CacheSpec()), schema)
    >>> join = LookupJoin(orders, customers, JoinKind.LEFT,
    ...                   (col("c_id") == col("id")) & (col("age") > 20), "pt")
    >>> [str(k) for k in join.lookup.keys], str(join.lookup.dim_filter)
    (['id=c_id'], '(age > 20)')
"""

from __future__ import annotations

from typing import Any

import attrs

from tableapi.catalog import qualified
from tableapi.connectors.lookup_hint import LookupHint, parse_lookup_hint
from tableapi.errors import ValidationError
from tableapi.expressions import Call, Cast, Column, Expression, Literal, and_, conjuncts
from tableapi.plan.base import PlanNode, UnaryNode
from tableapi.plan.joins import JoinKind
from tableapi.plan.relational import Hint
from tableapi.plan.sources import JdbcSource, Scan
from tableapi.types import NUMERIC_ORDER, DataType, Field, RowType, TimeKind

#: The hints a lookup join takes: FLIP-204's hash lookup join, and FLIP-234/462's LOOKUP.
LOOKUP_JOIN_HINTS = ("SHUFFLE_HASH", "LOOKUP")


@attrs.frozen
class LookupKeyRef:
    """One lookup key: dimension column ``column`` equals the probe expression ``probe``,
    or the constant ``value`` when ``probe`` is None."""

    column: str
    probe: Expression | None = None
    value: Any = None

    def __str__(self) -> str:
        if self.probe is not None:
            return f"{self.column}={self.probe}"
        return f"{self.column}={Literal(self.value, DataType('NULL'))}"


@attrs.frozen(eq=False)
class LookupCondition:
    """A lookup join's condition, split by where each part runs."""

    keys: tuple[LookupKeyRef, ...]
    dim_filter: Expression | None = None  # dimension columns only: filters fetched rows
    pre_filter: Expression | None = None  # probe columns only: no lookup for failing rows
    residual: Expression | None = None  # the remaining condition, per joined row
    pre_terms: tuple[Expression, ...] = ()  # the pre-filter's terms, as in the condition

    @property
    def probe_keys(self) -> tuple[LookupKeyRef, ...]:
        return tuple(k for k in self.keys if k.probe is not None)


@attrs.frozen(eq=False)
class LookupJoin(UnaryNode):
    """Each probe row (``input``) joins the rows of the lookup table ``table`` (a scan of a
    ``jdbc`` table; not an input: it is looked up, never scanned) whose lookup keys equal
    the row's, at the time the row is processed. INNER or LEFT; 1:N; every output row keeps
    its probe row's kind. ``hints``: SHUFFLE_HASH and LOOKUP hints naming the table."""

    input: PlanNode
    table: Scan
    kind: JoinKind
    condition: Expression
    as_of: str
    hints: tuple[Hint, ...] = ()

    def derive_row_type(self) -> RowType:
        if not isinstance(self.table.source, JdbcSource) or self.table.schema is None:
            raise ValidationError("internal: a LookupJoin looks up a jdbc table")
        if self.kind not in (JoinKind.INNER, JoinKind.LEFT):
            raise ValidationError(
                "Temporal table join currently only support INNER JOIN and LEFT JOIN, but was "
                f"{self.kind.logical_name.upper()} JOIN."
            )
        lrow, drow = self.input.row_type, self.dim_row
        as_of = lrow.field(self.as_of, "the temporal join's as_of")
        if as_of.type.time_kind is TimeKind.ROWTIME:
            raise ValidationError(
                "Event-Time Temporal Table Join requires both primary key and row time "
                f"attribute in versioned table, but no row time attribute can be found. "
                f"{self.table_name} is a lookup table (connector 'jdbc'): it is looked up in "
                f"its database when each row is processed and has no versions, so it can only "
                f"be joined AS OF a processing-time attribute; {self.as_of} is a rowtime. "
                "Declare a .column_by_expression('proctime', 'PROCTIME()') column and join AS "
                "OF it."
            )
        if as_of.type.time_kind is not TimeKind.PROCTIME:
            raise ValidationError(
                "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left "
                f"table's time attribute field; {self.as_of} is a plain {as_of.type}. A lookup "
                "join needs a processing-time attribute: declare "
                ".column_by_expression('proctime', 'PROCTIME()') on the probe table."
            )
        both = [n for n in lrow.names if n in drow]
        if both:
            raise ValidationError(
                f"Column(s) {both} exist on both sides of the lookup join; rename the probe "
                f"side's first with rename_columns(col(...).alias(...)); probe columns: "
                f"[{', '.join(lrow.names)}], {self.table_name} columns: "
                f"[{', '.join(drow.names)}]."
            )
        combined = RowType(lrow.fields + drow.fields)
        for c in self.condition.column_names():
            combined.field(c, "the lookup join condition")
        # Keys first: a key of the wrong type gets Flink's message, not a typing error.
        object.__setattr__(self, "lookup", self._split())
        t = self.check_expr(self.condition, combined, "the lookup join condition")
        if t.name not in ("BOOLEAN", "NULL"):
            raise ValidationError(f"A join condition must be BOOLEAN; {self.condition} is {t}.")
        for h in self.hints:
            if h.name not in LOOKUP_JOIN_HINTS:
                raise ValidationError(f"internal: hint {h.name} on a lookup join")
        object.__setattr__(self, "lookup_hint", self._lookup_hint())
        nullable = self.kind is JoinKind.LEFT
        # The probe's time attributes go on as they are (Flink's, as a temporal join's: a
        # rowtime stays a rowtime, so a window or an interval join can follow).
        return RowType(
            lrow.fields
            + tuple(
                Field(f.name, (f.type.with_nullable(True) if nullable else f.type).plain())
                for f in drow
            )
        )

    lookup: LookupCondition = attrs.field(init=False, default=None)
    lookup_hint: LookupHint | None = attrs.field(init=False, default=None)

    # -- the lookup table ---------------------------------------------------------------------
    @property
    def table_name(self) -> str:
        return self.table.table_name

    @property
    def qualified_name(self) -> str:
        """The table as Flink names it in messages and plans."""
        return str(qualified(self.table_name))

    @property
    def source(self) -> JdbcSource:
        assert isinstance(self.table.source, JdbcSource)
        return self.table.source

    @property
    def dim_row(self) -> RowType:
        """The lookup table's columns as a query sees them (computed columns included)."""
        return self.table.row_type

    @property
    def physical_row(self) -> RowType:
        """The columns stored in the database."""
        assert self.table.schema is not None
        return self.table.schema.physical_row_type

    def scanned_tables(self) -> frozenset[str]:
        return frozenset((self.table_name,))

    # -- hints --------------------------------------------------------------------------------
    def _lookup_hint(self) -> LookupHint | None:
        """The first LOOKUP hint on this table (Flink: later ones take no effect)."""
        for h in self.hints:
            if h.name == "LOOKUP":
                return parse_lookup_hint(dict(h.options))
        return None

    @property
    def shuffle(self) -> bool:
        """Hash the probe input on the lookup keys (SHUFFLE_HASH, or LOOKUP 'shuffle')."""
        hinted = any(h.name == "SHUFFLE_HASH" for h in self.hints)
        return hinted or (self.lookup_hint is not None and self.lookup_hint.shuffle)

    @property
    def unique_keys(self) -> tuple[tuple[str, ...], ...]:
        # 1:1 when the lookup keys cover the table's primary key: the probe's keys stay keys.
        pk = self.table.unique_keys
        keyed = {k.column for k in self.lookup.keys}
        if pk and set(pk[0]) <= keyed:
            return self.input.unique_keys
        return ()

    # -- splitting the condition ----------------------------------------------------------------
    def _split(self) -> LookupCondition:
        lrow, drow, physical = self.input.row_type, self.dim_row, self.physical_row
        dim_names = set(drow.names)
        keys: list[LookupKeyRef] = []
        dim_terms: list[Expression] = []
        pre_terms: list[Expression] = []
        rest: list[Expression] = []
        for term in conjuncts(self.condition):
            _refuse_null_safe(term, dim_names)
            key = self._key_of(term, dim_names, physical, lrow)
            used = term.column_names()
            if key is not None and all(k.column != key.column for k in keys):
                keys.append(key)
            elif used and used <= dim_names:
                dim_terms.append(term)
            elif used and not (used & dim_names):
                pre_terms.append(term)
            elif not (isinstance(term, Literal) and term.value is True):
                rest.append(term)
        if not keys:
            raise ValidationError(
                "Temporal table join requires an equality condition on fields of table "
                f"[{self.qualified_name}]. Add an equality between a probe expression (or a "
                f"constant) and a column of {self.table_name}: e.g. col('<probe column>') == "
                f"col({physical.names[0]!r}). {self.table_name} columns: "
                f"[{', '.join(physical.names)}]."
            )
        return LookupCondition(
            tuple(keys),
            and_(*dim_terms) if dim_terms else None,
            and_(*pre_terms) if pre_terms else None,
            and_(*rest) if rest else None,
            tuple(pre_terms),
        )

    def _key_of(
        self, term: Expression, dim_names: set[str], physical: RowType, lrow: RowType
    ) -> LookupKeyRef | None:
        """``term`` as a lookup key, or None."""
        if not (isinstance(term, Call) and term.name == "equals"):
            return None
        for dim_side, other in (term.args, term.args[::-1]):
            column = _dim_column(dim_side, physical)
            if column is None or other.column_names() & dim_names:
                continue
            target = physical.field(column).type
            if not other.column_names():
                value = _constant(other)
                if value is _NOT_CONSTANT:
                    continue
                if value is not None and not _key_type_ok(other.type_in(lrow), target):
                    continue
                return LookupKeyRef(column, None, value)
            if not _key_type_ok(other.type_in(lrow), target):
                continue
            return LookupKeyRef(column, other)
        return None


_NOT_CONSTANT = object()


def _constant(e: Expression) -> Any:
    """The value of a literal (or a cast literal), else ``_NOT_CONSTANT``."""
    if isinstance(e, Cast):
        e = e.expr
    return e.value if isinstance(e, Literal) else _NOT_CONSTANT


def _dim_column(e: Expression, physical: RowType) -> str | None:
    """A physical dimension column, bare or under an interoperable CAST (Flink keeps those
    as keys: ``CAST(D.name AS STRING)`` with ``name CHAR(10)``)."""
    if isinstance(e, Cast) and isinstance(e.expr, Column) and e.expr.name in physical:
        source = physical.field(e.expr.name).type
        return e.expr.name if _interoperable(source, e.to) else None
    if isinstance(e, Column) and e.name in physical:
        return e.name
    return None


def _interoperable(a: DataType, b: DataType) -> bool:
    """Flink's PlannerTypeUtils.isInteroperable: both character strings, both binary
    strings, or the same type ignoring nullability."""
    if a.name == b.name and a.name in ("STRING", "BYTES"):
        return True
    return a.plain().with_nullable(True) == b.plain().with_nullable(True)


def _key_type_ok(probe: DataType, dim: DataType) -> bool:
    """Whether ``probe = dim_column`` is a lookup key: probe key values are handed to the
    lookup in the dimension column's type, so the probe side must widen to it (the same
    type family, or a narrower number: SQL casts the probe side). A number wider than the
    column makes SQL cast the COLUMN instead (``a_double = CAST(d_int AS DOUBLE)``), which is
    no key: the term stays a remaining condition, as in Flink (verified on Flink 2.3: with
    another key the query runs; alone, "Temporal table join requires an equality
    condition"). Types that do not compare at all are refused with Flink's message."""
    if probe.name == "NULL" or _interoperable(probe, dim):
        return True
    if probe.is_numeric and dim.is_numeric:
        if "DECIMAL" in (probe.name, dim.name):  # widening depends on precision and scale
            return probe.name == "DECIMAL" and dim.name in ("FLOAT", "DOUBLE")
        return NUMERIC_ORDER.index(probe.name) < NUMERIC_ORDER.index(dim.name)
    if probe.is_timestamp and dim.is_timestamp:
        return True
    raise ValidationError(
        f"implicit type conversion between {_flink_type(probe)} and {_flink_type(dim)} is not "
        "supported on join's condition now. Cast the probe side to the dimension column's "
        f"type, e.g. col('<probe column>').cast('{dim.plain().with_nullable(True)}')."
    )


def _flink_type(t: DataType) -> str:
    """A type as Flink's message spells it (``VARCHAR(2147483647)``, ``INTEGER``)."""
    names = {"STRING": "VARCHAR(2147483647)", "INT": "INTEGER", "BYTES": "VARBINARY(2147483647)"}
    return names.get(t.name) or str(t.plain().with_nullable(True))


def _refuse_null_safe(term: Expression, dim_names: set[str]) -> None:
    """Flink: NULL keys never match, so a null-safe equality cannot be a lookup key."""

    def across(a: Expression, b: Expression) -> bool:
        ua, ub = a.column_names(), b.column_names()
        return bool((ua & dim_names) and not (ub & dim_names)) or bool(
            (ub & dim_names) and not (ua & dim_names)
        )

    found = False
    if isinstance(term, Call) and term.name == "is_not_distinct_from":
        found = across(*term.args)
    elif isinstance(term, Call) and term.name == "or":
        eq, nulls = term.args
        if (
            isinstance(eq, Call)
            and eq.name == "equals"
            and isinstance(nulls, Call)
            and nulls.name == "and"
            and all(isinstance(a, Call) and a.name == "is_null" for a in nulls.args)
        ):
            found = across(*eq.args)
    if found:
        raise ValidationError(
            "LookupJoin doesn't support join condition contains 'a IS NOT DISTINCT FROM b' (or "
            "alternative '(a = b) or (a IS NULL AND b IS NULL)'); use an equality: NULL keys "
            "never match in a lookup join."
        )


def lookup_table_misuse(table: str) -> str:
    """The error for a lookup table read as a table."""
    return (
        f"Table {table} is a lookup table (connector 'jdbc'): its rows are looked up by key, "
        "never scanned. Use it as the right side of a lookup join: "
        f"probe.temporal_join(env.from_path({table!r}), col('<probe column>') == "
        "col('<key column>'), as_of=col('<PROCTIME() column>'))."
    )


def lookup_table_scan(node: PlanNode) -> Scan | None:
    """The scan of a ``jdbc`` lookup table ``node`` is, or None."""
    if isinstance(node, Scan) and isinstance(node.source, JdbcSource):
        return node
    return None


__all__ = [
    "LOOKUP_JOIN_HINTS",
    "LookupCondition",
    "LookupJoin",
    "LookupKeyRef",
    "lookup_table_misuse",
    "lookup_table_scan",
]
