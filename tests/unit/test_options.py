"""Typed options (issue 31, item 5): each option declared once, read by one parse function per
type, by ``TableConfig``, the connectors and the LOOKUP hint alike; docs/options.md is
generated from the declarations and must be current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tableapi import TableEnvironment
from tableapi.config import (
    CHECKPOINT_DIR,
    DEFAULT_PARALLELISM,
    MULTI_JOIN_MAX_TABLES,
    STATE_TTL,
    TABLE_OPTIONS,
    TableConfig,
)
from tableapi.connectors import CONNECTOR_OPTIONS, CONNECTORS
from tableapi.connectors.lookup_hint import OPTIONS as LOOKUP_HINT_OPTIONS
from tableapi.errors import SqlValidationError, ValidationError
from tableapi.options import ConfigOptions, OptionValueError

ROOT = Path(__file__).resolve().parents[2]
GROUPS = [TABLE_OPTIONS, *CONNECTOR_OPTIONS.values(), LOOKUP_HINT_OPTIONS]


def test_the_options_reference_is_generated_from_the_declarations() -> None:
    generated = subprocess.run(
        [sys.executable, "-m", "tableapi.options"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    written = (ROOT / "docs" / "options.md").read_text()
    assert written == generated, (
        "docs/options.md is stale: run `python -m tableapi.options > docs/options.md`"
    )
    for group in GROUPS:  # every option of every scope has its row
        assert f"## {group.title}\n" in generated
        for option in group:
            assert f"| `{option.key}` |" in generated


def test_every_option_is_declared_once_and_described() -> None:
    assert set(CONNECTOR_OPTIONS) == set(CONNECTORS)
    for group in GROUPS:
        keys = [k for option in group for k in option.keys]
        assert len(keys) == len(set(keys)), group.title
        for option in group:
            assert option.description.endswith("."), option.key
            # a default is a value of the option's type: written out, it reads back
            if option.default is not None:
                assert option.parse(option.shown_default()) == option.default, option.key


@pytest.mark.parametrize(
    ("option", "text", "value"),
    [
        (ConfigOptions.key("b").boolean_type().no_default_value(), " False ", False),
        (ConfigOptions.key("i").int_type().no_default_value(), "+42", 42),
        (ConfigOptions.key("d").duration_type().no_default_value(), "2 h", 7_200_000),
        (
            ConfigOptions.key("e").enum_type(("FIXED_DELAY", "FIXED_RATE")).no_default_value(),
            "fixed_rate",
            "FIXED_RATE",
        ),
        (ConfigOptions.key("s").string_type().no_default_value(), " as is ", " as is "),
    ],
)
def test_one_parse_function_per_type(option, text: str, value: object) -> None:
    assert option.read({option.key: text}) == value
    assert option.read({}) is None


@pytest.mark.parametrize(
    ("kind", "text", "allowed"),
    [
        ("boolean_type", "yes", "true or false"),
        ("int_type", "2.5", "a whole number"),
        ("duration_type", "soon", "a number and a unit, e.g. '1 d'"),
    ],
)
def test_a_value_the_type_cannot_read_is_refused_naming_option_value_and_type(
    kind: str, text: str, allowed: str
) -> None:
    option = getattr(ConfigOptions.key("k"), kind)().no_default_value()
    with pytest.raises(OptionValueError) as e:
        option.read({"k": text}, " of table 'T'")
    expected = f"Could not parse value {text!r} for key 'k' of table 'T': it must be {allowed}"
    assert str(e.value).startswith(expected)
    assert (e.value.key, e.value.value) == ("k", text)


def test_fallback_and_deprecated_keys_are_read_in_order() -> None:
    option = (
        ConfigOptions.key("new").int_type().default_value(0)
        .with_fallback_keys("other").with_deprecated_keys("old")
    )  # fmt: skip
    assert option.read({"old": "1"}) == 1
    assert option.read({"old": "1", "other": "2"}) == 2
    assert option.read({"old": "1", "other": "2", "new": "3"}) == 3
    # the message names the key that was set
    with pytest.raises(OptionValueError, match="Could not parse value 'x' for key 'old'"):
        option.read({"old": "x"})


def test_table_config_reads_declared_options_typed_and_refuses_bad_values_where_set() -> None:
    config = TableConfig().set(STATE_TTL, "90 s").set("some.unknown.key", "kept, as in Flink")
    assert config.get(STATE_TTL) == 90_000 and config.get("table.exec.state.ttl") == "90 s"
    assert config.get(DEFAULT_PARALLELISM) == -1 and config.get(CHECKPOINT_DIR) is None
    assert config.get("some.unknown.key") == "kept, as in Flink"
    with pytest.raises(ValidationError, match=r"max-tables must be a whole number of at least 3"):
        config.set(MULTI_JOIN_MAX_TABLES, "2")
    with pytest.raises(ValidationError, match=r"max-tables must be a whole number of at least 3"):
        config.set(MULTI_JOIN_MAX_TABLES, "two")
    assert MULTI_JOIN_MAX_TABLES.key not in config.to_dict()  # a refused value is not kept


def test_sql_set_refuses_a_bad_value_with_the_declared_message() -> None:
    env = TableEnvironment.create()
    message = (
        r"Could not parse value 'heap' for key 'state.backend.type': "
        r"it must be one of \['hashmap', 'rocksdb'\] \(any case\)"
    )
    with pytest.raises(SqlValidationError, match=message):
        env.execute_sql("SET 'state.backend.type' = 'heap'")
    env.execute_sql("SET 'state.backend.type' = 'RocksDB'")
    assert env.config.state_backend().value == "rocksdb"
