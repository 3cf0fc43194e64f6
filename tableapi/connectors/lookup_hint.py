"""The LOOKUP hint's options (FLIP-234, FLIP-462): Flink's names, defaults and error texts.

``table.with_hint("LOOKUP", **{"table": "Customers", "retry-predicate": "lookup_miss",
"retry-strategy": "fixed_delay", "fixed-delay": "10 ms", "max-attempts": "3",
"shuffle": "true"})``; see docs/lookup-joins.md 2.1 and 4.1.

=================  ========  ========  =================================================
option             type      default   meaning
=================  ========  ========  =================================================
table              string    required  the lookup table (or its alias)
async              boolean   (none)    concurrent lookups of a batch's key chunks
output-mode        enum      ordered   ordered | allow_unordered (output stays ordered)
capacity           integer   100       at most this many queries in flight (async)
timeout            duration  3 min     the async lookups of a batch, retries included
retry-predicate    string    (none)    only 'lookup_miss': retry keys without rows
retry-strategy     enum      (none)    only 'fixed_delay'
fixed-delay        duration  (none)    the delay before each retry
max-attempts       integer   (none)    retries after the first lookup (positive)
shuffle            boolean   false     hash-partition the input on the lookup keys
=================  ========  ========  =================================================

The four retry options are all set or none. Unknown option names are refused (Flink
ignores them).

Example::

    >>> h = parse_lookup_hint({"table": "Customers", "retry-predicate": "lookup_miss",
    ...     "retry-strategy": "fixed_delay", "fixed-delay": "10 ms", "max-attempts": "3"})
    >>> h.table, h.fixed_delay_ms, h.max_attempts, h.shuffle, h.retry_spec()
    ('Customers', 10, 3, False, RetrySpec(fixed_delay_ms=10, max_attempts=3))
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from server_ext.lookup.spec import RetrySpec
from tableapi.durations import parse_duration_ms
from tableapi.errors import ValidationError

TABLE = "table"
ASYNC = "async"
OUTPUT_MODE = "output-mode"
CAPACITY = "capacity"
TIMEOUT = "timeout"
RETRY_PREDICATE = "retry-predicate"
RETRY_STRATEGY = "retry-strategy"
FIXED_DELAY = "fixed-delay"
MAX_ATTEMPTS = "max-attempts"
SHUFFLE = "shuffle"
OPTIONS = (
    TABLE,
    ASYNC,
    OUTPUT_MODE,
    CAPACITY,
    TIMEOUT,
    RETRY_PREDICATE,
    RETRY_STRATEGY,
    FIXED_DELAY,
    MAX_ATTEMPTS,
    SHUFFLE,
)
RETRY_OPTIONS = (RETRY_PREDICATE, RETRY_STRATEGY, FIXED_DELAY, MAX_ATTEMPTS)
LOOKUP_MISS = "lookup_miss"
DEFAULT_CAPACITY = 100  # table.exec.async-lookup.buffer-capacity
DEFAULT_TIMEOUT_MS = 180_000  # table.exec.async-lookup.timeout


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
        Invalid LOOKUP hint options: Could not parse value 'yes' for key 'async'.
    """
    opts = {str(k): str(v) for k, v in options.items()}
    unknown = sorted(k for k in opts if k not in OPTIONS)
    if unknown:
        raise ValidationError(
            f"Invalid LOOKUP hint: unknown option(s) {unknown}; the LOOKUP hint takes "
            f"{list(OPTIONS)}."
        )
    if not opts.get(TABLE):
        raise ValidationError(
            "Invalid LOOKUP hint: incomplete required option(s): "
            "[Key: 'table' , default: null (fallback keys: [])]"
        )
    async_lookup = _bool(opts, ASYNC)
    output_mode = _enum(opts, OUTPUT_MODE, ("ordered", "allow_unordered")) or "ordered"
    capacity = _int(opts, CAPACITY)
    timeout_ms = _duration(opts, TIMEOUT)
    predicate = opts.get(RETRY_PREDICATE)
    strategy = _enum(opts, RETRY_STRATEGY, ("fixed_delay",))
    fixed_delay_ms = _duration(opts, FIXED_DELAY)
    max_attempts = _int(opts, MAX_ATTEMPTS)
    shuffle = _bool(opts, SHUFFLE)
    given = [k for k in RETRY_OPTIONS if k in opts]
    if given and len(given) != len(RETRY_OPTIONS):
        raise ValidationError("Invalid LOOKUP hint: retry options can be both null or all not null")
    if predicate is not None and predicate.lower() != LOOKUP_MISS:
        raise ValidationError(
            f"Invalid LOOKUP hint option: unsupported retry-predicate '{predicate}', only "
            f"'{LOOKUP_MISS}' is supported currently"
        )
    if max_attempts is not None and max_attempts <= 0:
        raise ValidationError(
            "Invalid LOOKUP hint option: max-attempts value should be positive integer but "
            f"was {max_attempts}"
        )
    if capacity is not None and capacity <= 0:
        raise ValidationError(
            f"Invalid LOOKUP hint option: capacity value should be positive integer but was "
            f"{capacity}"
        )
    return LookupHint(
        table=opts[TABLE],
        async_lookup=async_lookup,
        output_mode=output_mode,
        capacity=DEFAULT_CAPACITY if capacity is None else capacity,
        timeout_ms=DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms,
        retry_predicate=LOOKUP_MISS if predicate is not None else None,
        retry_strategy=strategy,
        fixed_delay_ms=fixed_delay_ms,
        max_attempts=max_attempts,
        shuffle=bool(shuffle),
    )


def _could_not_parse(key: str, value: str) -> ValidationError:
    return ValidationError(
        f"Invalid LOOKUP hint options: Could not parse value '{value}' for key '{key}'."
    )


def _bool(opts: Mapping[str, str], key: str) -> bool | None:
    if key not in opts:
        return None
    value = opts[key].strip().lower()
    if value not in ("true", "false"):
        raise _could_not_parse(key, opts[key])
    return value == "true"


def _int(opts: Mapping[str, str], key: str) -> int | None:
    if key not in opts:
        return None
    if not re.fullmatch(r"\s*[+-]?\d+\s*", opts[key]):
        raise _could_not_parse(key, opts[key])
    return int(opts[key])


def _duration(opts: Mapping[str, str], key: str) -> int | None:
    if key not in opts:
        return None
    try:
        return parse_duration_ms(opts[key], key)
    except ValidationError:
        raise _could_not_parse(key, opts[key]) from None


def _enum(opts: Mapping[str, str], key: str, values: tuple[str, ...]) -> str | None:
    """Flink's enum options: matched case-insensitively (``ALLOW_UNORDERED`` works,
    ``allow-unordered`` does not)."""
    if key not in opts:
        return None
    value = opts[key].strip().lower()
    if value not in values:
        raise _could_not_parse(key, opts[key])
    return value
