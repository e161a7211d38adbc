-- A WebSocket hop's messages (RFC 6455, after its 101): one row per message, a data message
-- joined from its fragments or one control frame, in arrival order (`seq` from 0 per hop).
-- `data` holds the first bytes of the payload, unmasked and (permessage-deflate) inflated: all
-- of it unless the hop's --max-body per direction ran out (`size` says how much there was).
create table ws_frames (
    hop_id text not null references hops(id) on delete cascade,
    seq integer not null,
    direction text not null,          -- 'send' (client to upstream) or 'receive'
    at_unix_ns integer not null,      -- when its last frame had arrived
    opcode integer not null,          -- 1 text, 2 binary, 8 close, 9 ping, 10 pong, ...
    size integer not null,            -- payload bytes (inflated)
    wire_size integer not null,       -- bytes on the wire, frame heads included
    frames integer not null,          -- frames it came in
    compressed integer not null,      -- RSV1 set (permessage-deflate)
    complete integer not null,        -- its last frame arrived
    data blob not null,
    error text,                       -- why the payload could not be read whole
    primary key (hop_id, seq)
) without rowid;

-- Null for a hop that is no WebSocket; else JSON {"extensions": "...", "not_listed": N}: the
-- agreed Sec-WebSocket-Extensions and the messages beyond the listed bound.
alter table hops add column websocket text;
