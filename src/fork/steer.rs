//! The fork's steer: while the host's requests follow the recording they are answered from it
//! (through the gate), at message N the edit is made, and from N on (or from the first request
//! that matches no recording) everything goes live and stays live.

use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

use super::plan::{Exchange, ForkPlan, Target};
use crate::replay_server::bare_path;
use crate::replay_server::matching::{Weight, differences, request_key};
use tracer_record::proxy::steer::{Steer, SteerRequest, Steering};
use tracer_wire::hop::{Header, Role};

/// Where and why a fork went live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub message: usize,
    pub reason: String,
    /// True when it went live at N (the edit was made); false when a request before N matched
    /// no recording.
    pub at_n: bool,
}

/// What the steer saw, for the fork's report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SteerOutcome {
    pub replayed: usize,
    pub live: Option<Live>,
    /// Problems worth saying (an edit that could not be made to the request as sent).
    pub notes: Vec<String>,
    /// Recorded requests before N the host did not send again.
    pub not_asked: Vec<usize>,
}

#[derive(Debug, Default)]
struct State {
    served: Vec<bool>,
    outcome: SteerOutcome,
    /// The `--set` edits made at N with the value each replaced: carried into every later model
    /// request that still carries that value there (the host keeps its own, unedited history).
    carried: Vec<Carried>,
}

#[derive(Debug, Clone)]
struct Carried {
    pointer: String,
    was: serde_json::Value,
    now: serde_json::Value,
}

/// The steer of one fork: its plan, the gate's address and what has happened so far.
pub struct ForkSteer {
    plan: Arc<ForkPlan>,
    gate: String,
    state: Mutex<State>,
}

impl ForkSteer {
    /// A steer answering from the gate at `gate` (`http://127.0.0.1:P`).
    pub fn new(plan: Arc<ForkPlan>, gate: &str) -> ForkSteer {
        let mut state = State {
            served: vec![false; plan.exchanges.len()],
            ..State::default()
        };
        if plan.target == Target::Entry {
            state.outcome.live = Some(Live {
                message: plan.at,
                reason: format!("message {} (the user's request) was edited", plan.at),
                at_n: true,
            });
        }
        ForkSteer {
            plan,
            gate: gate.trim_end_matches('/').to_string(),
            state: Mutex::new(state),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What happened, as far as it went.
    pub fn outcome(&self) -> SteerOutcome {
        let state = self.state();
        let mut outcome = state.outcome.clone();
        let end = self.plan.at_exchange().unwrap_or(0);
        outcome.not_asked = (0..end)
            .filter(|&i| !state.served[i] && !self.plan.exchanges[i].handshake)
            .map(|i| self.plan.exchanges[i].number)
            .filter(|&number| number > 0)
            .collect();
        if outcome.live.is_some() {
            outcome.not_asked.clear();
        }
        outcome
    }

    fn gate_url(&self, kind: &str, index: usize) -> Steering {
        Steering {
            body: None,
            upstream: format!("{}/{kind}/{index}", self.gate).parse().ok(),
        }
    }

    /// A request sent live: the edits that hold from N on, and `--upstream` on N's route.
    fn live(&self, request: &SteerRequest<'_>, at_n: bool, carried: &[Carried]) -> Steering {
        if !at_n {
            return Steering::default();
        }
        let edits = &self.plan.edits;
        let body = (request.role == Role::Model)
            .then(|| {
                let carried = carry(request.body, carried);
                let sent = carried.as_deref().unwrap_or(request.body);
                edits.model_request(sent).or(carried)
            })
            .flatten()
            .map(Bytes::from);
        Steering {
            body,
            upstream: self.upstream_for(request.role),
        }
    }

    /// `--upstream`: the model server the live part asks.
    fn upstream_for(&self, role: Role) -> Option<http::Uri> {
        let upstream = self.plan.edits.upstream.as_ref()?;
        (role == Role::Model)
            .then(|| upstream.parse().ok())
            .flatten()
    }

    /// Message N's request, edited as sent now.
    fn edited_request(&self, request: &SteerRequest<'_>, notes: &mut Vec<String>) -> Steering {
        let edits = &self.plan.edits;
        let mut body = request.body.to_vec();
        if edits.edits_body() {
            match edits.body_at(request.body) {
                Ok(edited) => body = edited,
                Err(error) => {
                    notes.push(format!(
                        "the edit could not be made to message {} as sent now ({error}); the \
                         edited recorded request was sent instead",
                        self.plan.at
                    ));
                    body = self.plan.edited_body.clone().unwrap_or(body);
                }
            }
        }
        if request.role == Role::Model
            && let Some(more) = edits.model_request(&body)
        {
            body = more;
        }
        Steering {
            body: Some(Bytes::from(body)),
            upstream: self.upstream_for(request.role),
        }
    }
}

impl Steer for ForkSteer {
    fn steer(&self, request: &SteerRequest<'_>) -> Steering {
        if request.role == Role::Agent {
            return Steering::default();
        }
        let mut state = self.state();
        if let Some(live) = &state.outcome.live {
            let at_n = live.at_n;
            let carried = state.carried.clone();
            drop(state);
            return self.live(request, at_n, &carried);
        }
        if is_handshake(request) {
            return Steering::default();
        }
        let headers: Vec<Header> = (request.headers.iter())
            .map(|(name, value)| Header::new(name.as_str(), value.as_bytes()))
            .collect();
        let key = request_key(
            request.role,
            request.method,
            request.path,
            &headers,
            request.body,
        );
        let path = bare_path(request.path);
        let Some(at) = self.plan.at_exchange() else {
            return Steering::default();
        };
        let same_kind = |e: &Exchange| {
            e.role == request.role
                && !e.handshake
                && e.recording.method.eq_ignore_ascii_case(request.method)
                && e.recording.path == path
        };
        let open: Vec<usize> = (0..=at)
            .filter(|&i| !state.served[i] && same_kind(&self.plan.exchanges[i]))
            .collect();
        let found = open.iter().copied().find(|&i| {
            (differences(&self.plan.exchanges[i].recording.key, &key).iter())
                .all(|d| d.weight == Weight::ToolResult)
        });
        match found {
            Some(i) if i < at => {
                state.served[i] = true;
                state.outcome.replayed += 1;
                self.gate_url("r", i)
            }
            Some(i) => {
                state.served[i] = true;
                let answer = matches!(self.plan.target, Target::Answer(_));
                state.outcome.live = Some(Live {
                    message: self.plan.at,
                    reason: if self.plan.edits.is_empty() {
                        format!("message {} was reached", self.plan.at)
                    } else {
                        format!("message {} was edited", self.plan.at)
                    },
                    at_n: true,
                });
                if answer {
                    self.gate_url("e", i)
                } else {
                    let mut notes = Vec::new();
                    let steering = self.edited_request(request, &mut notes);
                    state.outcome.notes.extend(notes);
                    if request.role == Role::Model {
                        state.carried = carried_sets(request.body, &self.plan.edits.sets);
                    }
                    steering
                }
            }
            None => {
                let expected = (0..=at)
                    .find(|&i| {
                        let exchange = &self.plan.exchanges[i];
                        !state.served[i] && !exchange.handshake && exchange.number > 0
                    })
                    .map(|i| &self.plan.exchanges[i]);
                state.outcome.live = Some(mismatch(request, &key, expected, &open, &self.plan));
                Steering::default()
            }
        }
    }
}

/// The `--set` edits of N, each with the value it replaced in the request as sent.
fn carried_sets(body: &[u8], sets: &[crate::compare::step_edits::SetEdit]) -> Vec<Carried> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    (sets.iter())
        .filter_map(|set| {
            let was = value.pointer(&set.pointer)?.clone();
            Some(Carried {
                pointer: set.pointer.clone(),
                was,
                now: set.value.clone(),
            })
        })
        .collect()
}

/// A later request with N's edits carried in where it still carries the replaced values; None
/// when none applies.
fn carry(body: &[u8], carried: &[Carried]) -> Option<Vec<u8>> {
    if carried.is_empty() {
        return None;
    }
    let mut value = serde_json::from_slice::<serde_json::Value>(body).ok()?;
    let mut changed = false;
    for edit in carried {
        if let Some(slot) = value.pointer_mut(&edit.pointer)
            && *slot == edit.was
        {
            *slot = edit.now.clone();
            changed = true;
        }
    }
    changed.then(|| serde_json::to_vec(&value).unwrap_or_default())
}

/// Why a request before N goes live: the field that differed from the recording it should have
/// matched, or that nothing recorded is like it.
fn mismatch(
    request: &SteerRequest<'_>,
    key: &crate::replay_server::matching::RequestKey,
    expected: Option<&Exchange>,
    open: &[usize],
    plan: &ForkPlan,
) -> Live {
    let closest = (open.iter().map(|&i| &plan.exchanges[i]))
        .find(|e| e.number > 0)
        .or(expected.filter(|e| e.role == request.role));
    let message = expected.or(closest).map_or(plan.at, |e| e.number);
    let reason = match closest {
        Some(exchange) => {
            let words: Vec<String> = differences(&exchange.recording.key, key)
                .into_iter()
                .filter(|d| d.weight == Weight::Other)
                .map(|d| d.words)
                .collect();
            format!(
                "the {} request sent at message {} differs from the recording ({})",
                request.role,
                exchange.number,
                if words.is_empty() {
                    "its method or path".to_string()
                } else {
                    words.join("; ")
                }
            )
        }
        None => format!(
            "no recorded {} request before message {} is {} {}",
            request.role,
            plan.at,
            request.method,
            bare_path(request.path)
        ),
    };
    Live {
        message,
        reason,
        at_n: false,
    }
}

/// An MCP handshake the live server must see: `initialize`, notifications, the client's answers
/// to the server, a GET (its event stream) or DELETE (the session's end).
fn is_handshake(request: &SteerRequest<'_>) -> bool {
    if request.role != Role::Mcp {
        return false;
    }
    if !request.method.eq_ignore_ascii_case("POST") {
        return true;
    }
    let method = serde_json::from_slice::<serde_json::Value>(request.body)
        .ok()
        .and_then(|v| v.get("method").and_then(|m| m.as_str().map(str::to_string)));
    method.is_none_or(|m| m == "initialize" || m.starts_with("notifications/"))
}
