#!/usr/bin/env python3
"""The workspace's layers, kept: every crate may use only the crates below it (docs/architecture.md).

Reads `cargo metadata` and fails, naming the arrow, when a crate depends on a crate at its own
floor or above, when tracer-trace (pure) depends on the runtime or the database, or when the
reference processes depend on anything of the product beyond the protocol shapes and the
plumbing. Run from anywhere in the checkout: python3 scripts/check_layers.py
"""
import json
import subprocess
import sys

# Floors, bottom first. A crate may use any crate on a lower floor, none on its own or above.
FLOORS = [
    ["tracer-wire", "tracer-serve"],
    ["tracer-store", "tracer-trace", "tracer-reference"],
    ["tracer-live", "tracer-record"],
    ["tracer-export"],
    ["tracer-web"],
    ["tracer"],
]
# What a crate must never use, whatever its floor.
FORBIDDEN = {
    "tracer-wire": {"tokio", "sqlx", "hyper"},
    "tracer-trace": {"tokio", "sqlx", "hyper", "tracer-store"},
    "tracer-reference": {"tracer-store", "tracer-trace"},
    # The web UI reads the database; it never starts a recording or a reference process (the
    # app hands it what a recording tells: `LiveFeed`).
    "tracer-web": {"tracer-record", "tracer-reference"},
}


def main() -> int:
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    floor = {name: level for level, names in enumerate(FLOORS) for name in names}
    members = {p["name"]: p for p in meta["packages"]}
    errors = []
    for name in members:
        if name not in floor:
            errors.append(f"{name}: a crate on no floor (add it to FLOORS in scripts/check_layers.py)")
    for name, package in sorted(members.items()):
        for dep in package["dependencies"]:
            if dep["kind"] == "dev" and dep["name"] not in floor:
                continue
            other = dep["name"]
            if other in FORBIDDEN.get(name, set()):
                errors.append(f"{name} -> {other}: {name} must never use {other}")
            if other in floor and name in floor and floor[other] >= floor[name]:
                errors.append(
                    f"{name} (floor {floor[name]}) -> {other} (floor {floor[other]}): "
                    "an arrow that does not point down"
                )
    for line in errors:
        print(f"layers: {line}", file=sys.stderr)
    if errors:
        return 1
    print(f"layers: {len(members)} crates, every arrow points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
