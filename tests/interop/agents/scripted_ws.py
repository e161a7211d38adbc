"""The Responses API over a WebSocket, as Codex uses it (stdlib only, a minimal RFC 6455 server
with permessage-deflate): `GET /v1/responses` with `Upgrade: websocket`, then one
`{"type": "response.create", ...}` text message per turn from the client, answered by the
Responses stream events as text messages, up to `response.completed`.

A `generate: false` prewarm gets `response.created` and an empty `response.completed`. A turn
with `previous_response_id` carries only the new input items: the server keeps each response's
whole conversation (its input and output) and reads the turn with it, as the real API does."""

import base64
import hashlib
import json
import struct
import time
import zlib

import scripted_apis

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TAIL = b"\x00\x00\xff\xff"


class Socket:
    """One server-side WebSocket over a handler's rfile/wfile."""

    def __init__(self, handler, deflate):
        self.rfile, self.wfile = handler.rfile, handler.wfile
        self.deflate = deflate
        self.compress = zlib.compressobj(6, zlib.DEFLATED, -15) if deflate else None
        self.inflate = zlib.decompressobj(-15) if deflate else None

    def read_exact(self, n):
        data = self.rfile.read(n)
        if data is None or len(data) < n:
            raise EOFError("the client went away")
        return data

    def frame(self):
        b0, b1 = self.read_exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self.read_exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.read_exact(8))[0]
        mask = self.read_exact(4) if b1 & 0x80 else b"\0\0\0\0"
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self.read_exact(n)))
        return b0 & 0x80, b0 & 0x40, b0 & 0x0F, payload

    def message(self):
        """(opcode, payload) of the next data message; pings answered, close returns None."""
        parts, first, compressed = [], None, False
        while True:
            fin, rsv1, opcode, payload = self.frame()
            if opcode == 0x9:
                self.send(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode == 0x8:
                self.send(0x8, payload[:2] or struct.pack(">H", 1000))
                return None
            if first is None:
                first, compressed = opcode, bool(rsv1)
            parts.append(payload)
            if fin:
                data = b"".join(parts)
                if compressed:
                    data = self.inflate.decompress(data + TAIL)
                return first, data

    def send(self, opcode, payload, compress=False):
        b0 = 0x80 | opcode
        if compress and self.deflate:
            payload = self.compress.compress(payload) + self.compress.flush(zlib.Z_SYNC_FLUSH)
            payload = payload[:-4] if payload.endswith(TAIL) else payload
            b0 |= 0x40
        n = len(payload)
        if n < 126:
            head = struct.pack(">BB", b0, n)
        elif n < 65536:
            head = struct.pack(">BBH", b0, 126, n)
        else:
            head = struct.pack(">BBQ", b0, 127, n)
        self.wfile.write(head + payload)
        self.wfile.flush()

    def send_text(self, text):
        self.send(0x1, text.encode(), compress=True)


def serve(handler, log, deflate=True):
    """Answers the upgrade and serves the turns until the client closes."""
    key = handler.headers.get("Sec-WebSocket-Key", "")
    accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
    offered = "permessage-deflate" in (handler.headers.get("Sec-WebSocket-Extensions") or "")
    deflate = deflate and offered
    head = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n")
    if deflate:
        head += "Sec-WebSocket-Extensions: permessage-deflate\r\n"
    handler.wfile.write((head + "\r\n").encode())
    handler.wfile.flush()
    handler.close_connection = True
    ws = Socket(handler, deflate)
    conversations = {}
    try:
        while True:
            got = ws.message()
            if got is None:
                return
            opcode, data = got
            started = time.time()
            try:
                request = json.loads(data)
            except ValueError:
                continue
            if request.get("type") != "response.create":
                continue
            kind = turn(ws, request, conversations)
            log(started, data, kind)
    except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
        return


def turn(ws, request, conversations):
    body = {k: v for k, v in request.items() if k != "type"}
    if body.get("generate") is False:
        now = int(time.time())
        resp = {"id": f"resp_prewarm_{now % 100000:05d}", "object": "response", "created_at": now,
                "model": body.get("model"), "status": "completed", "output": [],
                "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}}
        conversations[resp["id"]] = list(body.get("input") or [])
        ws.send_text(json.dumps({"type": "response.created", "sequence_number": 0,
                                 "response": dict(resp, status="in_progress")}))
        ws.send_text(json.dumps({"type": "response.completed", "sequence_number": 1, "response": resp}))
        return "prewarm"
    history = conversations.get(body.get("previous_response_id"), [])
    full = dict(body, input=history + list(body.get("input") or []), stream=True)
    kind, _, pieces = scripted_apis.responses(full)
    for piece in pieces:
        event = json.loads(piece.decode().split("data: ", 1)[1])
        ws.send_text(json.dumps(event))
        if event["type"] == "response.completed":
            done = event["response"]
            conversations[done["id"]] = full["input"] + done["output"]
        time.sleep(0.001)
    return kind
