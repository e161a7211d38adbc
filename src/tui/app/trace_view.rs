//! The state of the trace view: one trace's hops, its numbered messages, the lanes of its
//! sequence diagram, the selected message and, when replaying, the replay.

use std::collections::HashMap;

use super::fetched::{Fetched, request_let_go};
use crate::replay::ReplayState;
use tracer_trace::account::cache_verdict::CacheReport;
use tracer_trace::account::context_shares::{ContextShares, context_shares};
use tracer_trace::explain::lanes::Lanes;
use tracer_trace::read::changes_by_call::{CallChanges, changes_by_call_with};
use tracer_trace::read::conversation_pairs::request_json;
use tracer_trace::{ExplainedMessage, RecordedHop, explain_trace};
use tracer_wire::hop::HopState;
use tracer_wire::safe_text::one_line;

pub use tracer_trace::explain::lanes::{Arrow, Tone};

#[derive(Debug, Clone, PartialEq)]
pub struct TraceView {
    pub trace_id: String,
    pub title: Option<String>,
    pub hops: Vec<RecordedHop>,
    pub messages: Vec<ExplainedMessage>,
    /// Lane names, left to right: You, Agent, Model, then each MCP server and other route.
    pub lanes: Vec<String>,
    /// One per message.
    pub arrows: Vec<Arrow>,
    pub selected: usize,
    pub detail_scroll: u16,
    pub replay: Option<ReplayState>,
    /// The timing waterfall is shown instead of the sequence diagram (`t`).
    pub show_timing: bool,
    /// What the trace's wrapped servers wrote to stderr: (route, when, line), oldest first.
    pub stderr: Vec<(String, i64, String)>,
    /// The agent's own events, by the message each follows.
    pub agent: super::agent_notes::AgentNotes,
    /// The prompt cache's report of each model call that reported cache counts.
    pub caches: Vec<tracer_trace::account::cache_verdict::CacheReport>,
    /// Side calls (a title, routing, telemetry…) are drawn too; folded by default (`s`).
    pub side_calls_shown: bool,
    /// The trace's status with its failed side calls counted apart (`ok · 3 side calls
    /// failed`), when a side call failed; made once per load.
    pub side_calls_failed: Option<String>,
    /// What each model request is made of (computed once per load, never while drawing).
    pub contexts: Vec<ContextShares>,
    /// What changed in each model request since the previous one of its conversation (for
    /// a request whose body, or its previous one's, was let go of: read back when shown).
    pub changes: Vec<CallChanges>,
    /// What the detail pane shows (`c`, `d`).
    pub pane: DetailPane,
    /// Bodies and changes read back from the store for the message shown.
    pub fetched: Fetched,
    /// Made once per load, so a step or a frame never walks the whole trace: the messages
    /// that are not side calls (drawn while side calls are folded), each message's time, and
    /// where each hop's context, changes and cache report are.
    main: Vec<usize>,
    times: Vec<i64>,
    by_hop: HashMap<String, ByHop>,
}

/// Where one hop's per-call facts sit in the view's lists.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct ByHop {
    context: Option<usize>,
    changes: Option<usize>,
    cache: Option<usize>,
}

/// Puts in each hop's `slot` the index of its first item (items in order, named by hop id).
fn first_of_each_hop<'a>(
    by_hop: &mut HashMap<String, ByHop>,
    hop_ids: impl Iterator<Item = &'a String>,
    slot: fn(&mut ByHop) -> &mut Option<usize>,
) {
    for (i, hop_id) in hop_ids.enumerate() {
        slot(by_hop.entry(hop_id.clone()).or_default()).get_or_insert(i);
    }
}

/// What the pane under the diagram shows for the selected message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DetailPane {
    /// The message itself: headers, body, timing.
    #[default]
    Message,
    /// The context parts of the selected hop's model request.
    Context,
    /// The changes since the previous request of the conversation.
    Changes,
}

impl TraceView {
    pub fn new(trace_id: String, title: Option<String>, hops: Vec<RecordedHop>) -> Self {
        let messages = explain_trace(&hops);
        let caches = tracer_trace::account::cache_verdict::cache_reports(&hops);
        let contexts = context_shares(&hops);
        // A body let go of is compared once read back (`fetched`), never at load.
        let changes = changes_by_call_with(&hops, |hop| {
            (!request_let_go(hop)).then(|| request_json(hop)).flatten()
        });
        let let_go: std::collections::HashSet<&str> = (hops.iter())
            .filter(|hop| request_let_go(hop))
            .map(|hop| hop.start.id.as_str())
            .collect();
        let changes_wanted = (changes.iter())
            .filter(|c| {
                let previous = c.previous_hop_id.as_deref();
                let_go.contains(c.hop_id.as_str()) || previous.is_some_and(|p| let_go.contains(p))
            })
            .map(|c| c.hop_id.clone())
            .collect();
        let Lanes {
            names: lanes,
            arrows,
        } = tracer_trace::explain::lanes::lanes(&hops, &messages);
        let mut by_hop: HashMap<String, ByHop> = HashMap::new();
        first_of_each_hop(&mut by_hop, contexts.iter().map(|c| &c.hop_id), |b| {
            &mut b.context
        });
        first_of_each_hop(&mut by_hop, changes.iter().map(|c| &c.hop_id), |b| {
            &mut b.changes
        });
        first_of_each_hop(&mut by_hop, caches.iter().map(|c| &c.hop_id), |b| {
            &mut b.cache
        });
        let main = (0..messages.len())
            .filter(|&i| messages[i].side_call.is_none())
            .collect();
        let times = messages.iter().map(|m| m.at_unix_ns).collect();
        let summary = tracer_trace::summarize(&hops);
        let side_calls_failed = (summary.side_calls_failed > 0).then(|| summary.status_words());
        Self {
            trace_id,
            title,
            hops,
            messages,
            // Route names are the user's, MCP server names may be the server's: shown as text.
            lanes: lanes
                .iter()
                .map(|lane| one_line(lane).into_owned())
                .collect(),
            arrows,
            selected: 0,
            detail_scroll: 0,
            replay: None,
            show_timing: false,
            stderr: Vec::new(),
            agent: Default::default(),
            caches,
            side_calls_shown: false,
            side_calls_failed,
            contexts,
            changes,
            pane: DetailPane::Message,
            fetched: Fetched {
                changes_wanted,
                ..Fetched::default()
            },
            main,
            times,
            by_hop,
        }
        .snapped()
    }

    /// The view with its selection on a drawn message.
    fn snapped(mut self) -> Self {
        self.select_visible(self.selected);
        self
    }

    /// Whether side calls are folded away: not in a replay, and not shown (`s`).
    fn folds(&self) -> bool {
        self.replay.is_none() && !self.side_calls_shown
    }

    /// How many messages are drawn: up to the replay's step, every one in a replay; else the
    /// side calls only when shown.
    pub fn visible_len(&self) -> usize {
        looked();
        let shown = self.shown();
        match self.folds() {
            true => self.main.partition_point(|&i| i < shown),
            false => shown,
        }
    }

    /// The index of the drawn message at `position` among those drawn.
    pub fn visible_at(&self, position: usize) -> Option<usize> {
        looked();
        match self.folds() {
            true => self.main.get(position).copied(),
            false => Some(position),
        }
        .filter(|_| position < self.visible_len())
    }

    /// The position among the drawn messages of the first drawn at or after `index`
    /// (`visible_len` when none is).
    pub fn visible_from(&self, index: usize) -> usize {
        looked();
        match self.folds() {
            true => self.main.partition_point(|&i| i < index),
            false => index,
        }
        .min(self.visible_len())
    }

    /// The messages drawn, by index (see [`TraceView::visible_len`]).
    pub fn visible(&self) -> Vec<usize> {
        (0..self.visible_len())
            .filter_map(|p| self.visible_at(p))
            .collect()
    }

    /// How many side calls are folded away.
    pub fn folded(&self) -> usize {
        self.shown() - self.visible_len()
    }

    /// Selects the drawn message at or after `index` (else the last one before it).
    pub fn select_visible(&mut self, index: usize) {
        let at = (self.visible_at(self.visible_from(index))).or_else(|| {
            self.visible_len()
                .checked_sub(1)
                .and_then(|p| self.visible_at(p))
        });
        self.select(at.unwrap_or(index));
    }

    /// The next (or previous) drawn message.
    pub fn step(&mut self, forward: bool) {
        let from = self.visible_from(self.selected);
        let at = if forward {
            let here = self.visible_at(from) == Some(self.selected);
            self.visible_at(from + usize::from(here))
        } else {
            from.checked_sub(1).and_then(|p| self.visible_at(p))
        };
        if let Some(at) = at {
            self.select(at);
        }
    }

    /// Shows the side calls, or folds them again (the selection stays on a drawn message).
    pub fn toggle_side_calls(&mut self) {
        self.side_calls_shown = !self.side_calls_shown;
        self.select_visible(self.selected);
    }

    /// The same trace read again (live refresh): keeps the selection and the replay.
    pub fn refreshed(
        &self,
        trace_id: String,
        title: Option<String>,
        hops: Vec<RecordedHop>,
    ) -> Self {
        let mut view = Self::new(trace_id, title, hops);
        view.selected = self.selected.min(view.messages.len().saturating_sub(1));
        view.detail_scroll = self.detail_scroll;
        view.show_timing = self.show_timing;
        view.side_calls_shown = self.side_calls_shown;
        view.pane = self.pane;
        view.stderr = self.stderr.clone();
        view.agent = self.agent.again(&view.messages);
        view.fetched = self.fetched.carried(view.fetched.changes_wanted.clone());
        view.replay = self.replay.clone().map(|mut replay| {
            replay.total = view.messages.len();
            replay
        });
        view.snapped()
    }

    /// How many messages are drawn: all of them, or up to the replay's step.
    pub fn shown(&self) -> usize {
        match &self.replay {
            Some(replay) => (replay.step + 1).min(self.messages.len()),
            None => self.messages.len(),
        }
    }

    /// The server's stderr lines of the message's hop logged since the message before it and
    /// up to it (so each line is shown under one message): beside the server's messages.
    /// Messages are in number order and the lines in time order (`set_stderr`), so only the
    /// lines in that time are looked at.
    pub fn stderr_of(&self, message: &ExplainedMessage) -> Vec<&str> {
        let route = &self.hops[message.hop_index].start.route;
        let before = self.messages.partition_point(|m| m.number < message.number);
        let since = (before.checked_sub(1)).map_or(i64::MIN, |i| self.messages[i].at_unix_ns);
        let last = self
            .messages
            .last()
            .is_some_and(|m| m.number == message.number);
        let from = self.stderr.partition_point(|(_, at, _)| *at <= since);
        let to = match last {
            true => self.stderr.len(),
            false => (self.stderr).partition_point(|(_, at, _)| *at <= message.at_unix_ns),
        };
        self.stderr[from..to.max(from)]
            .iter()
            .filter(|(r, _, _)| r == route)
            .map(|(_, _, line)| line.as_str())
            .collect()
    }

    /// The trace's servers' stderr lines, put in time order.
    pub fn set_stderr(&mut self, mut lines: Vec<(String, i64, String)>) {
        lines.sort_by_key(|(_, at, _)| *at);
        self.stderr = lines;
    }

    /// The message whose details are shown.
    pub fn current(&self) -> Option<&ExplainedMessage> {
        let index = match &self.replay {
            Some(replay) => replay.step,
            None => self.selected,
        };
        self.messages.get(index)
    }

    /// Each message's time (ns), as the replay paces them.
    pub fn times(&self) -> &[i64] {
        &self.times
    }

    /// Moves a playing replay on when its next message is due.
    pub fn tick_replay(&mut self, now_ns: i64) {
        if let Some(replay) = self.replay.as_mut() {
            replay.tick(now_ns, &self.times);
        }
    }

    /// Starts or stops the replay playing.
    pub fn toggle_play(&mut self, now_ns: i64) {
        if let Some(replay) = self.replay.as_mut() {
            replay.toggle_play(now_ns, &self.times);
        }
    }

    pub fn has_in_flight(&self) -> bool {
        self.hops.iter().any(|hop| {
            hop.end
                .as_ref()
                .is_none_or(|end| end.state == Some(HopState::InFlight))
        })
    }

    /// `c` / `d`: shows that pane, or the message again when it is already shown.
    pub fn toggle_pane(&mut self, pane: DetailPane) {
        self.pane = if self.pane == pane {
            DetailPane::Message
        } else {
            pane
        };
        self.detail_scroll = 0;
    }

    /// The selected message's model request: its context parts, if it is one.
    pub fn current_context(&self) -> Option<&ContextShares> {
        let at = self.by_hop.get(&self.current()?.hop_id)?.context?;
        self.contexts.get(at)
    }

    /// The selected message's model request: its changes, if it is one (None while they wait
    /// for its bodies read back: `changes_loading`).
    pub fn current_changes(&self) -> Option<&CallChanges> {
        let hop = &self.current()?.hop_id;
        match self.fetched.changes_wanted.contains(hop) {
            true => self.fetched.changes.get(hop),
            false => self.changes_skeleton(hop),
        }
    }

    /// A model call's changes as made at load (without the bodies let go of).
    pub fn changes_skeleton(&self, hop_id: &str) -> Option<&CallChanges> {
        self.changes.get(self.by_hop.get(hop_id)?.changes?)
    }

    /// The prompt cache's report of a hop's model call.
    pub fn cache_of(&self, hop_id: &str) -> Option<&CacheReport> {
        self.caches.get(self.by_hop.get(hop_id)?.cache?)
    }

    pub fn select(&mut self, index: usize) {
        let index = index.min(self.messages.len().saturating_sub(1));
        if index != self.selected {
            self.selected = index;
            self.detail_scroll = 0;
        }
    }
}

/// Counts, in tests, each look at which messages are drawn (`visible_*`: each a bounded amount
/// of work), so a test can tell that a step looks at as many whatever the trace's length.
fn looked() {
    #[cfg(test)]
    tests::LOOKS.with(|looks| looks.set(looks.get() + 1));
}

#[cfg(test)]
#[path = "trace_view_tests.rs"]
mod tests;
