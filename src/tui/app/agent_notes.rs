//! The agent's own events in the trace view: each placed after the message it follows (read
//! off the render loop, with the trace), shown in that message's detail pane and counted on its
//! row of the diagram.

use std::collections::HashMap;

use tracer_trace::ExplainedMessage;
use tracer_trace::explain::agent_words::message_after;

use crate::tui::action::AgentNote;

/// The notes of a trace by the number of the message they follow (None: before the first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentNotes {
    notes: Vec<AgentNote>,
    by_message: HashMap<Option<usize>, Vec<usize>>,
}

impl AgentNotes {
    /// The notes placed among `messages`.
    pub fn placed(notes: Vec<AgentNote>, messages: &[ExplainedMessage]) -> AgentNotes {
        let mut by_message: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
        for (index, note) in notes.iter().enumerate() {
            let shown = messages
                .iter()
                .map(|m| (m.number, m.hop_id.as_str(), m.at_unix_ns));
            let after = message_after(shown, note.after_hop_id.as_deref(), note.at_unix_ns);
            by_message.entry(after).or_default().push(index);
        }
        AgentNotes { notes, by_message }
    }

    /// The same notes placed among another load's messages.
    pub fn again(&self, messages: &[ExplainedMessage]) -> AgentNotes {
        AgentNotes::placed(self.notes.clone(), messages)
    }

    /// The notes that follow message `number` (None: those before the first).
    pub fn after(&self, number: Option<usize>) -> impl Iterator<Item = &AgentNote> {
        (self.by_message.get(&number).into_iter().flatten()).map(|&i| &self.notes[i])
    }

    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }
}
