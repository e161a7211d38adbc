//! What a writer did over its life (hops written, lost, taken in, left in the journal) and the
//! exit line that says so.

use std::path::PathBuf;

/// What the writer did over its life, returned when every handle is dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriterReport {
    /// Hops whose row this writer inserted.
    pub hops_written: u64,
    pub events_written: u64,
    pub batches: u64,
    /// Hops counted as not written (their events could not be journaled).
    pub hops_not_written: u64,
    /// Hops taken in from journals that earlier processes left behind.
    pub hops_taken_in: u64,
    /// Hops still in the journal when the writer gave up on a failing database.
    pub hops_left_in_journal: u64,
    /// The journal left for the next recorder, when something is left in it.
    pub journal_left: Option<PathBuf>,
}

impl WriterReport {
    /// What the exit lines say: `N hops written, M not written`, then what was taken in from
    /// an earlier run's journal and what is left in this one's.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "{} written, {} not written",
            match self.hops_written {
                1 => "1 hop".to_string(),
                n => format!("{n} hops"),
            },
            self.hops_not_written
        );
        if self.hops_taken_in > 0 {
            text.push_str(&format!(
                ", {} taken in from a journal an earlier run left",
                self.hops_taken_in
            ));
        }
        if let Some(journal) = &self.journal_left {
            text.push_str(&format!(
                "; the database is not taking writes: {} in {} for the next tracer on it",
                match self.hops_left_in_journal {
                    1 => "1 hop waits".to_string(),
                    n => format!("{n} hops wait"),
                },
                journal.display()
            ));
        }
        text
    }
}
