//! What `tracer run` prints when the child has ended, on stderr (stdout is the child's): the
//! traces of the run's hops (a table, `--show` in full, `--json` one line), each failed call and
//! failed tunnel with its reason, and the hosts only tunnelled (host, connections, bytes).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::show::render;
use super::tables::trace_table;
use tracer_export::hop_log::HopLog;
use tracer_export::listing::list_traces;
use tracer_store::{HopListing, Store};
use tracer_trace::words::plural;
use tracer_wire::safe_text::{json_text, multi_line, one_line};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportStyle {
    Table,
    Full,
    Quiet,
    Json,
}

pub struct Report<'a> {
    pub db: &'a Path,
    pub program: &'a str,
    pub exit_code: u8,
    pub run_id: &'a str,
    pub started: i64,
    pub ended: i64,
    pub wrapped: Vec<String>,
}

/// One host reached only through a blind tunnel.
#[derive(Debug, Default)]
struct Tunnelled {
    connections: usize,
    bytes_up: i64,
    bytes_down: i64,
}

impl Report<'_> {
    pub async fn print(&self, store: &Store, style: ReportStyle) -> anyhow::Result<()> {
        if style == ReportStyle::Quiet {
            return Ok(());
        }
        let hops: Vec<HopListing> = store.run_hops(self.run_id).await?;
        let mut trace_ids: Vec<String> = Vec::new();
        let mut tunnels: BTreeMap<String, Tunnelled> = BTreeMap::new();
        let failed: Vec<Failure> = hops.iter().rev().filter_map(Failure::of).collect();
        // The hops the traces hold; a CONNECT (a tunnel, or an interception that failed) is in
        // none and is counted apart.
        let connects = hops.iter().filter(|hop| hop.method == "CONNECT").count();
        let exchanged = hops.len() - connects;
        for hop in hops.iter().rev() {
            if hop.method == "CONNECT" && hop.state != "failed" {
                let entry = tunnels.entry(hop.route.clone()).or_default();
                entry.connections += 1;
                entry.bytes_up += hop.request_body_len.unwrap_or(0);
                entry.bytes_down += hop.response_body_len.unwrap_or(0);
                continue;
            }
            if hop.method == "CONNECT" {
                continue;
            }
            if let Some(id) = &hop.trace_id
                && !trace_ids.contains(id)
            {
                trace_ids.push(id.clone());
            }
        }
        let mut traces = list_traces(store, i64::MAX).await?;
        traces.retain(|t| trace_ids.contains(&t.id));
        traces.sort_by_key(|t| t.started_unix_ns);
        let seconds = (self.ended - self.started) as f64 / 1e9;
        if style == ReportStyle::Json {
            let value = json!({
                "command": self.program,
                "run_id": self.run_id,
                "exit_code": self.exit_code,
                "seconds": (seconds * 1000.0).round() / 1000.0,
                "db": self.db.display().to_string(),
                "hops": exchanged,
                "connects": connects,
                "failed": failed.iter().map(Failure::json).collect::<Vec<_>>(),
                "stdio_servers_wrapped": self.wrapped,
                "traces": traces,
                "tunnelled": tunnels.iter().map(|(host, t)| json!({
                    "host": host, "connections": t.connections,
                    "bytes_up": t.bytes_up, "bytes_down": t.bytes_down,
                })).collect::<Vec<_>>(),
            });
            let line = format!("{}\n", serde_json::to_string(&value)?);
            return write_err(&json_text(&line));
        }
        let failed_calls = failed.iter().filter(|f| !f.tunnel).count();
        let failures = match failed_calls {
            0 => String::new(),
            n => format!(" ({n} failed)"),
        };
        let mut text = format!(
            "tracer run: `{}` exited with {} after {seconds:.1} s; {}, {}{failures} recorded in {}\n",
            one_line(self.program),
            self.exit_code,
            plural(traces.len(), "trace"),
            plural(exchanged, "hop"),
            self.db.display()
        );
        if style == ReportStyle::Full {
            for trace in &traces {
                let log = HopLog::from_store(store, &trace.id).await?;
                text.push('\n');
                text.push_str(&render(&log));
            }
        } else {
            text.push_str(&trace_table(&traces));
        }
        for failure in &failed {
            text.push_str(&failure.line());
        }
        if !tunnels.is_empty() {
            let listed: Vec<String> = tunnels
                .iter()
                .map(|(host, t)| {
                    format!(
                        "{host} ({}, {} B up, {} B down)",
                        plural(t.connections, "connection"),
                        t.bytes_up,
                        t.bytes_down
                    )
                })
                .collect();
            text.push_str(&format!(
                "tunnelled, not decrypted: {}\n",
                listed.join(", ")
            ));
        }
        if let Some(first) = traces.first()
            && style == ReportStyle::Table
        {
            text.push_str(&format!(
                "tracer show {} --db {} for the numbered trace\n",
                &first.id[..first.id.len().min(8)],
                self.db.display()
            ));
        }
        write_err(&multi_line(&text))
    }
}

/// A call of the run that got no answer from its upstream, or a tunnel or interception that
/// failed: what it was and why, as the hop's record says.
struct Failure {
    tunnel: bool,
    method: String,
    target: String,
    status: Option<i64>,
    reason: String,
}

impl Failure {
    fn of(hop: &HopListing) -> Option<Failure> {
        if hop.state != "failed" {
            return None;
        }
        let tunnel = hop.method == "CONNECT";
        let target = if tunnel || hop.path.starts_with(&hop.route) {
            hop.path.clone()
        } else if hop.route.contains('.') || hop.route.contains(':') {
            // A forward-proxy hop: its route is the host.
            format!("{}{}", hop.route, hop.path)
        } else {
            format!("{} (route {})", hop.path, hop.route)
        };
        Some(Failure {
            tunnel,
            method: hop.method.clone(),
            target,
            status: hop.status,
            reason: hop
                .error
                .clone()
                .unwrap_or_else(|| "no reason recorded".to_string()),
        })
    }

    fn line(&self) -> String {
        let reason = one_line(&self.reason);
        if self.tunnel {
            return format!("failed tunnel: CONNECT {}: {reason}\n", self.target);
        }
        let answered = match self.status {
            Some(status) => format!("the client got {status}; "),
            None => String::new(),
        };
        format!(
            "failed call: {} {}: {answered}{reason}\n",
            self.method, self.target
        )
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "kind": if self.tunnel { "tunnel" } else { "call" },
            "method": self.method,
            "target": self.target,
            "status": self.status,
            "reason": self.reason,
        })
    }
}

fn write_err(text: &str) -> anyhow::Result<()> {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    Ok(())
}
