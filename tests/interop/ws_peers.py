"""WebSocket peers for tests/record/websocket_frames.rs, on the `websockets` package (RFC 6455,
permessage-deflate): a scripted server and a client that sends every kind of frame.

  ws_peers.py serve [--no-deflate]        prints its port, then serves until killed; every
                                          connection's received messages go to stdout as JSON
  ws_peers.py client URL [--no-deflate] [--proxy URL] [--cafile F] [--vanish]
                                          prints what it received as JSON

The client sends: text, a text in three fragments, binary, a ping, "ping-me" (the server pings
back, then says "pinged"), a big text (4 MiB of "x"), then "close-1011" (the server closes with
1011). With --vanish it sends one text and drops the TCP connection without a close.
"""

import argparse
import asyncio
import json
import ssl
import sys

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

BIG = 4 * 1024 * 1024


def describe(message):
    if isinstance(message, str):
        return {"type": "text", "size": len(message.encode()), "head": message[:40]}
    return {"type": "binary", "size": len(message), "hex": message[:16].hex()}


async def handler(ws):
    seen = []
    try:
        async for message in ws:
            seen.append(describe(message))
            if message == "close-1011":
                await ws.close(1011, "scripted close")
                break
            if message == "ping-me":
                await (await ws.ping(b"server-ping"))
                await ws.send("pinged")
            elif isinstance(message, str) and message.startswith("big:"):
                await ws.send(f"got {len(message)}")
            else:
                await ws.send(message)
    except ConnectionClosed:
        pass
    code = ws.close_code
    print(json.dumps({"received": seen, "close_code": code}), flush=True)


async def run_server(args):
    compression = None if args.no_deflate else "deflate"
    async with serve(handler, "127.0.0.1", 0, compression=compression, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        await asyncio.Future()


async def run_client(args):
    compression = None if args.no_deflate else "deflate"
    options = {"compression": compression, "max_size": None}
    if args.cafile:
        options["ssl"] = ssl.create_default_context(cafile=args.cafile)
    if args.proxy:
        options["proxy"] = args.proxy
    else:
        options["proxy"] = None
    got = []
    async with connect(args.url, **options) as ws:
        got.append({"extensions": [e.name for e in ws.protocol.extensions]})
        await ws.send("hello")
        got.append(describe(await ws.recv()))
        if args.vanish:
            ws.transport.abort()
            print(json.dumps(got), flush=True)
            return
        await ws.send(["frag-", "ment", "ed"])
        got.append(describe(await ws.recv()))
        await ws.send(bytes(range(256)))
        got.append(describe(await ws.recv()))
        await (await ws.ping(b"client-ping"))
        await ws.send("ping-me")
        got.append(describe(await ws.recv()))
        await ws.send("big:" + "x" * BIG)
        got.append(describe(await ws.recv()))
        await ws.send("close-1011")
        try:
            await ws.recv()
        except ConnectionClosed as closed:
            got.append({"close": closed.rcvd.code if closed.rcvd else None,
                        "reason": closed.rcvd.reason if closed.rcvd else None})
    print(json.dumps(got), flush=True)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--no-deflate", action="store_true")
    c = sub.add_parser("client")
    c.add_argument("url")
    c.add_argument("--no-deflate", action="store_true")
    c.add_argument("--proxy")
    c.add_argument("--cafile")
    c.add_argument("--vanish", action="store_true")
    args = parser.parse_args()
    asyncio.run(run_server(args) if args.mode == "serve" else run_client(args))


if __name__ == "__main__":
    sys.exit(main())
