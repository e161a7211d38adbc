#!/usr/bin/env python3
"""Stands in for an agent that cannot be made to send a request shape: POSTs request bodies that a
real agent sent (fixture files, byte-exact, with the headers it sent) to another path.

    post_recorded.py MODEL_URL PATH HOPS_JSON BODY_FILE...

Used for the Gemini JSON-array stream (`:streamGenerateContent` without `alt=sse`), which Gemini
CLI never asks for: its own requests, sent to that path through tracer."""

import json
import sys
import urllib.request

SKIP = {"host", "content-length", "connection", "accept-encoding"}


def main(model_url, path, hops_json, *bodies):
    with open(hops_json, encoding="utf-8") as f:
        hops = json.load(f)
    headers = next(h["request_headers"] for h in hops if h["role"] == "model" and h["answered"] == "call")
    for body_file in bodies:
        with open(body_file, "rb") as f:
            body = f.read()
        request = urllib.request.Request(model_url + path, data=body, method="POST")
        for h in headers:
            if h["name"].lower() not in SKIP and "value" in h:
                request.add_header(h["name"], h["value"])
        with urllib.request.urlopen(request, timeout=60) as response:
            print(response.status, len(response.read()), body_file)


if __name__ == "__main__":
    main(*sys.argv[1:])
