-- Sessions above traces (issue 23): a session is one run of a host (an agent process), named by
-- the host's own id where it sends one. Grouping writes them with the traces; a trace's
-- `session_id` names its session (null for traces grouped before sessions existed).
create table sessions (
    id text primary key,            -- the id of the hop that opened the session
    host_session_id text,           -- the host's own id of its run (x-claude-code-session-id, session-id, x-session-id, ...)
    started_unix_ns integer not null,
    created_by text not null        -- as traces.created_by
);

alter table traces add column session_id text;
create index traces_by_session on traces (session_id);
