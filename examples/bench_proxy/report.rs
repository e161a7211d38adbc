//! The bench's results: one column per path (direct, tracer, hyper alone, nginx, mitmdump),
//! printed as a Markdown table with ratios, and the hop accounting (the goals: `goals.rs`).

use std::fmt::Write as _;
use std::time::Duration;

/// What one path measured.
#[derive(Debug, Default, Clone)]
pub struct Column {
    pub name: &'static str,
    pub rps_c1: f64,
    pub rps_c50: f64,
    /// First-byte latency at c=1, 8 and 32.
    pub first_byte: Vec<FirstByte>,
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

/// First-byte latency percentiles at one concurrency.
#[derive(Debug, Default, Clone, Copy)]
pub struct FirstByte {
    pub concurrency: usize,
    pub p50: Option<Duration>,
    pub p99: Option<Duration>,
}

impl Column {
    /// First-byte latency at `concurrency`, if measured.
    pub fn first_byte_at(&self, concurrency: usize) -> Option<FirstByte> {
        self.first_byte
            .iter()
            .find(|f| f.concurrency == concurrency)
            .copied()
    }
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

pub fn ms(value: Option<Duration>) -> String {
    value.map_or_else(|| "–".into(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
}

/// `a − b` in ms, signed.
pub fn added_ms(a: Option<Duration>, b: Option<Duration>) -> Option<f64> {
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
    for other in ["hyper alone", "nginx", "mitmdump"] {
        if let Some(base) = columns.iter().find(|c| c.name == other) {
            row(&format!("req/s c=50 vs {other}"), &|c| {
                ratio(c.rps_c50, base.rps_c50)
            });
        }
    }
    for concurrency in [1, 8, 32] {
        let at = |c: &Column| c.first_byte_at(concurrency).unwrap_or_default();
        let base = direct.map(at).unwrap_or_default();
        row(&format!("first byte p50, c={concurrency} (ms)"), &|c| {
            ms(at(c).p50)
        });
        row(&format!("first byte p99, c={concurrency} (ms)"), &|c| {
            ms(at(c).p99)
        });
        row(
            &format!("added first byte p50, c={concurrency} (ms)"),
            &|c| signed(added_ms(at(c).p50, base.p50)),
        );
        row(
            &format!("added first byte p99, c={concurrency} (ms)"),
            &|c| signed(added_ms(at(c).p99, base.p99)),
        );
    }
    row("stream chunk gaps timed", &|c| c.gaps.to_string());
    row("chunk gap jitter p50 (ms)", &|c| ms(c.jitter_p50));
    row("chunk gap jitter p99 (ms)", &|c| ms(c.jitter_p99));
    row("added jitter p99 (ms)", &|c| {
        signed(added_ms(c.jitter_p99, direct.and_then(|d| d.jitter_p99)))
    });
    row("chunk delivery p50 (ms)", &|c| ms(c.delivery_p50));
    row("chunk delivery p99 (ms)", &|c| ms(c.delivery_p99));
    row("added chunk delivery p50 (ms)", &|c| {
        signed(added_ms(
            c.delivery_p50,
            direct.and_then(|d| d.delivery_p50),
        ))
    });
    row("added chunk delivery p99 (ms)", &|c| {
        signed(added_ms(
            c.delivery_p99,
            direct.and_then(|d| d.delivery_p99),
        ))
    });
    row("requests sent / errors", &|c| {
        format!("{} / {}", c.sent, c.errors)
    });
    row("proxy CPU per request, c=50 (µs)", &|c| {
        c.cpu_c50.filter(|_| c.ok_c50 > 0).map_or_else(
            || "–".into(),
            |cpu| format!("{:.0}", cpu * 1e6 / c.ok_c50 as f64),
        )
    });
    for other in ["hyper alone", "nginx"] {
        if let Some(base) = columns.iter().find(|c| c.name == other) {
            row(&format!("proxy CPU per request vs {other}"), &|c| match (
                cpu_per_request(c),
                cpu_per_request(base),
            ) {
                (Some(ours), Some(theirs)) => ratio(ours, theirs),
                _ => "–".into(),
            });
        }
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
pub fn cpu_per_request(column: &Column) -> Option<f64> {
    column
        .cpu_c50
        .filter(|_| column.ok_c50 > 0)
        .map(|cpu| cpu / column.ok_c50 as f64)
}
