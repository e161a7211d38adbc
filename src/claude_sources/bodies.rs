//! The raw API bodies Claude Code writes with `OTEL_LOG_RAW_API_BODIES=file:DIR`: per model call
//! a `<uuid>.request.json` (the body sent, with a `betas` list added and thinking text redacted)
//! and a `<request-id>.response.json` (the answer put together). Nothing links the two files of
//! a call, so they are paired by the conversation: an answer is the assistant message that the
//! next request of its conversation carries, and the request it answers is the one that
//! carries the conversation up to that message; an answer no request carries answers the
//! longest request of its session left.

use std::path::Path;

use serde_json::Value;

use super::SourceCall;

/// What raw bodies cannot tell, said on every hop made from them.
pub const NOTE: &str = "read from Claude Code's raw API bodies (OTEL_LOG_RAW_API_BODIES), not the \
wire: the request is the body sent with Claude Code's `betas` list added and its thinking text \
redacted, the answer is the stream put together; no headers, and the times are when the files \
were written";

/// Why a folder could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodiesError {
    #[error("reading {0}: {1}")]
    Read(String, std::io::Error),
    #[error("{0} holds no *.request.json or *.response.json files of Claude Code")]
    Empty(String),
}

struct File {
    name: String,
    body: Value,
    written_unix_ns: i64,
}

/// The calls of a folder of raw bodies, and the files that were not JSON (skipped, counted).
pub fn read(dir: &Path) -> Result<(Vec<SourceCall>, usize), BodiesError> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| BodiesError::Read(shown.clone(), e))?;
    let (mut requests, mut responses, mut unreadable) = (Vec::new(), Vec::new(), 0);
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_request = name.ends_with(".request.json");
        if !is_request && !name.ends_with(".response.json") {
            continue;
        }
        let path = entry.path();
        let bytes =
            std::fs::read(&path).map_err(|e| BodiesError::Read(path.display().to_string(), e))?;
        let Ok(body) = serde_json::from_slice::<Value>(&bytes) else {
            unreadable += 1;
            continue;
        };
        let written_unix_ns = (entry.metadata().ok())
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        let file = File {
            name,
            body,
            written_unix_ns,
        };
        if is_request {
            requests.push(file)
        } else {
            responses.push(file)
        }
    }
    if requests.is_empty() && responses.is_empty() {
        return Err(BodiesError::Empty(shown));
    }
    requests.sort_by_key(|f| (messages(&f.body).len(), f.written_unix_ns));
    let mut taken = vec![false; requests.len()];
    let mut calls = Vec::new();
    // Answers a later request carries first; the last answer of each conversation after.
    let (carried, last): (Vec<&File>, Vec<&File>) = responses
        .iter()
        .partition(|r| carried_at(r, &requests).is_some());
    for response in carried.into_iter().chain(last) {
        let index = match carried_at(response, &requests) {
            Some((next, at)) => (0..requests.len()).find(|&i| {
                !taken[i]
                    && messages(&requests[i].body).len() == at
                    && same_start(&requests[i], &requests[next], at)
            }),
            None => {
                let session = session_of(&response.body);
                (0..requests.len()).rev().find(|&i| {
                    !taken[i] && (session.is_none() || session_of(&requests[i].body) == session)
                })
            }
        };
        let request = index.map(|i| {
            taken[i] = true;
            &requests[i]
        });
        calls.push(call(request, Some(response)));
    }
    for (request, _) in requests.iter().zip(&taken).filter(|(_, taken)| !**taken) {
        calls.push(call(Some(request), None));
    }
    // In the order of the conversation (a call carries every message of the one before it).
    calls.sort_by_key(|c| (messages(&c.request).len(), c.started_unix_ns));
    keep_or_remake_times(&mut calls);
    Ok((calls, unreadable))
}

/// The files' times are kept when they follow the calls' order (each call written after the one
/// before it, the whole within an hour); a copy or a checkout keeps no such times, and then each
/// call is given one a millisecond after the one before, from the earliest, and its note says so.
fn keep_or_remake_times(calls: &mut [SourceCall]) {
    const HOUR_NS: i64 = 3_600_000_000_000;
    let starts: Vec<i64> = calls.iter().map(|c| c.started_unix_ns).collect();
    let ordered = starts.windows(2).all(|w| w[0] <= w[1]);
    let span = starts
        .last()
        .zip(starts.first())
        .map_or(0, |(last, first)| last - first);
    let answered_after = calls.iter().all(|c| c.ended_unix_ns >= c.started_unix_ns);
    if ordered && span <= HOUR_NS && answered_after {
        return;
    }
    let base = starts.iter().copied().min().unwrap_or(0);
    for (index, call) in calls.iter_mut().enumerate() {
        call.started_unix_ns = base + index as i64 * 1_000_000;
        call.ended_unix_ns = call.started_unix_ns + 500_000;
        call.note.push_str("; the files' times did not follow the calls' order (a copy?), so these times are made up: only the order is the source's");
    }
}

fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The session of a request (in `metadata.user_id`, itself JSON); answers carry none.
fn session_of(body: &Value) -> Option<String> {
    let user = body.pointer("/metadata/user_id")?.as_str()?;
    let user: Value = serde_json::from_str(user).ok()?;
    user.get("session_id")?.as_str().map(str::to_string)
}

/// What an assistant message says, for matching: its text and tool calls (thinking, which the
/// request files redact, and cache marks left out).
fn said(content: &Value) -> Vec<String> {
    (content.as_array().into_iter().flatten())
        .filter_map(|block| match block.get("type")?.as_str()? {
            "text" => Some(format!("text:{}", block.get("text")?.as_str()?)),
            "tool_use" => Some(format!("tool_use:{}", block.get("id")?.as_str()?)),
            _ => None,
        })
        .collect()
}

/// The request that carries an answer, and the answer's index in its messages.
fn carried_at(response: &File, requests: &[File]) -> Option<(usize, usize)> {
    let wanted = said(response.body.get("content")?);
    if wanted.is_empty() {
        return None;
    }
    requests.iter().enumerate().find_map(|(i, request)| {
        let at = messages(&request.body)
            .iter()
            .position(|m| m["role"] == "assistant" && said(&m["content"]) == wanted)?;
        Some((i, at))
    })
}

/// Whether two requests carry the same first `n` messages (by what they say).
fn same_start(a: &File, b: &File, n: usize) -> bool {
    let (a, b) = (messages(&a.body), messages(&b.body));
    a.len() >= n
        && b.len() >= n
        && (0..n).all(|i| {
            a[i]["role"] == b[i]["role"] && said(&a[i]["content"]) == said(&b[i]["content"])
        })
}

fn call(request: Option<&File>, response: Option<&File>) -> SourceCall {
    let request_id = (response.map(|r| r.name.trim_end_matches(".response.json")))
        .filter(|id| id.starts_with("req_"))
        .map(str::to_string);
    let started = request.or(response).map_or(0, |f| f.written_unix_ns);
    SourceCall {
        request_id,
        session_id: request.and_then(|r| session_of(&r.body)),
        request: request.map_or(Value::Null, |r| r.body.clone()),
        response: response.map_or(Value::Null, |r| r.body.clone()),
        started_unix_ns: started,
        ended_unix_ns: response.map_or(started, |r| r.written_unix_ns),
        note: match (request, response) {
            (Some(_), Some(_)) => NOTE.to_string(),
            (Some(_), None) => format!("{NOTE}; no answer file was found for this request"),
            _ => format!("{NOTE}; no request file was found for this answer"),
        },
    }
}
