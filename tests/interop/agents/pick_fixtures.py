#!/usr/bin/env python3
"""Copies the hops of one recorded run (a tracer database) into tests/fixtures/agents/AGENT/,
byte-exact, with names that say what each is:

  PREFIXturnN_request.json / PREFIXturnN_response.(sse|json)[.gz|.zst]  model hops of the loop
  PREFIXsideN_request.json / ...                                       titles, routers, checks
  PREFIXmcp_METHOD_request.json / _response.(json|sse)                  MCP hops (first of each)
  PREFIXcode_assist_METHOD_request.json / _response.json      Code Assist set-up calls (first of each)
  PREFIXhops.json  every hop of the run: method, path, status, state, error, both header sets,
                   body lengths, and the fixture files it was saved as

What the upstream answered (tool call, final, side) comes from its request log, in order.

    pick_fixtures.py WORK OUT_DIR [--prefix P] [--only-model | --responses-only]"""

import argparse
import json
import os
import sqlite3


def body(db, hop_id, side, tail):
    rows = db.execute("select bytes from hop_body_pieces where hop_id = ? and side = ? order by seq",
                      (hop_id, side))
    return b"".join(bytes(r[0]) for r in rows) + bytes(tail or b"")


def header(headers, name):
    for h in headers:
        if h.get("name", "").lower() == name:
            return h.get("value", "")
    return ""


def response_ext(headers, data):
    ctype = header(headers, "content-type")
    ext = ".sse" if "event-stream" in ctype else ".json" if "json" in ctype else ".bin"
    encoding = header(headers, "content-encoding")
    return ext + {"gzip": ".gz", "zstd": ".zst", "br": ".br", "deflate": ".zz"}.get(encoding, "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("out")
    parser.add_argument("--prefix", default="")
    parser.add_argument("--only-model", action="store_true")
    parser.add_argument("--responses-only", action="store_true",
                        help="model responses only, each with a STEM.headers.json (variants: gzip, zstd, pauses)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    answered = []
    with open(os.path.join(args.work, "upstream-requests.jsonl"), encoding="utf-8") as log:
        for line in log:
            entry = json.loads(line)
            answered.append((entry["method"], entry["path"], entry["answered"]))
    db = sqlite3.connect(f"file:{os.path.join(args.work, 'tracer.db')}?mode=ro", uri=True)
    rows = db.execute(
        "select id, route, role, method, path, state, status, error, request_headers, response_headers,"
        " request_body, response_body, request_body_len, response_body_len, request_body_truncated,"
        " response_body_truncated from hops order by seq").fetchall()
    turns = sides = 0
    mcp_seen = set()
    index = []
    for (hop_id, route, role, method, path, state, status, error, req_h, resp_h, req_b, resp_b,
         req_len, resp_len, req_trunc, resp_trunc) in rows:
        req_headers, resp_headers = json.loads(req_h or "[]"), json.loads(resp_h or "[]")
        request, response = body(db, hop_id, 0, req_b), body(db, hop_id, 1, resp_b)
        kind = None
        if role == "model" and answered:
            for i, (m, p, k) in enumerate(answered):
                if m == method and p == path:
                    kind = k
                    del answered[i]
                    break
        stem = None
        if role == "model" and kind in ("call", "final"):
            turns += 1
            stem = f"turn{turns}"
        elif role == "model" and kind == "side":
            sides += 1
            stem = f"side{sides}"
        elif role == "model" and kind and kind.startswith("code-assist:") and not args.responses_only:
            name = "code_assist_" + kind.split(":", 1)[1]
            if name not in mcp_seen:
                mcp_seen.add(name)
                stem = name
        elif role == "mcp" and not (args.only_model or args.responses_only) and request:
            try:
                rpc = json.loads(request)
                rpc_method = rpc.get("method", "batch") if isinstance(rpc, dict) else "batch"
            except ValueError:
                rpc_method = "unreadable"
            name = rpc_method.replace("/", "_")
            if name not in mcp_seen:
                mcp_seen.add(name)
                stem = f"mcp_{name}"
        files = []
        if stem:
            stem = args.prefix + stem
            req_name = stem + "_request.json"
            if not args.responses_only:
                with open(os.path.join(args.out, req_name), "wb") as f:
                    f.write(request)
                files.append(req_name)
            if response:
                resp_name = stem + "_response" + response_ext(resp_headers, response)
                with open(os.path.join(args.out, resp_name), "wb") as f:
                    f.write(response)
                files.append(resp_name)
            if args.responses_only:
                with open(os.path.join(args.out, stem + "_response.headers.json"), "w", encoding="utf-8") as f:
                    json.dump({"method": method, "path": path, "status": status, "state": state,
                               "error": error, "response_headers": resp_headers,
                               "request_headers": req_headers}, f, indent=1)
                    f.write("\n")
        index.append({"route": route, "role": role, "method": method, "path": path, "state": state,
                      "status": status, "error": error, "answered": kind, "files": files,
                      "request_body_len": req_len, "response_body_len": resp_len,
                      "truncated": bool(req_trunc or resp_trunc),
                      "request_headers": req_headers, "response_headers": resp_headers})
    with open(os.path.join(args.out, args.prefix + "hops.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    for i in index:
        print(f"{i['role']:5s} {i['method']:6s} {i['path'][:58]:58s} {i['state']:9s} {i['status']} "
              f"{i['answered'] or '':6s} {' '.join(i['files'])} {i['error'] or ''}")


if __name__ == "__main__":
    main()
