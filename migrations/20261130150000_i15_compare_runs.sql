-- Comparing runs (issue 15): the routes each proxy serves, and eval runs with their verdicts.

-- One row per route per proxy start; `rerun` finds the live agent route that recorded a trace.
create table proxy_routes (
    seq integer primary key autoincrement,
    name text not null,                    -- the route's name (hops.route)
    role text not null check (role in ('agent', 'model', 'mcp', 'other')),
    listen text not null,                  -- the bound address, e.g. 127.0.0.1:8081
    upstream text not null,                -- the URL it forwards to
    pid integer not null,                  -- the serving tracer process
    started_unix_ns integer not null,
    stopped_unix_ns integer                -- null while it serves (or if it died unannounced)
);

create index proxy_routes_name on proxy_routes (name, started_unix_ns);

-- One row per `tracer eval` run of a question set.
create table eval_runs (
    id integer primary key autoincrement,  -- the run number `eval --list` and `--compare` use
    label text,
    file text not null,                    -- the question set, as given
    agent text not null,                   -- the agent URL the questions were sent to
    agent_api text not null check (agent_api in ('agent', 'openai')),
    runs_per_question integer not null,
    started_unix_ns integer not null,
    ended_unix_ns integer,
    state text not null check (state in ('running', 'complete', 'partial')),
    passed integer not null default 0,     -- questions whose every run passed
    total integer not null                 -- questions in the set
);

-- One row per question and run: the verdict judged from the recorded trace.
create table eval_results (
    run_id integer not null references eval_runs(id) on delete cascade,
    question_id text not null,
    attempt integer not null,              -- 1..runs_per_question
    ask text not null,
    pass integer not null check (pass in (0, 1)),
    reasons text not null,                 -- JSON array of {"reason", "message", ...}
    trace_id text,                         -- the recorded trace (null if none was recorded)
    tool_calls text not null,              -- JSON array of {"name", "arguments"} seen on the wire
    reply text,
    judged_unix_ns integer not null,
    primary key (run_id, question_id, attempt)
);
