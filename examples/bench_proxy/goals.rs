//! Issue 49's goals, stated against hyper alone: one met / NOT met line each, with its figures.

use std::fmt::Write as _;

use crate::report::{Column, HopCheck, added_ms, cpu_per_request};
use crate::sse_proxy::SseRun;
use crate::sustained::Sustained;

/// Added first byte allowed at c=1, 8 and 32 (ms): p50, p99.
const FIRST_BYTE_P50_MS: f64 = 0.1;
const FIRST_BYTE_P99_MS: f64 = 0.5;
/// Chunk delivery later than direct's allowed (ms), at p50 and p99.
const DELIVERY_MS: f64 = 0.1;
const CPU_C50_VS_FLOOR: f64 = 2.0;
const THROUGHPUT_VS_FLOOR: f64 = 0.6;
const WHOLE_RUN_CPU_VS_FLOOR: f64 = 2.5;
const PEAK_RSS_MIB: f64 = 64.0;
const RSS_PER_HOP_BYTES: f64 = 2048.0;
const SSE_RAISE_VS_STREAM: f64 = 2.0;

/// What the goals are judged on: the table's columns, the hop accounting, the sustained phase
/// and the 14 MiB stream (each None when not run).
pub struct Inputs<'a> {
    pub columns: &'a [Column],
    pub hops: &'a HopCheck,
    pub sustained: Option<&'a Sustained>,
    pub sse: Option<&'a SseRun>,
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// The goal lines, a heading first.
pub fn lines(inputs: &Inputs) -> String {
    let mut out = String::from("goals (issue 49; \"hyper alone\" is the floor):\n");
    let find = |name: &str| inputs.columns.iter().find(|c| c.name == name);
    let Some(tracer) = find("tracer") else {
        out.push_str("- tracer was not measured\n");
        return out;
    };
    let floor = find("hyper alone");
    let direct = find("direct");

    let label = format!("proxy CPU per request c=50 ≤ {CPU_C50_VS_FLOOR}× hyper alone");
    match (cpu_per_request(tracer), floor.and_then(cpu_per_request)) {
        (Some(ours), Some(theirs)) if theirs > 0.0 => {
            let r = ours / theirs;
            let _ = writeln!(
                out,
                "- {label}: {:.1} µs against {:.1} µs, {r:.2}× — {}",
                ours * 1e6,
                theirs * 1e6,
                verdict(r <= CPU_C50_VS_FLOOR)
            );
        }
        _ => {
            let _ = writeln!(out, "- {label}: not measured");
        }
    }
    let label = format!("throughput c=50 ≥ {THROUGHPUT_VS_FLOOR}× hyper alone");
    match floor {
        Some(floor) if floor.rps_c50 > 0.0 => {
            let r = tracer.rps_c50 / floor.rps_c50;
            let _ = writeln!(
                out,
                "- {label}: {:.0} req/s against {:.0}, {r:.2}× — {}",
                tracer.rps_c50,
                floor.rps_c50,
                verdict(r >= THROUGHPUT_VS_FLOOR)
            );
        }
        _ => {
            let _ = writeln!(out, "- {label}: not measured");
        }
    }

    for concurrency in [1, 8, 32] {
        let ours = tracer.first_byte_at(concurrency).unwrap_or_default();
        let base = direct
            .and_then(|d| d.first_byte_at(concurrency))
            .unwrap_or_default();
        for (name, through, base, limit) in [
            ("p50", ours.p50, base.p50, FIRST_BYTE_P50_MS),
            ("p99", ours.p99, base.p99, FIRST_BYTE_P99_MS),
        ] {
            added_line(
                &mut out,
                &format!("added first byte {name} at c={concurrency} ≤ {limit} ms"),
                added_ms(through, base),
                limit,
            );
        }
    }
    for (name, through, base) in [
        (
            "p50",
            tracer.delivery_p50,
            direct.and_then(|d| d.delivery_p50),
        ),
        (
            "p99",
            tracer.delivery_p99,
            direct.and_then(|d| d.delivery_p99),
        ),
    ] {
        added_line(
            &mut out,
            &format!("chunk delivery {name} later than direct's by ≤ {DELIVERY_MS} ms"),
            added_ms(through, base),
            DELIVERY_MS,
        );
    }

    match tracer.peak_rss_kib {
        Some(kib) => {
            let mib = kib as f64 / 1024.0;
            let _ = writeln!(
                out,
                "- peak RSS ≤ {PEAK_RSS_MIB} MiB (c=50 and 1 GiB each way): {mib:.1} MiB — {}",
                verdict(mib <= PEAK_RSS_MIB)
            );
        }
        None => out.push_str("- peak RSS ≤ 64 MiB: not measured (no /proc)\n"),
    }
    let hops = inputs.hops;
    let _ = writeln!(
        out,
        "- 0 hops lost: {} sent, {} rows ({} complete), hops_not_written = {} — {}",
        hops.sent,
        hops.rows,
        hops.complete,
        hops.not_written_counter,
        verdict(hops.none_lost())
    );
    if let Some(backlog) = hops.after_load {
        let _ = writeln!(
            out,
            "- (the rounds) no row in no trace 2 s after their load: {} rows, {} in no trace — {}",
            backlog.rows,
            backlog.ungrouped,
            verdict(backlog.ungrouped == 0)
        );
    }
    sustained_lines(&mut out, inputs.sustained);
    sse_line(&mut out, inputs.sse);
    out
}

fn added_line(out: &mut String, label: &str, added: Option<f64>, limit: f64) {
    let _ = match added {
        Some(added) => writeln!(
            out,
            "- {label}: {added:+.3} ms — {}",
            verdict(added <= limit)
        ),
        None => writeln!(out, "- {label}: not measured"),
    };
}

fn sustained_lines(out: &mut String, sustained: Option<&Sustained>) {
    let whole = format!(
        "whole-run CPU per hop (recorded, stored, grouped) ≤ {WHOLE_RUN_CPU_VS_FLOOR}× hyper alone's per request"
    );
    let backlog = "sustained c=50: no row in no trace 1 s after the load";
    let memory = "resident memory per hop held ≤ 2 KB (2048 bytes)";
    let Some(sustained) = sustained else {
        for label in [whole.as_str(), backlog, memory] {
            let _ = writeln!(out, "- {label}: not measured (--sustained 0)");
        }
        return;
    };
    let tracer = sustained.tracer.as_ref();
    let floor = sustained.floor.as_ref();
    match (
        tracer.and_then(|t| t.cpu_per_hop_whole_run()),
        floor.and_then(|f| f.cpu_per_request()),
    ) {
        (Some(ours), Some(theirs)) if theirs > 0.0 => {
            let r = ours / theirs;
            let _ = writeln!(
                out,
                "- {whole}: {:.1} µs per hop (from the load's start until every row was in a trace) \
                 against {:.1} µs, {r:.2}× — {}",
                ours * 1e6,
                theirs * 1e6,
                verdict(r <= WHOLE_RUN_CPU_VS_FLOOR)
            );
        }
        _ if tracer.is_some_and(|t| t.grouped_after.is_none()) => {
            let _ = writeln!(
                out,
                "- {whole}: rows still missing or in no trace {} s after the load — NOT met",
                crate::sustained::CATCH_UP_LIMIT.as_secs()
            );
        }
        _ => {
            let _ = writeln!(out, "- {whole}: not measured");
        }
    }
    match tracer.and_then(|t| t.at_one_second) {
        Some(at) => {
            let _ = writeln!(
                out,
                "- {backlog}: {} rows of the phase written, {} in no trace — {}",
                at.rows,
                at.ungrouped,
                verdict(at.ungrouped == 0)
            );
        }
        None => {
            let _ = writeln!(out, "- {backlog}: not measured");
        }
    }
    match tracer.and_then(|t| Some((t, t.rss_bytes_per_hop()?))) {
        Some((t, bytes)) => {
            let _ = writeln!(
                out,
                "- {memory}: {bytes:+.0} bytes per hop (VmRSS {} → {} KiB over {} hops; an upper bound: \
                 allocator retention, SQLite's cache and any other growth included) — {}",
                t.rss_before_kib.unwrap_or(0),
                t.rss_after_kib.unwrap_or(0),
                t.hops,
                verdict(bytes <= RSS_PER_HOP_BYTES)
            );
        }
        None => {
            let _ = writeln!(out, "- {memory}: not measured");
        }
    }
}

fn sse_line(out: &mut String, sse: Option<&SseRun>) {
    let label = format!(
        "a 14 MiB SSE answer raises tracer proxy's peak RSS by ≤ {SSE_RAISE_VS_STREAM}× the stream"
    );
    let Some(run) = sse else {
        let _ = writeln!(out, "- {label}: not measured");
        return;
    };
    match run.raise_bytes() {
        Some(raise) => {
            let r = raise as f64 / run.stream_bytes.max(1) as f64;
            let _ = writeln!(
                out,
                "- {label}: +{:.1} MiB for {:.1} MiB, {r:.2}× — {}",
                raise as f64 / 1048576.0,
                run.stream_bytes as f64 / 1048576.0,
                verdict(r <= SSE_RAISE_VS_STREAM)
            );
        }
        None => {
            let _ = writeln!(out, "- {label}: not measured (no /proc)");
        }
    }
    let _ = writeln!(
        out,
        "- the stream's hop kept by tracer proxy: {} rows ({} complete) of {} sent — {}",
        run.rows,
        run.complete,
        run.sent,
        verdict(run.rows == run.sent && run.complete == run.sent)
    );
}
