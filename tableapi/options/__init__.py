"""Typed options, each declared once, as Flink's ``ConfigOptions`` are: a key, a type, a
default, a description and the keys it falls back to; read by one parse function per type.

``TableConfig`` (:mod:`tableapi.config`), each connector (:mod:`tableapi.connectors`) and the
LOOKUP hint (:mod:`tableapi.connectors.lookup_hint`) declare their options with this module
and read them with :meth:`ConfigOption.read`; ``python -m tableapi.options > docs/options.md``
writes the options reference from those declarations (one table per :class:`OptionGroup`).

A value its type cannot read is refused naming the option, the value and what the type takes
(:class:`OptionValueError`), or by the option's own requirement
(:meth:`ConfigOption.with_requirement`), which also limits its values.

Example::

    >>> TTL = (ConfigOptions.key("table.exec.state.ttl").duration_type().no_default_value()
    ...        .with_description("How long idle state is kept."))
    >>> TTL.read({"table.exec.state.ttl": "1 h"}), TTL.read({})
    (3600000, None)
    >>> TTL.read({"table.exec.state.ttl": "soon"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tableapi.options.OptionValueError: Could not parse value 'soon' for key \
'table.exec.state.ttl': it must be a number and a unit, e.g. '1 d', ...
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast, overload

import attrs

from tableapi.durations import DURATION_FORMAT, format_duration, read_duration_ms
from tableapi.errors import ValidationError

T = TypeVar("T")
E = TypeVar("E", bound=enum.Enum)


class UnreadableValue(ValueError):
    """A text a type cannot read; its message says what the type takes."""


# -- one parse function per type -------------------------------------------------------------


def parse_boolean(text: str) -> bool:
    """``true`` or ``false``, in any case (Flink's boolean options).

    >>> parse_boolean(" TRUE "), parse_boolean("false")
    (True, False)
    >>> parse_boolean("yes")
    Traceback (most recent call last):
    ...
    tableapi.options.UnreadableValue: true or false
    """
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise UnreadableValue("true or false")
    return lowered == "true"


def parse_int(text: str) -> int:
    """A whole number, with an optional sign (Flink's integer options).

    >>> parse_int(" -3 ")
    -3
    >>> parse_int("2.0")
    Traceback (most recent call last):
    ...
    tableapi.options.UnreadableValue: a whole number
    """
    if not re.fullmatch(r"\s*[+-]?\d+\s*", text):
        raise UnreadableValue("a whole number")
    return int(text)


def parse_duration(text: str) -> int:
    """Milliseconds of a duration: a number and a unit; a bare number is milliseconds.

    >>> parse_duration("3 min"), parse_duration("250")
    (180000, 250)
    """
    ms = read_duration_ms(text)
    if ms is None:
        raise UnreadableValue(DURATION_FORMAT)
    return ms


def parse_enum(text: str, values: Sequence[str]) -> str:
    """One of ``values``, matched in any case (as Flink's enum options), in its declared
    spelling: ``ALLOW_UNORDERED`` reads ``allow_unordered``, ``allow-unordered`` does not.

    >>> parse_enum("two_phase", ("AUTO", "ONE_PHASE", "TWO_PHASE"))
    'TWO_PHASE'
    >>> parse_enum("both", ("AUTO", "ONE_PHASE"))
    Traceback (most recent call last):
    ...
    tableapi.options.UnreadableValue: one of ['AUTO', 'ONE_PHASE'] (any case)
    """
    wanted = text.strip().lower()
    for value in values:
        if value.lower() == wanted:
            return value
    raise UnreadableValue(f"one of {list(values)} (any case)")


def parse_string(text: str) -> str:
    """Any text, as it is.

    >>> parse_string(" a b ")
    ' a b '
    """
    return text


@attrs.frozen
class OptionType(Generic[T]):
    """How an option's text is read (``parse``, raising :class:`UnreadableValue`) and how its
    values are written (``show``, for the reference)."""

    name: str  # as the reference shows it: Boolean, Integer, Duration, Enum, String
    parse: Callable[[str], T]
    show: Callable[[T], str] = str
    values: tuple[str, ...] = ()  # an enum's values


def _show_boolean(value: bool) -> str:
    return str(value).lower()


BOOLEAN: OptionType[bool] = OptionType("Boolean", parse_boolean, _show_boolean)
INTEGER: OptionType[int] = OptionType("Integer", parse_int)
DURATION: OptionType[int] = OptionType("Duration", parse_duration, format_duration)  # in ms
STRING: OptionType[str] = OptionType("String", parse_string)


def enum_of(values: Sequence[str]) -> OptionType[str]:
    """An enum type over plain strings (each read in its declared spelling).

    >>> enum_of(("ordered", "allow_unordered")).parse("ALLOW_UNORDERED")
    'allow_unordered'
    """
    choices = tuple(values)
    return OptionType("Enum", lambda text: parse_enum(text, choices), values=choices)


def enum_class(kind: type[E]) -> OptionType[E]:
    """An enum type over an ``Enum`` class whose members' values are their spellings.

    >>> class Mode(enum.Enum):
    ...     BATCH = "batch"
    >>> enum_class(Mode).parse("BATCH")
    <Mode.BATCH: 'batch'>
    """
    choices = tuple(str(member.value) for member in kind)
    return OptionType(
        "Enum", lambda text: kind(parse_enum(text, choices)), lambda m: str(m.value), choices
    )


# -- declarations ------------------------------------------------------------------------------


class OptionValueError(ValidationError):
    """An option's value that its type cannot read: the option, the value, what it takes
    (a scope may word it its own way, as the LOOKUP hint does with Flink's text)."""

    def __init__(self, key: str, value: str, allowed: str, where: str = "") -> None:
        super().__init__(
            f"Could not parse value {value!r} for key {key!r}{where}: it must be {allowed}."
        )
        self.key, self.value, self.allowed = key, value, allowed


@attrs.frozen
class ConfigOption(Generic[T]):
    """One option: its key, type, default (None: no default), description and the keys read
    when the key is not set (``fallback_keys``, then ``deprecated_keys``, as in Flink).
    ``str(option)`` is its key.

    >>> RETRIES = ConfigOptions.key("lookup.max-retries").int_type().default_value(3)
    >>> RETRIES.read({}), RETRIES.read({"lookup.max-retries": "0"}), str(RETRIES)
    (3, 0, 'lookup.max-retries')
    """

    key: str
    type: OptionType[Any]
    default: T
    description: str = ""
    fallback_keys: tuple[str, ...] = ()
    deprecated_keys: tuple[str, ...] = ()
    # What a value must be, said when one is refused ("a whole number of at least 3"), or a
    # function of the key and the value giving the message; None: the type's own message.
    requirement: str | Callable[[str, str], str] | None = None
    check: Callable[[Any], bool] | None = None  # the values the option takes, of its type

    def __str__(self) -> str:
        return self.key

    def with_description(self, text: str) -> ConfigOption[T]:
        """This option, described (a sentence or two, for the reference).

        >>> ConfigOptions.key("a").int_type().default_value(1).with_description("A.").description
        'A.'
        """
        return attrs.evolve(self, description=text)

    def with_fallback_keys(self, *keys: str) -> ConfigOption[T]:
        """This option, also read from ``keys`` when its own key is not set.

        >>> option = ConfigOptions.key("new").string_type().no_default_value()
        >>> option.with_fallback_keys("old").read({"old": "x"})
        'x'
        """
        return attrs.evolve(self, fallback_keys=keys)

    def with_deprecated_keys(self, *keys: str) -> ConfigOption[T]:
        """This option, also read from ``keys`` (its former names) when its key is not set.

        >>> option = ConfigOptions.key("new").int_type().default_value(0)
        >>> option.with_deprecated_keys("old").keys
        ('new', 'old')
        """
        return attrs.evolve(self, deprecated_keys=keys)

    def with_requirement(
        self,
        requirement: str | Callable[[str, str], str],
        check: Callable[[Any], bool] | None = None,
    ) -> ConfigOption[T]:
        """This option, its values limited to those ``check`` accepts; a value its type cannot
        read or ``check`` refuses is refused with ``requirement``: "<key> must be
        <requirement>, got '<value>'." (a function of the key and the value: its own message).

        >>> SIZE = ConfigOptions.key("size").int_type().no_default_value()
        >>> SIZE.with_requirement("> 0", lambda n: n > 0).read({"size": "0"})
        Traceback (most recent call last):
        ...
        tableapi.errors.ValidationError: size must be > 0, got '0'.
        """
        return attrs.evolve(self, requirement=requirement, check=check)

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key this option is read from, in the order they are looked up."""
        return (self.key, *self.fallback_keys, *self.deprecated_keys)

    def raw(self, options: Mapping[str, str]) -> tuple[str, str] | None:
        """The key set for this option and its text, or None when none of its keys is set.

        >>> ConfigOptions.key("a").int_type().default_value(1).raw({"a": "2"})
        ('a', '2')
        """
        for key in self.keys:
            if key in options:
                return key, options[key]
        return None

    def is_set(self, options: Mapping[str, str]) -> bool:
        """Is one of this option's keys in ``options``?

        >>> ConfigOptions.key("a").int_type().default_value(1).is_set({})
        False
        """
        return self.raw(options) is not None

    def parse(self, text: str, key: str | None = None, where: str = "") -> T:
        """``text`` read as this option's value (set under ``key``, this option's by default;
        ``where`` adds to messages, e.g. " of table 'T'").

        >>> ConfigOptions.key("on").boolean_type().default_value(False).parse("TRUE")
        True
        """
        key = key or self.key
        try:
            value = self.type.parse(str(text))
        except UnreadableValue as e:
            if self.requirement is None:
                raise OptionValueError(key, str(text), str(e), where) from None
            raise self._refused(key, str(text), where) from None
        if self.check is not None and not self.check(value):
            raise self._refused(key, str(text), where)
        return cast(T, value)

    def _refused(self, key: str, text: str, where: str) -> ValidationError:
        if callable(self.requirement):
            return ValidationError(self.requirement(key, text))
        return ValidationError(f"{key}{where} must be {self.requirement}, got {text!r}.")

    def read(self, options: Mapping[str, str], where: str = "") -> T:
        """This option's value in ``options`` (its default when none of its keys is set).

        >>> ON = ConfigOptions.key("on").boolean_type().default_value(False)
        >>> ON.read({}), ON.read({"on": "true"})
        (False, True)
        >>> ON.read({"on": "maybe"}, " of table 'T'")
        Traceback (most recent call last):
        ...
        tableapi.options.OptionValueError: Could not parse value 'maybe' for key 'on' of \
table 'T': it must be true or false.
        """
        found = self.raw(options)
        if found is None:
            return self.default
        return self.parse(found[1], found[0], where)

    def shown_default(self) -> str:
        """The default as an option's text (empty: none), for the reference.

        >>> ConfigOptions.key("t").duration_type().default_value(180_000).shown_default()
        '3 min'
        """
        return "" if self.default is None else self.type.show(self.default)


class TypedBuilder(Generic[T]):
    """``ConfigOptions.key(..).<type>()``: the option's default comes next."""

    def __init__(self, key: str, kind: OptionType[T]) -> None:
        self._key, self._type = key, kind

    def default_value(self, value: T) -> ConfigOption[T]:
        """The option, with ``value`` when it is not set.

        >>> ConfigOptions.key("capacity").int_type().default_value(100).read({})
        100
        """
        return ConfigOption(self._key, self._type, value)

    def no_default_value(self) -> ConfigOption[T | None]:
        """The option, None when it is not set.

        >>> ConfigOptions.key("pipeline.name").string_type().no_default_value().read({}) is None
        True
        """
        return ConfigOption(self._key, self._type, None)


class OptionBuilder:
    """``ConfigOptions.key(..)``: the option's type comes next."""

    def __init__(self, key: str) -> None:
        self._key = key

    def boolean_type(self) -> TypedBuilder[bool]:
        """A boolean (:func:`parse_boolean`).

        >>> ConfigOptions.key("shuffle").boolean_type().default_value(False).parse("True")
        True
        """
        return TypedBuilder(self._key, BOOLEAN)

    def int_type(self) -> TypedBuilder[int]:
        """An integer (:func:`parse_int`).

        >>> ConfigOptions.key("capacity").int_type().default_value(100).parse("7")
        7
        """
        return TypedBuilder(self._key, INTEGER)

    def duration_type(self) -> TypedBuilder[int]:
        """A duration, read in milliseconds (:func:`parse_duration`).

        >>> ConfigOptions.key("timeout").duration_type().default_value(180_000).parse("2 s")
        2000
        """
        return TypedBuilder(self._key, DURATION)

    def string_type(self) -> TypedBuilder[str]:
        """A string, as it is (:func:`parse_string`).

        >>> ConfigOptions.key("table").string_type().no_default_value().parse("Rates")
        'Rates'
        """
        return TypedBuilder(self._key, STRING)

    @overload
    def enum_type(self, values: type[E]) -> TypedBuilder[E]: ...

    @overload
    def enum_type(self, values: tuple[str, ...]) -> TypedBuilder[str]: ...

    def enum_type(self, values: type[E] | tuple[str, ...]) -> TypedBuilder[Any]:
        """An enum (:func:`parse_enum`): the members of an ``Enum`` class, or plain strings.

        >>> ConfigOptions.key("m").enum_type(("NONE", "FULL")).default_value("NONE").parse("full")
        'FULL'
        """
        if isinstance(values, tuple):
            return TypedBuilder(self._key, enum_of(values))
        return TypedBuilder(self._key, enum_class(values))


class ConfigOptions:
    """Flink's builder: ``ConfigOptions.key("k").<type>().default_value(v)`` (or
    ``no_default_value()``), then ``.with_description(..)`` and the fallback keys.

    >>> option = ConfigOptions.key("table.exec.mini-batch.size").int_type().default_value(-1)
    >>> option.type.name, option.default
    ('Integer', -1)
    """

    @staticmethod
    def key(key: str) -> OptionBuilder:
        """Start declaring the option ``key``; its type comes next.

        >>> ConfigOptions.key("shuffle").boolean_type().default_value(False).key
        'shuffle'
        """
        return OptionBuilder(key)


@attrs.frozen
class OptionGroup:
    """The options of one scope (``TableConfig``, a connector, a hint): one table of the
    reference.

    >>> A = ConfigOptions.key("a").int_type().default_value(1).with_deprecated_keys("old-a")
    >>> group = OptionGroup("demo", "A demo.", (A,))
    >>> sorted(group.keys()), group.find("old-a") is A, group.find("b")
    (['a', 'old-a'], True, None)
    """

    title: str
    summary: str  # a sentence above the table: where the options are set
    options: tuple[ConfigOption[Any], ...]

    def __iter__(self) -> Iterator[ConfigOption[Any]]:
        return iter(self.options)

    def keys(self) -> frozenset[str]:
        """Every key of the group's options, their fallback and deprecated keys too."""
        return frozenset(k for option in self.options for k in option.keys)

    def find(self, key: str) -> ConfigOption[Any] | None:
        """The option read from ``key``, or None."""
        return next((o for o in self.options if key in o.keys), None)


__all__ = [
    "BOOLEAN",
    "DURATION",
    "INTEGER",
    "STRING",
    "ConfigOption",
    "ConfigOptions",
    "OptionGroup",
    "OptionType",
    "OptionValueError",
    "UnreadableValue",
    "enum_class",
    "enum_of",
    "parse_boolean",
    "parse_duration",
    "parse_enum",
    "parse_int",
    "parse_string",
]
