#!/usr/bin/env python3
"""Copies the WebSocket hop of one recorded run (a tracer database) into OUT_DIR/socket.json:
the handshake (method, path, URL, both header sets, status) and every message tracer recorded
(direction, time after the handshake, opcode, sizes, frames, compressed, complete, the payload as
text, or base64 when it is not UTF-8), byte-exact; and the upstream's request log as
OUT_DIR/upstream-requests.jsonl (what the scripted server read from each message).

    pick_ws_fixture.py WORK OUT_DIR"""

import base64
import json
import os
import shutil
import sqlite3
import sys


def main():
    work, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    db = sqlite3.connect(os.path.join(work, "tracer.db"))
    row = db.execute(
        "select id, route, role, method, path, url, request_headers, status, response_headers, state,"
        " request_started_unix_ns, response_head_unix_ns, response_ended_unix_ns, websocket,"
        " request_body_len, response_body_len"
        " from hops where websocket is not null order by seq limit 1").fetchone()
    (hop_id, route, role, method, path, url, req_h, status, resp_h, state, started, head, ended,
     meta, up_len, down_len) = row
    messages = []
    for (direction, at, opcode, size, wire, frames, compressed, complete, data, error) in db.execute(
            "select direction, at_unix_ns, opcode, size, wire_size, frames, compressed, complete,"
            " data, error from ws_frames where hop_id = ? order by seq", (hop_id,)):
        data = bytes(data)
        entry = {"direction": direction, "offset_ns": at - started, "opcode": opcode, "size": size,
                 "wire_size": wire, "frames": frames, "compressed": bool(compressed),
                 "complete": bool(complete)}
        try:
            entry["text"] = data.decode()
        except UnicodeDecodeError:
            entry["base64"] = base64.b64encode(data).decode()
        if error:
            entry["error"] = error
        messages.append(entry)
    socket = {"route": route, "role": role, "method": method, "path": path, "url": url,
              "request_headers": json.loads(req_h), "status": status,
              "response_headers": json.loads(resp_h or "[]"), "state": state,
              "head_offset_ns": head - started, "ended_offset_ns": ended - started,
              "bytes_up": up_len, "bytes_down": down_len,
              "websocket": json.loads(meta), "messages": messages}
    with open(os.path.join(out, "socket.json"), "w", encoding="utf-8") as f:
        json.dump(socket, f, indent=1)
        f.write("\n")
    shutil.copy(os.path.join(work, "upstream-requests.jsonl"), os.path.join(out, "upstream-requests.jsonl"))
    print(f"{len(messages)} messages of hop {hop_id} -> {out}/socket.json")


if __name__ == "__main__":
    main()
