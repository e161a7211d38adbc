//! What the trace view reads back from the store for the message it shows, when the trace was
//! read with its large request bodies let go of (`Bodies::LetGo`): that request's body (its lines
//! made off the render loop, one body held at a time) and, in the changes pane, what changed
//! since the previous request (both bodies compared off the loop). At most one read of each kind
//! is in flight; a result that comes for a message no longer shown is dropped.

use std::collections::{HashMap, HashSet};

use ratatui::text::Line;

use super::{DetailPane, TraceView};
use crate::tui::action::Effect;
use tracer_trace::read::changes_by_call::CallChanges;
use tracer_trace::read::request_changes::Change;
use tracer_trace::{Direction, RecordedHop};
use tracer_wire::hop::BodyCapture;

/// Whether a body was let go of once read: its whole length kept, none of its bytes.
pub fn let_go(body: &BodyCapture) -> bool {
    body.bytes.is_empty() && body.total_len > 0 && !body.truncated
}

/// Whether a hop's request body was let go of.
pub fn request_let_go(hop: &RecordedHop) -> bool {
    hop.end
        .as_ref()
        .is_some_and(|end| let_go(&end.request_body))
}

/// The bodies and changes read back for the trace view.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fetched {
    /// The hop whose request body is (to be) shown, and its lines once read (None: loading).
    pub body: Option<(String, Option<Vec<Line<'static>>>)>,
    /// The hop whose request body is being read.
    pub body_reading: Option<String>,
    /// Model calls whose changes compare a body that was let go of (by hop id).
    pub changes_wanted: HashSet<String>,
    /// Those calls' changes, once read.
    pub changes: HashMap<String, CallChanges>,
    /// The call whose changes are being read.
    pub changes_reading: Option<String>,
}

impl Fetched {
    /// The lines of a hop's request body, when read.
    pub fn body_of(&self, hop_id: &str) -> Option<&[Line<'static>]> {
        match &self.body {
            Some((id, Some(lines))) if id == hop_id => Some(lines),
            _ => None,
        }
    }

    /// What is kept across a refresh of the same trace.
    pub fn carried(&self, changes_wanted: HashSet<String>) -> Self {
        let changes = (self.changes.iter())
            .filter(|(id, _)| changes_wanted.contains(*id))
            .map(|(id, c)| (id.clone(), c.clone()))
            .collect();
        Self {
            body: self.body.clone(),
            body_reading: self.body_reading.clone(),
            changes_wanted,
            changes,
            changes_reading: self.changes_reading.clone(),
        }
    }
}

impl TraceView {
    /// The reads the message shown needs and the view does not hold yet: its request body, when
    /// it was let go of, or in the changes pane the bodies its changes compare. Marks them asked.
    pub fn reads_wanted(&mut self) -> Vec<Effect> {
        let Some(message) = self.current() else {
            return Vec::new();
        };
        let hop_id = message.hop_id.clone();
        let request = message.direction == Direction::Request;
        let let_go = request_let_go(&self.hops[message.hop_index]);
        let mut out = Vec::new();
        if self.pane == DetailPane::Message && request && let_go {
            if self
                .fetched
                .body
                .as_ref()
                .is_none_or(|(id, _)| *id != hop_id)
            {
                // One body at a time: the one shown before is let go of.
                self.fetched.body = Some((hop_id.clone(), None));
            }
            if self.fetched.body_of(&hop_id).is_none() && self.fetched.body_reading.is_none() {
                self.fetched.body_reading = Some(hop_id.clone());
                out.push(Effect::LoadBody {
                    trace_id: self.trace_id.clone(),
                    hop_id: hop_id.clone(),
                });
            }
        }
        if self.pane == DetailPane::Changes
            && self.changes_loading()
            && self.fetched.changes_reading.is_none()
        {
            let previous = (self.changes_skeleton(&hop_id)).and_then(|c| c.previous_hop_id.clone());
            self.fetched.changes_reading = Some(hop_id.clone());
            out.push(Effect::LoadChanges {
                trace_id: self.trace_id.clone(),
                hop_id,
                previous_hop_id: previous,
            });
        }
        out
    }

    /// A request body read back: kept when it is the one shown.
    pub fn body_read(&mut self, hop_id: &str, lines: Vec<Line<'static>>) {
        if self.fetched.body_reading.as_deref() == Some(hop_id) {
            self.fetched.body_reading = None;
        }
        if let Some((id, shown @ None)) = self.fetched.body.as_mut()
            && id == hop_id
        {
            *shown = Some(lines);
        }
    }

    /// A call's changes compared from its bodies read back.
    pub fn changes_read(&mut self, hop_id: &str, changes: Option<Vec<Change>>, body_bytes: usize) {
        if self.fetched.changes_reading.as_deref() == Some(hop_id) {
            self.fetched.changes_reading = None;
        }
        if !self.fetched.changes_wanted.contains(hop_id) {
            return;
        }
        if let Some(skeleton) = self.changes_skeleton(hop_id) {
            let read = CallChanges {
                changes,
                body_bytes: skeleton.body_bytes.max(body_bytes),
                ..skeleton.clone()
            };
            self.fetched.changes.insert(hop_id.to_string(), read);
        }
    }

    /// Whether the selected model call's changes wait for bodies read back.
    pub fn changes_loading(&self) -> bool {
        self.current().is_some_and(|m| {
            self.fetched.changes_wanted.contains(&m.hop_id)
                && !self.fetched.changes.contains_key(&m.hop_id)
        })
    }
}
