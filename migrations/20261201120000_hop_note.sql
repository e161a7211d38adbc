-- How a hop ended when that is worth saying and is no failure (`error` is for failures), e.g.
-- "the client stopped reading after the last event (response.completed)"; null otherwise.
alter table hops add column note text;
