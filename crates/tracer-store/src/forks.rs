//! SQL for `forks` and `run_commands`: a fork's link to the trace it came from (where it went live
//! and why), and the command each `tracer run` ran, so a fork can run it again.

use super::{Result, Store};

/// One fork, as `tracer fork` wrote it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ForkRow {
    pub run_id: String,
    pub fork_of: String,
    pub at_message: i64,
    /// JSON: the edits as made.
    pub edits: String,
    pub trace_id: Option<String>,
    pub replayed: i64,
    pub live_at_message: Option<i64>,
    pub live_reason: Option<String>,
    pub started_unix_ns: i64,
    pub ended_unix_ns: Option<i64>,
}

/// How a fork ended: its trace, how much was replayed, where and why it went live.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ForkEnd {
    pub trace_id: Option<String>,
    pub replayed: i64,
    pub live_at_message: Option<i64>,
    pub live_reason: Option<String>,
    pub ended_unix_ns: i64,
}

/// The command a `tracer run` ran, and how.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RunCommand {
    pub run_id: String,
    /// JSON array of strings: the program and its arguments.
    pub argv: String,
    /// JSON array of strings: the `tracer run` options it ran with.
    pub options: String,
    pub cwd: String,
    pub started_unix_ns: i64,
}

impl Store {
    /// Writes a fork as it starts.
    pub async fn insert_fork(&self, fork: &ForkRow) -> Result<()> {
        sqlx::query(
            "insert into forks (run_id, fork_of, at_message, edits, trace_id, replayed,
                 live_at_message, live_reason, started_unix_ns, ended_unix_ns)
             values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .bind(&fork.run_id)
        .bind(&fork.fork_of)
        .bind(fork.at_message)
        .bind(&fork.edits)
        .bind(&fork.trace_id)
        .bind(fork.replayed)
        .bind(fork.live_at_message)
        .bind(&fork.live_reason)
        .bind(fork.started_unix_ns)
        .bind(fork.ended_unix_ns)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Writes how a fork ended.
    pub async fn end_fork(&self, run_id: &str, end: &ForkEnd) -> Result<()> {
        sqlx::query(
            "update forks set trace_id = ?2, replayed = ?3, live_at_message = ?4,
                 live_reason = ?5, ended_unix_ns = ?6 where run_id = ?1",
        )
        .bind(run_id)
        .bind(&end.trace_id)
        .bind(end.replayed)
        .bind(end.live_at_message)
        .bind(&end.live_reason)
        .bind(end.ended_unix_ns)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The fork whose trace is `trace_id`, if it is one.
    pub async fn fork_of_trace(&self, trace_id: &str) -> Result<Option<ForkRow>> {
        Ok(
            sqlx::query_as::<_, ForkRow>("select * from forks where trace_id = ?1")
                .bind(trace_id)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    /// Every fork with a trace, keyed by that trace (for marking forks in lists).
    pub async fn fork_traces(&self) -> Result<Vec<ForkRow>> {
        Ok(sqlx::query_as::<_, ForkRow>(
            "select * from forks where trace_id is not null order by started_unix_ns",
        )
        .fetch_all(self.pool())
        .await?)
    }

    /// The forks made of `trace_id`, oldest first.
    pub async fn forks_of(&self, trace_id: &str) -> Result<Vec<ForkRow>> {
        Ok(sqlx::query_as::<_, ForkRow>(
            "select * from forks where fork_of = ?1 order by started_unix_ns",
        )
        .bind(trace_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Writes the command a `tracer run` runs, as it starts.
    pub async fn insert_run_command(&self, command: &RunCommand) -> Result<()> {
        sqlx::query(
            "insert or replace into run_commands (run_id, argv, options, cwd, started_unix_ns)
             values (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(&command.run_id)
        .bind(&command.argv)
        .bind(&command.options)
        .bind(&command.cwd)
        .bind(command.started_unix_ns)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The command run `run_id` ran, if it was written.
    pub async fn run_command(&self, run_id: &str) -> Result<Option<RunCommand>> {
        Ok(
            sqlx::query_as::<_, RunCommand>("select * from run_commands where run_id = ?1")
                .bind(run_id)
                .fetch_optional(self.pool())
                .await?,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_fork_is_written_ended_and_found_by_its_trace_and_original() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(&dir.path().join("t.db")).await.expect("open");
        let fork = ForkRow {
            run_id: "fork:1".into(),
            fork_of: "aaaa".into(),
            at_message: 2,
            edits: "[]".into(),
            trace_id: None,
            replayed: 0,
            live_at_message: None,
            live_reason: None,
            started_unix_ns: 1,
            ended_unix_ns: None,
        };
        store.insert_fork(&fork).await.expect("insert");
        assert!(store.fork_traces().await.expect("list").is_empty());
        let end = ForkEnd {
            trace_id: Some("bbbb".into()),
            replayed: 1,
            live_at_message: Some(2),
            live_reason: Some("the edit".into()),
            ended_unix_ns: 5,
        };
        store.end_fork("fork:1", &end).await.expect("end");
        let found = store.fork_of_trace("bbbb").await.expect("q").expect("one");
        assert_eq!((found.replayed, found.live_at_message), (1, Some(2)));
        assert_eq!(store.forks_of("aaaa").await.expect("q").len(), 1);
        let command = RunCommand {
            run_id: "r1".into(),
            argv: r#"["claude","-p","hi"]"#.into(),
            options: r#"["--no-redact"]"#.into(),
            cwd: "/tmp".into(),
            started_unix_ns: 1,
        };
        store.insert_run_command(&command).await.expect("run");
        assert_eq!(store.run_command("r1").await.expect("q"), Some(command));
        assert_eq!(store.run_command("r2").await.expect("q"), None);
    }
}
