//! The bench's results: one column per path (direct, tracer, nginx, mitmdump), printed as a
//! Markdown table with ratios, the hop accounting, and a met / not met line per target.

use std::fmt::Write as _;
use std::time::Duration;

/// What one path measured.
#[derive(Debug, Default, Clone)]
pub struct Column {
    pub name: &'static str,
    pub rps_c1: f64,
    pub rps_c50: f64,
    pub first_byte_p50: Option<Duration>,
    pub first_byte_p99: Option<Duration>,
    pub jitter_p50: Option<Duration>,
    pub jitter_p99: Option<Duration>,
    pub delivery_p50: Option<Duration>,
    pub delivery_p99: Option<Duration>,
    pub gaps: usize,
    /// Requests sent through this path (warm-up included).
    pub sent: u64,
    pub errors: u64,
    pub peak_rss_kib: Option<u64>,
    /// CPU seconds the proxy process(es) used during the c=50 cell.
    pub cpu_c50: Option<f64>,
    /// Requests answered in the c=50 cell.
    pub ok_c50: u64,
}

/// Requests sent through tracer against the rows it wrote.
#[derive(Debug, Default, Clone)]
pub struct HopCheck {
    pub sent: u64,
    pub rows: i64,
    pub complete: i64,
    pub not_written_counter: i64,
    pub child_said: String,
    /// 2 s after the rounds' load stopped, with the child still running: rows written so far,
    /// and those not yet in a trace (live grouping's backlog); None when not read.
    pub after_load: Option<Backlog>,
}

/// What the running child's database held 2 s after the load stopped.
#[derive(Debug, Default, Clone, Copy)]
pub struct Backlog {
    pub rows: i64,
    pub ungrouped: i64,
}

impl HopCheck {
    pub fn none_lost(&self) -> bool {
        u64::try_from(self.rows).ok() == Some(self.sent)
            && self.complete == self.rows
            && self.not_written_counter == 0
    }
}

fn ms(value: Option<Duration>) -> String {
    value.map_or_else(|| "–".into(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
}

/// `a − b` in ms, signed.
fn added_ms(a: Option<Duration>, b: Option<Duration>) -> Option<f64> {
    Some((a?.as_secs_f64() - b?.as_secs_f64()) * 1e3)
}

fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |v| format!("{v:+.3}"))
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "–".into()
    }
}

/// The table as Markdown (the same text goes into docs/performance.md).
pub fn table(columns: &[Column]) -> String {
    let direct = columns.iter().find(|c| c.name == "direct");
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |label: &str, cell: &dyn Fn(&Column) -> String| {
        rows.push((label.into(), columns.iter().map(cell).collect()));
    };
    row("req/s, c=1", &|c| format!("{:.0}", c.rps_c1));
    row("req/s, c=50", &|c| format!("{:.0}", c.rps_c50));
    row("req/s c=50 vs direct", &|c| {
        ratio(c.rps_c50, direct.map_or(0.0, |d| d.rps_c50))
    });
    for other in ["nginx", "mitmdump"] {
        if let Some(base) = columns.iter().find(|c| c.name == other) {
            row(&format!("req/s c=50 vs {other}"), &|c| {
                ratio(c.rps_c50, base.rps_c50)
            });
        }
    }
    row("first byte p50, c=1 (ms)", &|c| ms(c.first_byte_p50));
    row("first byte p99, c=1 (ms)", &|c| ms(c.first_byte_p99));
    row("added first byte p50 (ms)", &|c| {
        signed(added_ms(
            c.first_byte_p50,
            direct.and_then(|d| d.first_byte_p50),
        ))
    });
    row("added first byte p99 (ms)", &|c| {
        signed(added_ms(
            c.first_byte_p99,
            direct.and_then(|d| d.first_byte_p99),
        ))
    });
    row("stream chunk gaps timed", &|c| c.gaps.to_string());
    row("chunk gap jitter p50 (ms)", &|c| ms(c.jitter_p50));
    row("chunk gap jitter p99 (ms)", &|c| ms(c.jitter_p99));
    row("added jitter p99 (ms)", &|c| {
        signed(added_ms(c.jitter_p99, direct.and_then(|d| d.jitter_p99)))
    });
    row("chunk delivery p50 (ms)", &|c| ms(c.delivery_p50));
    row("chunk delivery p99 (ms)", &|c| ms(c.delivery_p99));
    row("requests sent / errors", &|c| {
        format!("{} / {}", c.sent, c.errors)
    });
    row("proxy CPU per request, c=50 (µs)", &|c| {
        c.cpu_c50.filter(|_| c.ok_c50 > 0).map_or_else(
            || "–".into(),
            |cpu| format!("{:.0}", cpu * 1e6 / c.ok_c50 as f64),
        )
    });
    if let Some(base) = columns.iter().find(|c| c.name == "nginx") {
        row(
            "proxy CPU per request vs nginx",
            &|c| match (cpu_per_request(c), cpu_per_request(base)) {
                (Some(ours), Some(theirs)) => ratio(ours, theirs),
                _ => "–".into(),
            },
        );
    }
    row("peak RSS (MiB)", &|c| {
        c.peak_rss_kib
            .map_or_else(|| "–".into(), |kib| format!("{:.1}", kib as f64 / 1024.0))
    });
    let mut out = String::new();
    let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
    let _ = writeln!(out, "| | {} |", names.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(columns.len()));
    for (label, cells) in rows {
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    }
    out
}

/// CPU seconds per answered request in the c=50 cell.
fn cpu_per_request(column: &Column) -> Option<f64> {
    column
        .cpu_c50
        .filter(|_| column.ok_c50 > 0)
        .map(|cpu| cpu / column.ok_c50 as f64)
}

/// One line per target, met or not, with the figure behind it.
pub fn targets(columns: &[Column], hops: &HopCheck) -> String {
    let find = |name: &str| columns.iter().find(|c| c.name == name);
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    let mut out = String::new();
    let Some(tracer) = find("tracer") else {
        return "tracer was not measured\n".into();
    };
    let direct = find("direct");
    match find("nginx") {
        Some(nginx) if nginx.rps_c50 > 0.0 => {
            let r = tracer.rps_c50 / nginx.rps_c50;
            let _ = writeln!(
                out,
                "- throughput c=50 ≥ 0.8× nginx: {r:.2}× — {}",
                verdict(r >= 0.8)
            );
        }
        _ => out.push_str("- throughput c=50 ≥ 0.8× nginx: not measured (no nginx)\n"),
    }
    match (
        find("nginx").and_then(cpu_per_request),
        cpu_per_request(tracer),
    ) {
        (Some(nginx), Some(ours)) if nginx > 0.0 => {
            let r = ours / nginx;
            let _ = writeln!(
                out,
                "- proxy CPU per request c=50 ≤ 1.5× nginx: {:.0} µs against {:.0} µs, {r:.2}× — {}",
                ours * 1e6,
                nginx * 1e6,
                verdict(r <= 1.5)
            );
        }
        _ => out.push_str("- proxy CPU per request c=50 ≤ 1.5× nginx: not measured\n"),
    }
    match find("mitmdump") {
        Some(mitm) if mitm.rps_c50 > 0.0 => {
            let r = tracer.rps_c50 / mitm.rps_c50;
            let _ = writeln!(
                out,
                "- throughput c=50 ≥ 20× mitmdump: {r:.1}× — {}",
                verdict(r >= 20.0)
            );
        }
        _ => out.push_str("- throughput c=50 ≥ 20× mitmdump: not measured (no mitmdump)\n"),
    }
    let lines = [
        (
            "added first byte p50 ≤ 0.1 ms",
            tracer.first_byte_p50,
            direct.and_then(|d| d.first_byte_p50),
            0.1,
        ),
        (
            "added first byte p99 ≤ 1 ms",
            tracer.first_byte_p99,
            direct.and_then(|d| d.first_byte_p99),
            1.0,
        ),
        (
            "added jitter p99 ≤ 1 ms",
            tracer.jitter_p99,
            direct.and_then(|d| d.jitter_p99),
            1.0,
        ),
    ];
    for (label, through, base, limit) in lines {
        match added_ms(through, base) {
            Some(added) => {
                let _ = writeln!(
                    out,
                    "- {label}: {added:+.3} ms — {}",
                    verdict(added <= limit)
                );
            }
            None => {
                let _ = writeln!(out, "- {label}: not measured");
            }
        }
    }
    let _ = writeln!(
        out,
        "- 0 hops lost: {} sent, {} rows ({} complete), hops_not_written = {} — {}",
        hops.sent,
        hops.rows,
        hops.complete,
        hops.not_written_counter,
        verdict(hops.none_lost())
    );
    match hops.after_load {
        Some(backlog) => {
            let _ = writeln!(
                out,
                "- grouping keeps up (no backlog 2 s after the load): {} rows, {} not in a trace — {}",
                backlog.rows,
                backlog.ungrouped,
                verdict(backlog.ungrouped == 0)
            );
        }
        None => out.push_str("- grouping keeps up: not measured\n"),
    }
    match tracer.peak_rss_kib {
        Some(kib) => {
            let mib = kib as f64 / 1024.0;
            let _ = writeln!(
                out,
                "- peak RSS ≤ 64 MB: {mib:.1} MiB — {}",
                verdict(mib <= 64.0)
            );
        }
        None => out.push_str("- peak RSS ≤ 64 MB: not measured (no /proc)\n"),
    }
    out
}
