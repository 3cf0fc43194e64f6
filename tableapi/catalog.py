"""The catalog: tables, views and functions by name, kept as Flink's ``CatalogManager`` and
``FunctionCatalog`` keep them, for the Table API and SQL alike.

One catalog, ``default_catalog``, with one database, ``default_database`` (Flink's
defaults, an in-memory catalog). A name is resolved against the current catalog and
database: ``T`` is ``default_catalog.default_database.T``, ``db.T`` is
``default_catalog.db.T``. A table or view is *permanent* (``CREATE TABLE``,
``create_table``) or *temporary* (``CREATE TEMPORARY TABLE``, ``create_temporary_table``);
a temporary object shadows a permanent one of the same identifier, and each kind is dropped
by its own statement. Functions are *temporary system functions* (a bare name, no catalog:
``create_temporary_system_function``) or *temporary catalog functions* (an identifier in a
database: ``create_temporary_function``); a name finds a system function first. Flink's
permanent catalog functions are Java classes (``CREATE FUNCTION .. AS 'class'``): the
product has none.

The catalog stores objects; it does not plan them (``TableEnvironment.from_path`` does),
so it sits low: the plan layer may name an identifier.

Example::

    >>> catalog = CatalogManager()
    >>> catalog.create("T", CatalogTable(env.descriptor("Orders")), temporary=False)
    >>> catalog.create("T", CatalogTable(env.descriptor("Products")), temporary=True)
    >>> found = catalog.lookup("default_catalog.default_database.T")
    >>> found.temporary, found.identifier.quoted()   # the temporary table shadows
    (True, '`default_catalog`.`default_database`.`T`')
    >>> catalog.drop("T", kind="table", temporary=True)
    True
    >>> catalog.lookup("T").temporary
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

from tableapi.errors import ValidationError

if TYPE_CHECKING:
    from tableapi.descriptor import TableDescriptor
    from tableapi.expressions import UserFunction
    from tableapi.table import Table, TemporalTableFunction

    FunctionDefinition: TypeAlias = UserFunction | TemporalTableFunction

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"

Kind = Literal["table", "view"]


@attrs.frozen
class ObjectIdentifier:
    """A catalog object's full name (Flink's ``ObjectIdentifier``).

    >>> name = ObjectIdentifier.of("Orders")
    >>> str(name), name.quoted(), name.to_list()
    ('default_catalog.default_database.Orders', \
'`default_catalog`.`default_database`.`Orders`', \
'[default_catalog, default_database, Orders]')
    """

    catalog: str
    database: str
    name: str

    @classmethod
    def of(
        cls, name: str, catalog: str = DEFAULT_CATALOG, database: str = DEFAULT_DATABASE
    ) -> ObjectIdentifier:
        """``name`` in ``catalog.database`` (the default one unless given).

        >>> ObjectIdentifier.of("T", database="db")
        ObjectIdentifier(catalog='default_catalog', database='db', name='T')
        """
        return cls(catalog, database, name)

    def __str__(self) -> str:
        """Flink's ``asSummaryString``: ``catalog.database.name``."""
        return f"{self.catalog}.{self.database}.{self.name}"

    def quoted(self) -> str:
        """Flink's ``asSerializableString``: each part in backquotes (as SQL writes it).

        >>> ObjectIdentifier.of("a`b").quoted()
        '`default_catalog`.`default_database`.`a``b`'
        """
        return ".".join("`" + p.replace("`", "``") + "`" for p in self.parts)

    def to_list(self) -> str:
        """The parts as a list, as plans name a table: ``[catalog, database, name]``.

        >>> ObjectIdentifier.of("T").to_list()
        '[default_catalog, default_database, T]'
        """
        return "[" + ", ".join(self.parts) + "]"

    @property
    def parts(self) -> tuple[str, str, str]:
        """``(catalog, database, name)``.

        >>> ObjectIdentifier.of("T").parts
        ('default_catalog', 'default_database', 'T')
        """
        return (self.catalog, self.database, self.name)


def parse_path(path: str) -> tuple[str, ...]:
    """A Table API path's parts: separated by dots, a part in backquotes taken as it is
    (Flink's ``parseIdentifier``).

    >>> parse_path("default_database.Orders"), parse_path("`a.b`.T"), parse_path("`x``y`")
    (('default_database', 'Orders'), ('a.b', 'T'), ('x`y',))
    """
    parts: list[str] = []
    i = 0
    while True:
        if path.startswith("`", i):
            part, i = [], i + 1
            while True:
                end = path.find("`", i)
                if end < 0:
                    raise ValidationError(f"Unclosed backquote in path {path!r}.")
                part.append(path[i:end])
                if path.startswith("``", end):
                    part.append("`")
                    i = end + 2
                    continue
                i = end + 1
                break
            parts.append("".join(part))
        else:
            end = path.find(".", i)
            parts.append(path[i:] if end < 0 else path[i:end])
            i = len(path) if end < 0 else end
        if not parts[-1]:
            raise ValidationError(
                f"Empty name in path {path!r}: write 'name', 'db.name' or 'catalog.db.name'."
            )
        if i >= len(path):
            return tuple(parts)
        if path[i] != ".":
            raise ValidationError(f"Cannot read path {path!r}: a backquoted part ends at a dot.")
        i += 1


def qualified(path: str) -> ObjectIdentifier:
    """``path`` completed with the default catalog and database (the product's only ones,
    so the current ones too): how plans and messages name a table.

    >>> qualified("Orders").to_list(), str(qualified("default_database.Orders"))
    ('[default_catalog, default_database, Orders]', 'default_catalog.default_database.Orders')
    """
    parts = parse_path(path)
    if len(parts) > 3:
        raise ValidationError(
            f"Cannot resolve {path!r}: a name has at most 3 parts, catalog.database.name."
        )
    catalog, database, name = (*(DEFAULT_CATALOG, DEFAULT_DATABASE)[: 3 - len(parts)], *parts)
    return ObjectIdentifier(catalog, database, name)


@attrs.frozen(eq=False)
class CatalogTable:
    """A table backed by a connector (``CREATE TABLE``, ``create_table``).

    >>> CatalogTable(env.descriptor("Orders"), comment="the orders").kind
    'table'
    """

    descriptor: TableDescriptor
    comment: str | None = None

    kind: Kind = attrs.field(init=False, default="table")


@attrs.frozen(eq=False)
class CatalogView:
    """A view: a table program under a name. ``query``: its SQL text when ``CREATE VIEW``
    made it (``SHOW CREATE VIEW`` prints it), None for a Table API view.

    >>> CatalogView(orders.select(col("order_id")), "SELECT order_id FROM Orders").kind
    'view'
    """

    table: Table
    query: str | None = None

    kind: Kind = attrs.field(init=False, default="view")


CatalogBaseTable: TypeAlias = CatalogTable | CatalogView


@attrs.frozen(eq=False)
class ResolvedObject:
    """A table or view found by its identifier, and whether it is temporary (Flink's
    ``ContextResolvedTable``).

    >>> found = env.catalog.lookup("Orders")
    >>> found.kind, found.temporary, str(found.identifier)
    ('table', True, 'default_catalog.default_database.Orders')
    """

    identifier: ObjectIdentifier
    definition: CatalogBaseTable
    temporary: bool

    @property
    def kind(self) -> Kind:
        """``'table'`` or ``'view'`` (see the class's example)."""
        return self.definition.kind


class CatalogManager:
    """Tables, views and functions by identifier; the current catalog and database.

    >>> catalog = CatalogManager()
    >>> catalog.list_catalogs(), catalog.list_databases(), catalog.current_database
    (['default_catalog'], ['default_database'], 'default_database')
    >>> catalog.lookup("Nope") is None
    True
    """

    def __init__(self) -> None:
        self.current_catalog = DEFAULT_CATALOG
        self.current_database = DEFAULT_DATABASE
        self._permanent: dict[ObjectIdentifier, CatalogBaseTable] = {}
        self._temporary: dict[ObjectIdentifier, CatalogBaseTable] = {}
        self._system_functions: dict[str, FunctionDefinition] = {}
        self._temporary_functions: dict[ObjectIdentifier, FunctionDefinition] = {}

    # -- catalogs and databases ----------------------------------------------------------------
    def list_catalogs(self) -> list[str]:
        """The catalogs: the one (see the class's example)."""
        return [DEFAULT_CATALOG]

    def list_databases(self) -> list[str]:
        """The databases of the current catalog: the one (see the class's example)."""
        return [DEFAULT_DATABASE]

    def use_catalog(self, name: str) -> None:
        """Make ``name`` the current catalog (and its default database the current one).

        >>> CatalogManager().use_catalog("hive")
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: A catalog with name [hive] does not exist; catalogs: \
default_catalog.
        """
        self._check_catalog(name)
        self.current_catalog, self.current_database = name, DEFAULT_DATABASE

    def use_database(self, name: str) -> None:
        """Make ``name`` (a database of the current catalog) the current database.

        >>> CatalogManager().use_database("sales")
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: A database with name [sales] does not exist in the \
catalog: [default_catalog]; databases: default_database.
        """
        self._check_database(self.current_catalog, name)
        self.current_database = name

    def _check_catalog(self, name: str) -> None:
        if name not in self.list_catalogs():
            raise ValidationError(
                f"A catalog with name [{name}] does not exist; catalogs: "
                f"{', '.join(self.list_catalogs())}."
            )

    def _check_database(self, catalog: str, name: str) -> None:
        self._check_catalog(catalog)
        if name not in self.list_databases():
            raise ValidationError(
                f"A database with name [{name}] does not exist in the catalog: [{catalog}]; "
                f"databases: {', '.join(self.list_databases())}."
            )

    # -- identifiers -----------------------------------------------------------------------------
    def qualify(self, path: str | Sequence[str]) -> ObjectIdentifier:
        """A path (``"T"``, ``"db.T"``, ``"catalog.db.T"``, or its parts) completed with the
        current catalog and database; the catalog and database must exist.

        >>> str(CatalogManager().qualify("default_database.T"))
        'default_catalog.default_database.T'
        >>> CatalogManager().qualify("a.b.c.d")
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Cannot resolve 'a.b.c.d': a name has at most 3 parts, \
catalog.database.name.
        """
        identifier = self._complete(path)
        self._check_database(identifier.catalog, identifier.database)
        return identifier

    def _complete(self, path: str | Sequence[str]) -> ObjectIdentifier:
        parts = parse_path(path) if isinstance(path, str) else tuple(path)
        if not 1 <= len(parts) <= 3:
            raise ValidationError(
                f"Cannot resolve {'.'.join(parts)!r}: a name has at most 3 parts, "
                "catalog.database.name."
            )
        default = (self.current_catalog, self.current_database)
        catalog, database, name = (*default[: 3 - len(parts)], *parts)
        return ObjectIdentifier(catalog, database, name)

    # -- tables and views ------------------------------------------------------------------------
    def lookup(
        self, path: str | Sequence[str], temporary: bool | None = None
    ) -> ResolvedObject | None:
        """The table or view at ``path``, the temporary one first (or only the temporary or
        only the permanent one); None if there is none.

        >>> env.catalog.lookup("default_database.Orders").temporary
        True
        >>> env.catalog.lookup("Orders", temporary=False) is None
        True
        """
        identifier = self._complete(path)
        if temporary is not False and identifier in self._temporary:
            return ResolvedObject(identifier, self._temporary[identifier], True)
        if temporary is not True and identifier in self._permanent:
            return ResolvedObject(identifier, self._permanent[identifier], False)
        return None

    def get(self, path: str | Sequence[str], kind: Kind | None = None) -> ResolvedObject:
        """The table or view at ``path`` (of ``kind``, if given); an error names what exists.

        >>> CatalogManager().get("Orders")
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Table 'Orders' not found in \
default_catalog.default_database; tables and views: (none). Create it with CREATE TABLE, \
create_table() or create_temporary_table().
        """
        found = self.lookup(path)
        if found is not None and kind in (None, found.kind):
            return found
        shown = path if isinstance(path, str) else ".".join(path)
        if found is not None:
            raise ValidationError(
                f"'{shown}' ({found.identifier}) is a {found.kind}, not a {kind}."
            )
        what = "View" if kind == "view" else "Table"
        existing = self.list_views() if kind == "view" else self.list_tables()
        listed = "views" if kind == "view" else "tables and views"
        raise ValidationError(
            f"{what} '{shown}' not found in {self.current_catalog}.{self.current_database}; "
            f"{listed}: {', '.join(existing) or '(none)'}. Create it with CREATE "
            f"{what.upper()}, create_{what.lower()}() or create_temporary_{what.lower()}()."
        )

    def create(
        self,
        path: str | Sequence[str],
        definition: CatalogBaseTable,
        temporary: bool,
        ignore_if_exists: bool = False,
    ) -> None:
        """Register a table or view. A temporary object may shadow a permanent one of the
        same identifier (not another temporary one); a permanent one may not replace one.

        >>> catalog = CatalogManager()
        >>> catalog.create("T", CatalogTable(env.descriptor("Orders")), temporary=False)
        >>> catalog.create("T", CatalogTable(env.descriptor("Orders")), temporary=False)
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Permanent table `default_catalog`.`default_database`.`T` \
exists already: drop it first with DROP TABLE or drop_table('T').
        """
        identifier = self.qualify(path)
        store = self._temporary if temporary else self._permanent
        if identifier in store:
            if ignore_if_exists:
                return
            kind = store[identifier].kind
            drop = f"drop_temporary_{kind}" if temporary else f"drop_{kind}"
            raise ValidationError(
                f"{'Temporary' if temporary else 'Permanent'} {kind} {identifier.quoted()} "
                f"exists already: drop it first with DROP {'TEMPORARY ' if temporary else ''}"
                f"{kind.upper()} or {drop}({identifier.name!r})."
            )
        store[identifier] = definition

    def drop(
        self,
        path: str | Sequence[str],
        kind: Kind,
        temporary: bool,
        ignore_if_not_exists: bool = False,
    ) -> bool:
        """Drop the temporary or the permanent ``kind`` at ``path`` (Flink's rules and
        messages: a permanent object shadowed by a temporary one cannot be dropped until the
        temporary one is); False when there was none and ``ignore_if_not_exists``.

        >>> catalog = CatalogManager()
        >>> catalog.create("V", CatalogView(orders), temporary=False)
        >>> catalog.drop("V", "table", temporary=False)
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: Table with identifier \
'default_catalog.default_database.V' does not exist. 'V' is a view: use DROP VIEW V. Tables: (none).
        >>> catalog.drop("V", "view", temporary=False)
        True
        """
        identifier = self._complete(path)
        store = self._temporary if temporary else self._permanent
        shadow = self._temporary.get(identifier)
        if not temporary and shadow is not None and shadow.kind == kind:
            raise ValidationError(
                f"Temporary {kind} with identifier '{identifier.quoted()}' exists. Drop it "
                f"first before removing the permanent {kind}: DROP TEMPORARY {kind.upper()} "
                f"{identifier.name}."
            )
        found = store.get(identifier)
        if found is not None and found.kind == kind:
            del store[identifier]
            return True
        if ignore_if_not_exists:
            return False
        what = "Temporary table or view" if temporary else kind.capitalize()
        listed = f"{'Temporary ' if temporary else ''}{kind}s".capitalize()
        existing = ", ".join(self._names(kind, temporary=temporary or None)) or "(none)"
        raise ValidationError(
            f"{what} with identifier '{identifier}' does not exist."
            f"{self._other_kind(identifier, kind, temporary)} {listed}: {existing}."
        )

    def _other_kind(self, identifier: ObjectIdentifier, kind: Kind, temporary: bool) -> str:
        """What else is at ``identifier``, and the statement that drops it ("" if nothing)."""
        for is_temporary, store in ((True, self._temporary), (False, self._permanent)):
            other = store.get(identifier)
            if other is not None and (is_temporary, other.kind) != (temporary, kind):
                word = "TEMPORARY " if is_temporary else ""
                return (
                    f" '{identifier.name}' is a {word.lower()}{other.kind}: use DROP "
                    f"{word}{other.kind.upper()} {identifier.name}."
                )
        return ""

    def _names(self, kind: Kind | None, temporary: bool | None = None) -> list[str]:
        stores = []
        if temporary in (None, True):
            stores.append(self._temporary)
        if temporary in (None, False):
            stores.append(self._permanent)
        here = (self.current_catalog, self.current_database)
        return sorted(
            {
                i.name
                for store in stores
                for i, d in store.items()
                if (i.catalog, i.database) == here and kind in (None, d.kind)
            }
        )

    def list_tables(self) -> list[str]:
        """The tables and views of the current database, temporary or not, sorted (Flink's
        ``listTables``, SQL's SHOW TABLES).

        >>> env.catalog.list_tables()[:2]
        ['Customers', 'Discarded']
        """
        return self._names(None)

    def list_views(self) -> list[str]:
        """The views of the current database, temporary or not, sorted.

        >>> env.catalog.list_views()
        []
        """
        return self._names("view")

    def list_temporary_tables(self) -> list[str]:
        """The temporary tables and views of the current database, sorted.

        >>> env.catalog.list_temporary_tables()[-1]
        'Shipments'
        """
        return self._names(None, temporary=True)

    def list_temporary_views(self) -> list[str]:
        """The temporary views of the current database, sorted.

        >>> env.catalog.list_temporary_views()
        []
        """
        return self._names("view", temporary=True)

    # -- functions -------------------------------------------------------------------------------
    def create_temporary_system_function(self, name: str, function: FunctionDefinition) -> None:
        """Register a temporary system function: a bare name, found before catalog
        functions. A second one of the same name is refused (Flink's message).

        >>> from tableapi import udf
        >>> catalog = CatalogManager()
        >>> catalog.create_temporary_system_function("F", udf(len, result_type="INT"))
        >>> catalog.list_user_defined_functions(), catalog.system_function("f") is not None
        (['f'], True)
        """
        key = name.lower()
        if key in self._system_functions:
            raise ValidationError(
                "Could not register temporary system function. A function named "
                f"'{key}' does already exist: drop_temporary_system_function({name!r}) first."
            )
        self._system_functions[key] = function

    def create_temporary_function(self, path: str, function: FunctionDefinition) -> None:
        """Register a temporary catalog function under ``path`` in a database.

        >>> from tableapi import udf
        >>> catalog = CatalogManager()
        >>> catalog.create_temporary_function("default_database.G", udf(len, result_type="INT"))
        >>> catalog.function("g") is not None, catalog.system_function("g")
        (True, None)
        """
        identifier = self._function_identifier(path)
        self._check_database(identifier.catalog, identifier.database)
        if identifier in self._temporary_functions:
            raise ValidationError(
                "Could not register temporary catalog function. A function "
                f"'{identifier}' does already exist: drop_temporary_function({path!r}) first."
            )
        self._temporary_functions[identifier] = function

    def drop_temporary_system_function(self, name: str) -> bool:
        """Forget a temporary system function; False when there was none.

        >>> CatalogManager().drop_temporary_system_function("nope")
        False
        """
        return self._system_functions.pop(name.lower(), None) is not None

    def drop_temporary_function(self, path: str) -> bool:
        """Forget a temporary catalog function; False when there was none.

        >>> CatalogManager().drop_temporary_function("default_catalog.default_database.nope")
        False
        """
        identifier = self._function_identifier(path)
        return self._temporary_functions.pop(identifier, None) is not None

    def function(self, name: str) -> FunctionDefinition | None:
        """The user function a call of ``name`` means: a temporary system function, else a
        temporary catalog function (``name`` qualified by the current database if bare).

        >>> CatalogManager().function("nope") is None
        True
        """
        if "." not in name and name.lower() in self._system_functions:
            return self._system_functions[name.lower()]
        return self._temporary_functions.get(self._function_identifier(name))

    def system_function(self, name: str) -> FunctionDefinition | None:
        """The temporary system function ``name`` (any case), or None: it comes before a
        built-in function of that name.

        >>> CatalogManager().system_function("upper") is None
        True
        """
        return self._system_functions.get(name.lower())

    def list_user_defined_functions(self) -> list[str]:
        """The user functions callable by a bare name here, lower case, sorted.

        >>> CatalogManager().list_user_defined_functions()
        []
        """
        here = (self.current_catalog, self.current_database)
        local = {i.name for i in self._temporary_functions if (i.catalog, i.database) == here}
        return sorted({*self._system_functions, *local})

    def _function_identifier(self, path: str) -> ObjectIdentifier:
        """Flink keeps function names in lower case."""
        i = self._complete(path)
        return ObjectIdentifier(i.catalog, i.database, i.name.lower())


__all__ = [
    "DEFAULT_CATALOG",
    "DEFAULT_DATABASE",
    "CatalogManager",
    "CatalogTable",
    "CatalogView",
    "Kind",
    "ObjectIdentifier",
    "ResolvedObject",
    "parse_path",
    "qualified",
]
