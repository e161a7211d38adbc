//! The one keymap: for each mode, the keys, the command they give and the help text. Dispatch,
//! the `?` help and the status-bar hints all read this table; no key is matched anywhere else.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::KeyCommand;

/// Which screen has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Screen {
    /// The trace list.
    List,
    /// One trace: the sequence diagram and the selected message.
    Trace,
    /// One trace, message by message.
    Replay,
    /// Typing a filter.
    Filter,
    /// The help overlay.
    Help,
}

impl Screen {
    pub fn title(self) -> &'static str {
        match self {
            Screen::List => "trace list",
            Screen::Trace => "trace view",
            Screen::Replay => "replay",
            Screen::Filter => "filter",
            Screen::Help => "help",
        }
    }
}

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub modes: &'static [Screen],
    pub keys: &'static [KeyCode],
    /// How the keys are written in help and hints.
    pub label: &'static str,
    pub command: KeyCommand,
    pub help: &'static str,
    /// Shown in the status bar (the most useful few per mode).
    pub hint: bool,
    /// The keys are pressed with Ctrl.
    pub ctrl: bool,
}

use KeyCode::{Backspace, Char, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Up};
use KeyCommand as C;
use Screen::{Filter, Help, List, Replay, Trace};

const BROWSE: &[Screen] = &[List, Trace, Replay];

/// Every key tracer's TUI knows, mode by mode.
#[rustfmt::skip]
pub const KEYMAP: &[Binding] = &[
    b(&[List, Trace], &[Char('j'), Down], "j/↓", C::Down, "next trace or message", false),
    b(&[List, Trace], &[Char('k'), Up], "k/↑", C::Up, "previous trace or message", false),
    b(&[List], &[PageDown], "PgDn", C::PageDown, "a page down", false),
    b(&[List], &[PageUp], "PgUp", C::PageUp, "a page up", false),
    b(&[List, Trace, Replay], &[Char('g'), Home], "g", C::Top, "first", false),
    b(&[List, Trace, Replay], &[Char('G'), End], "G", C::Bottom, "last", false),
    b(&[List], &[Enter], "enter", C::Open, "open the trace", true),
    b(&[List], &[Char('/')], "/", C::StartFilter, "filter (text, tool: model: method: status: role:, body:)", true),
    b(&[List], &[Esc], "esc", C::ClearFilter, "clear the filter", false),
    b(&[List, Trace], &[Char('f')], "f", C::Follow, "follow the newest trace (on/off)", true),
    b(&[List, Trace], &[Char('e')], "e", C::Export, "export the trace as JSON", true),
    b(&[List, Trace], &[Char('r')], "r", C::Replay, "replay the trace step by step", true),
    b(&[Replay], &[Char(' '), Right, Char('l')], "space/→", C::NextStep, "next message", true),
    b(&[Replay], &[Left, Char('h')], "←", C::PreviousStep, "previous message", true),
    b(&[Replay], &[Char('p')], "p", C::PlayPause, "play/pause at the recorded pace", true),
    b(&[Trace, Replay], &[Char('t')], "t", C::Timing, "timing waterfall instead of the diagram (on/off)", true),
    b(&[Trace], &[Char('s')], "s", C::SideCalls, "side (show or fold the side calls; folded by default)", true),
    b(&[Trace, Replay], &[Char('c')], "c", C::Context, "context of the selected model request: its parts, bytes, ≈ tokens (on/off)", false),
    b(&[Trace, Replay], &[Char('d')], "d", C::Changes, "changes since the previous request of the conversation (on/off)", false),
    b(&[Trace, Replay], &[Char('F')], "F", C::ForkHere, "fork from here: the tracer fork command for the selected message", false),
    b(&[Trace, Replay], &[Char('J'), PageDown], "J/PgDn", C::DetailDown, "scroll the message down", false),
    b(&[Trace, Replay], &[Char('K'), PageUp], "K/PgUp", C::DetailUp, "scroll the message up", false),
    b(&[Trace, Replay], &[Esc], "esc", C::Back, "back", true),
    b(BROWSE, &[Char('?')], "?", C::Help, "help", true),
    b(&[List], &[Char('q')], "q", C::Quit, "quit", true),
    b(&[Trace, Replay], &[Char('q')], "q", C::Quit, "back (quits a replay started with tracer replay)", true),
    b(&[Filter], &[Enter], "enter", C::ApplyFilter, "keep this filter", true),
    b(&[Filter], &[Esc], "esc", C::CancelFilter, "cancel", true),
    b(&[Filter], &[Backspace], "⌫", C::DeleteChar, "delete a character", false),
    ctrl(&[Filter], &[Char('u')], "ctrl-u", C::ClearLine, "clear the line", false),
    ctrl(&[Filter], &[Char('w')], "ctrl-w", C::DeleteWord, "delete a word", false),
    b(&[Help], &[Esc, Char('?'), Char('q')], "esc/?/q", C::Back, "close help", true),
];

#[allow(clippy::too_many_arguments)]
const fn b(
    modes: &'static [Screen],
    keys: &'static [KeyCode],
    label: &'static str,
    command: KeyCommand,
    help: &'static str,
    hint: bool,
) -> Binding {
    Binding {
        modes,
        keys,
        label,
        command,
        help,
        hint,
        ctrl: false,
    }
}

/// A binding of keys pressed with Ctrl.
const fn ctrl(
    modes: &'static [Screen],
    keys: &'static [KeyCode],
    label: &'static str,
    command: KeyCommand,
    help: &'static str,
    hint: bool,
) -> Binding {
    Binding {
        ctrl: true,
        ..b(modes, keys, label, command, help, hint)
    }
}

/// The command a key gives in a mode, if any. Ctrl-C leaves from everywhere.
pub fn lookup(mode: Screen, key: &KeyEvent) -> Option<KeyCommand> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == Char('c') {
        return Some(KeyCommand::Exit);
    }
    KEYMAP
        .iter()
        .find(|binding| {
            binding.ctrl == ctrl
                && binding.modes.contains(&mode)
                && binding.keys.contains(&key.code)
        })
        .map(|binding| binding.command)
}

/// The bindings of a mode, in table order.
pub fn bindings(mode: Screen) -> impl Iterator<Item = &'static Binding> {
    KEYMAP.iter().filter(move |b| b.modes.contains(&mode))
}

/// The status-bar hints of a mode: `enter open · / filter · …`.
pub fn hints(mode: Screen) -> Vec<(&'static str, &'static str)> {
    bindings(mode)
        .filter(|b| b.hint)
        .map(|b| (b.label, short_help(b.help)))
        .collect()
}

fn short_help(help: &'static str) -> &'static str {
    help.split([' ', '(', ',']).next().unwrap_or(help)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn no_key_means_two_things_in_one_mode() {
        for mode in [List, Trace, Replay, Filter, Help] {
            let mut seen = Vec::new();
            for binding in bindings(mode) {
                for code in binding.keys {
                    let key = (*code, binding.ctrl);
                    assert!(!seen.contains(&key), "{key:?} twice in {mode:?}");
                    seen.push(key);
                }
            }
        }
    }

    #[test]
    fn keys_resolve_per_mode() {
        assert_eq!(lookup(List, &key(Char('j'))), Some(C::Down));
        assert_eq!(lookup(Replay, &key(Char(' '))), Some(C::NextStep));
        assert_eq!(lookup(List, &key(Char(' '))), None);
        assert_eq!(
            lookup(Filter, &key(Char('q'))),
            None,
            "typed, not a command"
        );
        let ctrl_c = KeyEvent::new(Char('c'), KeyModifiers::CONTROL);
        assert_eq!(lookup(Trace, &ctrl_c), Some(C::Exit));
        let ctrl_u = KeyEvent::new(Char('u'), KeyModifiers::CONTROL);
        assert_eq!(lookup(Filter, &ctrl_u), Some(C::ClearLine));
        assert_eq!(lookup(List, &ctrl_u), None);
        assert_eq!(hints(Replay)[0], ("space/→", "next"));
    }

    #[test]
    fn the_trace_footer_names_the_timing_key() {
        assert!(
            hints(Trace).contains(&("t", "timing")),
            "{:?}",
            hints(Trace)
        );
    }
}
