//! The state of the trace list: every trace row (newest first), the facts known so far, which rows
//! pass the filter, the selection and the scroll offset. Moving is O(1); only a window of rows
//! around the selection ever needs facts.

use std::collections::{HashMap, HashSet};

use crate::tui::facts::TraceFacts;
use crate::tui::filter::{Filter, Verdict};
use tracer_store::traces::TraceRow;

/// How many rows around the top of the screen get their facts read ahead.
pub const FACTS_WINDOW: usize = 80;

#[derive(Debug, Clone, Default)]
pub struct TraceList {
    pub rows: Vec<TraceRow>,
    pub facts: HashMap<String, TraceFacts>,
    /// Facts asked for and not back yet.
    pub pending: HashSet<String>,
    /// Indices into `rows` that pass the filter, in list order.
    pub shown: Vec<usize>,
    /// How many rows wait for facts before the filter can tell.
    pub undecided: usize,
    /// Index into `shown`.
    pub selected: usize,
    /// The first shown row on screen (kept by the view so the selection stays visible).
    pub offset: usize,
    pub loaded: bool,
    /// Each trace's session label, by trace id (see `Action::TracesLoaded`).
    pub sessions: HashMap<String, String>,
    /// The last `body:` search's text and the traces it found.
    pub body_hits: Option<(String, HashSet<String>)>,
    /// The `body:` text being searched for now.
    pub searching: Option<String>,
}

impl TraceList {
    /// The label of a trace's session, when it has one.
    pub fn session_of(&self, trace_id: &str) -> Option<&str> {
        self.sessions.get(trace_id).map(String::as_str)
    }

    pub fn selected_row(&self) -> Option<&TraceRow> {
        self.shown.get(self.selected).map(|&i| &self.rows[i])
    }

    pub fn move_by(&mut self, delta: isize) {
        let last = self.shown.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    pub fn select(&mut self, index: usize) {
        self.selected = index.min(self.shown.len().saturating_sub(1));
    }

    /// New rows from the store; the selection stays on the same trace when it is still there.
    pub fn replace_rows(&mut self, rows: Vec<TraceRow>, filter: &Filter) {
        let keep = self.selected_row().map(|r| r.id.clone());
        self.rows = rows;
        self.loaded = true;
        let alive: HashSet<&str> = self.rows.iter().map(|r| r.id.as_str()).collect();
        self.facts.retain(|id, _| alive.contains(id.as_str()));
        self.apply(filter, keep);
    }

    /// Filters the rows again, keeping the selected trace when it still passes.
    pub fn refilter(&mut self, filter: &Filter) {
        let keep = self.selected_row().map(|r| r.id.clone());
        self.apply(filter, keep);
    }

    fn apply(&mut self, filter: &Filter, keep: Option<String>) {
        self.undecided = 0;
        self.shown = if filter.is_empty() {
            (0..self.rows.len()).collect()
        } else {
            let mut shown = Vec::new();
            let body = filter.body.as_deref().map(|text| match &self.body_hits {
                Some((searched, ids)) if searched == text => Some(ids),
                _ => None,
            });
            for (index, row) in self.rows.iter().enumerate() {
                let verdict = match (filter.matches(row, self.facts.get(&row.id)), body) {
                    (Verdict::No, _) => Verdict::No,
                    (_, Some(Some(ids))) if !ids.contains(&row.id) => Verdict::No,
                    // The body search has not answered for this text yet.
                    (_, Some(None)) => Verdict::NeedsFacts,
                    (verdict, _) => verdict,
                };
                match verdict {
                    Verdict::Yes => shown.push(index),
                    Verdict::No => {}
                    Verdict::NeedsFacts => self.undecided += 1,
                }
            }
            shown
        };
        let position = keep.and_then(|id| self.shown.iter().position(|&i| self.rows[i].id == id));
        self.select(position.unwrap_or(self.selected));
    }

    /// Ids around the screen whose facts are neither known nor asked for; marks them asked.
    pub fn facts_wanted(&mut self) -> Vec<String> {
        let start = self.offset.min(self.selected);
        let end = (start + FACTS_WINDOW).min(self.shown.len());
        let mut wanted = Vec::new();
        for &index in &self.shown[start..end] {
            let id = &self.rows[index].id;
            if !self.facts.contains_key(id) && self.pending.insert(id.clone()) {
                wanted.push(id.clone());
            }
        }
        wanted
    }

    /// Whether the filter's `body:` text still waits for its search (asked or not).
    pub fn body_pending(&self, filter: &Filter) -> bool {
        filter.body.as_ref().is_some_and(|text| {
            self.body_hits
                .as_ref()
                .is_none_or(|(searched, _)| searched != text)
        })
    }

    /// Every id whose facts a filter still needs; marks them asked.
    pub fn facts_for_filter(&mut self, filter: &Filter) -> Vec<String> {
        let mut wanted = Vec::new();
        for row in &self.rows {
            if !self.facts.contains_key(&row.id)
                && filter.matches(row, None) == Verdict::NeedsFacts
                && self.pending.insert(row.id.clone())
            {
                wanted.push(row.id.clone());
            }
        }
        wanted
    }

    /// Traces on screen still in flight: their facts are read again on each poll.
    pub fn in_flight_on_screen(&self) -> Vec<String> {
        let end = (self.offset + FACTS_WINDOW).min(self.shown.len());
        self.shown[self.offset.min(end)..end]
            .iter()
            .map(|&i| &self.rows[i])
            .filter(|row| {
                row.ended_unix_ns.is_none()
                    || self
                        .facts
                        .get(&row.id)
                        .is_some_and(|f| f.summary.status == tracer_trace::TraceStatus::InFlight)
            })
            .filter(|row| !self.pending.contains(&row.id))
            .map(|row| row.id.clone())
            .collect()
    }
}
