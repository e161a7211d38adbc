//! SQL for `agent_events`: the agent's own telemetry records, stored as they arrive and read back
//! by session, by run or by time for the traces they belong to.

use serde_json::Value;
use tracer_wire::agent_event::{AgentEvent, JoinKeys, Signal};

use super::{Result, Store};

/// Records the receiver was sent, counted as they arrive (before any could fail to be stored).
pub const EVENTS_RECEIVED: &str = "agent_events_received";
/// Records the receiver could not store (the database refused them).
pub const EVENTS_NOT_STORED: &str = "agent_events_not_stored";

/// One record to store: the event, when it arrived, the run it arrived during, its stored JSON
/// and how large the record was before its long strings were bounded.
#[derive(Debug, Clone)]
pub struct NewAgentEvent {
    pub event: AgentEvent,
    pub received_unix_ns: i64,
    pub run_id: Option<String>,
    pub record_bytes: usize,
    pub cut: bool,
}

/// A stored record.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAgentEvent {
    pub id: i64,
    pub received_unix_ns: i64,
    pub run_id: Option<String>,
    pub record_bytes: i64,
    pub cut: bool,
    pub event: AgentEvent,
}

/// Which stored records to read.
#[derive(Debug, Clone, Default)]
pub struct EventQuery<'a> {
    /// Records of these sessions (the hosts' own session ids).
    pub sessions: &'a [String],
    /// Records that arrived during these `tracer run`s (whatever their session).
    pub runs: &'a [String],
    /// Records with no session and no run, within this time window (ns, inclusive).
    pub loose_window: Option<(i64, i64)>,
}

macro_rules! select_events {
    ($rest:literal) => {
        concat!(
            "select id, received_unix_ns, signal, service, name, time_unix_ns, end_unix_ns,
                session_key, prompt_key, request_key, tool_call_key, sequence, run_id, record,
                record_bytes, cut from agent_events ",
            $rest
        )
    };
}

impl Store {
    /// Stores records in one transaction; gives how many were stored.
    pub async fn insert_agent_events(&self, events: &[NewAgentEvent]) -> Result<usize> {
        let mut tx = self.pool().begin().await?;
        let stored = insert_in(&mut tx, events).await?;
        tx.commit().await?;
        Ok(stored)
    }

    /// The records a query names, in the agent's time order (then arrival).
    pub async fn agent_events(&self, query: &EventQuery<'_>) -> Result<Vec<StoredAgentEvent>> {
        let mut found = Vec::new();
        for session in query.sessions {
            let sql = select_events!("where session_key = ?1");
            found.extend(self.event_rows(sql, Some(session), None).await?);
        }
        for run in query.runs {
            let sql = select_events!("where run_id = ?1");
            found.extend(self.event_rows(sql, Some(run), None).await?);
        }
        if let Some(window) = query.loose_window {
            let sql = select_events!(
                "where session_key is null and run_id is null and time_unix_ns between ?1 and ?2"
            );
            found.extend(self.event_rows(sql, None, Some(window)).await?);
        }
        found.sort_by_key(|e| (e.event.time_unix_ns, e.id));
        found.dedup_by_key(|e| e.id);
        Ok(found)
    }

    /// Every stored record, in time order (the listing of unplaced events, the exports).
    pub async fn all_agent_events(&self) -> Result<Vec<StoredAgentEvent>> {
        let sql = select_events!("order by time_unix_ns, id");
        self.event_rows(sql, None, None).await
    }

    /// The newest record's id (0 when none): what a reader compares to see that more came.
    pub async fn newest_agent_event_id(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("select coalesce(max(id), 0) from agent_events")
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// The hop the API answered with this `request-id` (the join of a source read without the
    /// wire, such as a transcript, to the wire's own record of the same call).
    pub async fn hop_with_request_id(&self, request_id: &str) -> Result<Option<String>> {
        let needle = serde_json::json!({"name": "request-id", "value": request_id}).to_string();
        Ok(sqlx::query_scalar(
            "select id from hops where instr(response_headers, ?1) > 0 order by seq limit 1",
        )
        .bind(needle)
        .fetch_optional(self.pool())
        .await?)
    }

    /// How many records are stored.
    pub async fn agent_event_count(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("select count(*) from agent_events")
            .fetch_one(self.pool())
            .await?)
    }

    async fn event_rows(
        &self,
        sql: &'static str,
        key: Option<&String>,
        window: Option<(i64, i64)>,
    ) -> Result<Vec<StoredAgentEvent>> {
        let mut query = sqlx::query(sql);
        if let Some(key) = key {
            query = query.bind(key);
        }
        if let Some((from, to)) = window {
            query = query.bind(from).bind(to);
        }
        let rows = query.fetch_all(self.pool()).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            match read_row(&row) {
                Some(event) => out.push(event),
                None => self.skip_unreadable(),
            }
        }
        Ok(out)
    }
}

/// Stores records inside the caller's transaction (a hop log's import); gives how many.
pub async fn insert_in(
    conn: &mut sqlx::SqliteConnection,
    events: &[NewAgentEvent],
) -> Result<usize> {
    for new in events {
        let event = &new.event;
        let record = serde_json::to_string(&event.record)
            .map_err(|e| super::StoreError::Malformed(e.to_string()))?;
        sqlx::query(
            "insert into agent_events (received_unix_ns, signal, service, name, time_unix_ns,
                    end_unix_ns, session_key, prompt_key, request_key, tool_call_key, sequence,
                    run_id, record, record_bytes, cut)
                 values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )
        .bind(new.received_unix_ns)
        .bind(event.signal.as_str())
        .bind(&event.service)
        .bind(&event.name)
        .bind(event.time_unix_ns)
        .bind(event.end_unix_ns)
        .bind(&event.keys.session)
        .bind(&event.keys.prompt)
        .bind(&event.keys.request)
        .bind(&event.keys.tool_call)
        .bind(event.keys.sequence)
        .bind(&new.run_id)
        .bind(record)
        .bind(i64::try_from(new.record_bytes).unwrap_or(i64::MAX))
        .bind(new.cut)
        .execute(&mut *conn)
        .await?;
    }
    Ok(events.len())
}

fn read_row(row: &sqlx::sqlite::SqliteRow) -> Option<StoredAgentEvent> {
    use sqlx::Row as _;
    let signal: String = row.try_get("signal").ok()?;
    let record: String = row.try_get("record").ok()?;
    let record: Value = serde_json::from_str(&record).ok()?;
    let event = AgentEvent {
        signal: Signal::parse(&signal)?,
        service: row.try_get("service").ok()?,
        name: row.try_get("name").ok()?,
        time_unix_ns: row.try_get("time_unix_ns").ok()?,
        end_unix_ns: row.try_get("end_unix_ns").ok()?,
        keys: JoinKeys {
            session: row.try_get("session_key").ok()?,
            prompt: row.try_get("prompt_key").ok()?,
            request: row.try_get("request_key").ok()?,
            tool_call: row.try_get("tool_call_key").ok()?,
            sequence: row.try_get("sequence").ok()?,
        },
        record,
    };
    Some(StoredAgentEvent {
        id: row.try_get("id").ok()?,
        received_unix_ns: row.try_get("received_unix_ns").ok()?,
        run_id: row.try_get("run_id").ok()?,
        record_bytes: row.try_get("record_bytes").ok()?,
        cut: row.try_get("cut").ok()?,
        event,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(name: &str, session: Option<&str>, at: i64) -> NewAgentEvent {
        NewAgentEvent {
            event: AgentEvent {
                signal: Signal::Log,
                service: Some("claude-code".into()),
                name: name.into(),
                time_unix_ns: at,
                end_unix_ns: None,
                keys: JoinKeys {
                    session: session.map(str::to_string),
                    tool_call: Some("toolu_1".into()),
                    ..Default::default()
                },
                record: json!({"log": {"attributes": []}}),
            },
            received_unix_ns: at + 5,
            run_id: None,
            record_bytes: 30,
            cut: false,
        }
    }

    #[tokio::test]
    async fn events_are_stored_and_read_back_by_session_and_by_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("t.db")).await.expect("open");
        let stored = store
            .insert_agent_events(&[
                event("tool_result", Some("s-1"), 20),
                event("tool_decision", Some("s-1"), 10),
                event("user_prompt", Some("s-2"), 15),
                event("hook", None, 12),
            ])
            .await
            .expect("insert");
        assert_eq!(stored, 4);
        assert_eq!(store.agent_event_count().await.expect("count"), 4);
        let sessions = ["s-1".to_string()];
        let found = store
            .agent_events(&EventQuery {
                sessions: &sessions,
                runs: &[],
                loose_window: Some((0, 100)),
            })
            .await
            .expect("read");
        let names: Vec<_> = found.iter().map(|e| e.event.name.as_str()).collect();
        assert_eq!(names, ["tool_decision", "hook", "tool_result"]);
        assert_eq!(found[0].event.keys.tool_call.as_deref(), Some("toolu_1"));
        assert_eq!(found[0].received_unix_ns, 15);
    }
}
