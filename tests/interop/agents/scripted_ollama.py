"""Ollama's native API for the scripted upstream (stdlib only): `GET /api/tags`, `/api/ps`,
`/api/version`, `POST /api/show` and `POST /api/chat` (NDJSON when streamed, as real Ollama).

The phonebook script (open-webui + mcpo, issue 30): asked "What is the phone number of Ashley
Johnson?" with tools offered, the model calls the first tool with `{"name": "Ashley Johnson"}`;
once a `tool` message carries the result, or the host pasted it into the prompt, it answers with
the number it finds there. open-webui's legacy tool selection (no tools offered, the tools
described in the system prompt after `Available Tools:`, `stream: false`) gets the selection
JSON `{"tool_calls": [{"name": …, "parameters": {…}}]}`."""

import json
import re
import time

MODEL = "scripted-llama"
PERSON = "Ashley Johnson"
NUMBER = re.compile(r"555-\d+")


def stamp():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime())


def tags():
    model = {"name": f"{MODEL}:latest", "model": f"{MODEL}:latest", "modified_at": stamp(),
             "size": 4661224676, "digest": "0" * 64,
             "details": {"parent_model": "", "format": "gguf", "family": "llama", "families": ["llama"],
                         "parameter_size": "8.0B", "quantization_level": "Q4_K_M"}}
    return {"models": [model]}


def text_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def selection_tools(system):
    """The tool specs open-webui's legacy prompt lists after `Available Tools:`."""
    start = system.find("Available Tools:")
    if start < 0:
        return None
    rest = system[start + len("Available Tools:"):].lstrip()
    try:
        specs, _ = json.JSONDecoder().raw_decode(rest)
    except ValueError:
        return None
    return specs if isinstance(specs, list) else None


def arguments_for(parameters):
    properties = (parameters or {}).get("properties") or {}
    return {name: PERSON for name in properties} or {"name": PERSON}


def decide(body):
    """(kind, assistant message) for a chat request."""
    messages = body.get("messages") or []
    system = "\n".join(text_of(m) for m in messages if m.get("role") == "system")
    everything = "\n".join(text_of(m) for m in messages)
    tools = body.get("tools") or []
    specs = selection_tools(system)
    if specs is not None and not tools:
        calls = [{"name": specs[0].get("name"), "parameters": arguments_for(specs[0].get("parameters"))}] if specs else []
        return "selection", {"role": "assistant", "content": json.dumps({"tool_calls": calls})}
    results = [text_of(m) for m in messages if m.get("role") == "tool"]
    found = NUMBER.search("\n".join(results) if results else everything)
    if tools and not results:
        function = tools[0].get("function") or {}
        call = {"function": {"name": function.get("name"), "arguments": arguments_for(function.get("parameters"))}}
        return "call", {"role": "assistant", "content": "", "tool_calls": [call]}
    if found:
        return "final", {"role": "assistant", "content": f"{PERSON}'s phone number is {found.group(0)}."}
    return "side", {"role": "assistant", "content": "Phonebook lookup"}


def chat(body):
    kind, message = decide(body)
    model = body.get("model") or MODEL
    done = {"model": model, "created_at": stamp(), "done": True, "done_reason": "stop",
            "total_duration": 412000000, "load_duration": 21000000, "prompt_eval_count": 231,
            "prompt_eval_duration": 150000000, "eval_count": 17, "eval_duration": 240000000}
    if body.get("stream") is False:
        answer = {"model": model, "created_at": stamp(), "message": message, **{k: v for k, v in done.items() if k not in ("model", "created_at")}}
        return kind, "application/json", [json.dumps(answer).encode()], False
    pieces = []
    if message.get("tool_calls"):
        chunk = {"model": model, "created_at": stamp(), "message": message, "done": False}
        pieces.append((json.dumps(chunk) + "\n").encode())
    else:
        text = message["content"]
        for start in range(0, len(text), 8):
            chunk = {"model": model, "created_at": stamp(),
                     "message": {"role": "assistant", "content": text[start:start + 8]}, "done": False}
            pieces.append((json.dumps(chunk) + "\n").encode())
    done["message"] = {"role": "assistant", "content": ""}
    pieces.append((json.dumps(done) + "\n").encode())
    return kind, "application/x-ndjson", pieces, True


def route(method, path, body):
    """(kind, status, content type, pieces, streamed) for an Ollama path, or None."""
    if path == "/api/tags":
        return "ollama:tags", 200, "application/json", [json.dumps(tags()).encode()], False
    if path == "/api/ps":
        return "ollama:ps", 200, "application/json", [json.dumps({"models": []}).encode()], False
    if path == "/api/version":
        return "ollama:version", 200, "application/json", [b'{"version":"0.12.6"}'], False
    if path == "/api/show" and method == "POST":
        show = {"modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
                "details": tags()["models"][0]["details"], "capabilities": ["completion", "tools"]}
        return "ollama:show", 200, "application/json", [json.dumps(show).encode()], False
    if path == "/api/chat" and method == "POST":
        kind, ctype, pieces, streamed = chat(body)
        return kind, 200, ctype, pieces, streamed
    return None
