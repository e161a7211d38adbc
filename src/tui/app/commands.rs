//! What each command does in the list, the trace view (and its replay) and the filter bar.

use super::App;
use crate::replay::ReplayState;
use crate::tui::action::{Command, Effect};
use crate::tui::keymap::Mode;

impl App {
    pub(super) fn list_command(&mut self, command: Command) -> Vec<Effect> {
        const PAGE: isize = 10;
        match command {
            Command::Down => self.list.move_by(1),
            Command::Up => self.list.move_by(-1),
            Command::PageDown => self.list.move_by(PAGE),
            Command::PageUp => self.list.move_by(-PAGE),
            Command::Top => self.list.select(0),
            Command::Bottom => self.list.select(usize::MAX),
            Command::Open | Command::Replay | Command::Export => {
                let Some(id) = self.list.selected_row().map(|r| r.id.clone()) else {
                    self.note = Some("no trace selected".into());
                    return Vec::new();
                };
                return match command {
                    Command::Export => vec![Effect::Export(id)],
                    Command::Replay => {
                        self.replay_wanted = Some(id.clone());
                        vec![Effect::LoadTrace(id)]
                    }
                    _ => {
                        self.view = None;
                        self.mode = Mode::List;
                        vec![Effect::LoadTrace(id)]
                    }
                };
            }
            Command::StartFilter => {
                self.filter_input = self.filter.text.clone();
                self.filter_before = self.filter.text.clone();
                self.mode = Mode::Filter;
            }
            Command::ClearFilter => {
                self.filter_input.clear();
                return self.set_filter();
            }
            Command::Follow => {
                self.follow = !self.follow;
                if self.follow {
                    self.list.select(0);
                }
            }
            Command::Help => self.open_help(),
            Command::Quit => {
                self.quit = true;
                return vec![Effect::Quit];
            }
            _ => {}
        }
        self.facts_effects()
    }

    pub(super) fn view_command(&mut self, command: Command) -> Vec<Effect> {
        let now = self.now_ns;
        let replay_only = self.replay_only;
        let Some(view) = self.view.as_mut() else {
            self.mode = Mode::List;
            return Vec::new();
        };
        let times = view.times();
        let last = view.messages.len().saturating_sub(1);
        match (command, view.replay.as_mut()) {
            (Command::Back | Command::Quit, Some(_)) if replay_only => {
                self.quit = true;
                return vec![Effect::Quit];
            }
            (Command::Back | Command::Quit, Some(replay)) => {
                let step = replay.step;
                view.replay = None;
                view.select(step);
                self.mode = Mode::Trace;
            }
            (Command::Back | Command::Quit, None) => self.mode = Mode::List,
            (Command::NextStep, Some(replay)) => replay.next(),
            (Command::PreviousStep, Some(replay)) => replay.back(),
            (Command::PlayPause, Some(replay)) => replay.toggle_play(now, &times),
            (Command::Top, Some(replay)) => replay.first(),
            (Command::Bottom, Some(replay)) => replay.last(),
            (Command::Down, None) => view.select(view.selected + 1),
            (Command::Up, None) => view.select(view.selected.saturating_sub(1)),
            (Command::Top, None) => view.select(0),
            (Command::Bottom, None) => view.select(last),
            (Command::DetailDown, _) => view.detail_scroll = view.detail_scroll.saturating_add(5),
            (Command::DetailUp, _) => view.detail_scroll = view.detail_scroll.saturating_sub(5),
            (Command::Replay, None) => {
                let mut replay = ReplayState::new(view.messages.len(), self.speed);
                replay.step = view.selected;
                view.replay = Some(replay);
                self.mode = Mode::Replay;
            }
            (Command::Export, _) => return vec![Effect::Export(view.trace_id.clone())],
            (Command::Timing, _) => view.show_timing = !view.show_timing,
            (Command::Follow, None) => {
                self.follow = !self.follow;
                if self.follow {
                    self.list.select(0);
                    return self.follow_into_view();
                }
            }
            (Command::Help, _) => self.open_help(),
            _ => {}
        }
        if let Some(view) = self.view.as_mut()
            && matches!(
                command,
                Command::NextStep | Command::PreviousStep | Command::Top | Command::Bottom
            )
        {
            view.detail_scroll = 0;
        }
        Vec::new()
    }

    pub(super) fn filter_command(&mut self, command: Command) -> Vec<Effect> {
        match command {
            Command::ApplyFilter => self.mode = Mode::List,
            Command::CancelFilter => {
                self.filter_input = std::mem::take(&mut self.filter_before);
                self.mode = Mode::List;
                return self.set_filter();
            }
            Command::DeleteChar => {
                self.filter_input.pop();
                return self.set_filter();
            }
            Command::Quit => {
                self.quit = true;
                return vec![Effect::Quit];
            }
            _ => {}
        }
        Vec::new()
    }
}
