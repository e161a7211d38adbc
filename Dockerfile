# Builds tracer, notes-server and notes-agent into one small image.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY .cargo .cargo
COPY migrations migrations
COPY data data
COPY crates crates
COPY src src
COPY sample-traces sample-traces
COPY examples examples
RUN cargo build --release --locked --bins

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates sqlite3 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/tracer /src/target/release/notes-server /src/target/release/notes-agent /usr/local/bin/
WORKDIR /data
ENV TRACER_DB=/data/tracer/tracer.db
CMD ["tracer", "--help"]
