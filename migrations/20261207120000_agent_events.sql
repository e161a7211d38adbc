-- The agent's own telemetry (issue 47): every OpenTelemetry log event, span and metric point a
-- coding agent exported to tracer's OTLP receiver, kept beside the hops. `record` is the OTLP/JSON
-- of the record with its resource and scope (redacted, its long strings bounded as bodies are);
-- the key columns are the ids it shares with the wire, read from its attributes when it arrived.
-- Where an event belongs in a trace is decided when the trace is read, from these keys and the
-- hops (docs/agent-telemetry.md), so a late event or a late hop still lands in its place.
create table agent_events (
    id integer primary key,
    received_unix_ns integer not null,
    signal text not null,
    service text,
    name text not null,
    time_unix_ns integer not null,
    end_unix_ns integer,
    session_key text,
    prompt_key text,
    request_key text,
    tool_call_key text,
    sequence integer,
    run_id text,
    record text not null,
    record_bytes integer not null,
    cut integer not null default 0
);
create index agent_events_by_session on agent_events (session_key, time_unix_ns);
create index agent_events_by_time on agent_events (time_unix_ns);
create index agent_events_by_run on agent_events (run_id) where run_id is not null;
