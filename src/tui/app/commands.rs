//! What each command does in the list, the trace view (and its replay) and the filter bar.

use super::{App, DetailPane};
use crate::replay::ReplayState;
use crate::tui::action::{Effect, KeyCommand};
use crate::tui::keymap::Screen;

impl App {
    pub(super) fn list_command(&mut self, command: KeyCommand) -> Vec<Effect> {
        const PAGE: isize = 10;
        match command {
            KeyCommand::Down => self.list.move_by(1),
            KeyCommand::Up => self.list.move_by(-1),
            KeyCommand::PageDown => self.list.move_by(PAGE),
            KeyCommand::PageUp => self.list.move_by(-PAGE),
            KeyCommand::Top => self.list.select(0),
            KeyCommand::Bottom => self.list.select(usize::MAX),
            KeyCommand::Open | KeyCommand::Replay | KeyCommand::Export => {
                let Some(id) = self.list.selected_row().map(|r| r.id.clone()) else {
                    self.note = Some("no trace selected".into());
                    return Vec::new();
                };
                return match command {
                    KeyCommand::Export => vec![Effect::Export(id)],
                    KeyCommand::Replay => {
                        self.replay_wanted = Some(id.clone());
                        vec![Effect::LoadTrace(id)]
                    }
                    _ => {
                        self.view = None;
                        self.mode = Screen::List;
                        vec![Effect::LoadTrace(id)]
                    }
                };
            }
            KeyCommand::StartFilter => {
                self.filter_input = self.filter.text.clone();
                self.filter_before = self.filter.text.clone();
                self.mode = Screen::Filter;
            }
            KeyCommand::ClearFilter => {
                self.filter_input.clear();
                return self.set_filter();
            }
            KeyCommand::Follow => {
                self.follow = !self.follow;
                if self.follow {
                    self.list.select(0);
                }
            }
            KeyCommand::Help => self.open_help(),
            KeyCommand::Quit => {
                self.quit = true;
                return vec![Effect::Quit];
            }
            _ => {}
        }
        self.facts_effects()
    }

    pub(super) fn view_command(&mut self, command: KeyCommand) -> Vec<Effect> {
        let now = self.now_ns;
        let replay_only = self.replay_only;
        let source = self.source.clone();
        let has_store = self.has_store;
        let Some(view) = self.view.as_mut() else {
            self.mode = Screen::List;
            return Vec::new();
        };
        let last = view.messages.len().saturating_sub(1);
        match (command, view.replay.as_mut()) {
            (KeyCommand::Back | KeyCommand::Quit, Some(_)) if replay_only => {
                self.quit = true;
                return vec![Effect::Quit];
            }
            (KeyCommand::Back | KeyCommand::Quit, Some(replay)) => {
                let step = replay.step;
                view.replay = None;
                view.select(step);
                self.mode = Screen::Trace;
            }
            (KeyCommand::Back | KeyCommand::Quit, None) => self.mode = Screen::List,
            (KeyCommand::NextStep, Some(replay)) => replay.next(),
            (KeyCommand::PreviousStep, Some(replay)) => replay.back(),
            (KeyCommand::PlayPause, Some(_)) => view.toggle_play(now),
            (KeyCommand::Top, Some(replay)) => replay.first(),
            (KeyCommand::Bottom, Some(replay)) => replay.last(),
            (KeyCommand::Down, None) => view.step(true),
            (KeyCommand::Up, None) => view.step(false),
            (KeyCommand::Top, None) => view.select_visible(0),
            (KeyCommand::Bottom, None) => view.select_visible(last),
            (KeyCommand::SideCalls, None) => view.toggle_side_calls(),
            (KeyCommand::DetailDown, _) => {
                view.detail_scroll = view.detail_scroll.saturating_add(5)
            }
            (KeyCommand::DetailUp, _) => view.detail_scroll = view.detail_scroll.saturating_sub(5),
            (KeyCommand::Replay, None) => {
                let mut replay = ReplayState::new(view.messages.len(), self.speed);
                replay.step = view.selected;
                view.replay = Some(replay);
                self.mode = Screen::Replay;
            }
            (KeyCommand::Export, _) => return vec![Effect::Export(view.trace_id.clone())],
            (KeyCommand::ForkHere, replay) => {
                let at = replay.map_or(view.selected, |r| r.step);
                self.note = Some(match view.messages.get(at) {
                    Some(message) if !has_store => format!(
                        "fork from here needs the trace in a database: tracer import {source}, \
                         then tracer fork ID --at {}",
                        message.number
                    ),
                    Some(message) => format!(
                        "fork from here: tracer --db {source} fork {} --at {} (add the edits: \
                         --set, --model, --tool-description, --result/--error; run it in a shell)",
                        view.trace_id, message.number
                    ),
                    None => "no message selected".into(),
                });
            }
            (KeyCommand::Timing, _) => view.show_timing = !view.show_timing,
            (KeyCommand::Context, _) => view.toggle_pane(DetailPane::Context),
            (KeyCommand::Changes, _) => view.toggle_pane(DetailPane::Changes),
            (KeyCommand::Follow, None) => {
                self.follow = !self.follow;
                if self.follow {
                    self.list.select(0);
                    return self.follow_into_view();
                }
            }
            (KeyCommand::Help, _) => self.open_help(),
            _ => {}
        }
        if let Some(view) = self.view.as_mut()
            && matches!(
                command,
                KeyCommand::NextStep
                    | KeyCommand::PreviousStep
                    | KeyCommand::Top
                    | KeyCommand::Bottom
            )
        {
            view.detail_scroll = 0;
        }
        Vec::new()
    }

    pub(super) fn filter_command(&mut self, command: KeyCommand) -> Vec<Effect> {
        match command {
            KeyCommand::ApplyFilter => {
                self.mode = Screen::List;
                return self.body_search();
            }
            KeyCommand::CancelFilter => {
                self.filter_input = std::mem::take(&mut self.filter_before);
                self.mode = Screen::List;
                return self.set_filter();
            }
            KeyCommand::DeleteChar => {
                self.filter_input.pop();
                return self.set_filter();
            }
            KeyCommand::ClearLine => {
                self.filter_input.clear();
                return self.set_filter();
            }
            KeyCommand::DeleteWord => {
                let kept = self.filter_input.trim_end();
                let start = kept
                    .char_indices()
                    .rev()
                    .find(|(_, c)| c.is_whitespace())
                    .map_or(0, |(at, c)| at + c.len_utf8());
                self.filter_input.truncate(start);
                return self.set_filter();
            }
            KeyCommand::Quit => {
                self.quit = true;
                return vec![Effect::Quit];
            }
            _ => {}
        }
        Vec::new()
    }
}
