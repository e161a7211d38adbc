"""Interop: the official MCP Python SDK client (unmodified) against notes-server.

Lists the five tools and calls each one, in the given connect mode, over Streamable HTTP
(`--url`) or stdio (`--stdio BINARY --file NOTES`). Exits 0 when every check passes, else prints
what failed and exits 1. Driven by tests/interop_mcp_sdk.rs; needs `pip install mcp`.

    python mcp_sdk_client.py --url http://127.0.0.1:8080/mcp --mode auto
    python mcp_sdk_client.py --stdio target/debug/notes-server --file /tmp/db --mode legacy
    python mcp_sdk_client.py --stdio target/debug/notes-server --file /tmp/db \
        --wrap target/debug/tracer --db /tmp/tracer.db
"""

import argparse
import asyncio
import sys

import mcp
from mcp import Client, MCPError, StdioServerParameters

EXPECTED_TOOLS = ["read", "write", "append", "update", "clear"]
EXPECTED_VERSION = {"auto": "2026-07-28", "2026-07-28": "2026-07-28", "legacy": "2025-11-25"}


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


async def call_ok(client: Client, name: str, arguments: dict | None = None) -> str:
    result = await client.call_tool(name, arguments)
    check(not result.is_error, f"{name} {arguments} failed: {text_of(result)}")
    return text_of(result)


async def exercise(client: Client, mode: str) -> None:
    check(
        client.protocol_version == EXPECTED_VERSION[mode],
        f"negotiated {client.protocol_version}, expected {EXPECTED_VERSION[mode]}",
    )
    check(client.server_info is not None and client.server_info.name == "notes-server",
          f"server info {client.server_info}")
    listing = await client.list_tools()
    names = [tool.name for tool in listing.tools]
    check(names == EXPECTED_TOOLS, f"tools/list gave {names}")
    for tool in listing.tools:
        schema = tool.input_schema
        check(schema.get("type") == "object" and schema.get("additionalProperties") is False,
              f"{tool.name} schema {schema}")

    await call_ok(client, "clear")
    check(await call_ok(client, "read") == "The notes file is empty.", "read after clear")
    await call_ok(client, "append", {"content": "buy milk"})
    await call_ok(client, "append", {"content": "buy eggs"})
    check(await call_ok(client, "read") == "buy milk\nbuy eggs\n", "read after two appends")
    replaced = await call_ok(client, "update", {"search": "buy", "replace": "get"})
    check("2 occurrences" in replaced, f"update said {replaced!r}")
    check(await call_ok(client, "read") == "get milk\nget eggs\n", "read after update")
    await call_ok(client, "write", {"content": "only this"})
    check(await call_ok(client, "read") == "only this", "read after write")

    # A tool error is a normal result with isError, for the model to fix.
    missing = await client.call_tool("append", {})
    check(missing.is_error is True and text_of(missing) == "Param (content) is required",
          f"append without content gave {missing}")
    not_found = await client.call_tool("update", {"search": "absent", "replace": "x"})
    check(not_found.is_error is True, f"update of absent text gave {not_found}")

    # An unknown tool is a protocol error (-32602).
    try:
        await client.call_tool("delete_everything", {})
    except MCPError as error:
        check(error.code == -32602 and "Unknown tool: delete_everything" in error.message,
              f"unknown tool raised {error.code} {error.message}")
    else:
        raise AssertionError("unknown tool did not raise")

    await call_ok(client, "clear")
    check(await call_ok(client, "read") == "The notes file is empty.", "final clear")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp")
    target.add_argument("--stdio", metavar="BINARY", help="notes-server binary to launch with --stdio")
    parser.add_argument("--file", help="notes file for --stdio")
    parser.add_argument("--wrap", metavar="TRACER",
                        help="launch the stdio server as `TRACER --db DB wrap --name notes -- BINARY ...`")
    parser.add_argument("--db", help="tracer database for --wrap")
    parser.add_argument("--mode", default="auto", choices=sorted(EXPECTED_VERSION))
    args = parser.parse_args()

    if args.url:
        server = args.url
    else:
        server_args = ["--stdio", "--file", args.file]
        if args.wrap:
            server = StdioServerParameters(
                command=args.wrap,
                args=["--db", args.db, "wrap", "--name", "notes", "--", args.stdio, *server_args],
            )
        else:
            server = StdioServerParameters(command=args.stdio, args=server_args)
    try:
        async with Client(server, mode=args.mode, read_timeout_seconds=20) as client:
            await exercise(client, args.mode)
    except AssertionError as failure:
        print(f"FAIL ({args.mode}): {failure}", file=sys.stderr)
        return 1
    print(f"ok: mcp {mcp_version()} mode={args.mode} transport={'http' if args.url else 'stdio'}")
    return 0


def mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
