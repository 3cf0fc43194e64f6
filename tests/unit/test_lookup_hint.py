"""The LOOKUP hint's options: Flink's names, defaults and error texts (reference 2.1, 4.1)."""

from __future__ import annotations

import pytest

from server_ext.lookup.spec import RetrySpec
from tableapi.connectors.lookup_hint import parse_lookup_hint
from tableapi.errors import ValidationError

RETRY = {"retry-predicate": "lookup_miss", "retry-strategy": "fixed_delay",
         "fixed-delay": "10s", "max-attempts": "3"}  # fmt: skip


def error(options: dict) -> str:
    with pytest.raises(ValidationError) as err:
        parse_lookup_hint(options)
    return str(err.value)


def test_defaults() -> None:
    h = parse_lookup_hint({"table": "D"})
    assert (h.async_lookup, h.output_mode, h.capacity, h.timeout_ms, h.shuffle) == (
        None, "ordered", 100, 180_000, False,
    )  # fmt: skip
    assert h.retry_spec() is None


def test_all_options() -> None:
    h = parse_lookup_hint(
        {"table": "D", "async": "true", "output-mode": "ALLOW_UNORDERED", "capacity": "7",
         "timeout": "300s", "shuffle": "true", **RETRY}
    )  # fmt: skip
    assert (h.async_lookup, h.output_mode, h.capacity, h.timeout_ms, h.shuffle) == (
        True, "allow_unordered", 7, 300_000, True,
    )  # fmt: skip
    assert h.retry_spec() == RetrySpec(10_000, 3)


def test_flinks_error_texts() -> None:
    assert error({"tableName": "D"}).startswith("Invalid LOOKUP hint: unknown option(s)")
    assert error({}) == (
        "Invalid LOOKUP hint: incomplete required option(s): "
        "[Key: 'table' , default: null (fallback keys: [])]"
    )
    cases = {
        "async": "yes",
        "output-mode": "allow-unordered",
        "timeout": "300 si",
        "retry-strategy": "fixed-delay",
        "fixed-delay": "100 nano sec",
        "max-attempts": "100.0",
        "capacity": "ten",
        "shuffle": "1",
    }
    for key, value in cases.items():
        opts = {"table": "D", **(RETRY if key in RETRY else {}), key: value}
        assert f"Invalid LOOKUP hint options: Could not parse value '{value}' for key '{key}'" in (
            error(opts)
        ), key
    assert "Could not parse value '-10s' for key 'fixed-delay'" in error(
        {"table": "D", **RETRY, "fixed-delay": "-10s"}
    )
    assert error({"table": "D", "max-attempts": "3"}) == (
        "Invalid LOOKUP hint: retry options can be both null or all not null"
    )
    assert error({"table": "D", **RETRY, "max-attempts": "-3"}) == (
        "Invalid LOOKUP hint option: max-attempts value should be positive integer but was -3"
    )
    for predicate in ("exception", "lookup-miss"):
        assert error({"table": "D", **RETRY, "retry-predicate": predicate}) == (
            f"Invalid LOOKUP hint option: unsupported retry-predicate '{predicate}', only "
            "'lookup_miss' is supported currently"
        )
