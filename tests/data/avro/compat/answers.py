#!/usr/bin/env python3
"""Recompute the "expected" verdict of every case in cases.json with Apache Avro's
Python reference checker, avro.compatibility.ReaderWriterCompatibilityChecker.

Usage (from any directory):

    pip install -r tests/data/avro/compat/requirements.txt
    python3 tests/data/avro/compat/answers.py
    git diff --exit-code tests/data/avro/compat/cases.json

The script rewrites cases.json in place; a diff means the reference checker no longer
agrees with the recorded verdicts. With --check it only reports and exits 1 on a mismatch.
"""

import json
import sys
from pathlib import Path

import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

CASES = Path(__file__).with_name("cases.json")


def verdict(reader_json, writer_json):
    """Return "compatible" or "incompatible" for reading writer data with the reader schema."""
    reader = avro.schema.parse(json.dumps(reader_json))
    writer = avro.schema.parse(json.dumps(writer_json))
    result = ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)
    if result.compatibility is SchemaCompatibilityType.compatible:
        return "compatible"
    return "incompatible"


def main():
    check_only = "--check" in sys.argv[1:]
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    changed = 0
    for case in cases:
        answer = verdict(case["reader"], case["writer"])
        if case.get("expected") != answer:
            changed += 1
            print(f"{case['name']}: recorded {case.get('expected')}, checker says {answer}", file=sys.stderr)
            case["expected"] = answer
    if not check_only:
        CASES.write_text(json.dumps(cases, indent=1) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases, {changed} changed", file=sys.stderr)
    return 1 if (check_only and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
