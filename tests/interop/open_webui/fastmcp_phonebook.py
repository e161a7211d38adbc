"""The article's phonebook MCP server on the MCP Python SDK 1.x (`FastMCP`, as mcpo 0.0.20 needs
`mcp<2`), over Streamable HTTP on 127.0.0.1:PORT/mcp.

Usage: fastmcp_phonebook.py --port PORT
"""

import argparse

from mcp.server.fastmcp import FastMCP

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=8000)
args = parser.parse_args()

mcp = FastMCP("phonebook", host="127.0.0.1", port=args.port)

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
    mcp.run("streamable-http")
