"""Interop: the official MCP Python SDK client (unmodified) against `tracer mcp`.

Lists the six tools and calls each one on a database holding the sample traces, in the given
connect mode, over Streamable HTTP (`--url`) or stdio (`--tracer BINARY --db DB`). Exits 0 when
every check passes, else prints what failed and exits 1. Driven by tests/faces/interop_mcp.rs.

    python mcp_sdk_tracer_client.py --url http://127.0.0.1:8765/mcp --mode auto
    python mcp_sdk_tracer_client.py --tracer target/debug/tracer --db /tmp/t.db --mode legacy
"""

import argparse
import asyncio
import sys

from mcp import Client, MCPError, StdioServerParameters

EXPECTED_TOOLS = ["list_traces", "get_trace", "get_message", "search", "tool_stats", "diff_traces"]
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}
BUY_MILK = "f0de9080c655d264f0fe0380c6b54c51"
NEWEST = "e99b8aca44b0142202f81b643a3c5a02"
PLUMBER = "3b30683ac3038d57580bbf907b1d17ab"


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


async def call_ok(client: Client, name: str, arguments: dict | None = None):
    result = await client.call_tool(name, arguments)
    check(not result.is_error, f"{name} {arguments} failed: {text_of(result)}")
    check(result.structured_content is not None, f"{name} gave no structuredContent")
    return text_of(result), result.structured_content


async def tool_error(client: Client, name: str, arguments: dict) -> str:
    result = await client.call_tool(name, arguments)
    check(result.is_error is True, f"{name} {arguments} should be a tool error: {result}")
    return text_of(result)


async def exercise(client: Client, mode: str) -> None:
    check(client.protocol_version == EXPECTED_VERSION[mode],
          f"negotiated {client.protocol_version}, expected {EXPECTED_VERSION[mode]}")
    check(client.server_info is not None and client.server_info.name == "tracer",
          f"server info {client.server_info}")
    listing = await client.list_tools()
    names = [tool.name for tool in listing.tools]
    check(names == EXPECTED_TOOLS, f"tools/list gave {names}")
    for tool in listing.tools:
        check(tool.annotations is not None and tool.annotations.read_only_hint is True,
              f"{tool.name} is not marked read-only")

    text, data = await call_ok(client, "list_traces", {"limit": 3})
    check(len(data["traces"]) == 3 and data["more"] is True, f"list_traces limit 3: {data}")
    check(data["traces"][0]["id"] == NEWEST, f"newest first: {data['traces'][0]}")
    check(NEWEST[:8] in text and "get_trace" in text, f"list_traces text: {text}")
    _, data = await call_ok(client, "list_traces", {"tool": "append", "since": "2020-01-01T00:00:00Z"})
    check({t["title"] for t in data["traces"]} ==
          {"Add buy milk to my notes", "Add call the plumber to my notes"}, f"tool=append: {data}")
    _, data = await call_ok(client, "list_traces", {"status": "tool error"})
    check([t["id"][:8] for t in data["traces"]] == ["3b30683a"], f"status=tool error: {data}")

    text, data = await call_ok(client, "get_trace", {"id": BUY_MILK[:6]})
    check(len(data["messages"]) == 10 and data["trace"]["id"] == BUY_MILK, f"get_trace: {data}")
    check(" 5 ← ollama → agent" in text and "append" in text, f"get_trace text: {text}")
    check("get_message" in text, "get_trace names what to ask next")
    _, data = await call_ok(client, "get_trace", {"id": BUY_MILK, "detail": "messages"})
    check("stateless" in data["messages"][7]["explanation"], f"explanations: {data['messages'][7]}")

    text, data = await call_ok(client, "get_message", {"trace": BUY_MILK[:8], "number": 6})
    check(data["direction"] == "request" and '"buy milk"' in data["body"], f"get_message: {data}")
    check(any(h["name"].lower() == "content-type" for h in data["headers"]), "headers")
    text, data = await call_ok(client, "get_message",
                               {"trace": BUY_MILK[:8], "number": 4, "max_bytes": 200})
    check(data["body_cut"] is True and len(data["body"].encode()) <= 200, f"cut: {data['body_cut']}")
    check("larger max_bytes" in text, f"the cut is said: {text}")

    text, data = await call_ok(client, "search", {"text": "BUY MILK"})
    hits = {t["trace"]: t["messages"] for t in data["traces"]}
    check(BUY_MILK in hits and 6 in hits[BUY_MILK], f"search: {data}")

    text, data = await call_ok(client, "tool_stats", {})
    stats = {t["tool"]: t for t in data["tools"]}
    check(stats["append"]["calls"] == 3 and stats["append"]["tool_errors"] == 1, f"stats: {stats}")
    check("qwen2.5:7b" in stats["read"]["asked_by_models"], f"models: {stats['read']}")
    check(stats["read"]["p50_ms"] is not None, "p50")

    text, data = await call_ok(client, "diff_traces", {"a": BUY_MILK[:6], "b": PLUMBER[:8]})
    check(set(data) == {"a", "b", "summary", "same_tool_calls", "tool_calls_a", "tool_calls_b",
                        "reply_a", "reply_b", "steps"}, f"diff_traces keys: {sorted(data)}")
    check(data["a"] == BUY_MILK and data["b"] == PLUMBER and data["same_tool_calls"] is False,
          f"diff_traces: {data}")
    check(data["tool_calls_b"] == [{"name": "append", "arguments": {"text": "call the plumber"}},
                                   {"name": "append", "arguments": {"content": "call the plumber"}}],
          f"tool_calls_b: {data['tool_calls_b']}")
    check(len(data["steps"]) == 3 and data["steps"][2]["a"] is None, f"steps: {data['steps']}")
    check(text.splitlines()[0] == data["summary"], f"the summary comes first: {text}")
    check("B got 1 tool error" in data["summary"], data["summary"])
    check(f"get_trace with id {BUY_MILK} (A) or {PLUMBER} (B)" in text, f"next: {text}")

    # Bad arguments are tool errors the model can act on.
    message = await tool_error(client, "get_trace", {"id": "3f9z"})
    check(message == "No trace starts with 3f9z; list_traces shows the ids", message)
    message = await tool_error(client, "list_traces", {"since": "yesterday"})
    check("RFC 3339" in message, message)
    message = await tool_error(client, "get_message", {"trace": BUY_MILK, "number": 11})
    check("messages 1 to 10" in message, message)
    message = await tool_error(client, "search", {"text": "milk", "colour": "red"})
    check("Unknown argument (colour)" in message, message)
    message = await tool_error(client, "diff_traces", {"a": BUY_MILK, "b": "3f9z"})
    check(message == "No trace starts with 3f9z; list_traces shows the ids", message)

    # An unknown tool is a protocol error (-32602).
    try:
        await client.call_tool("delete_traces", {})
    except MCPError as error:
        check(error.code == -32602 and "Unknown tool: delete_traces" in error.message,
              f"unknown tool raised {error.code} {error.message}")
    else:
        raise AssertionError("unknown tool did not raise")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="Streamable HTTP endpoint")
    target.add_argument("--tracer", metavar="BINARY", help="tracer binary to launch as `mcp --stdio`")
    parser.add_argument("--db", help="tracer database for --tracer")
    parser.add_argument("--mode", default="auto", choices=sorted(EXPECTED_VERSION))
    args = parser.parse_args()
    server = args.url or StdioServerParameters(
        command=args.tracer, args=["--db", args.db, "mcp", "--stdio"])
    failure = None
    async with Client(server, mode=args.mode, read_timeout_seconds=20) as client:
        try:
            await exercise(client, args.mode)
        except AssertionError as failed:
            failure = failed
    if failure is not None:
        print(f"FAIL ({args.mode}): {failure}", file=sys.stderr)
        return 1
    print(f"ok: mode={args.mode} transport={'http' if args.url else 'stdio'}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
