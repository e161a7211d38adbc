//! Model requests' readings kept (`hop_readings`, each text once in `reading_texts`): JSON rows
//! the trace code writes once a request is read and takes back instead of parsing its body.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{Result, Store};

/// The key of a hop's request as stored, for a row of `hops` named `h`: the build (a newer
/// tracer may read bodies differently) and every column the request's reading depends on. A
/// request that has not ended is never kept.
pub(super) const KEY_SQL: &str = "(?9 || ':' || h.state || ':' || h.request_ended_unix_ns
     || ':' || coalesce(h.request_body_len, '') || ':' || coalesce(h.request_body_truncated, '')
     || ':' || length(h.request_headers) || ':' || h.method || ':' || h.path
     || ':' || (h.body_pieces & 1) || (h.body_chunked & 1))";

/// What a reading depends on besides the database: this build.
pub(super) const BUILD: &str = env!("CARGO_PKG_VERSION");

/// A reading to keep: the hop's id and the reading's JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadingToKeep {
    pub hop_id: String,
    pub reading: String,
}

impl Store {
    /// Each kept reading of trace `trace_id`'s hops that still matches its hop as stored, handed
    /// to `each` (hop id, JSON) as its row is read: a long trace's readings are never all held
    /// as text at once.
    pub async fn each_kept_reading(
        &self,
        trace_id: &str,
        mut each: impl FnMut(String, &str),
    ) -> Result<()> {
        use futures_util::TryStreamExt;
        static SQL: LazyLock<String> = LazyLock::new(|| {
            format!(
                "select r.hop_id, r.reading from hop_readings r join hops h on h.id = r.hop_id
                 where h.trace_id = ?1 and r.hop_key = {KEY_SQL}"
            )
            .replace("?9", "?2")
        });
        let mut rows = sqlx::query_as::<_, (String, String)>(SQL.as_str())
            .bind(trace_id)
            .bind(BUILD)
            .fetch(self.pool());
        while let Some((hop, reading)) = rows.try_next().await? {
            each(hop, &reading);
        }
        Ok(())
    }

    /// The kept texts of these ids (JSON each), by id.
    pub async fn reading_texts(&self, ids: &[i64]) -> Result<HashMap<i64, String>> {
        let mut texts = HashMap::with_capacity(ids.len());
        // Bound the statement's size: a long trace refers to thousands of texts.
        for batch in ids.chunks(2_000) {
            let list = serde_json::to_string(batch).unwrap_or_else(|_| "[]".to_string());
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "select id, text from reading_texts
                 where id in (select value from json_each(?1))",
            )
            .bind(list)
            .fetch_all(self.pool())
            .await?;
            texts.extend(rows);
        }
        Ok(texts)
    }

    /// Keeps texts (JSON each) once by content, in one transaction, and gives back their ids in
    /// order.
    pub async fn keep_reading_texts(&self, texts: &[String]) -> Result<Vec<i64>> {
        let mut tx = self.begin_write().await?;
        let mut ids = Vec::with_capacity(texts.len());
        for text in texts {
            let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
            let known: Option<i64> =
                sqlx::query_scalar("select id from reading_texts where sha256 = ?1")
                    .bind(digest.as_ref())
                    .fetch_optional(&mut *tx)
                    .await?;
            let id = match known {
                Some(id) => id,
                None => {
                    sqlx::query_scalar(
                        "insert into reading_texts (sha256, text) values (?1, ?2) returning id",
                    )
                    .bind(digest.as_ref())
                    .bind(text)
                    .fetch_one(&mut *tx)
                    .await?
                }
            };
            ids.push(id);
        }
        tx.commit().await?;
        Ok(ids)
    }

    /// Keeps readings (replacing older ones of the same hops), each under its hop's key now, in
    /// one transaction. A hop whose request has not ended is skipped.
    pub async fn keep_readings(&self, readings: &[ReadingToKeep]) -> Result<()> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            format!(
                "insert into hop_readings (hop_id, hop_key, reading)
             select h.id, {KEY_SQL}, ?2 from hops h
             where h.id = ?1 and h.request_ended_unix_ns is not null
             on conflict(hop_id) do update set hop_key = excluded.hop_key,
                 reading = excluded.reading"
            )
            .replace("?9", "?3")
        });
        let mut tx = self.begin_write().await?;
        for keep in readings {
            sqlx::query(SQL.as_str())
                .bind(&keep.hop_id)
                .bind(&keep.reading)
                .bind(BUILD)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn texts_are_kept_once_and_readings_only_while_their_hop_matches() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).await.unwrap();
        let ids = store
            .keep_reading_texts(&["\"a\"".into(), "\"b\"".into(), "\"a\"".into()])
            .await
            .unwrap();
        assert_eq!(ids[0], ids[2]);
        assert_ne!(ids[0], ids[1]);
        let texts = store.reading_texts(&ids).await.unwrap();
        assert_eq!(texts[&ids[1]], "\"b\"");

        sqlx::query(
            "insert into traces (id, kind, started_unix_ns, created_by) values ('t1', 'request', 1, 'x')",
        )
        .execute(store.pool())
        .await
        .unwrap();
        sqlx::query(
            "insert into hops (seq, id, trace_id, route, role, transport, peer, method, path, url,
                 state, request_headers, request_body_len, request_started_unix_ns,
                 request_ended_unix_ns)
             values (1, 'h1', 't1', 'm', 'model', 'http', 'p', 'POST', '/v1/messages', 'u',
                 'complete', '[]', 10, 1, 2)",
        )
        .execute(store.pool())
        .await
        .unwrap();
        let keep = ReadingToKeep {
            hop_id: "h1".into(),
            reading: "{}".into(),
        };
        store.keep_readings(&[keep]).await.unwrap();
        assert_eq!(kept_readings(&store, "t1").await["h1"], "{}");
        // The hop's request changed under it: the kept reading no longer holds.
        sqlx::query("update hops set request_body_len = 11")
            .execute(store.pool())
            .await
            .unwrap();
        assert!(kept_readings(&store, "t1").await.is_empty());
    }

    /// Every kept reading of a trace that still holds, by hop id.
    async fn kept_readings(store: &Store, trace_id: &str) -> HashMap<String, String> {
        let mut rows = HashMap::new();
        store
            .each_kept_reading(trace_id, |hop, reading| {
                rows.insert(hop, reading.to_owned());
            })
            .await
            .unwrap();
        rows
    }
}
