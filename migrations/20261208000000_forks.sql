-- Forks (issue 48): `tracer fork TRACE --at N` re-runs a recorded trace, answering the messages
-- before N from the recording and sending the rest live. Each fork's hops carry its run id
-- (`hops.run_id`), so they group into a trace of their own; this row links it to the original.
create table forks (
    -- The fork's run id: every hop the fork recorded carries it in hops.run_id.
    run_id text primary key,
    -- The trace it was forked from (never changed by the fork).
    fork_of text not null,
    -- The message number the edits were made at.
    at_message integer not null,
    -- The edits as made, JSON: [{"kind": "set", "pointer": "/messages/1/content", "value": …}, …].
    edits text not null,
    -- The fork's own trace, once its hops are grouped (NULL until then, or when none was made).
    trace_id text,
    -- How many requests were answered from the recording, and where the fork went live.
    replayed integer not null default 0,
    live_at_message integer,
    -- Why it went live there: the edit, or the first request that matched no recording.
    live_reason text,
    started_unix_ns integer not null,
    ended_unix_ns integer
);
create index forks_by_original on forks (fork_of);
create index forks_by_trace on forks (trace_id) where trace_id is not null;


-- The command each `tracer run` ran (issue 48: a fork of a run's trace runs it again).
create table run_commands (
    run_id text primary key,
    -- JSON array of the command's arguments, the program first.
    argv text not null,
    -- JSON array of the `tracer run` options it ran with (`--resolve`, `--upstream-ca`, …), so a
    -- fork runs it the same way.
    options text not null,
    -- The working folder it ran in.
    cwd text not null,
    started_unix_ns integer not null
);
