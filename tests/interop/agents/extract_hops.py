#!/usr/bin/env python3
"""Dumps every hop of a tracer database into a folder, byte-exact: NN_ROLE_request.bin and
NN_ROLE_response.bin (the bodies as they crossed the wire: pieces from hop_body_pieces, then the
row's own bytes), NN_ROLE.headers.json (both header sets, status, state, error) and hops.json
(one line of facts per hop). The fixtures in tests/fixtures/agents/ were picked from such dumps.

    extract_hops.py WORK/tracer.db OUT_DIR"""

import json
import os
import sqlite3
import sys


def body(db, hop_id, side, tail):
    pieces = db.execute(
        "select bytes from hop_body_pieces where hop_id = ? and side = ? order by seq", (hop_id, side))
    return b"".join(bytes(p[0]) for p in pieces) + bytes(tail or b"")


def main(db_path, out):
    os.makedirs(out, exist_ok=True)
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    rows = db.execute(
        "select seq, id, route, role, method, path, state, status, error, request_headers,"
        " response_headers, request_body, response_body, request_body_len, response_body_len,"
        " request_started_unix_ns, response_ended_unix_ns, response_trailers from hops order by seq")
    index = []
    for n, r in enumerate(rows.fetchall(), 1):
        (seq, hop_id, route, role, method, path, state, status, error, req_h, resp_h, req_b, resp_b,
         req_len, resp_len, started, ended, trailers) = r
        stem = f"{n:02d}_{role}"
        request, response = body(db, hop_id, 0, req_b), body(db, hop_id, 1, resp_b)
        with open(os.path.join(out, stem + "_request.bin"), "wb") as f:
            f.write(request)
        with open(os.path.join(out, stem + "_response.bin"), "wb") as f:
            f.write(response)
        facts = {"n": n, "seq": seq, "id": hop_id, "route": route, "role": role, "method": method,
                 "path": path, "state": state, "status": status, "error": error,
                 "request_body_len": req_len, "response_body_len": resp_len,
                 "kept": [len(request), len(response)],
                 "ms": round((ended - started) / 1e6, 1) if ended and started else None}
        headers = dict(facts, request_headers=json.loads(req_h or "[]"),
                       response_headers=json.loads(resp_h or "[]"),
                       response_trailers=json.loads(trailers) if trailers else None)
        with open(os.path.join(out, stem + ".headers.json"), "w", encoding="utf-8") as f:
            json.dump(headers, f, indent=2)
        index.append(facts)
    with open(os.path.join(out, "hops.json"), "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(i) for i in index) + "\n]\n")
    for i in index:
        print(f"{i['n']:2d} {i['role']:5s} {i['method']:6s} {i['path'][:60]:60s} {i['state']:9s} "
              f"{i['status']} req {i['request_body_len']} resp {i['response_body_len']} {i['error'] or ''}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
