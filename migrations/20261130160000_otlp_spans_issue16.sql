-- What the OpenTelemetry exporter sent, per receiver, so that a trace is never sent twice to one
-- receiver and `tracer export --push` can send later what could not be delivered.
create table otlp_spans (
    target text not null,                  -- the receiver's traces URL (e.g. http://c:4318/v1/traces)
    trace_id text not null,                -- tracer's trace id (also the span's trace id)
    span_id text not null,                 -- 16 lower-case hex
    hop_id text,                           -- the hop the span stands for; null for a synthesized root
    state text not null check (state in ('sending', 'sent', 'failed')),
    error text,                            -- why it was not delivered (state failed)
    updated_unix_ns integer not null,
    primary key (target, trace_id, span_id)
);

create index otlp_spans_hop on otlp_spans (target, hop_id);

-- Spans that could not be delivered and have not been sent since (= rows in state failed).
insert into counters (name, value) values ('spans_not_exported', 0) on conflict(name) do nothing;
