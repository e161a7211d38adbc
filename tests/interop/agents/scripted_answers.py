"""The scripted model's answers, shaped like the real APIs: Anthropic Messages, OpenAI Responses,
Chat Completions and Gemini (plain, JSON-array stream, SSE, Code Assist). Each answer is a list of
wire pieces (bytes), one per streamed event, so the server can send, compress and pace them.

The script is the buy-milk walk: a request whose conversation carries no result of the notes tool
gets a call to it (append "buy milk"); one that carries the result gets the final text. Side calls
(titles, routers, next-speaker checks) get a small sensible answer."""

import json

NOTE = "buy milk"
FINAL_TEXT = 'Done: I added "buy milk" to your notes.'
THINKING = "The user wants a note added. The notes server has an append tool; I will call it."
SIGNATURE = "EqQBCkYIBxgCKkBzY3JpcHRlZC1zaWduYXR1cmUtZm9yLXRlc3RzLW9ubHktbm90LXJlYWwtYnl0ZXM="
ENCRYPTED = "gAAAAABoU2NyaXB0ZWQtZW5jcnlwdGVkLXJlYXNvbmluZy1mb3ItdGVzdHMtb25seS1ub3QtcmVhbA=="
THOUGHT_SIGNATURE = "CiQBVthOsFNjcmlwdGVkLXRob3VnaHQtc2lnbmF0dXJlLWZvci10ZXN0cw=="

# The usage each answer reports, per API and turn ("call": the tool-call turn, "final": the last,
# "side": titles and routers). Anthropic counts cache reads and writes apart from input_tokens;
# OpenAI and Gemini count cached tokens inside the prompt.
USAGE = {
    "anthropic": {
        "call": dict(input=4957, cache_write=17758, cache_5m=12758, cache_1h=5000, cache_read=16901, output=133),
        "final": dict(input=312, cache_write=420, cache_5m=420, cache_1h=0, cache_read=34659, output=41),
        "side": dict(input=187, cache_write=0, cache_5m=0, cache_1h=0, cache_read=0, output=12),
    },
    "responses": {
        "call": dict(input=12034, cached=11008, output=187, reasoning=128),
        "final": dict(input=12390, cached=12032, output=58, reasoning=32),
        "side": dict(input=220, cached=0, output=9, reasoning=0),
    },
    "chat": {
        "call": dict(prompt=9876, cached=8192, completion=95, reasoning=64),
        "final": dict(prompt=10120, cached=9856, completion=40, reasoning=16),
        "side": dict(prompt=180, cached=0, completion=7, reasoning=0),
    },
    "gemini": {
        "call": dict(prompt=10432, cached=8190, candidates=27, thoughts=100),
        "final": dict(prompt=10596, cached=10240, candidates=14, thoughts=42),
        "side": dict(prompt=1200, cached=0, candidates=20, thoughts=0),
    },
}


def dumps(value):
    return json.dumps(value, separators=(",", ":"))


def sse(event, data):
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {dumps(data)}\n\n".encode()


def split_text(text, size=12):
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def sample_from_schema(schema, name=""):
    """A value a JSON schema accepts: routers want complexity_score, next-speaker checks 'user'."""
    if not isinstance(schema, dict):
        return "scripted"
    kind = str(schema.get("type", "object")).lower()
    if "enum" in schema and schema["enum"]:
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {key: sample_from_schema(sub, key) for key, sub in props.items()}
    if kind == "array":
        return [sample_from_schema(schema.get("items", {}), name)]
    if kind in ("integer", "number"):
        return 30 if "complexity" in name else 1
    if kind == "boolean":
        return False
    if "title" in name:
        return "Add buy milk to notes"
    return "scripted answer"


def side_text(body):
    """The text a side call (title, router, check) gets: JSON when the request asks for JSON."""
    schema = find_schema(body)
    if schema is not None:
        return dumps(sample_from_schema(schema))
    raw = dumps(body)
    if "complexity_score" in raw:
        return dumps({"complexity_reasoning": "A single note to add.", "complexity_score": 30})
    if "next_speaker" in raw:
        return dumps({"reasoning": "The task is done.", "next_speaker": "user"})
    if "title" in raw.lower():
        return "Add buy milk to notes"
    return "OK"


def find_schema(body):
    """A JSON schema the request asks the answer to follow, wherever the API puts it."""
    if not isinstance(body, dict):
        return None
    fmt = (body.get("output_config") or {}).get("format") or {}
    if isinstance(fmt, dict) and fmt.get("schema"):
        return fmt["schema"]
    config = body.get("generationConfig") or (body.get("request") or {}).get("generationConfig") or {}
    for key in ("responseJsonSchema", "responseSchema", "_responseJsonSchema"):
        if config.get(key):
            return config[key]
    text = (body.get("text") or {}).get("format") or {}
    if isinstance(text, dict) and text.get("schema"):
        return text["schema"]
    response_format = body.get("response_format") or {}
    if isinstance(response_format, dict) and (response_format.get("json_schema") or {}).get("schema"):
        return response_format["json_schema"]["schema"]
    return None


def tool_names(tools):
    """Every callable tool name in a request's tools, namespaced ones as (namespace, name)."""
    names = []
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                names.append((tool.get("name"), inner.get("name")))
            continue
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            names.append((None, decl.get("name")))
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if fn.get("name"):
            names.append((None, fn["name"]))
    return names


def pick_tool(tools):
    """What the script calls next: the notes append tool, else a tool search that can load it."""
    names = tool_names(tools)
    for namespace, name in names:
        if name and name.endswith("append") and ("notes" in name or "notes" in (namespace or "")):
            return namespace, name, {"content": NOTE}
    for namespace, name in names:
        if name == "tool_search":
            return namespace, name, {"query": "select:mcp__notes__append"}
    return None
