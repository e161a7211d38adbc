-- What `tracer ls` shows of a trace, kept once computed (issue 28): listing reads this row, not
-- the trace's bodies, while `hops_key` (a digest of the trace's hop columns, no bodies) still
-- matches the trace as stored. A trace with a hop in flight is not kept.
create table trace_summaries (
    trace_id text primary key not null,
    hops_key text not null,
    summary text not null           -- JSON: the trace as `tracer ls --json` lists it, without its session
);
