//! The TUI's state and its one update function: `App::update(action) -> Vec<Effect>`. Plain data
//! (no terminal, no channels, no store), so every key can be tested without a runtime.

mod agent_notes;
mod commands;
mod fetched;
mod trace_list;
mod trace_view;

pub use crate::tui::action::AgentNote;
pub use agent_notes::AgentNotes;
pub use fetched::{Fetched, let_go};
pub use trace_list::{FACTS_WINDOW, TraceList};
pub use trace_view::{Arrow, DetailPane, Tone, TraceView};

use crossterm::event::{KeyCode, KeyModifiers};

use super::action::{Action, Effect, KeyCommand, PollToken};
use super::filter::Filter;
use super::keymap::{self, Screen};
use crate::replay::ReplayState;
use tracer_live::load::LoadedTrace;
use tracer_trace::RecordedHop;

/// How often the store is polled for new hops.
pub const POLL_NS: i64 = 500_000_000;

#[derive(Debug, Clone)]
pub struct App {
    pub mode: Screen,
    /// The mode the help overlay returns to.
    pub under_help: Screen,
    /// What the header names: the database path or the replayed file.
    pub source: String,
    /// False when showing a file: nothing to poll.
    pub has_store: bool,
    /// Started as `tracer replay`: leaving the replay quits.
    pub replay_only: bool,
    pub list: TraceList,
    pub view: Option<TraceView>,
    pub filter: Filter,
    /// What is typed in the filter bar.
    pub filter_input: String,
    /// The filter before `/`, restored by `esc`.
    filter_before: String,
    pub follow: bool,
    /// A one-line note in the status bar (export done, errors).
    pub note: Option<String>,
    /// Monotonic clock of the last tick (ns).
    pub now_ns: i64,
    pub speed: f64,
    pub quit: bool,
    token: Option<PollToken>,
    polling: bool,
    last_poll_ns: Option<i64>,
    /// A trace asked for with `r`: opens in replay.
    replay_wanted: Option<String>,
}

impl App {
    /// The browser over a database (the list fills in after the first poll).
    pub fn browser(source: impl Into<String>) -> Self {
        Self {
            mode: Screen::List,
            under_help: Screen::List,
            source: source.into(),
            has_store: true,
            replay_only: false,
            list: TraceList::default(),
            view: None,
            filter: Filter::default(),
            filter_input: String::new(),
            filter_before: String::new(),
            follow: false,
            note: None,
            now_ns: 0,
            speed: 1.0,
            quit: false,
            token: None,
            polling: false,
            last_poll_ns: None,
            replay_wanted: None,
        }
    }

    /// `tracer replay`: one trace, message by message; leaving quits.
    pub fn replay(source: impl Into<String>, trace: LoadedTrace, speed: f64) -> Self {
        let mut app = Self::browser(source);
        app.has_store = false;
        app.replay_only = true;
        app.speed = speed;
        let mut view = TraceView::new(trace.row.id, trace.row.title, trace.hops);
        view.replay = Some(ReplayState::new(view.messages.len(), speed));
        app.view = Some(view);
        app.mode = Screen::Replay;
        app
    }

    /// The effects to run at start.
    pub fn start(&mut self) -> Vec<Effect> {
        self.poll()
    }

    /// Reacts to `action`; then asks for what the message shown needs read back from the
    /// store (a body let go of), whatever moved the selection.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut effects = self.react(action);
        if self.has_store
            && matches!(self.mode, Screen::Trace | Screen::Replay | Screen::Help)
            && let Some(view) = self.view.as_mut()
        {
            effects.extend(view.reads_wanted());
        }
        effects
    }

    fn react(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Key(key) => {
                if let Some(command) = keymap::lookup(self.mode, &key) {
                    return self.command(command);
                }
                let typed = !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
                if let (Screen::Filter, KeyCode::Char(c), true) = (self.mode, key.code, typed) {
                    self.filter_input.push(c);
                    return self.set_filter();
                }
                Vec::new()
            }
            Action::Resize => Vec::new(),
            Action::StopSignal => self.command(KeyCommand::Exit),
            Action::Tick { now_ns } => self.tick(now_ns),
            Action::TracesLoaded {
                rows,
                token,
                partial,
                sessions,
            } => {
                self.list.sessions = sessions;
                if !partial {
                    self.polling = false;
                    self.token = Some(token);
                }
                self.list.replace_rows(rows, &self.filter);
                let mut effects = Vec::new();
                if self.follow {
                    self.list.select(0);
                    effects.extend(self.follow_into_view());
                }
                effects.extend(self.facts_effects());
                effects
            }
            Action::PollDone { token } => {
                self.polling = false;
                self.token = Some(token);
                Vec::new()
            }
            Action::FactsLoaded(facts) => {
                for (id, fact) in facts {
                    self.list.pending.remove(&id);
                    self.list.facts.insert(id, fact);
                }
                if self.filter.needs_facts() {
                    self.list.refilter(&self.filter);
                }
                self.facts_effects()
            }
            Action::TraceLoaded {
                trace_id,
                title,
                hops,
            } => {
                self.show_trace(trace_id, title, hops);
                Vec::new()
            }
            Action::AgentEventsLoaded { trace_id, notes } => {
                if let Some(view) = self.view.as_mut().filter(|v| v.trace_id == trace_id) {
                    view.agent = AgentNotes::placed(notes, &view.messages);
                }
                Vec::new()
            }
            Action::StderrLoaded { trace_id, lines } => {
                if let Some(view) = self.view.as_mut().filter(|v| v.trace_id == trace_id) {
                    view.set_stderr(lines);
                }
                Vec::new()
            }
            Action::BodyLoaded {
                trace_id,
                hop_id,
                lines,
            } => {
                if let Some(view) = self.view.as_mut().filter(|v| v.trace_id == trace_id) {
                    view.body_read(&hop_id, lines);
                }
                Vec::new()
            }
            Action::ChangesLoaded {
                trace_id,
                hop_id,
                changes,
                body_bytes,
            } => {
                if let Some(view) = self.view.as_mut().filter(|v| v.trace_id == trace_id) {
                    view.changes_read(&hop_id, changes, body_bytes);
                }
                Vec::new()
            }
            Action::SearchDone { text, traces } => {
                if self.list.searching.as_deref() == Some(text.as_str()) {
                    self.list.searching = None;
                }
                self.list.body_hits = Some((text, traces));
                self.list.refilter(&self.filter);
                self.facts_effects()
            }
            Action::Exported { path } => {
                self.note = Some(format!("exported to {path}"));
                Vec::new()
            }
            Action::Failed(message) => {
                self.polling = false;
                // A body search that failed can be asked for again (enter).
                self.list.searching = None;
                self.note = Some(message);
                Vec::new()
            }
        }
    }

    /// Opens a trace loaded for the view (`Effect::LoadTrace`), or refreshes the one open.
    fn show_trace(&mut self, trace_id: String, title: Option<String>, hops: Vec<RecordedHop>) {
        let replay = self.replay_wanted.as_deref() == Some(trace_id.as_str());
        match self.view.as_mut() {
            Some(view) if view.trace_id == trace_id && !replay => {
                *view = view.refreshed(trace_id, title, hops);
                return;
            }
            _ => {}
        }
        if !replay && !matches!(self.mode, Screen::List | Screen::Trace) {
            return;
        }
        let mut view = TraceView::new(trace_id, title, hops);
        if replay {
            self.replay_wanted = None;
            view.replay = Some(ReplayState::new(view.messages.len(), self.speed));
            self.mode = Screen::Replay;
        } else {
            self.mode = Screen::Trace;
        }
        self.view = Some(view);
    }

    fn tick(&mut self, now_ns: i64) -> Vec<Effect> {
        self.now_ns = now_ns;
        if let Some(view) = self.view.as_mut() {
            view.tick_replay(now_ns);
        }
        let due = self
            .last_poll_ns
            .is_none_or(|last| now_ns.saturating_sub(last) >= POLL_NS);
        if due { self.poll() } else { Vec::new() }
    }

    fn poll(&mut self) -> Vec<Effect> {
        if !self.has_store || self.polling {
            return Vec::new();
        }
        self.polling = true;
        self.last_poll_ns = Some(self.now_ns);
        let mut effects = vec![Effect::Poll { last: self.token }];
        let live = self.list.in_flight_on_screen();
        for id in &live {
            self.list.pending.insert(id.clone());
        }
        if !live.is_empty() {
            effects.push(Effect::LoadFacts(live));
        }
        if let Some(view) = &self.view
            && view.has_in_flight()
        {
            effects.push(Effect::LoadTrace(view.trace_id.clone()));
        }
        effects
    }

    /// Reads of the facts still missing: the screen's in small batches (the first screen comes
    /// back first), a filter's in bigger ones.
    fn facts_effects(&mut self) -> Vec<Effect> {
        let on_screen = self.list.facts_wanted();
        let mut effects: Vec<Effect> = on_screen
            .chunks(25)
            .map(|ids| Effect::LoadFacts(ids.to_vec()))
            .collect();
        if self.filter.needs_facts() {
            let wanted = self.list.facts_for_filter(&self.filter);
            effects.extend(
                wanted
                    .chunks(200)
                    .map(|ids| Effect::LoadFacts(ids.to_vec())),
            );
        }
        effects
    }

    fn follow_into_view(&mut self) -> Vec<Effect> {
        let newest = self.list.selected_row().map(|r| r.id.clone());
        match (&self.view, newest) {
            (Some(view), Some(id)) if self.mode == Screen::Trace && view.trace_id != id => {
                vec![Effect::LoadTrace(id)]
            }
            _ => Vec::new(),
        }
    }

    fn set_filter(&mut self) -> Vec<Effect> {
        self.filter = Filter::parse(&self.filter_input);
        self.list.refilter(&self.filter);
        self.facts_effects()
    }

    /// The search a filter's `body:` text needs, unless it is known or under way (a file
    /// replayed has no store to search).
    fn body_search(&mut self) -> Vec<Effect> {
        let Some(text) = self.filter.body.clone() else {
            return Vec::new();
        };
        if !self.has_store
            || !self.list.body_pending(&self.filter)
            || self.list.searching.as_deref() == Some(text.as_str())
        {
            return Vec::new();
        }
        self.list.searching = Some(text.clone());
        vec![Effect::Search(text)]
    }

    fn command(&mut self, command: KeyCommand) -> Vec<Effect> {
        self.note = None;
        if command == KeyCommand::Exit {
            self.quit = true;
            return vec![Effect::Quit];
        }
        match self.mode {
            Screen::List => self.list_command(command),
            Screen::Trace | Screen::Replay => self.view_command(command),
            Screen::Filter => self.filter_command(command),
            Screen::Help => {
                if command == KeyCommand::Quit
                    && self.under_help == Screen::List
                    && !self.replay_only
                {
                    self.quit = true;
                    return vec![Effect::Quit];
                }
                self.mode = self.under_help;
                Vec::new()
            }
        }
    }

    fn open_help(&mut self) {
        self.under_help = self.mode;
        self.mode = Screen::Help;
    }
}
