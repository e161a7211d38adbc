//! The big database: many small traces imported from the sample hop logs, each with fresh ids
//! (the trace's and every hop's, replaced consistently in the JSON text) and its times moved back
//! so the traces follow one another, 30 s apart, as weeks of use would leave them.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tracer_export::hop_log::HopLog;

/// The sample hop logs of five hops each: `traces` of them make `5 * traces` hops.
const SAMPLES: [&str; 3] = [
    "sample-traces/buy-milk.json",
    "sample-traces/read-notes.json",
    "sample-traces/streamed-ndjson.json",
];

/// Seconds between two traces' starts.
const APART_NS: i64 = 30_000_000_000;

struct Sample {
    text: String,
    /// The trace's id and its hops' ids (the trace's id is its first hop's).
    ids: Vec<String>,
}

fn sample(path: &Path) -> Result<Sample> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let log = HopLog::from_json(text.as_bytes())?;
    let mut ids = vec![log.trace_id().to_string()];
    for hop in log.hops() {
        if !ids.contains(&hop.id) {
            ids.push(hop.id.clone());
        }
    }
    Ok(Sample { text, ids })
}

fn fresh_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Moves every `*_unix_ns` time of the log back by `by` nanoseconds.
fn shift_times(value: &mut Value, by: i64) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key.ends_with("_unix_ns")
                    && let Some(ns) = v.as_i64()
                {
                    *v = Value::from(ns - by);
                } else {
                    shift_times(v, by);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| shift_times(v, by)),
        _ => {}
    }
}

/// One copy of `sample`: fresh ids, times `back` ns earlier; the hop log's bytes.
fn copy_of(sample: &Sample, back: i64) -> Result<Vec<u8>> {
    let mut text = sample.text.clone();
    for id in &sample.ids {
        text = text.replace(id.as_str(), &fresh_id());
    }
    let mut value: Value = serde_json::from_str(&text)?;
    shift_times(&mut value, back);
    Ok(serde_json::to_vec(&value)?)
}

/// Makes `db` (which must not exist) with `traces` traces of 5 hops; returns the hops written.
pub fn make(root: &Path, db: &Path, traces: usize) -> Result<u64> {
    if db.exists() {
        bail!("{} exists already", db.display());
    }
    let samples = SAMPLES
        .iter()
        .map(|p| sample(&root.join(p)))
        .collect::<Result<Vec<_>>>()?;
    let started = Instant::now();
    let runtime = tokio::runtime::Runtime::new()?;
    let hops = runtime.block_on(async {
        let store = tracer_store::Store::open(db).await?;
        let mut hops = 0u64;
        for i in 0..traces {
            let sample = &samples[i % samples.len()];
            let bytes = copy_of(sample, (traces - i) as i64 * APART_NS)?;
            let log = HopLog::from_json(&bytes)?;
            hops += log.hops().len() as u64;
            log.import(&store).await?;
            if (i + 1) % 2_000 == 0 {
                eprintln!(
                    "bench_ui: {} traces imported in {:.0} s",
                    i + 1,
                    started.elapsed().as_secs_f64()
                );
            }
        }
        store.close().await;
        anyhow::Ok(hops)
    })?;
    Ok(hops)
}
