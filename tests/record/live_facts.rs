//! Live grouping takes the facts the store writer hands it: every hop of the five agents'
//! fixtures and of the sample traces reads the same from its journaled events as from its stored
//! row, and grouping from those facts decides as a replay of the rows does, reading no row back.

use tracer::export::hop_log::HopLog;
use tracer::hop::{HopSink, RequestDone};
use tracer::store::Store;
use tracer::trace::correlate::{GroupScope, correlate, spawn_recorder};
use tracer::trace::live_facts::{LiveFacts, Version};
use tracer::trace::live_group::LiveGrouping;
use tracer::trace::{GroupOptions, RecordedHop};

use crate::agent_trace::{agent_hops, has_agent};

const AGENTS: [&str; 5] = [
    "claude-code",
    "codex",
    "gemini-cli",
    "opencode",
    "qwen-code",
];
const SAMPLES: [&str; 6] = [
    "buy-milk",
    "phonebook-text-tool-call",
    "read-notes",
    "step-limit",
    "streamed-ndjson",
    "tool-error-fixed",
];

/// Every fixture hop, each set 1000 s after the last (so sets do not interleave), ids unique.
fn fixture_hops() -> Vec<RecordedHop> {
    let mut sets: Vec<Vec<RecordedHop>> = AGENTS
        .iter()
        .filter(|agent| has_agent(agent))
        .map(|agent| agent_hops(agent))
        .collect();
    for sample in SAMPLES {
        let path = format!("{}/sample-traces/{sample}.json", env!("CARGO_MANIFEST_DIR"));
        let log = HopLog::from_json(&std::fs::read(&path).expect("sample")).expect("hop log");
        sets.push(log.recorded_hops());
    }
    assert!(sets.len() >= 8, "the fixtures are there");
    let mut hops = Vec::new();
    for (set, set_hops) in sets.into_iter().enumerate() {
        let first = set_hops
            .iter()
            .map(|h| h.start.started_unix_ns)
            .min()
            .unwrap_or(0);
        let base = 1_900_000_000_000_000_000 + set as i64 * 1_000_000_000_000;
        for (index, hop) in set_hops.into_iter().enumerate() {
            let id = format!("{set:02}{index:030}");
            let shift = base - first;
            let mut start = hop.start;
            start.id = id.clone();
            start.started_unix_ns += shift;
            let mut end = hop.end.expect("an ended hop");
            end.id = id;
            for at in [
                &mut end.request_ended_unix_ns,
                &mut end.response_head_unix_ns,
                &mut end.response_first_byte_unix_ns,
                &mut end.response_ended_unix_ns,
            ] {
                *at = at.map(|t| t + shift);
            }
            hops.push(RecordedHop::new(start, Some(end)));
        }
    }
    hops
}

/// The grouping input of each hop's stored row, and the one the writer handed over for that
/// state of the row (None when it handed none).
async fn compare(
    store: &Store,
    facts: &LiveFacts,
    hops: &[RecordedHop],
    version: Version,
) -> usize {
    let mut handed = 0;
    for hop in hops {
        let stored = store.hop_by_id(&hop.start.id).await.expect("stored");
        // In flight, the row says whether its request has been read.
        let version = match version {
            Version::InFlight { .. } => Version::InFlight {
                request_read: stored.end.request_ended_unix_ns.is_some(),
            },
            ended => ended,
        };
        let from_row = RecordedHop::from(stored).trace_input();
        if let Some(from_events) = facts.take(&hop.start.id, version) {
            handed += 1;
            assert_eq!(
                from_events, from_row,
                "hop {} of {} ({version:?})",
                hop.start.id, hop.start.route
            );
        }
    }
    handed
}

#[tokio::test]
async fn each_hop_handed_over_reads_as_its_stored_row_in_flight_and_ended() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.db")).await.expect("store");
    let hops = fixture_hops();
    let (recorder, writer, facts) = spawn_recorder(&store).expect("recorder");
    // Their starts and requests first, written before their ends (the writer takes them in
    // another batch, as under load).
    for hop in &hops {
        assert!(recorder.start(hop.start.clone()));
        let end = hop.end.as_ref().expect("end");
        if let Some(ended) = end.request_ended_unix_ns {
            recorder.request_done(RequestDone {
                id: hop.start.id.clone(),
                request_body: end.request_body.clone(),
                request_ended_unix_ns: ended,
            });
        }
    }
    let started = std::time::Instant::now();
    while store.hop_count().await.expect("count") < hops.len() as i64 {
        assert!(started.elapsed().as_secs() < 30, "the starts are written");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let flying = compare(
        &store,
        &facts,
        &hops,
        Version::InFlight { request_read: true },
    )
    .await;
    for hop in &hops {
        recorder.end(hop.end.clone().expect("end"));
    }
    drop(recorder);
    writer.await.expect("writer");
    let ended = compare(&store, &facts, &hops, Version::Ended).await;
    for handed in [flying, ended] {
        assert!(
            handed * 10 >= hops.len() * 9,
            "most fixture hops are handed over: {handed} of {}",
            hops.len()
        );
    }
    store.close().await;
}

/// Each hop's trace as a partition: hops in order, each labelled by the first hop of its trace.
async fn partition(store: &Store) -> Vec<(String, Option<String>)> {
    let hops = store.all_hops().await.expect("hops");
    let mut first_of: std::collections::HashMap<String, String> = Default::default();
    hops.into_iter()
        .map(|hop| {
            let label = hop.trace_id.map(|trace| {
                first_of
                    .entry(trace)
                    .or_insert_with(|| hop.start.id.clone())
                    .clone()
            });
            (hop.start.id, label)
        })
        .collect()
}

#[tokio::test]
async fn live_grouping_from_handed_facts_reads_no_row_and_decides_as_a_replay() {
    let hops = fixture_hops();
    for with_facts in [true, false] {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("t.db")).await.expect("store");
        let (recorder, writer, facts) = spawn_recorder(&store).expect("recorder");
        let mut live = if with_facts {
            LiveGrouping::with_facts(GroupOptions::default(), facts.clone())
        } else {
            LiveGrouping::new()
        };
        // The proxy's first pass, before any traffic.
        live.pass(&store).await.expect("first pass");
        for hop in &hops {
            assert!(recorder.start(hop.start.clone()));
            recorder.end(hop.end.clone().expect("end"));
        }
        drop(recorder);
        writer.await.expect("writer");
        let report = live.pass(&store).await.expect("pass");
        assert_eq!(report.assigned, hops.len(), "every hop placed");
        if with_facts {
            assert!(
                live.rows_read() * 10 <= hops.len() as u64,
                "{} of {} rows read back",
                live.rows_read(),
                hops.len()
            );
            assert!(facts.is_empty(), "every fact handed over was taken");
        } else {
            assert_eq!(
                live.rows_read(),
                hops.len() as u64,
                "without facts every row is read"
            );
        }
        let live_traces = partition(&store).await;
        correlate(&store, GroupOptions::default(), GroupScope::Rebuild)
            .await
            .expect("rebuild");
        assert_eq!(
            partition(&store).await,
            live_traces,
            "with facts: {with_facts}"
        );
        store.close().await;
    }
}
