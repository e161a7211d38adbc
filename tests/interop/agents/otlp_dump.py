#!/usr/bin/env python3
"""A dump receiver for OTLP/HTTP (stdlib only): accepts POST /v1/logs, /v1/traces, /v1/metrics
(also under a prefix, e.g. /otlp/v1/logs), answers 200 with an empty body of the request's kind
(application/x-protobuf: no bytes; application/json: `{}`) and saves each request's body as it
crossed the wire (chunked transfer encoding undone, any Content-Encoding kept) in OUT, numbered in
arrival order: 001-logs.pb, 002-metrics.json, ... (`.gz`/`.zst` appended when compressed), plus
one JSON line per request in OUT/index.jsonl: order, file, method, path, signal, content-type,
content-encoding, bytes, time, headers.

Prints `listening on http://127.0.0.1:PORT` when ready (--port-file FILE also gets the port)."""

import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPTIONS = argparse.Namespace()
LOCK = threading.Lock()
COUNTER = [0]
SIGNALS = ("logs", "traces", "metrics")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = bytearray()
            while True:
                line = self.rfile.readline()
                if not line:
                    return bytes(data)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()  # the CRLF after the chunk
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def answer(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_POST(self):
        started = time.time()
        body = self.read_body()
        path = self.path.split("?", 1)[0]
        signal = next((s for s in SIGNALS if path.rstrip("/").endswith("/v1/" + s)), None)
        ctype = self.headers.get("Content-Type") or ""
        encoding = self.headers.get("Content-Encoding")
        is_json = "json" in ctype.lower()
        with LOCK:
            COUNTER[0] += 1
            order = COUNTER[0]
        ext = "json" if is_json else "pb"
        if encoding:
            ext += {"gzip": ".gz", "zstd": ".zst", "deflate": ".zz", "br": ".br"}.get(encoding.lower(), "." + encoding)
        name = f"{order:03d}-{signal or 'other'}.{ext}"
        with open(os.path.join(OPTIONS.out, name), "wb") as f:
            f.write(body)
        entry = {"order": order, "file": name, "method": "POST", "path": self.path, "signal": signal,
                 "content_type": ctype, "content_encoding": encoding, "bytes": len(body),
                 "time": started, "headers": [[k, v] for k, v in self.headers.items()]}
        with LOCK, open(os.path.join(OPTIONS.out, "index.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        if signal is None:
            self.answer(404, "text/plain", b"not an OTLP path\n")
        elif is_json:
            self.answer(200, "application/json", b"{}")
        else:
            self.answer(200, "application/x-protobuf", b"")

    def do_GET(self):
        self.answer(404, "text/plain", b"POST /v1/logs, /v1/traces or /v1/metrics\n")

    do_PUT = do_DELETE = do_HEAD = do_GET


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the bodies and index.jsonl")
    parser.add_argument("--listen", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.parse_args(namespace=OPTIONS)
    os.makedirs(OPTIONS.out, exist_ok=True)
    server = ThreadingHTTPServer((OPTIONS.listen, OPTIONS.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if OPTIONS.port_file:
        with open(OPTIONS.port_file, "w", encoding="utf-8") as f:
            f.write(str(port))
    print(f"listening on http://{OPTIONS.listen}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
