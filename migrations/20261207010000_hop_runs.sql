-- The `tracer run` a hop was recorded during (issue 44): every hop a run's proxy and its wrapped
-- stdio servers record carries the run's id, and grouping never puts hops of two runs in one
-- trace or session. NULL for hops recorded outside a run (`tracer proxy`, `up`, `wrap` alone) and
-- for every hop stored before this column.
alter table hops add column run_id text;
create index hops_by_run on hops (run_id) where run_id is not null;
