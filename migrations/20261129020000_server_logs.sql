-- What wrapped stdio servers write to stderr, one row per line, kept as that server's log.
create table server_logs (
    seq integer primary key autoincrement,
    route text not null,
    logged_unix_ns integer not null,
    line text not null
);

create index server_logs_route on server_logs (route, logged_unix_ns);
