//! What the TUI reacts to (`Action`: keys, ticks, results of background work) and the background
//! work it asks for (`Effect`). `App::update` turns one into a list of the other.

use crossterm::event::KeyEvent;

use super::facts::TraceFacts;
use tracer_store::traces::TraceRow;
use tracer_trace::RecordedHop;

/// A user intent, named by the keymap (`keymap::KEYMAP`) and nowhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCommand {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Back,
    Quit,
    /// Ctrl-C: leave from anywhere.
    Exit,
    Help,
    StartFilter,
    ClearFilter,
    ApplyFilter,
    CancelFilter,
    DeleteChar,
    /// Ctrl-U: clear the filter line, as a shell does.
    ClearLine,
    /// Ctrl-W: delete the word before the cursor.
    DeleteWord,
    Follow,
    Export,
    Replay,
    NextStep,
    PreviousStep,
    PlayPause,
    DetailDown,
    DetailUp,
    /// Show the timing waterfall instead of the sequence diagram (and back).
    Timing,
    /// Show the trace's side calls, folded by default (and fold them again).
    SideCalls,
    /// Show the selected model request's context parts instead of the message (and back).
    Context,
    /// Show what changed since the previous request of the conversation (and back).
    Changes,
    /// Say the `tracer fork` command for the selected message.
    ForkHere,
}

/// How the database looked at the last poll; a change means the list must be read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PollToken {
    pub hops: i64,
    pub traces: usize,
}

/// Everything `App::update` reacts to.
#[derive(Debug, Clone)]
pub enum Action {
    /// A key press (the keymap decides what it means in the current mode).
    Key(KeyEvent),
    /// The terminal was resized: draw again.
    Resize,
    /// SIGINT, SIGTERM or SIGHUP: leave as Ctrl-C does, restoring the terminal.
    StopSignal,
    /// Time passed; `now_ns` is a monotonic clock in nanoseconds (fixed in tests).
    Tick { now_ns: i64 },
    /// The trace list as read from the store, newest first.
    TracesLoaded {
        rows: Vec<TraceRow>,
        token: PollToken,
        /// Only the newest traces: the whole list follows.
        partial: bool,
        /// Each trace's session as the list labels it (the host's own id of its run, else
        /// tracer's session id), by trace id; traces in no session are not in it.
        sessions: std::collections::HashMap<String, String>,
    },
    /// A poll found nothing new.
    PollDone { token: PollToken },
    /// Facts (summary and filterable values) of some traces.
    FactsLoaded(Vec<(String, TraceFacts)>),
    /// One trace's hops, for the trace view (or a refresh of it).
    TraceLoaded {
        trace_id: String,
        title: Option<String>,
        hops: Vec<RecordedHop>,
    },
    /// The stderr lines a wrapped server wrote while the trace lasted: (route, when, line).
    /// The agent's own events placed in the trace (its telemetry), for the view it opened.
    AgentEventsLoaded {
        trace_id: String,
        notes: Vec<AgentNote>,
    },
    StderrLoaded {
        trace_id: String,
        lines: Vec<(String, i64, String)>,
    },
    /// A request body let go of when the trace was read, read back for the message shown: its
    /// lines as the detail pane draws them (made off the render loop).
    BodyLoaded {
        trace_id: String,
        hop_id: String,
        lines: Vec<ratatui::text::Line<'static>>,
    },
    /// A model call's changes since the previous request, compared from bodies read back.
    ChangesLoaded {
        trace_id: String,
        hop_id: String,
        /// `None` when either body is not JSON.
        changes: Option<Vec<tracer_trace::read::request_changes::Change>>,
        /// The request body's JSON length.
        body_bytes: usize,
    },
    /// The traces whose titles or bodies hold a `body:` text (`tracer_live::search`).
    SearchDone {
        text: String,
        traces: std::collections::HashSet<String>,
    },
    /// A trace was written to a file.
    Exported { path: String },
    /// Background work failed; the text is shown in the status bar.
    Failed(String),
}

/// Background work: runs in `effects.rs` on tokio, never on the render loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Check the store for new hops (grouping new ones), and read the list when it changed.
    Poll { last: Option<PollToken> },
    /// Compute the facts of these traces.
    LoadFacts(Vec<String>),
    /// Read one trace's hops (large request bodies let go of once read).
    LoadTrace(String),
    /// Read back one hop's request body, for the message shown.
    LoadBody { trace_id: String, hop_id: String },
    /// Read back a model call's body and its previous call's, and compare them.
    LoadChanges {
        trace_id: String,
        hop_id: String,
        previous_hop_id: Option<String>,
    },
    /// Search every trace's title and bodies for a `body:` text.
    Search(String),
    /// Write a trace as a JSON hop log to a file.
    Export(String),
    /// Leave the program.
    Quit,
}

/// One event as the view shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentNote {
    /// The hop it was placed after (None: before the trace's first hop).
    pub after_hop_id: Option<String>,
    pub at_unix_ns: i64,
    /// What it says.
    pub sentence: String,
    /// Its name, the rule that placed it, the cost beside tracer's.
    pub detail: String,
}
