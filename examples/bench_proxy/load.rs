//! The load generator: keep-alive HTTP/1.1 connections that send the JSON exchange for a fixed
//! time (throughput and first-byte latency), and NDJSON streams timed chunk by chunk (jitter).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::upstream::{CHAT_REQUEST, STREAM_CHUNKS, sent_ns_of};

/// Requests one worker sends in one cell at most, whatever the duration.
const MAX_REQUESTS_PER_WORKER: u64 = 2_000_000;
/// First-byte samples kept per cell at most.
const MAX_SAMPLES: usize = 1_000_000;

/// What one cell of fixed-duration load did.
#[derive(Debug, Default)]
pub struct LoadCell {
    /// Requests handed to a connection (what the proxy may have seen).
    pub sent: u64,
    /// Requests answered 200 with the whole body read.
    pub ok: u64,
    pub errors: u64,
    pub elapsed: Duration,
    /// Time from sending each request to its response head (first byte), when asked for.
    pub first_byte: Vec<Duration>,
}

impl LoadCell {
    pub fn per_second(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

pub type Sender = SendRequest<Full<Bytes>>;

pub async fn connect(addr: SocketAddr) -> anyhow::Result<Sender> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

fn chat_request(addr: SocketAddr) -> anyhow::Result<Request<Full<Bytes>>> {
    Ok(Request::post("/v1/chat")
        .header(http::header::HOST, addr.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from_static(CHAT_REQUEST.as_bytes())))?)
}

/// `concurrency` connections each send the JSON exchange back to back for `duration`.
pub async fn json_load(
    addr: SocketAddr,
    concurrency: usize,
    duration: Duration,
    keep_first_byte: bool,
) -> LoadCell {
    let started = Instant::now();
    let deadline = started + duration;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        workers.spawn(json_worker(addr, deadline, keep_first_byte));
    }
    let mut cell = LoadCell::default();
    while let Some(done) = workers.join_next().await {
        match done {
            Ok(worker) => {
                cell.sent += worker.sent;
                cell.ok += worker.ok;
                cell.errors += worker.errors;
                let room = MAX_SAMPLES.saturating_sub(cell.first_byte.len());
                cell.first_byte
                    .extend(worker.first_byte.into_iter().take(room));
            }
            Err(_) => cell.errors += 1,
        }
    }
    cell.elapsed = started.elapsed();
    cell
}

async fn json_worker(addr: SocketAddr, deadline: Instant, keep_first_byte: bool) -> LoadCell {
    let mut cell = LoadCell::default();
    let mut sender: Option<Sender> = None;
    while Instant::now() < deadline && cell.sent < MAX_REQUESTS_PER_WORKER {
        let mut connection = match sender.take() {
            Some(connection) => connection,
            None => match connect(addr).await {
                Ok(connection) => connection,
                Err(_) => {
                    cell.errors += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        if connection.ready().await.is_err() {
            continue;
        }
        let Ok(request) = chat_request(addr) else {
            cell.errors += 1;
            break;
        };
        let sent_at = Instant::now();
        cell.sent += 1;
        let Ok(response) = connection.send_request(request).await else {
            cell.errors += 1;
            continue;
        };
        let first_byte = sent_at.elapsed();
        let status_ok = response.status() == http::StatusCode::OK;
        match response.into_body().collect().await {
            Ok(_) if status_ok => {
                cell.ok += 1;
                if keep_first_byte && cell.first_byte.len() < MAX_SAMPLES {
                    cell.first_byte.push(first_byte);
                }
                sender = Some(connection);
            }
            Ok(_) => {
                cell.errors += 1;
                sender = Some(connection);
            }
            Err(_) => cell.errors += 1,
        }
    }
    cell
}

/// What the NDJSON streams showed, chunk by chunk.
#[derive(Debug, Default)]
pub struct StreamCell {
    pub sent: u64,
    pub errors: u64,
    /// Per gap between consecutive chunks: |client's inter-arrival gap − upstream's send gap|.
    pub gap_deviation: Vec<Duration>,
    /// Per chunk: arrival at the client − the upstream's send time (same process clock).
    pub delivery: Vec<Duration>,
}

/// `count` NDJSON streams one after the other on one keep-alive connection.
pub async fn ndjson_streams(addr: SocketAddr, count: u32, clock: Instant) -> StreamCell {
    let mut cell = StreamCell::default();
    let mut sender: Option<Sender> = None;
    for _ in 0..count {
        let mut connection = match sender.take() {
            Some(connection) => connection,
            None => match connect(addr).await {
                Ok(connection) => connection,
                Err(_) => {
                    cell.errors += 1;
                    continue;
                }
            },
        };
        if connection.ready().await.is_err() {
            cell.errors += 1;
            continue;
        }
        cell.sent += 1;
        match one_stream(&mut connection, addr, clock).await {
            Some(chunks) if chunks.len() == STREAM_CHUNKS as usize => {
                for pair in chunks.windows(2) {
                    let (sent_a, arrived_a) = pair[0];
                    let (sent_b, arrived_b) = pair[1];
                    let client_gap = arrived_b.saturating_sub(arrived_a) as i128;
                    let upstream_gap = sent_b.saturating_sub(sent_a) as i128;
                    let deviation = (client_gap - upstream_gap).unsigned_abs();
                    cell.gap_deviation.push(Duration::from_nanos(
                        u64::try_from(deviation).unwrap_or(u64::MAX),
                    ));
                }
                for (sent, arrived) in chunks {
                    let delay = arrived.saturating_sub(sent);
                    cell.delivery.push(Duration::from_nanos(
                        u64::try_from(delay).unwrap_or(u64::MAX),
                    ));
                }
                sender = Some(connection);
            }
            _ => cell.errors += 1,
        }
    }
    cell
}

/// Reads one stream; per line, (upstream send time, client arrival time) in ns since `clock`.
/// A line's arrival is the arrival of the frame that completed it, so chunks a proxy holds back
/// and sends together show up as a short gap after a long one.
async fn one_stream(
    connection: &mut Sender,
    addr: SocketAddr,
    clock: Instant,
) -> Option<Vec<(u128, u128)>> {
    let request = Request::get("/stream")
        .header(http::header::HOST, addr.to_string())
        .body(Full::new(Bytes::new()))
        .ok()?;
    let response = connection.send_request(request).await.ok()?;
    if response.status() != http::StatusCode::OK {
        return None;
    }
    let mut body = response.into_body();
    let mut pending: Vec<u8> = Vec::new();
    let mut chunks = Vec::with_capacity(STREAM_CHUNKS as usize);
    while let Some(frame) = body.frame().await {
        let frame = frame.ok()?;
        let arrived = clock.elapsed().as_nanos();
        let Some(data) = frame.data_ref() else {
            continue;
        };
        pending.extend_from_slice(data);
        while let Some(newline) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=newline).collect();
            chunks.push((sent_ns_of(&line[..line.len() - 1])?, arrived));
        }
        if chunks.len() > STREAM_CHUNKS as usize || pending.len() > 4096 {
            return None;
        }
    }
    Some(chunks)
}

/// The value below which `q` (0..=1) of the samples fall (nearest rank).
pub fn percentile(samples: &mut [Duration], q: f64) -> Option<Duration> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples.get(rank - 1).copied()
}
