#!/usr/bin/env python3
"""A scripted model upstream for the agent interop tests (stdlib only; `zstd` binary for zstd).

Answers like the real APIs: Anthropic Messages (`/v1/messages`), OpenAI Responses
(`/v1/responses`), Chat Completions (`/v1/chat/completions`), Gemini (`:generateContent`,
`:streamGenerateContent` with and without `alt=sse`, `:countTokens`) and Gemini Code Assist
(`/v1internal:…`) and Ollama's native `/api/…` (scripted_ollama.py). The first turn calls the notes server's append tool with "buy milk"; the turn
that carries its result gets the final text (scripted_apis.py says how each API is read).

Options: --encoding gzip|zstd compresses model answers (when the client's Accept-Encoding lists
it, or always with --force-encoding); --pause-ms N waits N ms before the last bytes of a streamed
body (after its end event); --ws-no-deflate refuses permessage-deflate on the Responses
WebSocket (scripted_ws.py: `GET /v1/responses` with `Upgrade: websocket`); --log FILE appends one
JSON line per request (method, path, headers, body, what was answered); --tls-cert/--tls-key serve
HTTPS (for `tracer run` under a real host name). Prints `listening on http(s)://127.0.0.1:PORT`
when ready."""

import argparse
import base64
import gzip
import json
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, __import__("os").path.dirname(__file__))
import scripted_apis  # noqa: E402
import scripted_ollama  # noqa: E402
import scripted_ws  # noqa: E402

OPTIONS = argparse.Namespace()
LOG_LOCK = threading.Lock()


def zstd_compress(data):
    return subprocess.run(["zstd", "-q", "-c", "-3"], input=data, capture_output=True, check=True).stdout


def decode_body(data, encoding):
    encoding = (encoding or "").lower().strip()
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "zstd":
        return subprocess.run(["zstd", "-q", "-d", "-c"], input=data, capture_output=True, check=True).stdout
    if encoding == "deflate":
        return zlib.decompress(data)
    return data


class Encoder:
    """Compresses a body piece by piece so that each piece can be sent as it is made."""

    def __init__(self, encoding):
        self.encoding = encoding
        self.gzip = zlib.compressobj(6, zlib.DEFLATED, 31) if encoding == "gzip" else None

    def piece(self, data):
        if self.encoding == "gzip":
            return self.gzip.compress(data) + self.gzip.flush(zlib.Z_SYNC_FLUSH)
        if self.encoding == "zstd":
            return zstd_compress(data)
        return data

    def finish(self):
        return self.gzip.flush(zlib.Z_FINISH) if self.encoding == "gzip" else b""


def route(method, path, body):
    """(kind, status, content type, pieces, streamed) for a request."""
    url = urlsplit(path)
    query = parse_qs(url.query)
    p = url.path
    if method == "HEAD" or (method == "GET" and p in ("/", "")):
        return "preconnect", 200, "text/plain", [b""], False
    if method == "GET" and p.rstrip("/").endswith("/models"):
        models = {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "scripted"}
                                             for m in ("scripted-model", "gpt-5-codex", "claude-scripted")],
                  "models": []}
        return "models", 200, "application/json", [json.dumps(models).encode()], False
    if p.endswith(("/v1/metrics", "/v1/logs", "/v1/traces")):
        return "otlp", 200, "application/x-protobuf", [b""], False
    ollama = scripted_ollama.route(method, p, body) if p.startswith("/api/") else None
    if ollama:
        return ollama
    if method != "POST":
        return "unknown", 404, "application/json", [b'{"error":{"message":"not scripted"}}'], False
    if p.endswith("/messages/count_tokens"):
        return "count", 200, "application/json", [b'{"input_tokens":1234}'], False
    if ":" in p.rsplit("/", 1)[-1]:
        model_part, gmethod = p.rsplit(":", 1)
        code_assist = "/v1internal" in p
        if code_assist and gmethod not in ("generateContent", "streamGenerateContent", "countTokens"):
            return code_assist_admin(gmethod)
        model = body.get("model") if code_assist else model_part.rsplit("/", 1)[-1]
        alt_sse = query.get("alt", [""])[0] == "sse"
        kind, ctype, pieces = scripted_apis.gemini(body, model, gmethod, alt_sse, code_assist)
        return kind, 200, ctype, pieces, gmethod == "streamGenerateContent"
    if p.endswith("/messages"):
        answer = scripted_apis.anthropic(body)
    elif p.endswith("/responses"):
        answer = scripted_apis.responses(body)
    elif p.endswith("/chat/completions"):
        answer = scripted_apis.chat(body)
    else:
        return "unknown", 404, "application/json", [b'{"error":{"message":"not scripted"}}'], False
    kind, ctype, pieces = answer
    return kind, 200, ctype, pieces, ctype.startswith("text/event-stream")


def call_complete_piece(pieces):
    """The index of the piece after which the stream's first tool call is complete: the
    `content_block_stop` of a `tool_use` block, the `output_item.done` of a function call, the
    last `tool_calls` delta, the chunk with a `functionCall`; None without a call."""
    tool_block = False
    last_tool_delta = None
    for index, piece in enumerate(pieces):
        if b'"content_block_start"' in piece and b'"tool_use"' in piece:
            tool_block = True
        elif tool_block and b'"content_block_stop"' in piece:
            return index
        elif b'response.output_item.done' in piece and b'"function_call"' in piece:
            return index
        elif b'functionCall' in piece:
            return index
        elif b'"tool_calls"' in piece:
            last_tool_delta = index
    return last_tool_delta


def code_assist_admin(method):
    answers = {
        "loadCodeAssist": {"currentTier": {"id": "standard-tier", "name": "Gemini Code Assist"},
                           "allowedTiers": [{"id": "standard-tier", "isDefault": True}],
                           "cloudaicompanionProject": "scripted-project"},
        "onboardUser": {"done": True, "response": {"cloudaicompanionProject": {"id": "scripted-project"}}},
    }
    data = json.dumps(answers.get(method, {})).encode()
    return f"code-assist:{method}", 200, "application/json", [data], False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def handle_any(self):
        started = time.time()
        if (self.headers.get("Upgrade") or "").lower() == "websocket" and self.path.split("?")[0].endswith("/responses"):
            self.log(started, b"", b"", "websocket", 101, None, None)

            def log_turn(at, data, kind):
                self.log(at, data, data, f"websocket:{kind}", 101, None, None)
            scripted_ws.serve(self, log_turn, deflate=not OPTIONS.ws_no_deflate)
            return
        raw = self.read_body() if self.command not in ("GET", "HEAD") else b""
        try:
            decoded = decode_body(raw, self.headers.get("Content-Encoding"))
            body = json.loads(decoded) if decoded.strip() else {}
        except (ValueError, OSError, subprocess.CalledProcessError, zlib.error):
            decoded, body = raw, {}
        if not isinstance(body, dict):
            body = {}
        kind, status, ctype, pieces, streamed = route(self.command, self.path, body)
        accepted = (self.headers.get("Accept-Encoding") or "").lower()
        encoding = None
        if OPTIONS.encoding and kind not in ("preconnect", "otlp") and (
                OPTIONS.force_encoding or OPTIONS.encoding in accepted):
            encoding = OPTIONS.encoding
        error = self.send_answer(status, ctype, pieces, streamed, encoding)
        self.log(started, raw, decoded, kind, status, encoding, error)

    def send_answer(self, status, ctype, pieces, streamed, encoding):
        encoder = Encoder(encoding)
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            request_id = f"req_scripted_{int(time.time() * 1000)}"
            self.send_header("x-request-id", request_id)
            if OPTIONS.request_id_header:
                self.send_header("request-id", request_id)  # the Anthropic API's name for it
            if encoding:
                self.send_header("Content-Encoding", encoding)
            if not streamed:
                data = encoder.piece(b"".join(pieces)) + encoder.finish()
                if self.command == "HEAD":
                    data = b""
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                return None
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            linger_after = call_complete_piece(pieces) if OPTIONS.linger_ms else None
            for index, piece in enumerate(pieces):
                self.write_chunk(encoder.piece(piece))
                if OPTIONS.event_delay_ms:
                    time.sleep(OPTIONS.event_delay_ms / 1000)
                if index == linger_after:
                    time.sleep(OPTIONS.linger_ms / 1000)
            tail = encoder.finish()
            if OPTIONS.pause_ms:
                time.sleep(OPTIONS.pause_ms / 1000)
            if tail:
                self.write_chunk(tail)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return None
        except (BrokenPipeError, ConnectionResetError) as err:
            self.close_connection = True
            return f"client went away: {err}"

    def write_chunk(self, data):
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def log(self, started, raw, decoded, kind, status, encoding, error):
        if not OPTIONS.log:
            return
        try:
            text, b64 = decoded.decode(), None
        except UnicodeDecodeError:
            text, b64 = None, base64.b64encode(raw).decode()
        entry = {"time": started, "method": self.command, "path": self.path,
                 "headers": [[k, v] for k, v in self.headers.items()], "body_len": len(raw),
                 "body": text, "body_base64": b64, "answered": kind, "status": status,
                 "encoding": encoding, "error": error}
        with LOG_LOCK, open(OPTIONS.log, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_OPTIONS = handle_any


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--log")
    parser.add_argument("--encoding", choices=["gzip", "zstd"])
    parser.add_argument("--force-encoding", action="store_true")
    parser.add_argument("--pause-ms", type=int, default=0)
    parser.add_argument("--event-delay-ms", type=int, default=1)
    parser.add_argument("--tls-cert", help="PEM certificate (chain) to serve HTTPS with")
    parser.add_argument("--tls-key", help="its PEM private key")
    parser.add_argument("--linger-ms", type=int, default=0,
                        help="pause this long once the stream's first tool call is complete (hosts run it meanwhile)")
    parser.add_argument("--ws-no-deflate", action="store_true",
                        help="refuse permessage-deflate on the Responses WebSocket")
    parser.add_argument("--subagent", action="store_true",
                        help="ask a host offering an Agent tool to hand the task to a subagent")
    parser.add_argument("--request-id-header", action="store_true",
                        help="also send the request id as `request-id` (Anthropic's header; SDKs report it)")
    parser.add_argument("--shell-first", action="store_true",
                        help="first ask a host offering a shell tool (Bash, exec_command) to run `echo hello`")
    parser.parse_args(namespace=OPTIONS)
    scripted_apis.SUBAGENT = OPTIONS.subagent
    scripted_apis.SHELL_FIRST = OPTIONS.shell_first
    server = ThreadingHTTPServer((OPTIONS.listen, OPTIONS.port), Handler)
    server.daemon_threads = True
    scheme = "http"
    if OPTIONS.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(OPTIONS.tls_cert, OPTIONS.tls_key)
        context.set_alpn_protocols(["http/1.1"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    url = f"{scheme}://{OPTIONS.listen}:{server.server_address[1]}"
    if OPTIONS.port_file:
        with open(OPTIONS.port_file, "w", encoding="utf-8") as f:
            f.write(str(server.server_address[1]))
    print(f"listening on {url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
