#!/usr/bin/env python3
"""Makes the editions payloads and their golden JSON with Python's protobuf (7.36.2).

Run in this folder: `python3 make.py`. It reads the descriptor sets protoc made (see SOURCE.md),
builds each message from its dict below with json_format.ParseDict (or parses the bytes a case
gives), and writes
  NAME.binpb             the message's bytes (SerializeToString, deterministic; or the case's)
  NAME.json              MessageToJson(msg)                                  (lowerCamelCase)
  NAME.proto-names.json  MessageToJson(msg, preserving_proto_field_name=True)
The first line of CASES.txt names, for every case, its descriptor set and message type.
"""
import base64
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

SETS = {
    "conformance": "test_messages_edition2023.pb",
    "unittest": "../protobuf/unittest_descriptor_set.pb",
    "presence": "presence.pb",
}

CASES = [
    ("all_types", "conformance", "protobuf_test_messages.editions.TestAllTypesEdition2023", {
        "optionalInt32": -42, "optionalInt64": "-9000000000", "optionalUint32": 4000000000,
        "optionalUint64": "18446744073709551615", "optionalSint32": -7,
        "optionalSint64": "-123456789012", "optionalFixed32": 7, "optionalFixed64": "8",
        "optionalSfixed32": -9, "optionalSfixed64": "-10", "optionalFloat": 1.5,
        "optionalDouble": -2.25, "optionalBool": True, "optionalString": "h\u00e9llo \u4e16\u754c",
        "optionalBytes": base64.b64encode(b"\x00\xffbytes").decode(),
        "optionalNestedMessage": {"a": 5, "corecursive": {"optionalInt32": 1}},
        "optionalForeignMessage": {"c": 3},
        "optionalNestedEnum": "NEG", "optionalForeignEnum": "FOREIGN_BAZ",
        "recursiveMessage": {"optionalString": "inner", "groupliketype": {"groupInt32": 1}},
        "repeatedInt32": [1, -2, 3], "repeatedString": ["a", "b"],
        "repeatedNestedMessage": [{"a": 1}, {"a": 2}],
        "repeatedNestedEnum": ["FOO", "BAR"], "repeatedForeignEnum": ["FOREIGN_BAR"],
        "packedSint64": ["-1", "2", "-300"], "packedDouble": [0.5, -1e300],
        "packedBool": [True, False, True], "packedNestedEnum": ["BAZ", "NEG"],
        "unpackedInt32": [7, -8], "unpackedFixed64": ["9", "10"], "unpackedFloat": [0.25],
        "unpackedNestedEnum": ["BAR", "FOO"],
        "mapInt32Int32": {"1": 2, "-3": 4}, "mapStringNestedMessage": {"k": {"a": 9}},
        "mapStringForeignEnum": {"x": "FOREIGN_BAR"}, "mapBoolBool": {"true": False},
        "oneofString": "one",
        "groupliketype": {"groupInt32": 11, "groupUint32": 12},
        "delimitedField": {"groupInt32": 13},
        "[protobuf_test_messages.editions.extension_int32]": 77,
        "[protobuf_test_messages.editions.groupliketype]": {"c": 5},
        "[protobuf_test_messages.editions.delimited_ext]": {"c": 6},
    }),
    # Explicit presence (the 2023 default): zeros that are set are written, and JSON shows them.
    ("explicit_zeros", "conformance", "protobuf_test_messages.editions.TestAllTypesEdition2023", {
        "optionalInt32": 0, "optionalString": "", "optionalBool": False,
        "optionalNestedEnum": "FOO", "optionalDouble": 0.0, "oneofUint32": 0,
        "delimitedField": {},
    }),
    # unittest.proto: closed enums, EXPANDED repeated fields, DELIMITED groups.
    ("unittest_all_types", "unittest", "proto2_unittest.TestAllTypes", {
        "optionalInt32": 101, "optionalString": "s", "optionalBytes": "AAE=",
        "optionalgroup": {"a": 117}, "optionalNestedMessage": {"bb": 118},
        "optionalNestedEnum": "BAZ", "optionalForeignEnum": "FOREIGN_BAR",
        "optionalImportEnum": "IMPORT_BAZ",
        "repeatedInt32": [201, 301], "repeatedgroup": [{"a": 217}, {"a": 317}],
        "repeatedNestedEnum": ["BAR", "BAZ"], "defaultInt32": 401,
        "oneofString": "oneof",
    }),
    ("unittest_packed", "unittest", "proto2_unittest.TestPackedTypes", {
        "packedInt32": [601, -701], "packedSint64": ["-602"], "packedFloat": [611.0],
        "packedBool": [True, False], "packedEnum": ["FOREIGN_BAR", "FOREIGN_BAZ"],
    }),
    ("unittest_required", "unittest", "proto2_unittest.TestRequired", {
        "a": 1, "b": 2, "c": 3, "dummy2": 0,
    }),
    # presence.proto (edition 2024, IMPLICIT by default): zeros of implicit fields are not
    # written and JSON leaves them out; the explicit one is written.
    ("presence", "presence", "wirelens.editions.Presence", {
        "count": 0, "name": "", "explicitCount": 0, "color": "COLOR_UNSPECIFIED",
        "shade": "SHADE_LIGHT", "packed": [1, 2, 300], "expanded": [4, 5],
        "inner": {}, "delimited": {"x": 7}, "loose": "ok", "requiredId": 9,
        "shades": ["SHADE_DARK", "SHADE_LIGHT"],
    }),
    ("presence_set", "presence", "wirelens.editions.Presence", {
        "count": 3, "name": "n", "color": "COLOR_BLUE", "requiredId": 0,
    }),
    # Bytes as a peer might send them (parsed, not built): shade 7 and one of shades are numbers
    # the closed enum Shade does not name, so the runtime keeps them as unknown fields and JSON
    # leaves them out; color 5 is unnamed too, but Color is open, so it stays a number.
    ("closed_enum_unknown", "presence", "wirelens.editions.Presence",
     bytes.fromhex("2807" "62020701" "2005" "5801")),
    # utf8_validation = NONE: text that is UTF-8 is written as any string; bytes that are not
    # (parsed, as a peer might send them) are kept by the upb runtime, whose MessageToJson then
    # writes them as a Python bytes literal ("b'a\\xffb'"); pure-Python protobuf refuses them.
    ("loose_utf8", "presence", "wirelens.editions.Presence", {
        "loose": "h\u00e9llo \u4e16\u754c", "requiredId": 1,
    }),
    ("loose_not_utf8", "presence", "wirelens.editions.Presence",
     bytes.fromhex("520361ff62" "5801")),
]


def pool_of(path):
    fds = descriptor_pb2.FileDescriptorSet.FromString(open(path, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return pool


def main():
    pools = {k: pool_of(v) for k, v in SETS.items()}
    lines = []
    for name, set_name, type_name, value in CASES:
        pool = pools[set_name]
        cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(type_name))
        if isinstance(value, bytes):
            msg = cls.FromString(value)
            payload = value
        else:
            msg = json_format.ParseDict(value, cls(), descriptor_pool=pool)
            payload = msg.SerializeToString(deterministic=True)
        with open(f"{name}.binpb", "wb") as f:
            f.write(payload)
        with open(f"{name}.json", "w") as f:
            f.write(json_format.MessageToJson(msg, descriptor_pool=pool) + "\n")
        with open(f"{name}.proto-names.json", "w") as f:
            f.write(json_format.MessageToJson(
                msg, preserving_proto_field_name=True, descriptor_pool=pool) + "\n")
        lines.append(f"{name} {SETS[set_name]} {type_name}")
    with open("CASES.txt", "w") as f:
        f.write("# case descriptor-set message-type (made by make.py)\n")
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
