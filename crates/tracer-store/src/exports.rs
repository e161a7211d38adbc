//! SQL for `otlp_spans`: which spans went to which OpenTelemetry receiver, claims so that two
//! exporters never send one span twice, and the `spans_not_exported` counter kept equal to the
//! spans in state `failed`.

use std::collections::HashMap;

use super::{Result, Store};
use tracer_wire::hop::now_unix_ns;

/// The counter of spans that could not be delivered and were not sent since.
pub const SPANS_NOT_EXPORTED: &str = "spans_not_exported";

/// A `sending` row older than this belongs to an exporter that stopped without finishing.
const STALE_SENDING_NS: i64 = 5 * 60 * 1_000_000_000;

/// One span's place in the table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SpanKey {
    pub trace_id: String,
    pub span_id: String,
    pub hop_id: Option<String>,
}

/// A hop not yet exported to a receiver, as the live exporter's scan sees it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UnexportedHop {
    pub trace_id: Option<String>,
    pub state: String,
    pub started_unix_ns: i64,
    pub ended_unix_ns: i64,
}

/// What is stored for one span and one receiver.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
struct SpanState {
    pub state: String,
    pub updated_unix_ns: i64,
}

impl Store {
    /// Hops started at or after `since_ns` that have no row for `target` (claimed by nobody).
    pub async fn unexported_hops(&self, target: &str, since_ns: i64) -> Result<Vec<UnexportedHop>> {
        Ok(sqlx::query_as::<_, UnexportedHop>(
            "select h.trace_id, h.state, h.request_started_unix_ns as started_unix_ns,
                    coalesce(h.response_ended_unix_ns, h.response_head_unix_ns,
                             h.request_started_unix_ns) as ended_unix_ns
             from hops h
             where h.request_started_unix_ns >= ?2
               and not exists (select 1 from otlp_spans s where s.target = ?1 and s.hop_id = h.id)",
        )
        .bind(target)
        .bind(since_ns)
        .fetch_all(self.pool())
        .await?)
    }

    /// The rows of one trace for `target`, by span id.
    #[cfg(test)]
    async fn span_states(
        &self,
        target: &str,
        trace_id: &str,
    ) -> Result<HashMap<String, SpanState>> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "select span_id, state, updated_unix_ns from otlp_spans
             where target = ?1 and trace_id = ?2",
        )
        .bind(target)
        .bind(trace_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(span, state, updated_unix_ns)| {
                (
                    span,
                    SpanState {
                        state,
                        updated_unix_ns,
                    },
                )
            })
            .collect())
    }

    /// Claims spans for sending to `target`: only spans with no row yet, or (with `retake`) a
    /// `failed` or stale `sending` row. Returns which were claimed, in the order given.
    pub async fn claim_spans(
        &self,
        target: &str,
        spans: &[SpanKey],
        retake: bool,
    ) -> Result<Vec<bool>> {
        let now = now_unix_ns();
        let mut tx = self.begin_write().await?;
        let mut claimed = Vec::with_capacity(spans.len());
        let mut retaken_failed = 0i64;
        for span in spans {
            let previous: Option<(String, i64)> = sqlx::query_as(
                "select state, updated_unix_ns from otlp_spans
                 where target = ?1 and trace_id = ?2 and span_id = ?3",
            )
            .bind(target)
            .bind(&span.trace_id)
            .bind(&span.span_id)
            .fetch_optional(&mut *tx)
            .await?;
            let take = match previous.as_ref() {
                None => true,
                Some((state, _)) if state == "failed" => retake,
                Some((state, at)) if state == "sending" => retake && now - at > STALE_SENDING_NS,
                Some(_) => false,
            };
            if take {
                if previous
                    .as_ref()
                    .is_some_and(|(state, _)| state == "failed")
                {
                    retaken_failed += 1;
                }
                sqlx::query(
                    "insert into otlp_spans (target, trace_id, span_id, hop_id, state, updated_unix_ns)
                     values (?1, ?2, ?3, ?4, 'sending', ?5)
                     on conflict(target, trace_id, span_id) do update set
                         state = 'sending', error = null, updated_unix_ns = excluded.updated_unix_ns",
                )
                .bind(target)
                .bind(&span.trace_id)
                .bind(&span.span_id)
                .bind(&span.hop_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
            claimed.push(take);
        }
        // A failed span taken again is no longer "not exported" until this attempt fails too.
        add_to_not_exported(&mut tx, -retaken_failed).await?;
        tx.commit().await?;
        Ok(claimed)
    }

    /// Marks spans delivered to `target`.
    pub async fn mark_spans_sent(&self, target: &str, spans: &[SpanKey]) -> Result<()> {
        self.mark(target, spans, "sent", None).await
    }

    /// Marks spans not delivered to `target` and counts them in `spans_not_exported`.
    pub async fn mark_spans_failed(
        &self,
        target: &str,
        spans: &[SpanKey],
        why: &str,
    ) -> Result<()> {
        self.mark(target, spans, "failed", Some(why)).await
    }

    async fn mark(
        &self,
        target: &str,
        spans: &[SpanKey],
        state: &str,
        error: Option<&str>,
    ) -> Result<()> {
        let now = now_unix_ns();
        let mut tx = self.begin_write().await?;
        let mut delta = 0i64;
        for span in spans {
            let previous: Option<String> = sqlx::query_scalar(
                "select state from otlp_spans where target = ?1 and trace_id = ?2 and span_id = ?3",
            )
            .bind(target)
            .bind(&span.trace_id)
            .bind(&span.span_id)
            .fetch_optional(&mut *tx)
            .await?;
            let was_failed = previous.as_deref() == Some("failed");
            delta += i64::from(state == "failed") - i64::from(was_failed);
            sqlx::query(
                "insert into otlp_spans (target, trace_id, span_id, hop_id, state, error, updated_unix_ns)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 on conflict(target, trace_id, span_id) do update set
                     state = excluded.state, error = excluded.error,
                     updated_unix_ns = excluded.updated_unix_ns",
            )
            .bind(target)
            .bind(&span.trace_id)
            .bind(&span.span_id)
            .bind(&span.hop_id)
            .bind(state)
            .bind(error)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        add_to_not_exported(&mut tx, delta).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The receivers some spans could not be delivered to, with how many, by target.
    pub async fn failed_targets(&self) -> Result<Vec<(String, i64)>> {
        Ok(sqlx::query_as(
            "select target, count(*) from otlp_spans where state = 'failed'
             group by target order by target",
        )
        .fetch_all(self.pool())
        .await?)
    }

    /// Spans per state for `target` (all receivers when None), e.g. `{"sent": 12, "failed": 2}`.
    pub async fn span_counts(&self, target: Option<&str>) -> Result<HashMap<String, i64>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "select state, count(*) from otlp_spans where ?1 is null or target = ?1 group by state",
        )
        .bind(target)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().collect())
    }
}

async fn add_to_not_exported(tx: &mut sqlx::SqliteConnection, delta: i64) -> Result<()> {
    if delta != 0 {
        sqlx::query(
            "insert into counters (name, value) values (?1, max(?2, 0))
             on conflict(name) do update set value = max(value + ?2, 0)",
        )
        .bind(SPANS_NOT_EXPORTED)
        .bind(delta)
        .execute(tx)
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(span: &str) -> SpanKey {
        SpanKey {
            trace_id: "t1".into(),
            span_id: span.into(),
            hop_id: Some(format!("hop-{span}")),
        }
    }

    #[tokio::test]
    async fn claims_are_exclusive_and_the_counter_follows_failed_rows() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        let target = "http://127.0.0.1:4318/v1/traces";
        let spans = [key("a"), key("b")];
        assert_eq!(
            store.claim_spans(target, &spans, false).await.unwrap(),
            [true, true]
        );
        assert_eq!(
            store.claim_spans(target, &spans, false).await.unwrap(),
            [false, false]
        );
        store
            .mark_spans_failed(target, &spans, "down")
            .await
            .unwrap();
        assert_eq!(store.counter(SPANS_NOT_EXPORTED).await.unwrap(), 2);
        // Another receiver is another set of rows.
        assert_eq!(
            store
                .claim_spans("http://other/v1/traces", &spans[..1], false)
                .await
                .unwrap(),
            [true]
        );
        // A push takes failed spans again; delivered, they leave the counter.
        assert_eq!(
            store.claim_spans(target, &spans[..1], true).await.unwrap(),
            [true]
        );
        assert_eq!(store.counter(SPANS_NOT_EXPORTED).await.unwrap(), 1);
        store.mark_spans_sent(target, &spans[..1]).await.unwrap();
        assert_eq!(store.counter(SPANS_NOT_EXPORTED).await.unwrap(), 1);
        assert_eq!(
            store.claim_spans(target, &spans[..1], true).await.unwrap(),
            [false]
        );
        let counts = store.span_counts(Some(target)).await.unwrap();
        assert_eq!((counts["sent"], counts["failed"]), (1, 1));
        assert_eq!(
            store.span_states(target, "t1").await.unwrap()["a"].state,
            "sent"
        );
    }

    /// Marking reads a row, then writes: it takes the write lock first (`BEGIN IMMEDIATE`), so a
    /// writer that holds the lock and commits meanwhile only makes it wait. (A deferred
    /// transaction whose snapshot such a commit made stale fails at its first write with
    /// SQLITE_BUSY_SNAPSHOT at once, whatever the busy timeout; whether this test catches that
    /// depends on whether a mark read before the commit.)
    #[tokio::test(flavor = "multi_thread")]
    async fn marks_wait_for_a_writer_that_commits_meanwhile() {
        use sqlx::Connection;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = Store::open(&path).await.unwrap();
        let target = "http://127.0.0.1:4318/v1/traces";
        let spans: Vec<SpanKey> = ["a", "b", "c"].into_iter().map(key).collect();
        store.claim_spans(target, &spans, false).await.unwrap();
        let mut other = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        sqlx::query("begin immediate")
            .execute(&mut other)
            .await
            .unwrap();
        sqlx::query("insert into counters (name, value) values ('other', 1)")
            .execute(&mut other)
            .await
            .unwrap();
        let marks: Vec<_> = spans
            .iter()
            .map(|span| {
                let (store, span) = (store.clone(), span.clone());
                tokio::spawn(async move { store.mark_spans_failed(target, &[span], "down").await })
            })
            .collect();
        sqlx::query("commit").execute(&mut other).await.unwrap();
        for mark in marks {
            mark.await.unwrap().unwrap();
        }
        assert_eq!(store.counter(SPANS_NOT_EXPORTED).await.unwrap(), 3);
        assert_eq!(store.span_counts(Some(target)).await.unwrap()["failed"], 3);
    }
}
