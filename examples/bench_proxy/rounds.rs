//! Every path (direct, tracer, nginx, mitmdump) runs at once and is measured in interleaved
//! rounds, each round in a rotated order, so a noisy shared machine slows every column alike.
//! Streams come first in a round, long after that path's c=50 slice of the round before; then
//! JSON cells at c=1, 8, 32 (first byte) and 50 (throughput, CPU).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::load::{self, LoadCell, StreamCell};
use crate::procfs;
use crate::report::{Column, FirstByte};
use crate::targets::{External, TracerChild};

/// Pause after every cell, so a proxy that queued work (tracer's writer) does not slow the
/// next path's cell.
const SETTLE: Duration = Duration::from_millis(500);

/// The process behind a path, if any.
pub enum Process {
    Direct,
    Tracer(TracerChild),
    External(External),
}

/// One path under test and what it measured so far.
pub struct Subject {
    pub name: &'static str,
    pub addr: SocketAddr,
    pub process: Process,
    sent: u64,
    errors: u64,
    c1: LoadCell,
    c8: LoadCell,
    c32: LoadCell,
    c50: LoadCell,
    cpu_c50: Option<f64>,
    streams: StreamCell,
}

impl Subject {
    pub fn new(name: &'static str, addr: SocketAddr, process: Process) -> Subject {
        Subject {
            name,
            addr,
            process,
            sent: 0,
            errors: 0,
            c1: LoadCell::default(),
            c8: LoadCell::default(),
            c32: LoadCell::default(),
            c50: LoadCell::default(),
            cpu_c50: None,
            streams: StreamCell::default(),
        }
    }

    pub fn pid(&self) -> Option<u32> {
        match &self.process {
            Process::Direct => None,
            Process::Tracer(child) => child.pid(),
            Process::External(external) => external.pid(),
        }
    }

    /// Requests sent through this path so far, warm-up included.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Counts a cell's requests and errors (a cell run outside the rounds included).
    pub fn add(&mut self, cell: &LoadCell) {
        self.sent += cell.sent;
        self.errors += cell.errors;
    }

    /// The running total of the cells at `concurrency` (c=1, 8, 32 or 50).
    fn total_at(&mut self, concurrency: usize) -> &mut LoadCell {
        match concurrency {
            1 => &mut self.c1,
            8 => &mut self.c8,
            32 => &mut self.c32,
            _ => &mut self.c50,
        }
    }

    /// The figures so far, with the process's peak RSS now.
    pub fn column(&mut self) -> Column {
        let rss = match &self.process {
            Process::Direct => None,
            Process::Tracer(child) => child.peak_rss_kib(),
            Process::External(external) => external.peak_rss_kib(),
        };
        Column {
            name: self.name,
            rps_c1: self.c1.per_second(),
            rps_c50: self.c50.per_second(),
            first_byte: [(1, &mut self.c1), (8, &mut self.c8), (32, &mut self.c32)]
                .into_iter()
                .map(|(concurrency, cell)| FirstByte {
                    concurrency,
                    p50: load::percentile(&mut cell.first_byte, 0.50),
                    p99: load::percentile(&mut cell.first_byte, 0.99),
                })
                .collect(),
            jitter_p50: load::percentile(&mut self.streams.gap_deviation, 0.50),
            jitter_p99: load::percentile(&mut self.streams.gap_deviation, 0.99),
            delivery_p50: load::percentile(&mut self.streams.delivery, 0.50),
            delivery_p99: load::percentile(&mut self.streams.delivery, 0.99),
            gaps: self.streams.gap_deviation.len(),
            sent: self.sent,
            errors: self.errors + self.streams.errors,
            peak_rss_kib: rss,
            cpu_c50: self.cpu_c50,
            ok_c50: self.c50.ok,
        }
    }
}

/// How long and how much.
pub struct Plan {
    pub seconds: f64,
    pub warmup: f64,
    pub streams: u32,
    pub rounds: u32,
}

/// A warm-up per path, then `rounds` rounds in which every path gets its share of the NDJSON
/// streams, then a c=1 slice and a c=50 slice of `seconds / rounds`.
pub async fn measure_all(subjects: &mut [Subject], plan: &Plan, clock: Instant) {
    for subject in subjects.iter_mut() {
        println!("warming up {} ...", subject.name);
        let warm = load::json_load(
            subject.addr,
            50,
            Duration::from_secs_f64(plan.warmup),
            false,
        )
        .await;
        subject.add(&warm);
        tokio::time::sleep(SETTLE * 2).await;
    }
    let streams_per_round = plan.streams.div_ceil(plan.rounds);
    let slice = Duration::from_secs_f64(plan.seconds / f64::from(plan.rounds));
    let count = subjects.len();
    for round in 0..plan.rounds {
        println!("round {} of {} ...", round + 1, plan.rounds);
        for i in 0..count {
            let Some(subject) = subjects.get_mut((i + round as usize) % count) else {
                continue;
            };
            let cell = load::ndjson_streams(subject.addr, streams_per_round, clock).await;
            subject.sent += cell.sent;
            subject.streams.errors += cell.errors;
            subject.streams.gap_deviation.extend(cell.gap_deviation);
            subject.streams.delivery.extend(cell.delivery);
            tokio::time::sleep(SETTLE).await;
        }
        for (concurrency, duration) in cells(slice) {
            for i in 0..count {
                let Some(subject) = subjects.get_mut((i + round as usize) % count) else {
                    continue;
                };
                let pid = subject.pid();
                let cpu_before = pid.and_then(procfs::tree_cpu_seconds);
                let keep_first_byte = concurrency != 50;
                let cell =
                    load::json_load(subject.addr, concurrency, duration, keep_first_byte).await;
                let cpu_after = pid.and_then(procfs::tree_cpu_seconds);
                subject.add(&cell);
                if concurrency == 50
                    && let Some(used) = cpu_before.zip(cpu_after).map(|(b, a)| a - b)
                {
                    subject.cpu_c50 = Some(subject.cpu_c50.unwrap_or(0.0) + used);
                }
                let total = subject.total_at(concurrency);
                total.ok += cell.ok;
                total.elapsed += cell.elapsed;
                total.first_byte.extend(cell.first_byte);
                tokio::time::sleep(if concurrency == 50 {
                    SETTLE * 2
                } else {
                    SETTLE
                })
                .await;
            }
        }
    }
}

/// A round's JSON cells after its streams: (concurrency, duration). c=1 and c=50 get the whole
/// slice (throughput, CPU), c=8 and c=32 a third of it (first byte only, so the run stays short).
fn cells(slice: Duration) -> [(usize, Duration); 4] {
    [(1, slice), (8, slice / 3), (32, slice / 3), (50, slice)]
}
