"""The MCP tour: the official MCP Python SDK client (unmodified) drives the reference server
`@modelcontextprotocol/server-everything` through every feature it has, and logs every JSON-RPC
message it sends or receives, one JSON line each, to --log (so a test can count them).

    python mcp_tour.py --stdio node .../server-everything/dist/index.js stdio --log sent.ndjson
    python mcp_tour.py --stdio tracer wrap --db t.db -- node .../dist/index.js stdio --log l.ndjson
    python mcp_tour.py --url http://127.0.0.1:9100/mcp --log l.ndjson

Features: discovery and initialize, ping, tools (text, image, annotated, resource links, embedded
resource, gzip resource, structured content, long-running with progress), sampling, elicitation
(form, URL, -32042), roots (list, list_changed), resources (list, templates, read, subscribe,
updated, unsubscribe), prompts (list, get with arguments, embedded resource), completion,
logging (setLevel, notifications/message), tasks (tools/call as a task, tasks/get, tasks/list,
tasks/result, notifications/tasks/status) and a withdrawn call (notifications/cancelled).
Prints `ok: N outcomes` and exits 0 when every step got what it should.
"""

import argparse
import asyncio
import base64
import json
import sys
import time

import anyio
import mcp
from mcp import Client, StdioServerParameters
from mcp_types import (
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    Root,
    TextContent,
)

OUTCOMES: list[str] = []


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)
    OUTCOMES.append(what)


class LoggingTransport:
    """Wraps a transport; every JSON-RPC message through it is written to the log."""

    def __init__(self, inner, log):
        self.inner = inner
        self.log = log
        self.tasks = None

    def write(self, way: str, message) -> None:
        body = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
        self.log.write(json.dumps({"way": way, "at": time.time(), "message": body}) + "\n")
        self.log.flush()

    async def __aenter__(self):
        read, write = await self.inner.__aenter__()
        to_client_send, to_client = anyio.create_memory_object_stream(100)
        from_client, from_client_receive = anyio.create_memory_object_stream(100)
        self.tasks = anyio.create_task_group()
        await self.tasks.__aenter__()

        async def inbound():
            async with to_client_send:
                async for item in read:
                    if not isinstance(item, Exception):
                        self.write("received", item)
                    await to_client_send.send(item)

        async def outbound():
            async with from_client_receive:
                async for item in from_client_receive:
                    self.write("sent", item)
                    await write.send(item)

        self.tasks.start_soon(inbound)
        self.tasks.start_soon(outbound)
        return to_client, from_client

    async def __aexit__(self, *exc):
        self.tasks.cancel_scope.cancel()
        await self.tasks.__aexit__(None, None, None)
        return await self.inner.__aexit__(*exc)


async def sampling(_context, params):
    asked = " ".join(m.content.text for m in params.messages if getattr(m.content, "type", "") == "text")
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=f"A short answer to: {asked[:40]}"),
        model="tour-model",
        stop_reason="endTurn",
    )


async def elicitation(_context, params):
    if getattr(params, "mode", None) == "url":
        return ElicitResult(action="accept")
    if "clarif" in params.message.lower() or "ambiguous" in params.message.lower():
        return ElicitResult(action="decline")
    return ElicitResult(
        action="accept",
        content={"name": "Ada", "check": True, "email": "ada@example.com", "integer": 7,
                 "number": 1.5, "untitledSingleSelectEnum": "option1"},
    )


async def roots(_context):
    return ListRootsResult(roots=[Root(uri="file:///work/project", name="project")])


LOGS: list[str] = []


async def logged(params):
    LOGS.append(str(params.level))


async def raw(client: Client, method: str, params: dict | None) -> dict:
    return await client.session._dispatcher.send_raw_request(method, params, {})


async def tour(client: Client) -> None:
    await client.send_ping()
    check(True, "ping answered")
    tools = {t.name for t in (await client.list_tools()).tools}
    check("echo" in tools and "trigger-sampling-request" in tools, f"tools/list: {len(tools)} tools")

    echo = await client.call_tool("echo", {"message": "hello tour"})
    check("hello tour" in echo.content[0].text, "echo")
    image = await client.call_tool("get-tiny-image", {})
    check(any(b.type == "image" for b in image.content), "tiny image")
    annotated = await client.call_tool("get-annotated-message", {"messageType": "error", "includeImage": True})
    check(not annotated.is_error and annotated.content[0].annotations is not None, "annotated message")
    links = await client.call_tool("get-resource-links", {"count": 2})
    check(sum(b.type == "resource_link" for b in links.content) == 2, "resource links")
    reference = await client.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 1})
    check(any(b.type == "resource" for b in reference.content), "embedded resource")
    data = "data:text/plain;base64," + base64.b64encode(b"tour text " * 30).decode()
    gz = await client.call_tool("gzip-file-as-resource", {"name": "tour.txt.gz", "data": data, "outputType": "resource"})
    check(any(b.type == "resource" for b in gz.content), "gzip embedded resource")
    structured = await client.call_tool("get-structured-content", {"location": "New York"})
    check(structured.structured_content is not None, "structured content")
    total = await client.call_tool("get-sum", {"a": 2, "b": 3})
    check("5" in total.content[0].text, "get-sum")

    progress: list[float] = []

    async def on_progress(done, total, message):
        progress.append(done)

    await client.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 3}, progress_callback=on_progress)
    check(len(progress) == 3, f"progress notifications: {len(progress)}")

    sampled = await client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 20})
    check("tour-model" in json.dumps([b.model_dump() for b in sampled.content]), "sampling")
    form = await client.call_tool("trigger-elicitation-request", {})
    check("accept" in json.dumps([b.model_dump() for b in form.content]), "form elicitation")
    url = await client.call_tool("trigger-url-elicitation", {"url": "https://example.com/login"})
    check(not url.is_error, "URL elicitation")
    try:
        await client.call_tool("trigger-url-elicitation", {"url": "https://example.com/pay", "errorPath": True})
        check(True, "URL elicitation error path handled by the SDK")
    except mcp.MCPError as error:
        check(error.error.code == -32042, f"URL elicitation required: {error.error.code}")
    roots_result = await client.call_tool("get-roots-list", {})
    check("project" in json.dumps([b.model_dump() for b in roots_result.content]), "roots/list")
    await client.send_roots_list_changed()
    check(True, "roots list_changed sent")

    listed = await client.list_resources()
    check(len(listed.resources) > 0, "resources/list")
    templates = await client.list_resource_templates()
    check(len(templates.resource_templates) > 0, "resources/templates/list")
    text = await client.read_resource("demo://resource/dynamic/text/1")
    check(len(text.contents) == 1, "resources/read text")
    blob = await client.read_resource("demo://resource/dynamic/blob/1")
    check(len(blob.contents) == 1, "resources/read blob")
    await client.subscribe_resource("demo://resource/dynamic/text/1")
    check(True, "resources/subscribe")
    await client.call_tool("toggle-subscriber-updates", {})
    await client.set_logging_level("debug")
    check(True, "logging/setLevel")
    await client.call_tool("toggle-simulated-logging", {})
    await anyio.sleep(6)
    await client.call_tool("toggle-simulated-logging", {})
    await client.call_tool("toggle-subscriber-updates", {})
    await client.unsubscribe_resource("demo://resource/dynamic/text/1")
    check(len(LOGS) > 0, f"notifications/message: {len(LOGS)}")

    prompts = await client.list_prompts()
    check(len(prompts.prompts) > 0, "prompts/list")
    simple = await client.get_prompt("simple-prompt")
    check(len(simple.messages) > 0, "prompts/get simple")
    args = await client.get_prompt("args-prompt", {"city": "Paris", "state": "IDF"})
    check("Paris" in json.dumps([m.model_dump() for m in args.messages]), "prompts/get arguments")
    embedded = await client.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
    check(len(embedded.messages) > 1, "prompts/get embedded resource")
    from mcp_types import PromptReference
    completion = await client.complete(PromptReference(type="ref/prompt", name="completable-prompt"),
                                       {"name": "department", "value": "E"})
    check(len(completion.completion.values) > 0, "completion/complete")

    created = await raw(client, "tools/call", {"name": "simulate-research-query",
                                               "arguments": {"topic": "tides", "ambiguous": False},
                                               "task": {"ttl": 60000}})
    task_id = created["task"]["taskId"]
    check(bool(task_id), "tools/call as a task")
    status = created["task"]["status"]
    for _ in range(60):
        got = await raw(client, "tasks/get", {"taskId": task_id})
        status = got["status"]
        if status in ("completed", "failed", "cancelled"):
            break
        await anyio.sleep(0.5)
    check(status == "completed", f"tasks/get: {status}")
    listed_tasks = await raw(client, "tasks/list", {})
    check(any(t["taskId"] == task_id for t in listed_tasks["tasks"]), "tasks/list")
    result = await raw(client, "tasks/result", {"taskId": task_id})
    check("content" in result, "tasks/result")

    with anyio.move_on_after(0.6):
        await client.call_tool("trigger-long-running-operation", {"duration": 5, "steps": 5})
    await anyio.sleep(0.5)
    check(True, "a withdrawn call (notifications/cancelled)")
    await client.send_ping()


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--log", required=True)
    parser.add_argument("--mode", default="auto")
    # Everything after --stdio is the server's command line (it may hold its own `--`).
    argv = sys.argv[1:]
    command = argv[argv.index("--stdio") + 1:] if "--stdio" in argv else []
    argv = argv[:argv.index("--stdio")] if "--stdio" in argv else argv
    args = parser.parse_args(argv)
    args.stdio = command
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if args.stdio:
        inner = stdio_client(StdioServerParameters(command=args.stdio[0], args=args.stdio[1:]))
    else:
        inner = streamable_http_client(args.url)
    with open(args.log, "w") as log:
        transport = LoggingTransport(inner, log)
        async with Client(transport, mode=args.mode, sampling_callback=sampling,
                          elicitation_callback=elicitation, list_roots_callback=roots,
                          logging_callback=logged, read_timeout_seconds=30) as client:
            await tour(client)
    print(f"ok: {len(OUTCOMES)} outcomes")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
