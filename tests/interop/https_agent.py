"""Interop: an agent made of the official OpenAI and MCP Python SDKs (unmodified) that reaches its
HTTPS servers only through HTTPS_PROXY (tracer's forward proxy), trusting the bundle that
`tracer ca --env` names in SSL_CERT_FILE.

Usage: https_agent.py MODEL_BASE_URL MCP_URL   (e.g. https://api.example.test/v1 https://notes.example.test/mcp)

1. The buy-milk walk with Chat Completions: tools/list, the model asks for `append`, tools/call,
   the model answers.
2. The same shape with the Responses API: the model asks for `read` (a function_call item), the
   tool runs, a function_call_output goes back; then a streamed Responses answer.
3. A streamed Chat Completions answer.
Prints a JSON summary on stdout; exits 1 on a failed check.
"""

import asyncio
import json
import sys

from mcp import Client
from openai import AsyncOpenAI


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def text_of(result) -> str:
    return "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")


async def main() -> int:
    base_url, mcp_url = sys.argv[1], sys.argv[2]
    model = AsyncOpenAI(base_url=base_url, api_key="sk-test-secret", max_retries=0, timeout=30)
    summary = {}
    async with Client(mcp_url, read_timeout_seconds=20) as mcp:
        listing = await mcp.list_tools()
        tools = [
            {"type": "function",
             "function": {"name": t.name, "description": t.description or "",
                          "parameters": t.input_schema}}
            for t in listing.tools
        ]
        summary["tools"] = [t.name for t in listing.tools]

        # 1. Chat Completions, the article's walk.
        messages = [{"role": "user", "content": "Add buy milk to my notes"}]
        first = await model.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        call = first.choices[0].message.tool_calls[0]
        arguments = json.loads(call.function.arguments)
        result = await mcp.call_tool(call.function.name, arguments)
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": text_of(result)})
        second = await model.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
        summary["chat"] = {"tool": call.function.name, "arguments": arguments,
                           "result": text_of(result), "reply": second.choices[0].message.content}

        # 2. The Responses API: function_call, function_call_output, then a streamed answer.
        flat = [{"type": "function", "name": t["function"]["name"],
                 "parameters": t["function"]["parameters"], "strict": False} for t in tools]
        items = [{"role": "user", "content": "What is on my notes?"}]
        asked = await model.responses.create(model="gpt-test", input=items, tools=flat)
        fc = next(o for o in asked.output if o.type == "function_call")
        read = await mcp.call_tool(fc.name, json.loads(fc.arguments or "{}"))
        items.append({"type": "function_call", "call_id": fc.call_id, "name": fc.name,
                      "arguments": fc.arguments})
        items.append({"type": "function_call_output", "call_id": fc.call_id, "output": text_of(read)})
        answered = await model.responses.create(model="gpt-test", input=items, tools=flat)
        streamed, done = [], None
        async with await model.responses.create(
            model="gpt-test", input=[{"role": "user", "content": "Say hello"}], stream=True
        ) as stream:
            async for event in stream:
                if event.type == "response.output_text.delta":
                    streamed.append(event.delta)
                elif event.type == "response.completed":
                    done = event.response.status
        summary["responses"] = {"tool": fc.name, "notes": text_of(read),
                                "reply": answered.output_text, "streamed": "".join(streamed),
                                "status": done}

    # 3. A streamed chat completion.
    pieces = []
    stream = await model.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "Say hi"}], stream=True)
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                pieces.append(choice.delta.content)
    summary["chat_stream"] = "".join(pieces)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except AssertionError as failure:
        print(f"FAIL: {failure}", file=sys.stderr)
        sys.exit(1)
