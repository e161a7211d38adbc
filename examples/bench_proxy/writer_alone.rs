//! The store writer on its own, without traffic: how many hops per second it can write when
//! nothing else competes, to compare with the rate the proxy serves at.

use std::time::{Duration, Instant};

use tracer_store::{Recorder, Store};
use tracer_wire::hop::{
    BodyCapture, Chunk, Header, HopEnd, HopSink, HopStart, HopState, RequestDone, Role, Transport,
};

use crate::upstream::CHAT_REQUEST;

/// What the writer did with `hops` start+end pairs queued at once.
#[derive(Debug)]
pub struct WriterAlone {
    pub hops: u64,
    pub written: u64,
    pub not_written: u64,
    pub elapsed: Duration,
    /// CPU seconds per thread of this process while the writer worked (nothing else runs then).
    pub threads: Vec<(String, f64)>,
}

impl WriterAlone {
    pub fn per_second(&self) -> f64 {
        self.written as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Queues `hops` hops shaped like the bench's JSON exchange, with the three events the proxy
/// sends per hop (start, request done, end), all into the journal at once, and times the writer
/// until it has written every one.
pub async fn measure(hops: u64) -> anyhow::Result<WriterAlone> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("writer.db")).await?;
    let (recorder, writer) = Recorder::spawn(store.clone())?;
    let cpu_before = crate::procfs::cpu_seconds_by_thread(std::process::id());
    let started = Instant::now();
    for _ in 0..hops {
        // Ids as the proxy makes them (their order is what the `hops.id` index pays for).
        let id = tracer_wire::ids::hop_id();
        if recorder.start(start(&id)) {
            recorder.request_done(RequestDone {
                id: id.clone(),
                request_body: BodyCapture::whole(CHAT_REQUEST.as_bytes().to_vec()),
                request_ended_unix_ns: tracer_wire::hop::now_unix_ns(),
            });
            recorder.end(end(&id));
        }
    }
    drop(recorder);
    let report = writer.await?;
    let elapsed = started.elapsed();
    let threads = crate::procfs::cpu_seconds_by_thread(std::process::id())
        .into_iter()
        .map(|(name, after)| {
            let before = cpu_before
                .iter()
                .find(|(known, _)| *known == name)
                .map_or(0.0, |(_, seconds)| *seconds);
            (name, after - before)
        })
        .filter(|(_, seconds)| *seconds > 0.0)
        .collect();
    store.close().await;
    Ok(WriterAlone {
        hops,
        written: report.hops_written,
        not_written: report.hops_not_written,
        elapsed,
        threads,
    })
}

fn start(id: &str) -> HopStart {
    HopStart {
        id: id.to_string(),
        route: "bench".into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "127.0.0.1:50000".into(),
        method: "POST".into(),
        path: "/v1/chat".into(),
        url: "http://127.0.0.1:40000/v1/chat".into(),
        request_headers: vec![
            Header::new("host", "127.0.0.1:40001"),
            Header::new("content-type", "application/json"),
            Header::new("content-length", CHAT_REQUEST.len().to_string()),
        ],
        started_unix_ns: tracer_wire::hop::now_unix_ns(),
        run_id: None,
    }
}

fn end(id: &str) -> HopEnd {
    let now = tracer_wire::hop::now_unix_ns();
    let response = br#"{"model":"bench","message":{"role":"assistant","content":"Added milk to your list."},"done":true}"#;
    HopEnd {
        response_trailers: Vec::new(),
        id: id.to_string(),
        state: Some(HopState::Complete),
        status: Some(200),
        response_headers: vec![
            Header::new("content-type", "application/json"),
            Header::new("x-bench-upstream", "1"),
            Header::new("content-length", response.len().to_string()),
            Header::new("date", "Sun, 29 Nov 2026 14:00:00 GMT"),
        ],
        request_body: BodyCapture::whole(CHAT_REQUEST.as_bytes().to_vec()),
        response_body: BodyCapture::whole(response.to_vec()),
        request_ended_unix_ns: Some(now),
        response_head_unix_ns: Some(now),
        response_first_byte_unix_ns: Some(now),
        response_ended_unix_ns: Some(now),
        chunks: vec![Chunk {
            offset_ns: 50_000,
            size: response.len() as u64,
        }],
        chunks_truncated: false,
        error: None,
        note: None,
        websocket: None,
    }
}
