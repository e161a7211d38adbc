#!/usr/bin/env python3
"""Packs one `run_agent.py --otlp-dump` run into a fixture folder: the agent's OTLP request bodies
byte-exact in arrival order (NNN-SIGNAL.pb|.json), index.json (order, file, path, signal, content
type, content encoding, bytes, arrival time, request headers), the same run's tracer database
gzipped (wire.db.gz), wire-hops.json (every hop's facts and both header sets, no bodies) and
summary.json (otlp_decode.py's summary: event, span and metric names with their attribute keys).

    pack_otlp_fixture.py WORK OUT_DIR --agent NAME --version VERSION [--note TEXT]"""

import argparse
import gzip
import json
import os
import shutil
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import otlp_decode  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("out")
    parser.add_argument("--agent", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    dump = os.path.join(args.work, "otlp")
    os.makedirs(args.out, exist_ok=True)
    entries = sorted(otlp_decode.load_index(dump), key=lambda e: e["order"])
    requests = []
    for e in entries:
        shutil.copyfile(os.path.join(dump, e["file"]), os.path.join(args.out, e["file"]))
        requests.append({k: e[k] for k in ("order", "file", "method", "path", "signal", "content_type",
                                            "content_encoding", "bytes", "time", "headers")})
    with open(os.path.join(args.work, "summary.json"), encoding="utf-8") as f:
        run = json.load(f)
    index = {"agent": args.agent, "version": args.version, "note": args.note,
             "command": [os.path.basename(run["command"][0])] + run["command"][1:],
             "env": run["env"], "exit_code": run["exit_code"], "notes_file": run["notes"],
             "requests": requests}
    with open(os.path.join(args.out, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    db_path = os.path.join(args.work, "tracer.db")
    with open(db_path, "rb") as src, open(os.path.join(args.out, "wire.db.gz"), "wb") as raw:
        with gzip.GzipFile(filename="wire.db", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
            shutil.copyfileobj(src, gz)
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    hops = []
    for row in db.execute(
            "select seq, id, route, role, method, path, state, status, error, request_headers,"
            " response_headers, request_body_len, response_body_len, request_started_unix_ns,"
            " response_ended_unix_ns from hops order by seq"):
        (seq, hop_id, route, role, method, path, state, status, error, req_h, resp_h, req_len,
         resp_len, started, ended) = row
        hops.append({"seq": seq, "id": hop_id, "route": route, "role": role, "method": method,
                     "path": path, "state": state, "status": status, "error": error,
                     "request_body_len": req_len, "response_body_len": resp_len,
                     "request_started_unix_ns": started, "response_ended_unix_ns": ended,
                     "request_headers": json.loads(req_h or "[]"),
                     "response_headers": json.loads(resp_h or "[]")})
    with open(os.path.join(args.out, "wire-hops.json"), "w", encoding="utf-8") as f:
        json.dump(hops, f, indent=1)
        f.write("\n")
    summary = otlp_decode.summarize(args.out)
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out))
    print(f"{args.out}: {len(requests)} requests, {total} bytes")


if __name__ == "__main__":
    main()
