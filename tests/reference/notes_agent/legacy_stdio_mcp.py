"""A handshake-era (2025-11-25) MCP server on stdio, for the agent's tests.

It refuses `server/discover` (-32601), needs `initialize`, pings the client once after the
handshake, and offers one tool, `echo_trace`, whose result reports the request's
`_meta.traceparent`, whether the client answered the ping, and whether `initialized` arrived.
Standard library only.
"""

import json
import sys

state = {"initialized": False, "pong": False}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method is None:
        if message.get("id") == "ping-1" and message.get("result") == {}:
            state["pong"] = True
        continue
    if method == "notifications/initialized":
        state["initialized"] = True
        send({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
        continue
    if "id" not in message:
        continue
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy-echo", "version": "1.0.0"},
        }
    elif method == "tools/list":
        reply["result"] = {"tools": [{
            "name": "echo_trace",
            "description": "Report the trace context of this call",
            "inputSchema": {"type": "object", "additionalProperties": False},
        }]}
    elif method == "tools/call":
        meta = message.get("params", {}).get("_meta", {})
        text = "traceparent={} pong={} initialized={}".format(
            meta.get("traceparent"), state["pong"], state["initialized"])
        reply["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        reply["error"] = {"code": -32601, "message": "Method not found: " + method}
    send(reply)
