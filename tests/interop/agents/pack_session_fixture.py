#!/usr/bin/env python3
"""Packs the hops of a tracer database (a run_agent.py --runs N recording) into one compact JSON
fixture for tests/fixtures/agents/sessions/: every column of every hop, in arrival order, with
each body byte-exact but written once: a body like an earlier one (the same agent's next run
re-sends a 45 KB request that differs in a few ids) is stored as that body plus byte edits.
`live_trace` is the trace the running proxy's live grouping gave the hop.

A body may also be stored as edits of a file of tests/fixtures/agents/ (`--bases codex`: the
plain run's files): `"like": "codex/turn1_request.json"`.

Usage: pack_session_fixture.py TRACER_DB OUT.json [--bases AGENT_DIR] [--note TEXT]"""

import argparse
import base64
import difflib
import json
import os
import re
import sqlite3

TOKEN = re.compile(r"[A-Za-z0-9]+|\s+|.", re.S)


def tokens(data):
    """The body cut into tokens at UTF-8 character boundaries, as byte strings."""
    text = data.decode("utf-8", errors="surrogateescape")
    return [t.encode("utf-8", errors="surrogateescape") for t in TOKEN.findall(text)]


def body_value(data):
    try:
        return {"utf8": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


def edits(base, data):
    """Byte edits [start, end, replacement] that turn `base` into `data`, or None if too many."""
    a, b = tokens(base), tokens(data)
    offsets = [0]
    for t in a:
        offsets.append(offsets[-1] + len(t))
    out = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        replacement = b"".join(b[j1:j2])
        try:
            text = replacement.decode("utf-8")
        except UnicodeDecodeError:
            return None
        out.append([offsets[i1], offsets[i2], text])
    return out


def encode(data, earlier):
    """A body: whole, or as edits of the earlier body it shares most with."""
    if data is None:
        return None
    data = bytes(data)
    best = None
    for (index, side), base in earlier:
        if len(base) < 2000 or abs(len(base) - len(data)) > len(data) // 4:
            continue
        prefix = len(_common_prefix(base, data))
        if best is None or prefix > best[0]:
            best = (prefix, index, side, base)
    if best is not None and len(data) >= 2000:
        changes = edits(best[3], data)
        if changes is not None and len(json.dumps(changes)) < len(data) // 4:
            like = best[1] if best[2] is None else [best[1], best[2]]
            return {"like": like, "edits": changes}
    return body_value(data)


def _common_prefix(a, b):
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return a[:i]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("out")
    parser.add_argument("--note", default="")
    parser.add_argument("--bases", action="append", default=[],
                        help="a folder of tests/fixtures/agents/ whose files bodies may be edits of")
    args = parser.parse_args()
    db = sqlite3.connect(args.db)
    db.row_factory = sqlite3.Row
    rows = db.execute("select * from hops order by seq").fetchall()
    hops, earlier = [], []
    fixtures = os.path.dirname(os.path.dirname(os.path.abspath(args.out)))
    for folder in args.bases:
        for name in sorted(os.listdir(os.path.join(fixtures, folder))):
            path = os.path.join(fixtures, folder, name)
            if os.path.isfile(path) and name.endswith((".json", ".sse")) and name != "hops.json":
                with open(path, "rb") as f:
                    earlier.append(((f"{folder}/{name}", None), f.read()))
    assert all(row["body_pieces"] == 0 for row in rows), "bodies in pieces are not packed"
    for index, row in enumerate(rows):
        hop = {k: row[k] for k in row.keys()
               if k not in ("seq", "trace_id", "request_body", "response_body", "body_pieces")}
        for name in ("request_headers", "response_headers", "response_trailers", "response_chunks"):
            if hop.get(name) is not None:
                hop[name] = json.loads(hop[name])
        for side in ("request", "response"):
            data = row[f"{side}_body"]
            hop[f"{side}_body"] = encode(data, earlier)
            if data is not None and len(data) >= 2000:
                earlier.append(((index, side), bytes(data)))
        hop["live_trace"] = row["trace_id"]
        hops.append(hop)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write('{"note": %s,\n "hops": [\n' % json.dumps(args.note))
        f.write(",\n".join(json.dumps(hop, ensure_ascii=False) for hop in hops))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
