//! The agent's side: plays a scripted session through the proxy's model and MCP routes, feeding
//! the upstream its answers and counting the bytes; and the padding, short independent sessions
//! of distinct content played until the database has grown to a size.

use std::path::Path;
use std::sync::mpsc::Sender;

use anyhow::Result;
use serde_json::{Value, json};

use super::http;
use super::session::{self, Answer, Rng};
use super::shape::Shape;

/// One session to play.
pub struct Script {
    pub shape: Shape,
    pub turns: usize,
    pub tool_every: usize,
    /// Seeds the client's generator: sessions of different seeds share no content.
    pub seed: u64,
    /// The agent's own tool results: at least `.0` bytes, up to `.1` more.
    pub result_len: (usize, u64),
}

/// What playing sent and received.
#[derive(Debug, Default)]
pub struct Played {
    pub requests: u64,
    /// Request and response bodies as sent, in bytes.
    pub raw: u64,
    /// The session's content counted once (preamble, messages, answers, tool results).
    pub unique: u64,
    /// The first model request's body, in bytes.
    pub first_request: u64,
    pub sessions: u64,
}

impl Played {
    pub fn add(&mut self, other: &Played) {
        self.requests += other.requests;
        self.raw += other.raw;
        self.unique += other.unique;
        self.sessions += other.sessions;
    }
}

/// Plays `script` through `model_addr` and `mcp_addr` (a new connection to each).
pub fn play(
    script: &Script,
    model_addr: &str,
    mcp_addr: &str,
    answers: &Sender<Vec<String>>,
) -> Result<Played> {
    let shape = script.shape;
    let mut rng = Rng::new(script.seed);
    let (system, tools) = shape.preamble(&mut rng);
    let mut played = Played {
        unique: (system.to_string().len() + tools.to_string().len()) as u64,
        sessions: 1,
        ..Played::default()
    };
    let (path, headers) = shape.endpoint();
    let mut history: Vec<Value> = Vec::new();
    let mut model = http::Client::connect(model_addr)?;
    let mut mcp = http::Client::connect(mcp_addr)?;
    let mut next_user: Value = json!({"role": "user", "content": session::prose(&mut rng, 300)});
    for turn in 0..script.turns {
        if turn == 0 {
            played.unique += next_user.to_string().len() as u64;
        }
        history.push(next_user.clone());
        let body = shape.request_body(&system, &tools, &history);
        if turn == 0 {
            played.first_request = body.len() as u64;
        }
        let answer = shape.answer_for(&mut rng, turn, script.turns, script.tool_every);
        answers.send(shape.sse_events(&answer, turn))?;
        let reply = model.post(path, headers, &body)?;
        played.requests += 1;
        played.raw += (body.len() + reply.len()) as u64;
        played.unique += reply.len() as u64;
        history.push(shape.assistant_message(&answer));
        next_user = match &answer {
            Answer::ToolUse { id, query, .. } if answer.calls_mcp() => {
                let call = session::mcp_call(turn, query);
                let result = mcp.post(
                    "/mcp",
                    "accept: application/json, text/event-stream\r\n",
                    &call,
                )?;
                played.requests += 1;
                played.raw += (call.len() + result.len()) as u64;
                played.unique += (call.len() + result.len()) as u64;
                let result: Value = serde_json::from_slice(&result)?;
                let text = result["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default();
                shape.tool_result(id, text)
            }
            Answer::ToolUse { id, .. } => {
                let len = script.result_len.0 + rng.below(script.result_len.1) as usize;
                let text = session::prose(&mut rng, len);
                played.unique += text.len() as u64;
                shape.tool_result(id, &text)
            }
            Answer::Text(_) => Value::Null,
        };
    }
    Ok(played)
}

/// The database's bytes on disk (the file and its write-ahead log).
pub fn db_bytes(db: &Path) -> u64 {
    ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", db.display())).ok())
        .map(|m| m.len())
        .sum()
}

/// Plays short independent sessions (4 turns: a system prompt of their own, two file reads of
/// 60-140 KB, an MCP call), the first seeded by `seed`, until `db` and its write-ahead log hold
/// `target` bytes: distinct content, as the store keeps each body chunk once.
pub fn pad(
    shape: Shape,
    (target, seed): (u64, u64),
    db: &Path,
    model_addr: &str,
    mcp_addr: &str,
    answers: &Sender<Vec<String>>,
) -> Result<Played> {
    let mut all = Played::default();
    let mut seed = seed;
    while db_bytes(db) < target {
        let script = Script {
            shape,
            turns: 4,
            tool_every: 3,
            seed,
            result_len: (60_000, 80_000),
        };
        all.add(&play(&script, model_addr, mcp_addr, answers)?);
        seed += 1;
    }
    Ok(all)
}
