-- Big bodies in pieces (issue 13): a kept body that grew past one piece (256 KiB) reaches the
-- database as rows here while it streams, so it never exists whole on the recording path. The
-- kept body is its pieces in `seq` order followed by the bytes in the hops row's body column.
create table hop_body_pieces (
    hop_id text not null,
    side integer not null,          -- 0 the request body, 1 the response body
    seq integer not null,           -- from 0, per hop and side
    bytes blob not null,
    primary key (hop_id, side, seq)
);

-- Which sides of a hop have pieces: bit 1 the request, bit 2 the response (0: none, the body
-- column holds the whole kept body as before).
alter table hops add column body_pieces integer not null default 0;
