-- Bodies stored once per content (issue 28): a body of 4 KiB or more is cut into content-defined
-- chunks (about 5 KiB, 1 to 64 KiB), each chunk stored once in `body_chunks` by its SHA-256, and
-- the body kept as the ordered list of its chunks' ids in `hop_body_chunks`. Rows written before
-- keep their bodies inline (and their big bodies in `hop_body_pieces`), read as before.
create table body_chunks (
    id integer primary key,
    sha256 blob not null unique,    -- 32 bytes: the SHA-256 of `bytes`
    bytes blob not null
);

create table hop_body_chunks (
    hop_id text not null,
    side integer not null,          -- 0 the request body, 1 the response body
    part integer not null,          -- a piece's seq (as in hop_body_pieces), or 4294967296: the tail
    seq integer not null,           -- the chunk's place in its part, from 0
    chunk_id integer not null references body_chunks(id),
    primary key (hop_id, side, part, seq)
) without rowid;

-- Which sides' tails (the bytes after the last piece, or the whole body when it has no pieces)
-- are chunks (part 4294967296) rather than the row's column: bit 1 the request, bit 2 the
-- response. The row's column then holds the empty blob.
alter table hops add column body_chunked integer not null default 0;
