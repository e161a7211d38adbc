#!/usr/bin/env python3
"""Decodes a folder of OTLP/HTTP bodies saved by otlp_dump.py (index.jsonl or index.json) and
prints, per signal, what arrived: resource attributes, log event names with counts and attribute
keys, span names with attribute keys, metric names. Needs opentelemetry-proto (protobuf bodies);
JSON bodies are read as OTLP/JSON. `--json` prints the summary as JSON; `--dump` prints every log
record and span with all attributes."""

import argparse
import base64
import collections
import gzip
import json
import os
import subprocess
import sys


def load_index(folder):
    for name in ("index.jsonl", "index.json"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                if name.endswith("l"):
                    return [json.loads(line) for line in f if line.strip()]
                data = json.load(f)
                return data["requests"] if isinstance(data, dict) else data
    raise SystemExit(f"no index in {folder}")


def raw_body(folder, entry):
    with open(os.path.join(folder, entry["file"]), "rb") as f:
        data = f.read()
    enc = (entry.get("content_encoding") or "").lower()
    if enc == "gzip":
        data = gzip.decompress(data)
    elif enc == "zstd":
        data = subprocess.run(["zstd", "-q", "-d", "-c"], input=data, capture_output=True, check=True).stdout
    return data


def any_value(v):
    """An OTLP AnyValue (as a JSON-mapped dict) as a plain value."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return int(v["intValue"])
    if "bytesValue" in v:
        return v["bytesValue"]
    if "arrayValue" in v:
        return [any_value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: any_value(kv.get("value")) for kv in v["kvlistValue"].get("values", [])}
    return None


def attrs(items):
    return {kv["key"]: any_value(kv.get("value")) for kv in items or []}


def as_json(signal, entry, data):
    """The body as OTLP/JSON-shaped dict (protobuf decoded with MessageToDict)."""
    if "json" in (entry.get("content_type") or ""):
        return json.loads(data)
    from google.protobuf.json_format import MessageToDict
    if signal == "logs":
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest as M
    elif signal == "traces":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest as M
    else:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest as M
    msg = M()
    msg.ParseFromString(data)
    return MessageToDict(msg)


def hex_id(value):
    """OTLP/JSON carries ids as hex; MessageToDict gives base64."""
    if not value:
        return value
    try:
        int(value, 16)
        if len(value) in (16, 32):
            return value.lower()
    except ValueError:
        pass
    return base64.b64decode(value).hex()


def summarize(folder, dump=False):
    index = load_index(folder)
    out = {"requests": collections.Counter(), "resources": [], "events": {}, "spans": {}, "metrics": {},
           "scopes": collections.Counter()}
    events = collections.OrderedDict()
    spans = collections.OrderedDict()
    metrics = collections.OrderedDict()
    resources = []
    for entry in sorted(index, key=lambda e: e["order"]):
        signal = entry.get("signal")
        out["requests"][signal] += 1
        body = as_json(signal, entry, raw_body(folder, entry))
        key = {"logs": "resourceLogs", "traces": "resourceSpans", "metrics": "resourceMetrics"}[signal]
        for res in body.get(key, []):
            ra = attrs(res.get("resource", {}).get("attributes"))
            if ra not in resources:
                resources.append(ra)
            scopes = res.get("scopeLogs") or res.get("scopeSpans") or res.get("scopeMetrics") or []
            for scope in scopes:
                sname = (scope.get("scope") or {}).get("name", "")
                out["scopes"][f"{signal}:{sname}"] += 1
                for rec in scope.get("logRecords", []):
                    a = attrs(rec.get("attributes"))
                    name = a.get("event.name") or rec.get("eventName") or any_value(rec.get("body")) or "?"
                    if not isinstance(name, str):
                        name = "?"
                    ev = events.setdefault(name, {"count": 0, "keys": collections.OrderedDict(), "body": None})
                    ev["count"] += 1
                    for k in a:
                        ev["keys"][k] = True
                    if rec.get("body") is not None:
                        ev["body"] = str(any_value(rec.get("body")))[:80]
                    if dump:
                        print(json.dumps({"order": entry["order"], "event": name, "time": rec.get("timeUnixNano"),
                                          "trace": hex_id(rec.get("traceId")), "span": hex_id(rec.get("spanId")),
                                          "body": any_value(rec.get("body")), "attributes": a}, default=str))
                for span in scope.get("spans", []):
                    a = attrs(span.get("attributes"))
                    sp = spans.setdefault(span.get("name"), {"count": 0, "keys": collections.OrderedDict()})
                    sp["count"] += 1
                    for k in a:
                        sp["keys"][k] = True
                    if dump:
                        print(json.dumps({"order": entry["order"], "span": span.get("name"),
                                          "trace": hex_id(span.get("traceId")), "id": hex_id(span.get("spanId")),
                                          "parent": hex_id(span.get("parentSpanId")), "kind": span.get("kind"),
                                          "attributes": a,
                                          "events": [e.get("name") for e in span.get("events", [])]}, default=str))
                for metric in scope.get("metrics", []):
                    kinds = [k for k in ("sum", "gauge", "histogram", "exponentialHistogram", "summary") if k in metric]
                    points = metric[kinds[0]].get("dataPoints", []) if kinds else []
                    m = metrics.setdefault(metric.get("name"), {"count": 0, "kind": kinds[0] if kinds else None,
                                                                "unit": metric.get("unit"), "keys": collections.OrderedDict()})
                    m["count"] += len(points)
                    for p in points:
                        for k in attrs(p.get("attributes")):
                            m["keys"][k] = True
    out["resources"] = resources
    out["events"] = {k: {"count": v["count"], "keys": list(v["keys"]), "body": v["body"]} for k, v in events.items()}
    out["spans"] = {k: {"count": v["count"], "keys": list(v["keys"])} for k, v in spans.items()}
    out["metrics"] = {k: {"count": v["count"], "kind": v["kind"], "unit": v["unit"], "keys": list(v["keys"])}
                      for k, v in metrics.items()}
    out["requests"] = dict(out["requests"])
    out["scopes"] = dict(out["scopes"])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--dump", action="store_true")
    args = parser.parse_args()
    summary = summarize(args.folder, args.dump)
    if args.dump:
        return
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        print()
        return
    print("requests:", summary["requests"])
    print("scopes:", summary["scopes"])
    for r in summary["resources"]:
        print("resource:", json.dumps(r))
    for kind in ("events", "spans", "metrics"):
        print(f"-- {kind}")
        for name, v in summary[kind].items():
            print(f"  {name} x{v['count']}: {', '.join(v['keys'])}")


if __name__ == "__main__":
    main()
