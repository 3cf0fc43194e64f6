"""The client half of the JVM operator wire contract (server_ext/jvm/wire.py), without a
server: the payload, the spec JSON, literal encoding, the extension relation and the plan-time
checks of jvm_join. Wire.java reads the same bytes in the tier-agreement and integration
tests."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from pyspark.sql.connect import proto

from server_ext.joins.spec import InputSpec, JoinSpec, SideSpec
from server_ext.jvm import wire
from tableapi.compiler.jvm_operators import _JvmOperator


def test_payload_round_trips_and_is_protobuf() -> None:
    child = proto.Relation()
    child.range.end = 10
    data = wire.encode_payload("join", child.SerializeToString(), '{"keys": []}', JoinSpec.version)
    fields = wire.decode_payload(data)
    assert fields[1] == wire.WIRE_VERSION
    assert fields[2] == b"join"
    assert proto.Relation.FromString(fields[3]).range.end == 10
    assert json.loads(fields[4]) == {"keys": []}
    assert fields[5] == JoinSpec.version
    # A probe has no input and no spec.
    assert set(wire.decode_payload(wire.encode_payload("probe"))) == {1, 2, 5}
    with pytest.raises(ValueError, match="relation 'nope' needs its version"):
        wire.encode_payload("nope")


def test_long_fields_use_multi_byte_lengths() -> None:
    spec = "x" * 100_000
    assert wire.decode_payload(wire.encode_payload("join", b"", spec, 1))[4] == spec.encode()


def test_literals_are_tagged_by_type() -> None:
    enc = wire.encode_literal
    assert [enc(v) for v in (None, True, 3, 2.5, "s")] == [None, True, 3, 2.5, "s"]
    assert enc(float("nan")) == {"float": "nan"} and enc(float("-inf")) == {"float": "-inf"}
    assert enc(Decimal("1.50")) == {"decimal": "1.50"}
    assert enc(dt.date(1970, 1, 11)) == {"date": 10}
    assert enc(dt.datetime(1970, 1, 1, 0, 0, 1, 5)) == {"timestamp": 1_000_005}
    utc_plus_1 = dt.timezone(dt.timedelta(hours=1))
    assert enc(dt.datetime(1970, 1, 1, 1, tzinfo=utc_plus_1)) == {"timestamp": 0}
    assert enc(dt.timedelta(hours=-1)) == {"interval": -3_600_000_000}
    assert enc(b"\x01\xff") == {"binary": "01ff"}
    with pytest.raises(ValueError, match="BIGINT range"):
        enc(2**63)
    with pytest.raises(ValueError, match="cannot take the literal"):
        enc(object())


def test_spec_json_carries_the_join_spec() -> None:
    spec = JoinSpec(
        "left",
        SideSpec((("a", "BIGINT"), ("b", "STRING")), InputSpec.HAS_UNIQUE_KEY, (1,), 5000),
        SideSpec((("c", "BIGINT"),)),
        null_safe=(True,),
        residual=("call", "<", ("col", "l", 0), ("lit", Decimal("2"))),
        output_names=("a", "b", "c"),
    )
    out = json.loads(wire.spec_json(spec, ["__k0"], '{"type": "struct", "fields": []}'))
    assert out["keys"] == ["__k0"]
    assert out["join"] == {
        "kind": "left",
        "left": {
            "fields": [["a", "BIGINT"], ["b", "STRING"]],
            "input_spec": "HasUniqueKey",
            "unique_key": [1],
            "ttl_ms": 5000,
        },
        "right": {
            "fields": [["c", "BIGINT"]],
            "input_spec": "NoUniqueKey",
            "unique_key": [],
            "ttl_ms": None,
        },
        "null_safe": [True],
        "residual": ["call", "<", ["col", "l", 0], ["lit", {"decimal": "2"}]],
        "output_names": ["a", "b", "c"],
    }


def test_the_extension_relation_names_the_plugin_type() -> None:
    rel = _JvmOperator(None, "probe").plan(None)  # type: ignore[arg-type]
    assert rel.WhichOneof("rel_type") == "extension"
    assert rel.extension.type_url == wire.TYPE_URL
    assert wire.decode_payload(rel.extension.value)[2] == b"probe"


def test_one_registry_on_each_side_of_the_wire() -> None:
    """Every Python operator spec has its factory in OperatorPlugin.OPERATORS, and back; every
    relation has the same version on both sides; the spec JSON carries the keys, the output
    and the spec's own section under its name."""
    from server_ext.operators import SPECS, operator_versions
    from tests.unit.server_ext.jvm_harness import run_cases

    java, older, unknown = run_cases(
        [
            {"versions": True},
            {"versions": True, "sent": ["aggregate", 0]},
            {"versions": True, "sent": ["window", 1]},
        ]
    )
    assert java["operators"] == sorted(SPECS)
    assert java["versions"] == operator_versions()
    # One operator's mismatch names it, both versions and the fix.
    mine = operator_versions()["aggregate"]
    assert (
        f"operator aggregate: the plugin runs version {mine} but the client sent version 0"
        in (older["error"])
    )
    assert "rebuild and reinstall the jar" in older["error"]
    assert "unknown server_ext JVM operator window" in unknown["error"]
    for name, cls in SPECS.items():
        assert cls.operator == name
    spec = JoinSpec("inner", SideSpec((("a", "BIGINT"),)), SideSpec((("b", "BIGINT"),)))
    out = json.loads(wire.operator_spec_json(spec, ["__k0"], '{"type": "struct", "fields": []}'))
    assert set(out) == {"keys", "output", "join"} and out["join"] == spec.wire_section()
    assert wire.operator_name(spec) == "join"


def test_the_plugin_keeps_its_old_class_name() -> None:
    """Servers configured with tableapi.serverext.JoinPlugin keep loading the operators."""
    from server_ext.jvm.build import MAIN_SOURCES

    alias = (MAIN_SOURCES / "tableapi" / "serverext" / "JoinPlugin.java").read_text()
    assert "public final class JoinPlugin extends OperatorPlugin" in alias
    assert wire.PLUGIN_CLASS == "tableapi.serverext.OperatorPlugin"


def test_a_spec_is_parsed_into_typed_records_that_name_a_missing_field() -> None:
    """Specs.java parses the spec JSON in one place: a missing or mistyped field fails at plan
    time naming the section and the field."""
    from tests.unit.server_ext.jvm_harness import run_cases, struct_json

    union = struct_json([("__k0", "BIGINT"), ("__side", "TINYINT")])
    output = struct_json([("k", "BIGINT")], kind_first=True)

    def case(operator: str, section: dict) -> dict:
        spec = {"keys": ["__k0"], "output": json.loads(output), operator: section}
        body = {"spec": json.dumps(spec), "input": union, "key_count": 1, "batches": []}
        return {"operator": operator, **body}

    missing, mistyped, interval = run_cases(
        [
            case("aggregate", {"input": [], "aggs": []}),
            case("aggregate", {"input": [], "aggs": [], "key_count": "two"}),
            case("interval", {"kind": "inner", "lower_ms": 0}),
        ]
    )
    assert "the aggregate spec has no key_count" in missing["error"]
    assert "aggregate.key_count must be an integer" in mistyped["error"]
    assert "the interval spec has no left" in interval["error"]
