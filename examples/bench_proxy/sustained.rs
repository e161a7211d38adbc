//! The sustained phase: c=50 for a while through tracer, then hyper alone, each alone on the machine.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::database;
use crate::load;
use crate::procfs;
use crate::report::Backlog;
use crate::rounds::Subject;

/// How often the database is read while grouping catches up.
const POLL: Duration = Duration::from_millis(100);
/// When, after the load stopped, rows in no trace are counted.
const GROUPED_BY: Duration = Duration::from_secs(1);
/// How long grouping may take to catch up before the bench gives up on it.
pub const CATCH_UP_LIMIT: Duration = Duration::from_secs(120);

/// Tracer's side of the sustained phase.
#[derive(Debug, Default, Clone)]
pub struct TracerSustained {
    /// Requests answered 200 during the load, and the errors.
    pub ok: u64,
    pub errors: u64,
    pub elapsed: Duration,
    /// CPU seconds of the child during the load.
    pub cpu_during_load: Option<f64>,
    /// The phase's rows and those in no trace, `GROUPED_BY` after the load stopped.
    pub at_one_second: Option<Backlog>,
    /// From the load's end until every row of the phase was written and in a trace.
    pub grouped_after: Option<Duration>,
    /// Rows the phase added, once every one is in a trace (or when the bench gave up).
    pub hops: i64,
    /// CPU seconds of the child from the load's start until every row was in a trace.
    pub cpu_whole_run: Option<f64>,
    /// VmRSS just before the load and once every row was in a trace, in KiB.
    pub rss_before_kib: Option<u64>,
    pub rss_after_kib: Option<u64>,
}

impl TracerSustained {
    /// CPU seconds per request answered during the load.
    pub fn cpu_per_request(&self) -> Option<f64> {
        per(self.cpu_during_load?, self.ok as f64)
    }

    /// CPU seconds per hop from the load's start until every row was in a trace.
    pub fn cpu_per_hop_whole_run(&self) -> Option<f64> {
        self.grouped_after?;
        per(self.cpu_whole_run?, self.hops as f64)
    }

    /// Resident bytes gained per hop of the phase (an upper bound: allocator retention, SQLite's
    /// page cache and anything else the process grew by are counted too).
    pub fn rss_bytes_per_hop(&self) -> Option<f64> {
        let gained = self.rss_after_kib? as f64 - self.rss_before_kib? as f64;
        per(gained * 1024.0, self.hops as f64)
    }
}

/// Hyper alone's side: the floor.
#[derive(Debug, Default, Clone)]
pub struct FloorSustained {
    pub ok: u64,
    pub errors: u64,
    pub elapsed: Duration,
    pub cpu_during_load: Option<f64>,
}

impl FloorSustained {
    pub fn cpu_per_request(&self) -> Option<f64> {
        per(self.cpu_during_load?, self.ok as f64)
    }
}

/// Both sides; a side is None when its path was not there.
#[derive(Debug, Default, Clone)]
pub struct Sustained {
    pub tracer: Option<TracerSustained>,
    pub floor: Option<FloorSustained>,
}

fn per(total: f64, count: f64) -> Option<f64> {
    (count > 0.0).then(|| total / count)
}

/// Runs the phase: tracer (its database `db`) first, then hyper alone, each for `seconds` of
/// back-to-back JSON POSTs at c=50 while every other path is idle. The requests are counted into
/// each subject's `sent`, so the hop accounting still adds up.
pub async fn run(subjects: &mut [Subject], db: &Path, seconds: f64) -> anyhow::Result<Sustained> {
    let duration = Duration::from_secs_f64(seconds);
    let mut outcome = Sustained::default();
    if let Some(tracer) = subjects.iter_mut().find(|s| s.name == "tracer") {
        println!(
            "sustained: {seconds} s at c=50 through tracer, then until every row is in a trace ..."
        );
        outcome.tracer = Some(through_tracer(tracer, db, duration).await?);
    }
    if let Some(floor) = subjects.iter_mut().find(|s| s.name == "hyper alone") {
        println!("sustained: {seconds} s at c=50 through hyper alone ...");
        let pid = floor.pid();
        let cpu_before = pid.and_then(procfs::tree_cpu_seconds);
        let cell = load::json_load(floor.addr, 50, duration, false).await;
        let cpu_after = pid.and_then(procfs::tree_cpu_seconds);
        floor.add(&cell);
        outcome.floor = Some(FloorSustained {
            ok: cell.ok,
            errors: cell.errors,
            elapsed: cell.elapsed,
            cpu_during_load: cpu_before.zip(cpu_after).map(|(b, a)| a - b),
        });
    }
    Ok(outcome)
}

async fn through_tracer(
    tracer: &mut Subject,
    db: &Path,
    duration: Duration,
) -> anyhow::Result<TracerSustained> {
    let pid = tracer.pid();
    let mut conn = database::open_read_only(db).await?;
    // Start from a database whose every row is in a trace, so the phase's backlog is its own.
    let settled_by = Instant::now() + CATCH_UP_LIMIT;
    let mut before = database::backlog_on(&mut conn).await?;
    while before.ungrouped > 0 && Instant::now() < settled_by {
        tokio::time::sleep(POLL).await;
        before = database::backlog_on(&mut conn).await?;
    }
    if before.ungrouped > 0 {
        println!(
            "note: {} rows of the rounds were still in no trace; the sustained phase starts anyway",
            before.ungrouped
        );
    }
    let rss_before_kib = pid.and_then(procfs::rss_kib);
    let cpu_start = pid.and_then(procfs::tree_cpu_seconds);
    let cell = load::json_load(tracer.addr, 50, duration, false).await;
    let load_ended = tokio::time::Instant::now();
    let cpu_load_end = pid.and_then(procfs::tree_cpu_seconds);
    tracer.add(&cell);

    let mut outcome = TracerSustained {
        ok: cell.ok,
        errors: cell.errors,
        elapsed: cell.elapsed,
        cpu_during_load: cpu_start.zip(cpu_load_end).map(|(s, e)| e - s),
        rss_before_kib,
        ..TracerSustained::default()
    };
    // The phase is over when every request answered is a row and every row is in a trace.
    let expected = before.rows + i64::try_from(cell.ok).unwrap_or(i64::MAX);
    let mut ticks = tokio::time::interval_at(load_ended + POLL, POLL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        ticks.tick().await;
        let since_load = load_ended.elapsed();
        let now = database::backlog_on(&mut conn).await?;
        let phase = Backlog {
            rows: now.rows - before.rows,
            ungrouped: now.ungrouped,
        };
        if outcome.at_one_second.is_none() && since_load >= GROUPED_BY {
            outcome.at_one_second = Some(phase);
        }
        if outcome.grouped_after.is_none() && now.ungrouped == 0 && now.rows >= expected {
            outcome.grouped_after = Some(since_load);
            outcome.cpu_whole_run = cpu_start
                .zip(pid.and_then(procfs::tree_cpu_seconds))
                .map(|(s, e)| e - s);
            outcome.rss_after_kib = pid.and_then(procfs::rss_kib);
            outcome.hops = phase.rows;
        }
        let done = outcome.at_one_second.is_some() && outcome.grouped_after.is_some();
        if done || since_load >= CATCH_UP_LIMIT {
            if outcome.grouped_after.is_none() {
                outcome.hops = phase.rows;
            }
            return Ok(outcome);
        }
    }
}

/// The phase's figures, one line each (the goals are in `goals.rs`).
pub fn describe(sustained: &Sustained) -> String {
    let mut out = String::new();
    let micros = |seconds: Option<f64>| {
        seconds.map_or_else(|| "–".to_string(), |s| format!("{:.1} µs", s * 1e6))
    };
    if let Some(floor) = &sustained.floor {
        out.push_str(&format!(
            "sustained c=50, hyper alone: {} answered in {:.1} s ({:.0}/s, {} errors), CPU {} per request\n",
            floor.ok,
            floor.elapsed.as_secs_f64(),
            floor.ok as f64 / floor.elapsed.as_secs_f64().max(1e-9),
            floor.errors,
            micros(floor.cpu_per_request()),
        ));
    }
    let Some(tracer) = &sustained.tracer else {
        out.push_str("sustained c=50, tracer: not measured\n");
        return out;
    };
    out.push_str(&format!(
        "sustained c=50, tracer: {} answered in {:.1} s ({:.0}/s, {} errors), CPU {} per request during the load\n",
        tracer.ok,
        tracer.elapsed.as_secs_f64(),
        tracer.ok as f64 / tracer.elapsed.as_secs_f64().max(1e-9),
        tracer.errors,
        micros(tracer.cpu_per_request()),
    ));
    if let Some(at) = tracer.at_one_second {
        out.push_str(&format!(
            "sustained, tracer, 1 s after the load: {} rows of the phase written, {} rows in no trace\n",
            at.rows, at.ungrouped
        ));
    }
    match tracer.grouped_after {
        Some(after) => out.push_str(&format!(
            "sustained, tracer: every row written and in a trace {:.1} s after the load; {} hops; \
             CPU from the load's start until then {} per hop\n",
            after.as_secs_f64(),
            tracer.hops,
            micros(tracer.cpu_per_hop_whole_run()),
        )),
        None => out.push_str(&format!(
            "sustained, tracer: rows still missing or in no trace {} s after the load ({} rows of the phase)\n",
            CATCH_UP_LIMIT.as_secs(),
            tracer.hops
        )),
    }
    if let (Some(before), Some(after)) = (tracer.rss_before_kib, tracer.rss_after_kib) {
        out.push_str(&format!(
            "sustained, tracer VmRSS: {:.1} MiB before the load, {:.1} MiB once every row was in a trace\n",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
        ));
    }
    out
}
