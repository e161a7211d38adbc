//! What `tracer ls` shows of a trace, kept once computed (`trace_summaries`): a listing reads the
//! kept row while its key, a digest of the trace's row and its hops' columns (never their
//! bodies), still matches; otherwise the caller computes it again and keeps it.

use super::{Result, Store};

/// The key of one trace as stored now, and its kept summary (JSON) when that was computed from
/// the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptSummary {
    pub key: String,
    pub summary: Option<String>,
}

/// Everything a summary is computed from that can change, read from columns: the trace's row,
/// and per hop its arrival, state, status, times, pieces and WebSocket messages; and the build
/// (a newer tracer may read bodies differently).
const KEY_SQL: &str = "select
     (select count(*) || ':' || coalesce(max(h.seq), 0) || ':' || total(h.state = 'in_flight')
          || ':' || total(h.state = 'complete') || ':' || total(coalesce(h.status, 0))
          || ':' || total(h.request_ended_unix_ns is not null)
          || ':' || coalesce(max(h.response_ended_unix_ns), 0)
          || ':' || total(h.body_pieces + 4 * h.body_chunked)
          || ':' || total(length(coalesce(h.note, '')) + length(coalesce(h.error, '')))
          || ':' || total((select count(*) from ws_frames f where f.hop_id = h.id))
      from hops h where h.trace_id = t.id)
     || ':' || coalesce(t.title, '') || ':' || t.kind || ':' || t.started_unix_ns
     || ':' || coalesce(t.ended_unix_ns, 0) || ':' || ?2 as key,
     s.hops_key, s.summary
 from traces t left join trace_summaries s on s.trace_id = t.id
 where t.id = ?1";

/// What a summary depends on besides the database: this build, and the revision of how a
/// summary is computed (raised when a summary of the same hops changes: revision 2 counts failed
/// side calls apart from the status and lists the host's own tools), so that every summary kept
/// before is computed again.
const BUILD: &str = concat!(env!("CARGO_PKG_VERSION"), "+summary.2");

impl Store {
    /// The key of trace `trace_id` now, and its kept summary if it still matches.
    pub async fn kept_summary(&self, trace_id: &str) -> Result<KeptSummary> {
        let row: Option<(Option<String>, Option<String>, Option<String>)> = sqlx::query_as(KEY_SQL)
            .bind(trace_id)
            .bind(BUILD)
            .fetch_optional(self.pool())
            .await?;
        let (key, kept_key, summary) = row.unwrap_or_default();
        let key = key.unwrap_or_default();
        let summary = summary.filter(|_| kept_key.as_deref() == Some(key.as_str()));
        Ok(KeptSummary { key, summary })
    }

    /// Keeps a trace's summary (JSON) computed from `key`.
    pub async fn keep_summary(&self, trace_id: &str, key: &str, summary: &str) -> Result<()> {
        sqlx::query(
            "insert into trace_summaries (trace_id, hops_key, summary) values (?1, ?2, ?3)
             on conflict(trace_id) do update set hops_key = ?2, summary = ?3",
        )
        .bind(trace_id)
        .bind(key)
        .bind(summary)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
