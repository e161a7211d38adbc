"""Reads a tracer HAR export with mitmproxy's own HAR reader (as `mitmproxy -r FILE.har` does)
and prints what it read as JSON, for the Rust test to check."""

import json
import sys

from mitmproxy.io import read_flows_from_paths


def main():
    flows = read_flows_from_paths([sys.argv[1]])
    print(json.dumps([
        {
            "method": flow.request.method,
            "url": flow.request.url,
            "request_text": flow.request.get_text(strict=False),
            "status": flow.response.status_code if flow.response else None,
            "response_text": flow.response.get_text(strict=False) if flow.response else None,
        }
        for flow in flows
    ]))


if __name__ == "__main__":
    main()
