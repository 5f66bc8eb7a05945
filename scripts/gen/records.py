#!/usr/bin/env python3
"""Writes a JSON document of N API records (default 400,000: about 52 MB), deterministic.

    python3 scripts/gen/records.py 400000 /tmp/big.json

The records look like an orders API's: integer ids, text of several lengths, floats with
fractions, booleans, nulls, a nested object and a short array per record.
"""
import json
import random
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 400_000
out = sys.argv[2] if len(sys.argv) > 2 else "big.json"
rng = random.Random(20261202)
cities = ["Lisbon", "Oslo", "Austin", "Osaka", "Lagos", "Lyon", "Quito", "Perth"]
states = ["paid", "shipped", "pending", "refunded"]
records = []
for i in range(n):
    records.append({
        "id": 10_000_000 + i,
        "user": f"user_{rng.randrange(1_000_000)}",
        "amount": round(rng.uniform(1, 5000), 2),
        "status": rng.choice(states),
        "paid": rng.random() < 0.8,
        "coupon": None if rng.random() < 0.7 else f"C{rng.randrange(10_000)}",
        "ship": {"city": rng.choice(cities), "zip": rng.randrange(10_000, 99_999)},
        "items": [rng.randrange(1, 500) for _ in range(rng.randrange(1, 4))],
    })
json.dump({"count": n, "records": records}, open(out, "w"), separators=(",", ":"))
