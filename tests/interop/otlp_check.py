"""Parses a tracer OTLP/JSON export with the OpenTelemetry protobuf definitions.

OTLP/JSON writes traceId/spanId as hex (the OTLP spec's exception to the protobuf JSON mapping,
which wants base64 for bytes), so, as OTLP receivers do, the ids are turned into base64 first;
everything else goes through google.protobuf.json_format.Parse unchanged, with unknown fields
refused. Prints a JSON summary of what protobuf read, for the Rust test to check.
"""

import base64
import json
import sys

from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def hex_ids_to_base64(value):
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ID_FIELDS and isinstance(item, str):
                out[key] = base64.b64encode(bytes.fromhex(item)).decode()
            else:
                out[key] = hex_ids_to_base64(item)
        return out
    if isinstance(value, list):
        return [hex_ids_to_base64(item) for item in value]
    return value


def attribute_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [attribute_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        document = json.load(handle)
    request = Parse(json.dumps(hex_ids_to_base64(document)), ExportTraceServiceRequest())
    spans = []
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8:
                    raise SystemExit(f"span {span.name}: ids of the wrong length")
                if span.end_time_unix_nano < span.start_time_unix_nano:
                    raise SystemExit(f"span {span.name}: ends before it starts")
                spans.append({
                    "name": span.name,
                    "kind": span.kind,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "status_code": span.status.code,
                    "attributes": {a.key: attribute_value(a.value) for a in span.attributes},
                })
    print(json.dumps({"spans": spans}))


if __name__ == "__main__":
    main()
