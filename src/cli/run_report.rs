//! What `tracer run` prints when the child has ended, on stderr (stdout is the child's): the
//! traces of the run's hops (a table, `--show` in full, `--json` one line) and the hosts only
//! tunnelled (host, connections, bytes).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::show::render;
use super::tables::trace_table;
use super::trace_entries::list_traces;
use crate::export::hop_log::HopLog;
use crate::store::{HopListing, Store};
use crate::trace::explain::plural;
use crate::wire::safe_text::{json_text, multi_line, one_line};

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
        for hop in hops.iter().rev() {
            if hop.method == "CONNECT" {
                let entry = tunnels.entry(hop.route.clone()).or_default();
                entry.connections += 1;
                entry.bytes_up += hop.request_body_len.unwrap_or(0);
                entry.bytes_down += hop.response_body_len.unwrap_or(0);
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
                "hops": hops.len(),
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
        let mut text = format!(
            "tracer run: `{}` exited with {} after {seconds:.1} s; {}, {} recorded in {}\n",
            one_line(self.program),
            self.exit_code,
            plural(traces.len(), "trace"),
            plural(hops.len(), "hop"),
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

fn write_err(text: &str) -> anyhow::Result<()> {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    Ok(())
}
