#!/usr/bin/env python3
"""Packs one `run_agent.py --agent claude-code-raw-bodies` run into fixture folders: Claude Code's
own two records of the run, as it wrote them, beside tracer's database of the same run.

  OUT/raw-bodies/        WORK/raw-bodies/* byte for byte (OTEL_LOG_RAW_API_BODIES=file:DIR):
                         <uuid>.request.json, <request-id>.response.json
  OUT/transcript/        HOME/.claude/projects/<slug>/ byte for byte: <session-id>.jsonl and, if
                         subagents ran, <session-id>/subagents/agent-<id>.jsonl (+ .meta.json)
  OUT/sources-wire/      wire.db.gz (tracer's SQLite database, gzipped), wire-hops.json (every hop:
                         facts and both header sets, no bodies), otlp-logs.json (the OTLP/JSON logs
                         request, if the run had --otlp-dump), meta.json (ids and the join of every
                         model hop to its body files and transcript lines, checked here)

    pack_claude_sources.py WORK OUT --version VERSION"""

import argparse
import glob
import gzip
import json
import os
import shutil
import sqlite3


def hop_body(db, hop_id, side, tail):
    """A hop's body: its pieces, or its chunks (deduplicated in body_chunks), then the row's tail."""
    rows = db.execute("select bytes from hop_body_pieces where hop_id = ? and side = ? order by seq",
                      (hop_id, side)).fetchall()
    rows += db.execute("select c.bytes from hop_body_chunks h join body_chunks c on c.id = h.chunk_id"
                       " where h.hop_id = ? and h.side = ? order by h.part, h.seq", (hop_id, side)).fetchall()
    return b"".join(bytes(r[0]) for r in rows) + bytes(tail or b"")


def header(headers, name):
    return next((h["value"] for h in headers if h["name"].lower() == name), None)


def redact_thinking(body):
    """What Claude Code does to a request before writing it: thinking text in assistant messages
    replaced by "<REDACTED>" (redacted_thinking data likewise)."""
    for message in body.get("messages", []):
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "thinking":
                    block["thinking"] = "<REDACTED>"
                elif block.get("type") == "redacted_thinking":
                    block["data"] = "<REDACTED>"
    return body


def assemble_sse(text):
    """The Messages stream folded into one message (as the SDK does)."""
    message, blocks = None, {}
    for event in text.split("\n\n"):
        data = [line[6:] for line in event.split("\n") if line.startswith("data: ")]
        if not data:
            continue
        e = json.loads(data[0])
        if e["type"] == "message_start":
            message = e["message"]
        elif e["type"] == "content_block_start":
            blocks[e["index"]] = dict(e["content_block"])
        elif e["type"] == "content_block_delta":
            block, delta = blocks[e["index"]], e["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = block.get("signature", "") + delta["signature"]
            elif delta["type"] == "input_json_delta":
                block["_json"] = block.get("_json", "") + delta["partial_json"]
        elif e["type"] == "message_delta":
            message.update(e["delta"])
            message["usage"] = {**message["usage"], **e["usage"]}
    for block in blocks.values():
        if "_json" in block:
            block["input"] = json.loads(block.pop("_json") or "{}")
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work")
    parser.add_argument("out")
    parser.add_argument("--version", required=True)
    args = parser.parse_args()
    work, out = os.path.abspath(args.work), os.path.abspath(args.out)
    with open(os.path.join(work, "summary.json"), encoding="utf-8") as f:
        run = json.load(f)

    # Claude Code's files, as written.
    bodies_dir = os.path.join(out, "raw-bodies")
    os.makedirs(bodies_dir, exist_ok=True)
    names = sorted(os.listdir(os.path.join(work, "raw-bodies")))
    for name in names:
        shutil.copyfile(os.path.join(work, "raw-bodies", name), os.path.join(bodies_dir, name))
    projects = os.path.join(work, "home", ".claude", "projects")
    (slug,) = os.listdir(projects)
    transcript_dir = os.path.join(out, "transcript")
    transcripts = []
    for path in sorted(glob.glob(os.path.join(projects, slug, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            rel = os.path.relpath(path, os.path.join(projects, slug))
            os.makedirs(os.path.dirname(os.path.join(transcript_dir, rel)), exist_ok=True)
            shutil.copyfile(path, os.path.join(transcript_dir, rel))
            transcripts.append(rel)
    (main_rel,) = [t for t in transcripts if "/" not in t and t.endswith(".jsonl")]
    session_id = main_rel[:-len(".jsonl")]

    lines = {}  # transcript file -> parsed lines
    for rel in transcripts:
        if rel.endswith(".jsonl"):
            with open(os.path.join(transcript_dir, rel), encoding="utf-8") as f:
                lines[rel] = [json.loads(line) for line in f if line.strip()]

    raw_requests = {}
    for name in names:
        if name.endswith(".request.json"):
            with open(os.path.join(bodies_dir, name), "rb") as f:
                raw_requests[name] = f.read()

    # The wire.
    wire_dir = os.path.join(out, "sources-wire")
    os.makedirs(wire_dir, exist_ok=True)
    db_path = os.path.join(work, "tracer.db")
    with open(db_path, "rb") as src, open(os.path.join(wire_dir, "wire.db.gz"), "wb") as raw:
        with gzip.GzipFile(filename="wire.db", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
            shutil.copyfileobj(src, gz)
    dump_logs = sorted(glob.glob(os.path.join(work, "otlp", "*-logs.json")))
    if dump_logs:
        shutil.copyfile(dump_logs[0], os.path.join(wire_dir, "otlp-logs.json"))
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    hops, model_hops = [], []
    session_headers, request_ids, tool_use_ids = set(), [], []
    for row in db.execute(
            "select seq, id, route, role, method, path, state, status, error, request_headers,"
            " response_headers, request_body_len, response_body_len, request_started_unix_ns,"
            " response_ended_unix_ns, request_body, response_body from hops order by seq").fetchall():
        (seq, hop_id, route, role, method, path, state, status, error, req_h, resp_h, req_len,
         resp_len, started, ended, req_tail, resp_tail) = row
        req_headers, resp_headers = json.loads(req_h or "[]"), json.loads(resp_h or "[]")
        hops.append({"seq": seq, "id": hop_id, "route": route, "role": role, "method": method,
                     "path": path, "state": state, "status": status, "error": error,
                     "request_body_len": req_len, "response_body_len": resp_len,
                     "request_started_unix_ns": started, "response_ended_unix_ns": ended,
                     "request_headers": req_headers, "response_headers": resp_headers})
        if role != "model" or not path.startswith("/v1/messages"):
            continue
        request = json.loads(hop_body(db, hop_id, 0, req_tail))
        response = assemble_sse(hop_body(db, hop_id, 1, resp_tail).decode())
        request_id = header(resp_headers, "request-id")
        session_headers.add(header(req_headers, "x-claude-code-session-id"))
        request_ids.append(request_id)
        # Which request file: the wire body with thinking redacted equals the file without `betas`.
        wanted = redact_thinking(json.loads(json.dumps(request)))
        raw_request = None
        for name, data in raw_requests.items():
            body = json.loads(data)
            betas = body.pop("betas", None)
            if body == wanted:
                raw_request = {"file": name, "betas_equal_header": ",".join(betas or []) == header(req_headers, "anthropic-beta"),
                               "bytes_equal_wire_minus_betas_after_redaction":
                                   json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
                                   == json.dumps(wanted, separators=(",", ":"), ensure_ascii=False).encode()}
                break
        response_name = f"{request_id}.response.json" if request_id else None
        raw_response = None
        if response_name in names:
            with open(os.path.join(bodies_dir, response_name), encoding="utf-8") as f:
                written = json.load(f)
            assembled = redact_thinking({"messages": [dict(response)]})["messages"][0]
            same = {k for k in assembled if k != "usage" and assembled[k] == written.get(k)}
            raw_response = {"file": response_name,
                            "equal_to_assembled_stream_except": sorted(set(written) - same),
                            "usage_counts_equal": all(written["usage"].get(k) == v for k, v in
                                                      assembled["usage"].items())}
        ids = [b["id"] for b in response["content"] if b["type"] == "tool_use"]
        tool_use_ids += ids
        found = []
        for rel, parsed in lines.items():
            uuids = [d["uuid"] for d in parsed if d.get("requestId") == request_id]
            if uuids:
                first = next(d for d in parsed if d.get("uuid") == uuids[0])
                found.append({"file": rel, "assistant_uuids": uuids, "message_id": first["message"]["id"],
                              "parent_uuid_of_first": first["parentUuid"],
                              "agent_id": first.get("agentId"), "is_sidechain": first.get("isSidechain")})
        model_hops.append({
            "wire_seq": seq, "hop_id": hop_id, "request_id": request_id,
            "x_claude_code_agent_id": header(req_headers, "x-claude-code-agent-id"),
            "messages": len(request["messages"]), "tools": len(request.get("tools", [])),
            "response_message_id": response["id"], "stop_reason": response.get("stop_reason"),
            "tool_use_ids": ids, "raw_request": raw_request, "raw_response": raw_response,
            "transcript": found})
    with open(os.path.join(wire_dir, "wire-hops.json"), "w", encoding="utf-8") as f:
        json.dump(hops, f, indent=1)
        f.write("\n")
    device = json.loads(request["metadata"]["user_id"]).get("device_id") if model_hops else None
    subagents = []
    for rel in transcripts:
        if rel.endswith(".meta.json"):
            with open(os.path.join(transcript_dir, rel), encoding="utf-8") as f:
                subagents.append({"meta_file": rel, "transcript": rel[:-len(".meta.json")] + ".jsonl",
                                  "meta": json.load(f)})
    meta = {
        "agent": "claude-code", "version": args.version,
        "command": [os.path.basename(run["command"][0])] + run["command"][1:],
        "env": run["env"], "exit_code": run["exit_code"], "notes_file": run["notes"],
        "stdout": run["stdout"],
        "session_id": session_id,
        "wire_x_claude_code_session_id": sorted(s for s in session_headers if s),
        "device_id": device,
        "model_requests_on_wire": len(model_hops), "hops_on_wire": len(hops),
        "raw_body_files": names, "transcript_files": transcripts,
        "request_ids": request_ids, "tool_use_ids": tool_use_ids,
        "subagents": subagents, "model_hops": model_hops,
    }
    with open(os.path.join(wire_dir, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    for d in (bodies_dir, transcript_dir, wire_dir):
        total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(d, "**", "*"), recursive=True)
                    if os.path.isfile(p))
        print(f"{d}: {total} bytes")


if __name__ == "__main__":
    main()
