-- What reading a model request gave, kept (issue 28): opening a trace takes each model
-- request's reading (its prompt, tools and messages as tracer reads them) and its measures from
-- here instead of parsing its body again. A row holds while `hop_key` (the build and the hop's
-- request columns) still matches the hop as stored; otherwise the reader reads the body again
-- and replaces the row. Each message and system prompt is kept once in `reading_texts`, however
-- many requests re-send it: the readings refer to them by id.
create table reading_texts (
    id integer primary key,
    sha256 blob not null unique,    -- 32 bytes: the SHA-256 of `text`
    text text not null              -- JSON: one message as read, or a system prompt (a string)
);

create table hop_readings (
    hop_id text primary key not null,
    hop_key text not null,
    reading text not null           -- JSON: the request's reading, its texts by id, and its measures
);
