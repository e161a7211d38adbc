-- Trailers a chunked response ended with (JSON array of {"name", "value"}, as the headers);
-- null when the response had none.
alter table hops add column response_trailers text;
