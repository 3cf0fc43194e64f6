"""The LOOKUP hint's options (FLIP-234, FLIP-462): Flink's names, defaults and error texts.

``table.with_hint("LOOKUP", **{"table": "Customers", "retry-predicate": "lookup_miss",
"retry-strategy": "fixed_delay", "fixed-delay": "10 ms", "max-attempts": "3",
"shuffle": "true"})``; see docs/lookup-joins.md 2.1 and 4.1.

Its options are declared in :data:`OPTIONS` (docs/options.md lists them). The four retry
options are all set or none. Unknown option names are refused (Flink ignores them); a value
an option cannot take is refused with Flink's text and what the option takes.

Example::

    >>> h = parse_lookup_hint({"table": "Customers", "retry-predicate": "lookup_miss",
    ...     "retry-strategy": "fixed_delay", "fixed-delay": "10 ms", "max-attempts": "3"})
    >>> h.table, h.fixed_delay_ms, h.max_attempts, h.shuffle, h.retry_spec()
    ('Customers', 10, 3, False, RetrySpec(fixed_delay_ms=10, max_attempts=3))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from server_ext.lookup.spec import RetrySpec
from tableapi.errors import ValidationError
from tableapi.options import ConfigOption, ConfigOptions, OptionGroup, OptionValueError

LOOKUP_MISS = "lookup_miss"
TABLE = (
    ConfigOptions.key("table")
    .string_type()
    .no_default_value()
    .with_description("The lookup table (or its alias); required.")
)
ASYNC = (
    ConfigOptions.key("async")
    .boolean_type()
    .no_default_value()
    .with_description("Concurrent lookups of a batch's key chunks; unset: synchronous lookups.")
)
OUTPUT_MODE = (
    ConfigOptions.key("output-mode")
    .enum_type(("ordered", "allow_unordered"))
    .default_value("ordered")
    .with_description("Async lookups' output order (allow_unordered: the output stays ordered).")
)
CAPACITY = (
    ConfigOptions.key("capacity")
    .int_type()
    .default_value(100)  # table.exec.async-lookup.buffer-capacity
    .with_description("Async: at most this many queries in flight (positive).")
)
TIMEOUT = (
    ConfigOptions.key("timeout")
    .duration_type()
    .default_value(180_000)  # table.exec.async-lookup.timeout
    .with_description("Async: the time the lookups of a batch take at most, retries included.")
)
RETRY_PREDICATE = (
    ConfigOptions.key("retry-predicate")
    .string_type()
    .no_default_value()
    .with_description(f"Only '{LOOKUP_MISS}': retry the keys without rows.")
)
RETRY_STRATEGY = (
    ConfigOptions.key("retry-strategy")
    .enum_type(("fixed_delay",))
    .no_default_value()
    .with_description("How retries are spaced.")
)
FIXED_DELAY = (
    ConfigOptions.key("fixed-delay")
    .duration_type()
    .no_default_value()
    .with_description("The delay before each retry.")
)
MAX_ATTEMPTS = (
    ConfigOptions.key("max-attempts")
    .int_type()
    .no_default_value()
    .with_description("Retries after the first lookup (positive).")
)
SHUFFLE = (
    ConfigOptions.key("shuffle")
    .boolean_type()
    .default_value(False)
    .with_description("Hash-partition the input on the lookup keys.")
)
RETRY_OPTIONS = (RETRY_PREDICATE, RETRY_STRATEGY, FIXED_DELAY, MAX_ATTEMPTS)
#: The hint's options (FLIP-234, FLIP-462).
OPTIONS = OptionGroup(
    "LOOKUP hint",
    '`table.with_hint("LOOKUP", table="Customers", ...)` or SQL\'s '
    "`/*+ LOOKUP('table'='Customers', ...) */`; the four retry options are all set or none.",
    (TABLE, ASYNC, OUTPUT_MODE, CAPACITY, TIMEOUT, *RETRY_OPTIONS, SHUFFLE),
)
DEFAULT_CAPACITY: int = CAPACITY.default
DEFAULT_TIMEOUT_MS: int = TIMEOUT.default


@attrs.frozen
class LookupHint:
    """A parsed LOOKUP hint."""

    table: str
    async_lookup: bool | None = None  # None: not set (this product's default: sync)
    output_mode: str = "ordered"  # ordered | allow_unordered
    capacity: int = DEFAULT_CAPACITY
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    retry_predicate: str | None = None
    retry_strategy: str | None = None
    fixed_delay_ms: int | None = None
    max_attempts: int | None = None
    shuffle: bool = False

    def retry_spec(self) -> RetrySpec | None:
        """The operator's retry settings, or None without retry."""
        if self.max_attempts is None or self.fixed_delay_ms is None:
            return None
        return RetrySpec(self.fixed_delay_ms, self.max_attempts)


def parse_lookup_hint(options: Mapping[str, str]) -> LookupHint:
    """Validate a LOOKUP hint's key-value options; raise Flink's errors.

    Example::

        >>> parse_lookup_hint({"table": "D", "async": "true", "shuffle": "TRUE"}).shuffle
        True
        >>> try:
        ...     parse_lookup_hint({"table": "D", "async": "yes"})
        ... except ValueError as e:
        ...     print(e)
        Invalid LOOKUP hint options: Could not parse value 'yes' for key 'async': it must be \
true or false.
    """
    opts = {str(k): str(v) for k, v in options.items()}
    unknown = sorted(k for k in opts if k not in OPTIONS.keys())
    if unknown:
        raise ValidationError(
            f"Invalid LOOKUP hint: unknown option(s) {unknown}; the LOOKUP hint takes "
            f"{[str(o) for o in OPTIONS]}."
        )
    if not TABLE.read(opts):
        raise ValidationError(
            "Invalid LOOKUP hint: incomplete required option(s): "
            "[Key: 'table' , default: null (fallback keys: [])]"
        )
    given = [o for o in RETRY_OPTIONS if o.is_set(opts)]
    values = {o: _read(o, opts) for o in OPTIONS}
    if given and len(given) != len(RETRY_OPTIONS):
        raise ValidationError("Invalid LOOKUP hint: retry options can be both null or all not null")
    predicate = values[RETRY_PREDICATE]
    if predicate is not None and predicate.lower() != LOOKUP_MISS:
        raise ValidationError(
            f"Invalid LOOKUP hint option: unsupported retry-predicate '{predicate}', only "
            f"'{LOOKUP_MISS}' is supported currently"
        )
    for option in (MAX_ATTEMPTS, CAPACITY):
        if values[option] is not None and values[option] <= 0:
            raise ValidationError(
                f"Invalid LOOKUP hint option: {option} value should be positive integer but "
                f"was {values[option]}"
            )
    return LookupHint(
        table=values[TABLE],
        async_lookup=values[ASYNC],
        output_mode=values[OUTPUT_MODE],
        capacity=values[CAPACITY],
        timeout_ms=values[TIMEOUT],
        retry_predicate=LOOKUP_MISS if predicate is not None else None,
        retry_strategy=values[RETRY_STRATEGY],
        fixed_delay_ms=values[FIXED_DELAY],
        max_attempts=values[MAX_ATTEMPTS],
        shuffle=values[SHUFFLE],
    )


def _read(option: ConfigOption[Any], opts: Mapping[str, str]) -> Any:
    """An option of the hint, a value its type cannot read refused with Flink's hint text."""
    try:
        return option.read(opts)
    except OptionValueError as e:
        raise ValidationError(
            f"Invalid LOOKUP hint options: Could not parse value '{e.value}' for key "
            f"'{e.key}': it must be {e.allowed}."
        ) from None
