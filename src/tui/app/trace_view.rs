//! The state of the trace view: one trace's hops, its numbered messages, the lanes of its
//! sequence diagram, the selected message and, when replaying, the replay.

use crate::hop::HopState;
use crate::replay::ReplayState;
use crate::replay::source::LoadedTrace;
use crate::trace::changes_by_call::{CallChanges, changes_by_call};
use crate::trace::context_shares::{ContextShares, context_shares};
use crate::trace::lanes::Lanes;
use crate::trace::{ExplainedMessage, RecordedHop, explain_trace};
use crate::wire::safe_text::one_line;

pub use crate::trace::lanes::{Arrow, Tone};

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
    /// The prompt cache's report of each model call that reported cache counts.
    pub caches: Vec<crate::trace::cache_verdict::CacheReport>,
    /// Side calls (a title, routing, telemetry…) are drawn too; folded by default (`s`).
    pub side_calls_shown: bool,
    /// What each model request is made of (computed once per load, never while drawing).
    pub contexts: Vec<ContextShares>,
    /// What changed in each model request since the previous one of its conversation.
    pub changes: Vec<CallChanges>,
    /// What the detail pane shows (`c`, `d`).
    pub pane: DetailPane,
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
    pub fn new(trace: LoadedTrace) -> Self {
        let messages = explain_trace(&trace.hops);
        let caches = crate::trace::cache_verdict::cache_reports(&trace.hops);
        let contexts = context_shares(&trace.hops);
        let changes = changes_by_call(&trace.hops);
        let Lanes {
            names: lanes,
            arrows,
        } = crate::trace::lanes::lanes(&trace.hops, &messages);
        Self {
            trace_id: trace.trace_id,
            title: trace.title,
            hops: trace.hops,
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
            caches,
            side_calls_shown: false,
            contexts,
            changes,
            pane: DetailPane::Message,
        }
        .snapped()
    }

    /// The view with its selection on a drawn message.
    fn snapped(mut self) -> Self {
        self.select_visible(self.selected);
        self
    }

    /// The messages drawn, by index: up to the replay's step, every one in a replay; else the
    /// side calls only when shown.
    pub fn visible(&self) -> Vec<usize> {
        let fold = self.replay.is_none() && !self.side_calls_shown;
        (0..self.shown())
            .filter(|&i| !fold || self.messages[i].side_call.is_none())
            .collect()
    }

    /// How many side calls are folded away.
    pub fn folded(&self) -> usize {
        self.shown() - self.visible().len()
    }

    /// Selects the drawn message at or after `index` (else the last one before it).
    pub fn select_visible(&mut self, index: usize) {
        let visible = self.visible();
        let at = visible
            .iter()
            .copied()
            .find(|&i| i >= index)
            .or_else(|| visible.last().copied());
        self.select(at.unwrap_or(index));
    }

    /// The next (or previous) drawn message.
    pub fn step(&mut self, forward: bool) {
        let visible = self.visible();
        let at = if forward {
            visible.iter().copied().find(|&i| i > self.selected)
        } else {
            visible.iter().copied().rev().find(|&i| i < self.selected)
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
    pub fn refreshed(&self, trace: LoadedTrace) -> Self {
        let mut view = Self::new(trace);
        view.selected = self.selected.min(view.messages.len().saturating_sub(1));
        view.detail_scroll = self.detail_scroll;
        view.show_timing = self.show_timing;
        view.side_calls_shown = self.side_calls_shown;
        view.pane = self.pane;
        view.stderr = self.stderr.clone();
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
    pub fn stderr_of(&self, message: &ExplainedMessage) -> Vec<&str> {
        let route = &self.hops[message.hop_index].start.route;
        let since = self
            .messages
            .iter()
            .take_while(|m| m.number < message.number)
            .last()
            .map_or(i64::MIN, |m| m.at_unix_ns);
        let last = self
            .messages
            .last()
            .is_some_and(|m| m.number == message.number);
        self.stderr
            .iter()
            .filter(|(r, at, _)| r == route && *at > since && (last || *at <= message.at_unix_ns))
            .map(|(_, _, line)| line.as_str())
            .collect()
    }

    /// The message whose details are shown.
    pub fn current(&self) -> Option<&ExplainedMessage> {
        let index = match &self.replay {
            Some(replay) => replay.step,
            None => self.selected,
        };
        self.messages.get(index)
    }

    pub fn times(&self) -> Vec<i64> {
        self.messages.iter().map(|m| m.at_unix_ns).collect()
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
        let hop = &self.current()?.hop_id;
        self.contexts.iter().find(|c| &c.hop_id == hop)
    }

    /// The selected message's model request: its changes, if it is one.
    pub fn current_changes(&self) -> Option<&CallChanges> {
        let hop = &self.current()?.hop_id;
        self.changes.iter().find(|c| &c.hop_id == hop)
    }

    pub fn select(&mut self, index: usize) {
        let index = index.min(self.messages.len().saturating_sub(1));
        if index != self.selected {
            self.selected = index;
            self.detail_scroll = 0;
        }
    }
}
