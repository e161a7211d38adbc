-- tracer's recording schema: one row per hop, one per trace, and a few counters.
-- Timestamps are nanoseconds since the Unix epoch (*_unix_ns); booleans are 0/1.

create table traces (
    id text primary key not null,          -- 32 lower-case hex: the W3C trace-id when there is one
    title text,                            -- the user's text that opened the trace
    kind text not null default 'request',  -- request | setup
    started_unix_ns integer not null,
    ended_unix_ns integer,
    created_by text not null default 'proxy'
);

create table hops (
    seq integer primary key autoincrement, -- arrival order within this database
    id text not null unique,               -- 32 lower-case hex, unique across processes
    trace_id text references traces(id) on delete set null,
    route text not null,
    role text not null check (role in ('agent', 'model', 'mcp', 'other')),
    transport text not null check (transport in ('http', 'stdio')),
    peer text not null,
    method text not null,
    path text not null,
    url text not null,
    state text not null check (state in ('in_flight', 'complete', 'failed', 'aborted')),
    status integer,
    error text,
    request_headers text not null,         -- JSON array of {"name", "value"} (or "value_base64")
    response_headers text,
    request_body blob,
    request_body_len integer,
    request_body_truncated integer check (request_body_truncated in (0, 1)),
    response_body blob,
    response_body_len integer,
    response_body_truncated integer check (response_body_truncated in (0, 1)),
    request_started_unix_ns integer not null,
    request_ended_unix_ns integer,
    response_head_unix_ns integer,
    response_first_byte_unix_ns integer,
    response_ended_unix_ns integer,
    response_chunks text,                  -- JSON array of [offset_ns, size]
    response_chunks_truncated integer check (response_chunks_truncated in (0, 1))
);

create index hops_trace_id on hops (trace_id, request_started_unix_ns);
create index hops_started on hops (request_started_unix_ns);

create table counters (
    name text primary key not null,
    value integer not null
);
