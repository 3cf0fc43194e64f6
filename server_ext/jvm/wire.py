"""The wire contract between the client and the JVM operator plugin (twin: ``Wire.java``).

The client sends an extension ``Relation`` whose ``google.protobuf.Any`` has type URL
:data:`TYPE_URL` and, as value, this hand-encoded protobuf message (no protoc needed)::

    message JvmOperator {
      uint32   wire_version = 1;   // WIRE_VERSION: client and plugin must agree
      string   operator     = 2;   // a grouped operator (server_ext.operators.SPECS: "join",
                                   // "temporal", "interval", "multi", "aggregate"),
                                   // "position" (numbers the input's rows in reading order;
                                   // spec: the new column's name), "local_aggregate" (a
                                   // two-phase aggregation's local phase; spec: the
                                   // aggregate's), "executors" (the driver's registered
                                   // executors; spec: anything, a nonce), "file_time" (each
                                   // row's file's modification time in nanoseconds; spec:
                                   // {"path", "name", "table"}),
                                   // "unseen_retractions" (the retractions of rows
                                   // without state the driver's JVM dropped; spec: a
                                   // nonce), or "probe" (is the
                                   // plugin there, which version?)
      Relation input        = 3;   // the tagged union of server_ext/joins/spec.py (a
                                   // union of insert-only inputs may leave out __kind
                                   // and __seq: all +I, in arrival order)
      string   spec_json    = 4;   // see operator_spec_json()
      uint32   operator_version = 5;  // the operator's spec class's version, or
                                      // RELATION_VERSIONS[operator]
    }

Two versions: :data:`WIRE_VERSION` is the envelope's (this message, the union's columns);
each relation has its own (its spec JSON, its state format: an operator's spec class's
``version``, the other relations' in :data:`RELATION_VERSIONS`), so that one operator's change
bumps only its version. Change this module and ``Wire.java`` together: bump
:data:`WIRE_VERSION` when the envelope changes, an operator's version (its spec class and
``OperatorPlugin.OPERATORS`` / ``RELATIONS``) when its spec or state format does.

Example::

    payload = encode_payload(
        spec.operator, union_bytes, operator_spec_json(spec, ["__k0"], output), spec.version
    )
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server_ext.joins.spec import JoinSpec
    from server_ext.operators import OperatorSpec

# 2: an insert-only union may leave out __kind and __seq; 3: "position"; 4: "local_aggregate";
# 5: "executors"; 6: "file_time", "unseen_retractions"; 7: operator_version (per relation)
WIRE_VERSION = 7
#: The versions of the relations that are not grouped operators (twin: ``OperatorPlugin.RELATIONS``;
#: an operator's version is its spec class's, ``server_ext.operators.operator_versions``).
RELATION_VERSIONS: dict[str, int] = {
    "probe": 1,
    "executors": 1,
    "unseen_retractions": 1,
    "position": 1,
    "file_time": 1,
}
TYPE_URL = "type.googleapis.com/tableapi.serverext.JvmOperator"
PLUGIN_CLASS = "tableapi.serverext.OperatorPlugin"  # (its old name JoinPlugin still loads)
#: The one column of the plugin's answer to a probe.
PROBE_COLUMN = f"tableapi_jvm_wire_{WIRE_VERSION}"
#: What a Spark Connect server without the plugin answers to an extension relation.
NO_HANDLER = "No handler found for extension"

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DAY = dt.date(1970, 1, 1)
_LONG = range(-(2**63), 2**63)


def spec_json(spec: JoinSpec, key_names: Sequence[str], output_json: str) -> str:
    """The spec of a join request: :func:`operator_spec_json` of a :class:`JoinSpec`.

    Example::

        spec_json(spec, ["__k0"], output_schema.json())
    """
    return operator_spec_json(spec, key_names, output_json)


def operator_name(spec: OperatorSpec) -> str:
    """The plugin's name for the operator that runs ``spec`` (its ``operator``).

    Example::

        operator_name(spec)  # "join", "temporal", "interval", "multi", ...
    """
    return spec.operator


def operator_spec_json(spec: OperatorSpec, key_names: Sequence[str], output_json: str) -> str:
    """The spec of an operator request: the grouping key column names, the output schema (a
    StructType's ``json()``) and the operator's own section (``spec.wire_section()``, named
    by the operator: ``join``, ``temporal``, ``interval``, ``multi``, ...).

    Example::

        operator_spec_json(temporal_spec, ["__k0"], output_schema.json())
    """
    return json.dumps(
        {
            "keys": list(key_names),
            "output": json.loads(output_json),
            spec.operator: spec.wire_section(),
        },
        allow_nan=False,
    )


def encode_tree(tree: tuple) -> list:
    """A condition tree (``server_ext.joins.spec``) as JSON lists, literals tagged by type.

    Example::

        encode_tree(("call", "<", ("col", "l", 1), ("lit", Decimal("2.5"))))
        # ['call', '<', ['col', 'l', 1], ['lit', {'decimal': '2.5'}]]
    """
    tag = tree[0]
    if tag == "lit":
        return ["lit", encode_literal(tree[1])]
    if tag == "call":
        return ["call", tree[1], *(encode_tree(a) for a in tree[2:])]
    return list(tree)


def encode_literal(value: Any) -> Any:
    """A condition literal as JSON: scalars as they are, other types as ``{tag: value}``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if value not in _LONG:
            raise ValueError(f"integer literal {value} is out of the BIGINT range")
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": str(value)}  # nan / inf / -inf
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, dt.datetime):  # before date: a datetime is a date
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return {"timestamp": _micros(value - _EPOCH)}
    if isinstance(value, dt.date):
        return {"date": (value - _EPOCH_DAY).days}
    if isinstance(value, dt.timedelta):
        return {"interval": _micros(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"binary": bytes(value).hex()}
    raise ValueError(f"the JVM operators cannot take the literal {value!r} in a join condition")


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


# -- protobuf, by hand ----------------------------------------------------------------------------


def encode_payload(
    operator: str, input_relation: bytes | None = None, spec: str = "", version: int | None = None
) -> bytes:
    """The ``JvmOperator`` message: ``input_relation`` is a serialized ``Relation``;
    ``version`` the operator's (its spec class's), or for another relation its
    :data:`RELATION_VERSIONS` entry.

    >>> decode_payload(encode_payload("probe"))[5] == RELATION_VERSIONS["probe"]
    True
    """
    if version is None:
        version = RELATION_VERSIONS.get(operator)
    if version is None:
        raise ValueError(
            f"server_ext JVM relation {operator!r} needs its version: an operator's is its "
            f"spec class's, another relation's is in RELATION_VERSIONS (server_ext/jvm/wire.py, "
            f"twin of OperatorPlugin.RELATIONS); known: {sorted(RELATION_VERSIONS)}"
        )
    out = bytearray()
    out += _key(1, 0) + _varint(WIRE_VERSION)
    out += _bytes_field(2, operator.encode())
    if input_relation is not None:
        out += _bytes_field(3, input_relation)
    if spec:
        out += _bytes_field(4, spec.encode())
    out += _key(5, 0) + _varint(version)
    return bytes(out)


def decode_payload(data: bytes) -> dict[int, int | bytes]:
    """The fields of a ``JvmOperator`` message by number (for tests and debugging)."""
    fields: dict[int, int | bytes] = {}
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            fields[number], pos = _read_varint(data, pos)
        elif wire_type == 2:
            size, pos = _read_varint(data, pos)
            fields[number], pos = data[pos : pos + size], pos + size
        else:
            raise ValueError(f"unexpected wire type {wire_type} for field {number}")
    return fields


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _bytes_field(number: int, value: bytes) -> bytes:
    return _key(number, 2) + _varint(len(value)) + value


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
