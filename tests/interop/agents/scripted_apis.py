"""Per API: which turn a request is (tool call, final, side call) and the answer's wire pieces."""

import json
import time

from scripted_answers import (
    ENCRYPTED, FINAL_TEXT, SIGNATURE, THINKING, THOUGHT_SIGNATURE, USAGE,
    dumps, find_schema, pick_tool, side_text, split_text, sse, tool_names,
)


# With --subagent (scripted_upstream.py), a host that offers an `Agent` tool (Claude Code) is first
# asked to hand the note to a subagent; the subagent's own conversation then calls append.
SUBAGENT = False
SUBAGENT_PROMPT = 'Add "buy milk" to the notes with the notes server\'s append tool, then say done.'
SUBAGENT_ARGS = {"description": "Add the note", "prompt": SUBAGENT_PROMPT,
                 "subagent_type": "general-purpose"}

# With --shell-first (scripted_upstream.py), a host that offers a shell tool (Claude Code's `Bash`,
# Codex's `exec_command` or `shell`/`shell_command`) is first asked to run `echo hello`; the turn
# carrying that result gets the notes append call as usual.
SHELL_FIRST = False
SHELL_COMMAND = "echo hello"
SHELL_TOOLS = {"Bash": {"command": SHELL_COMMAND, "description": "Print hello"},
               "exec_command": {"cmd": SHELL_COMMAND},
               "shell_command": {"command": SHELL_COMMAND},
               "shell": {"command": ["bash", "-lc", SHELL_COMMAND]}}


def first_user_text(body):
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(b.get("text", "") for b in content or [] if isinstance(b, dict))
    return ""


def decide(body, tools, last_result):
    """("side", text) | ("call", (namespace, name, args)) | ("final", text)."""
    if find_schema(body) is not None or not tools:
        return "side", side_text(body)
    if last_result and last_result.endswith("append"):
        return "final", FINAL_TEXT
    if SHELL_FIRST and last_result is None:
        names = [name for _, name in tool_names(tools)]
        shell = next((name for name in SHELL_TOOLS if name in names), None)
        if shell:
            return "call", (None, shell, SHELL_TOOLS[shell])
    if SUBAGENT and SUBAGENT_PROMPT not in first_user_text(body):
        names = [name for _, name in tool_names(tools)]
        if last_result == "Agent":
            return "final", FINAL_TEXT
        if "Agent" in names:
            return "call", (None, "Agent", SUBAGENT_ARGS)
    chosen = pick_tool(tools)
    if chosen is None:
        return "final", FINAL_TEXT
    return "call", chosen


# ---------------------------------------------------------------- Anthropic Messages


def anthropic_last_result(messages):
    names = {}
    for message in messages:
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    names[block.get("id")] = block.get("name")
    # The results answer the last assistant turn; hosts may add reminders (user or system
    # messages) after them.
    after = len(messages)
    while after > 0 and messages[after - 1].get("role") != "assistant":
        after -= 1
    for message in messages[after:]:
        content = message.get("content") if message.get("role") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return names.get(block.get("tool_use_id"), "")
    return None


def anthropic_usage(u, start):
    usage = {
        "input_tokens": u["input"],
        "cache_creation_input_tokens": u["cache_write"],
        "cache_read_input_tokens": u["cache_read"],
        "output_tokens": 1 if start else u["output"],
    }
    if start:
        usage["cache_creation"] = {
            "ephemeral_5m_input_tokens": u["cache_5m"],
            "ephemeral_1h_input_tokens": u["cache_1h"],
        }
        usage["service_tier"] = "standard"
    return usage


def anthropic(body):
    kind, what = decide(body, body.get("tools"), anthropic_last_result(body.get("messages") or []))
    u = USAGE["anthropic"][kind]
    model = body.get("model", "claude-scripted")
    msg_id = f"msg_scripted_{kind}_{int(time.time() * 1000) % 100000:05d}"
    blocks = []  # (type, start block, deltas)
    if kind != "side":
        blocks.append(("thinking", {"type": "thinking", "thinking": "", "signature": ""},
                       [{"type": "thinking_delta", "thinking": t} for t in split_text(THINKING, 40)]
                       + [{"type": "signature_delta", "signature": SIGNATURE}]))
    text = "I'll add that to your notes." if kind == "call" else what
    blocks.append(("text", {"type": "text", "text": ""},
                   [{"type": "text_delta", "text": t} for t in split_text(text, 16)]))
    if kind == "call":
        _, name, args = what
        raw = dumps(args)
        call_id = {"Agent": "toolu_01ScriptedAgentCall00001", "Bash": "toolu_01ScriptedBashCall000001"}.get(
            name, "toolu_01ScriptedAppendCall0001")
        blocks.append(("tool_use", {"type": "tool_use", "id": call_id,
                                    "name": name, "input": {}},
                       [{"type": "input_json_delta", "partial_json": ""}]
                       + [{"type": "input_json_delta", "partial_json": p} for p in split_text(raw, 10)]))
    stop = "tool_use" if kind == "call" else "end_turn"
    if not body.get("stream"):
        content = []
        for btype, start, deltas in blocks:
            block = dict(start)
            if btype == "thinking":
                block["thinking"] = THINKING
                block["signature"] = SIGNATURE
            elif btype == "text":
                block["text"] = text
            else:
                block["input"] = what[2]
            content.append(block)
        usage = anthropic_usage(u, True)
        usage["output_tokens"] = u["output"]
        answer = {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                  "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        return kind, "application/json", [json.dumps(answer).encode()]
    pieces = [sse("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": anthropic_usage(u, True)}}),
        sse("ping", {"type": "ping"})]
    for index, (_, start, deltas) in enumerate(blocks):
        pieces.append(sse("content_block_start", {"type": "content_block_start", "index": index,
                                                  "content_block": start}))
        for delta in deltas:
            pieces.append(sse("content_block_delta", {"type": "content_block_delta",
                                                      "index": index, "delta": delta}))
        pieces.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    pieces.append(sse("message_delta", {"type": "message_delta",
                                        "delta": {"stop_reason": stop, "stop_sequence": None},
                                        "usage": anthropic_usage(u, False)}))
    pieces.append(sse("message_stop", {"type": "message_stop"}))
    return kind, "text/event-stream; charset=utf-8", pieces


# ---------------------------------------------------------------- OpenAI Responses


def responses_last_result(items):
    if not isinstance(items, list):
        return None
    names = {i.get("call_id"): i.get("name") for i in items
             if isinstance(i, dict) and i.get("type") == "function_call"}
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            return names.get(item.get("call_id"), "") or ""
        if item.get("type", "message") == "message" and item.get("role") == "user":
            return None
    return None


def responses(body):
    kind, what = decide(body, body.get("tools"), responses_last_result(body.get("input")))
    u = USAGE["responses"][kind]
    now = int(time.time())
    resp_id = f"resp_scripted_{kind}_{now % 100000:05d}"
    base = {"id": resp_id, "object": "response", "created_at": now, "model": body.get("model", "gpt-scripted"),
            "status": "in_progress", "output": [], "usage": None, "error": None,
            "incomplete_details": None, "parallel_tool_calls": True, "tool_choice": "auto"}
    seq = iter(range(10_000))
    pieces, output = [], []

    def event(kind_, **data):
        pieces.append(sse(kind_, {"type": kind_, "sequence_number": next(seq), **data}))

    event("response.created", response=base)
    event("response.in_progress", response=base)
    index = 0
    if kind != "side":
        rs = {"id": "rs_scripted_0001", "type": "reasoning", "summary": [], "encrypted_content": None}
        event("response.output_item.added", output_index=index, item=rs)
        part = {"type": "summary_text", "text": ""}
        event("response.reasoning_summary_part.added", item_id=rs["id"], output_index=index,
              summary_index=0, part=part)
        for t in split_text(THINKING, 30):
            event("response.reasoning_summary_text.delta", item_id=rs["id"], output_index=index,
                  summary_index=0, delta=t)
        event("response.reasoning_summary_text.done", item_id=rs["id"], output_index=index,
              summary_index=0, text=THINKING)
        done_part = {"type": "summary_text", "text": THINKING}
        event("response.reasoning_summary_part.done", item_id=rs["id"], output_index=index,
              summary_index=0, part=done_part)
        rs = dict(rs, summary=[done_part], encrypted_content=ENCRYPTED)
        event("response.output_item.done", output_index=index, item=rs)
        output.append(rs)
        index += 1
    if kind == "call":
        namespace, name, args = what
        raw = dumps(args)
        shell = name in SHELL_TOOLS
        fc = {"id": "fc_scripted_0002" if shell else "fc_scripted_0001", "type": "function_call",
              "status": "in_progress", "arguments": "",
              "call_id": "call_ScriptedShell0001" if shell else "call_ScriptedAppend0001", "name": name}
        if namespace:
            fc["namespace"] = namespace
        event("response.output_item.added", output_index=index, item=fc)
        for p in split_text(raw, 10):
            event("response.function_call_arguments.delta", item_id=fc["id"], output_index=index, delta=p)
        event("response.function_call_arguments.done", item_id=fc["id"], output_index=index, arguments=raw)
        fc = dict(fc, status="completed", arguments=raw)
        event("response.output_item.done", output_index=index, item=fc)
        output.append(fc)
    else:
        msg = {"id": "msg_scripted_0001", "type": "message", "status": "in_progress",
               "role": "assistant", "content": []}
        event("response.output_item.added", output_index=index, item=msg)
        part = {"type": "output_text", "text": "", "annotations": []}
        event("response.content_part.added", item_id=msg["id"], output_index=index, content_index=0, part=part)
        for t in split_text(what, 12):
            event("response.output_text.delta", item_id=msg["id"], output_index=index,
                  content_index=0, delta=t, logprobs=[])
        event("response.output_text.done", item_id=msg["id"], output_index=index, content_index=0,
              text=what, logprobs=[])
        part = dict(part, text=what)
        event("response.content_part.done", item_id=msg["id"], output_index=index, content_index=0, part=part)
        msg = dict(msg, status="completed", content=[part])
        event("response.output_item.done", output_index=index, item=msg)
        output.append(msg)
    usage = {"input_tokens": u["input"], "input_tokens_details": {"cached_tokens": u["cached"]},
             "output_tokens": u["output"], "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
             "total_tokens": u["input"] + u["output"]}
    event("response.completed", response=dict(base, status="completed", output=output, usage=usage))
    if not body.get("stream"):
        final = dict(base, status="completed", output=output, usage=usage)
        return kind, "application/json", [json.dumps(final).encode()]
    return kind, "text/event-stream; charset=utf-8", pieces


# ---------------------------------------------------------------- Chat Completions


def chat_last_result(messages):
    names = {}
    for m in messages:
        for call in (m.get("tool_calls") or []) if m.get("role") == "assistant" else []:
            names[call.get("id")] = (call.get("function") or {}).get("name")
    for m in reversed(messages):
        if m.get("role") == "tool":
            return names.get(m.get("tool_call_id"), "") or ""
        if m.get("role") == "user":
            return None
    return None


def chat(body):
    kind, what = decide(body, body.get("tools"), chat_last_result(body.get("messages") or []))
    u = USAGE["chat"][kind]
    now = int(time.time())
    base = {"id": f"chatcmpl-scripted-{kind}-{now % 100000:05d}", "object": "chat.completion.chunk",
            "created": now, "model": body.get("model", "scripted-model"), "system_fingerprint": "fp_scripted"}
    usage = {"prompt_tokens": u["prompt"], "completion_tokens": u["completion"],
             "total_tokens": u["prompt"] + u["completion"],
             "prompt_tokens_details": {"cached_tokens": u["cached"]},
             "completion_tokens_details": {"reasoning_tokens": u["reasoning"]}}
    text = what if kind != "call" else ""
    call = None
    if kind == "call":
        call = {"id": "call_ScriptedAppend0001" if what[1].endswith("append") else "call_ScriptedSearch0001",
                "type": "function", "function": {"name": what[1], "arguments": dumps(what[2])}}
    finish = "tool_calls" if kind == "call" else "stop"
    if not body.get("stream"):
        message = {"role": "assistant", "content": text or None}
        if kind != "side":
            message["reasoning_content"] = THINKING
        if call:
            message["tool_calls"] = [call]
        answer = dict(base, object="chat.completion",
                      choices=[{"index": 0, "message": message, "finish_reason": finish}], usage=usage)
        return kind, "application/json", [json.dumps(answer).encode()]

    def chunk(delta, finish_reason=None, **extra):
        return f"data: {dumps(dict(base, choices=[{'index': 0, 'delta': delta, 'finish_reason': finish_reason}], **extra))}\n\n".encode()

    pieces = [chunk({"role": "assistant", "content": ""})]
    if kind != "side":
        pieces += [chunk({"reasoning_content": t}) for t in split_text(THINKING, 30)]
    if text:
        pieces += [chunk({"content": t}) for t in split_text(text, 12)]
    if call:
        raw = call["function"]["arguments"]
        pieces.append(chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                             "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        pieces += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in split_text(raw, 10)]
    pieces.append(chunk({}, finish))
    pieces.append(f"data: {dumps(dict(base, choices=[], usage=usage))}\n\n".encode())
    pieces.append(b"data: [DONE]\n\n")
    return kind, "text/event-stream", pieces


# ---------------------------------------------------------------- Gemini


def gemini_last_result(contents):
    for content in reversed(contents or []):
        if content.get("role", "user") != "user":
            continue
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                return (part["functionResponse"] or {}).get("name", "") or ""
        return None
    return None


def gemini(body, model, method, alt_sse, code_assist):
    """`method` is generateContent, streamGenerateContent or countTokens."""
    inner = body.get("request", body) if code_assist else body
    if method == "countTokens":
        return "count", "application/json", [dumps({"totalTokens": 1234}).encode()]
    kind, what = decide(inner, inner.get("tools"), gemini_last_result(inner.get("contents")))
    u = USAGE["gemini"][kind]
    usage = {"promptTokenCount": u["prompt"], "candidatesTokenCount": u["candidates"],
             "totalTokenCount": u["prompt"] + u["candidates"] + u["thoughts"],
             "cachedContentTokenCount": u["cached"], "thoughtsTokenCount": u["thoughts"],
             "promptTokensDetails": [{"modality": "TEXT", "tokenCount": u["prompt"]}],
             "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": u["cached"]}]}
    if not u["cached"]:
        del usage["cachedContentTokenCount"], usage["cacheTokensDetails"]
    version = model or "gemini-scripted"
    parts_seq = []  # one list of parts per chunk
    if kind != "side":
        parts_seq.append([{"text": "**Adding the note**\n\n" + THINKING, "thought": True}])
    if kind == "call":
        _, name, args = what
        parts_seq.append([{"functionCall": {"name": name, "args": args}, "thoughtSignature": THOUGHT_SIGNATURE}])
    else:
        parts_seq += [[{"text": t}] for t in split_text(what, 16)]
    chunks = []
    for i, parts in enumerate(parts_seq):
        last = i == len(parts_seq) - 1
        candidate = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if last:
            candidate["finishReason"] = "STOP"
        chunk = {"candidates": [candidate],
                 "usageMetadata": usage if last else {"promptTokenCount": u["prompt"],
                                                      "totalTokenCount": u["prompt"]},
                 "modelVersion": version, "responseId": f"scripted-{kind}-response"}
        chunks.append(chunk)
    if code_assist:
        chunks = [{"response": c, "traceId": "scripted-trace-0001"} for c in chunks]
    if method == "generateContent":
        parts = [p for parts in parts_seq for p in parts if "text" not in p or p.get("thought")]
        if kind != "call":
            parts.append({"text": what})
        whole = chunks[-1]["response"] if code_assist else chunks[-1]
        whole = dict(whole, candidates=[dict(whole["candidates"][0], content={"parts": parts, "role": "model"})])
        if code_assist:
            whole = {"response": whole, "traceId": "scripted-trace-0001"}
        return kind, "application/json", [json.dumps(whole, indent=2).encode()]
    if alt_sse:
        return kind, "text/event-stream", [f"data: {dumps(c)}\r\n\r\n".encode() for c in chunks]
    pieces = []
    for i, c in enumerate(chunks):
        pieces.append((b"[" if i == 0 else b",\r\n") + json.dumps(c, indent=2).encode() + b"\n")
    pieces.append(b"]")
    return kind, "application/json; charset=UTF-8", pieces
