"""Seed 002's phonebook MCP server, built with the official MCP Python SDK (mcp 2.x), for the
notes-agent interop tests.

Usage: mcp_sdk_phonebook_server.py --stdio
       mcp_sdk_phonebook_server.py --port PORT   (Streamable HTTP on 127.0.0.1:PORT/mcp)
"""

import argparse

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("phonebook")

phonebook = {
    "Ashley Johnson": "555-11111111",
    "Joshua Wilson": "555-66666666",
}


@mcp.tool()
async def get_phonenumber(name: str) -> str:
    """Deliver the phone number for a certain person.

    Args:
        name: Name of the person (e.g., 'Axel Foley')
    """
    return phonebook.get(name, "No entry in phonebook")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.stdio:
        mcp.run("stdio")
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=args.port)
