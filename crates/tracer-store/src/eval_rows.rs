//! SQL for `eval_runs` and `eval_results`: one row per run of a question set, one per verdict.

use super::{Result, Store, StoreError};
use tracer_wire::hop::now_unix_ns;

/// A stored eval run.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EvalRunRow {
    pub id: i64,
    pub label: Option<String>,
    pub file: String,
    pub agent: String,
    pub agent_api: String,
    pub runs_per_question: i64,
    pub started_unix_ns: i64,
    pub ended_unix_ns: Option<i64>,
    /// `running`, `complete` or `partial` (stopped early).
    pub state: String,
    pub passed: i64,
    pub total: i64,
}

/// What a new run is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvalRun {
    pub label: Option<String>,
    pub file: String,
    pub agent: String,
    pub agent_api: String,
    pub runs_per_question: i64,
    pub total: i64,
}

/// One verdict: a question asked once, judged from its trace.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EvalResultRow {
    pub run_id: i64,
    pub question_id: String,
    pub attempt: i64,
    pub ask: String,
    pub pass: bool,
    /// JSON array of reasons.
    pub reasons: String,
    pub trace_id: Option<String>,
    /// JSON array of `{"name", "arguments"}`.
    pub tool_calls: String,
    pub reply: Option<String>,
    pub judged_unix_ns: i64,
}

impl Store {
    /// Starts a run in state `running`; returns its number.
    pub async fn create_eval_run(&self, run: &NewEvalRun) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "insert into eval_runs (label, file, agent, agent_api, runs_per_question,
                                    started_unix_ns, state, total)
             values (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7) returning id",
        )
        .bind(&run.label)
        .bind(&run.file)
        .bind(&run.agent)
        .bind(&run.agent_api)
        .bind(run.runs_per_question)
        .bind(now_unix_ns())
        .bind(run.total)
        .fetch_one(self.pool())
        .await?)
    }

    /// Stores one verdict.
    pub async fn add_eval_result(&self, row: &EvalResultRow) -> Result<()> {
        sqlx::query(
            "insert into eval_results (run_id, question_id, attempt, ask, pass, reasons,
                                       trace_id, tool_calls, reply, judged_unix_ns)
             values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .bind(row.run_id)
        .bind(&row.question_id)
        .bind(row.attempt)
        .bind(&row.ask)
        .bind(row.pass)
        .bind(&row.reasons)
        .bind(&row.trace_id)
        .bind(&row.tool_calls)
        .bind(&row.reply)
        .bind(row.judged_unix_ns)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Ends a run: `complete` or `partial`, with the questions that passed.
    pub async fn finish_eval_run(&self, id: i64, state: &str, passed: i64) -> Result<()> {
        sqlx::query(
            "update eval_runs set state = ?2, passed = ?3, ended_unix_ns = ?4 where id = ?1",
        )
        .bind(id)
        .bind(state)
        .bind(passed)
        .bind(now_unix_ns())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Every run, newest first.
    pub async fn eval_runs(&self) -> Result<Vec<EvalRunRow>> {
        Ok(
            sqlx::query_as::<_, EvalRunRow>("select * from eval_runs order by id desc")
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// One run by number.
    pub async fn eval_run(&self, id: i64) -> Result<EvalRunRow> {
        sqlx::query_as::<_, EvalRunRow>("select * from eval_runs where id = ?1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("eval run {id}")))
    }

    /// A run's verdicts, in the order they were judged.
    pub async fn eval_results(&self, run_id: i64) -> Result<Vec<EvalResultRow>> {
        Ok(sqlx::query_as::<_, EvalResultRow>(
            "select * from eval_results where run_id = ?1 order by judged_unix_ns, rowid",
        )
        .bind(run_id)
        .fetch_all(self.pool())
        .await?)
    }
}
