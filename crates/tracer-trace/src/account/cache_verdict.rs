//! The prompt cache, per model call: what it read, wrote and left uncached, a verdict, and when
//! the cached prefix shrank against the previous call of the conversation, why: the first
//! region that changed, or a lapse of the lifetime the request asked for.

use super::tokens::thousands;
use crate::RecordedHop;
use crate::read::conversation_pairs::{ModelCall, model_calls};
use crate::read::prompt_regions::ChangedRegion;
use crate::words::human_duration;
use tracer_wire::dialect::{HopReading, Usage};

/// What the cache did for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Read from the cache, and no less than the previous call of the conversation left there.
    Hit,
    /// Read from the cache, but less than the previous call left there: the prefix shrank.
    Partial,
    /// Nothing read, though a previous call had cached a prefix (or nothing cached at all).
    Miss,
    /// Nothing read, the prompt written to the cache (a conversation's first call).
    Written,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Hit => "hit",
            Verdict::Partial => "partial",
            Verdict::Miss => "miss",
            Verdict::Written => "written",
        }
    }
}

/// Why the cached prefix shrank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shrank {
    /// The prompt changed first here.
    Changed(ChangedRegion),
    /// The prompt's start was unchanged, and longer passed than the lifetime asked for.
    Lapsed { gap_ns: i64, ttl_s: u64 },
    /// The prompt's start was unchanged within its lifetime: the provider did not keep it.
    NotKept { gap_ns: i64 },
}

/// The cache report of one model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheReport {
    pub hop_id: String,
    pub read: u64,
    pub written: u64,
    pub uncached: u64,
    pub verdict: Verdict,
    /// What the previous call of the conversation read and wrote: the prefix it left cached.
    pub previous_cached: Option<u64>,
    pub shrank: Option<Shrank>,
}

impl CacheReport {
    /// `cache: partial · read 16,901 of the 34,659 the previous call left cached, wrote 420,
    /// 312 uncached · the prompt changed first at system block 2`.
    pub fn line(&self) -> String {
        let read = match self.previous_cached {
            Some(before) if self.verdict == Verdict::Partial || self.verdict == Verdict::Miss => {
                format!(
                    "read {} of the {} the previous call left cached",
                    thousands(self.read),
                    thousands(before)
                )
            }
            _ => format!("read {}", thousands(self.read)),
        };
        let mut line = format!(
            "cache: {} · {read}, wrote {}, {} uncached",
            self.verdict.as_str(),
            thousands(self.written),
            thousands(self.uncached)
        );
        match &self.shrank {
            Some(Shrank::Changed(region)) => {
                line.push_str(&format!(" · the prompt changed first at {}", region.text()))
            }
            Some(Shrank::Lapsed { gap_ns, ttl_s }) => line.push_str(&format!(
                " · the prompt's start was unchanged, but {} passed since the last call, longer \
                 than the {} lifetime the request asked for",
                gap_text(*gap_ns),
                ttl_text(*ttl_s)
            )),
            Some(Shrank::NotKept { gap_ns }) => line.push_str(&format!(
                " · the prompt's start was unchanged and {} passed since the last call: the \
                 provider did not keep it",
                gap_text(*gap_ns)
            )),
            None => {}
        }
        line
    }
}

/// A gap between calls: `6 min`, `1 h 2 min`, `6 min 5 s`; under a minute as `human_duration`.
fn gap_text(ns: i64) -> String {
    let seconds = ns / 1_000_000_000;
    if seconds < 60 {
        return human_duration(ns);
    }
    let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours} h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes} min"));
    }
    if rest > 0 && hours == 0 {
        parts.push(format!("{rest} s"));
    }
    parts.join(" ")
}

fn ttl_text(seconds: u64) -> String {
    match seconds {
        3600 => "1-hour".to_string(),
        300 => "5-minute".to_string(),
        other => format!("{other}-second"),
    }
}

/// The cache report of every model call of a trace that reported cache counts (any order).
pub fn cache_reports(hops: &[RecordedHop]) -> Vec<CacheReport> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let calls = model_calls(hops, &readings);
    calls
        .iter()
        .filter_map(|call| {
            let previous = call.previous.map(|p| &calls[p]);
            report(hops, call.index, call.usage?, previous)
        })
        .collect()
}

/// The prefix a call left cached: what it read plus what it wrote (OpenAI and Gemini report
/// only reads).
fn cached_after(usage: &Usage) -> u64 {
    usage.cache_read_tokens.unwrap_or(0) + usage.cache_write_tokens.unwrap_or(0)
}

fn report(
    hops: &[RecordedHop],
    index: usize,
    usage: &Usage,
    previous: Option<&ModelCall<'_>>,
) -> Option<CacheReport> {
    if usage.cache_read_tokens.is_none() && usage.cache_write_tokens.is_none() {
        return None;
    }
    let read = usage.cache_read_tokens.unwrap_or(0);
    let written = usage.cache_write_tokens.unwrap_or(0);
    let uncached = usage
        .prompt_total()
        .unwrap_or(0)
        .saturating_sub(read + written);
    let previous_cached = previous.and_then(|p| p.usage).map(cached_after);
    let lost = previous_cached.is_some_and(|before| before > 0 && read < before);
    let verdict = match (read > 0, written > 0) {
        (true, _) if lost => Verdict::Partial,
        (true, _) => Verdict::Hit,
        (false, _) if lost => Verdict::Miss,
        (false, true) => Verdict::Written,
        (false, false) => Verdict::Miss,
    };
    let shrank = match previous.filter(|_| lost) {
        Some(previous) => why_shrank(&hops[previous.index], &hops[index]),
        None => None,
    };
    Some(CacheReport {
        hop_id: hops[index].start.id.clone(),
        read,
        written,
        uncached,
        verdict,
        previous_cached,
        shrank,
    })
}

/// Why the later call read less than the earlier left cached.
fn why_shrank(earlier: &RecordedHop, later: &RecordedHop) -> Option<Shrank> {
    let (before, after) = (earlier.request_parts()?, later.request_parts()?);
    if let Some(region) = after.regions.first_change(&before.regions) {
        return Some(Shrank::Changed(region));
    }
    let gap_ns = later.start.started_unix_ns - earlier.start.started_unix_ns;
    // The longest lifetime asked for that the gap outlasted.
    let outlasted = after
        .ttls
        .iter()
        .rev()
        .find(|ttl| gap_ns > i64::try_from(**ttl).unwrap_or(i64::MAX) * 1_000_000_000);
    Some(match outlasted {
        Some(ttl) => Shrank::Lapsed {
            gap_ns,
            ttl_s: *ttl,
        },
        None => Shrank::NotKept { gap_ns },
    })
}

#[cfg(test)]
#[path = "cache_verdict_tests.rs"]
mod tests;
