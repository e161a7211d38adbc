//! The real terminal: entered in raw mode on the alternate screen, and restored when the guard
//! drops (normal exit or error) and on panic (ratatui's init installs a restoring panic hook).

use ratatui::DefaultTerminal;

/// Owns the terminal mode while the TUI runs; dropping it restores the terminal.
pub struct TerminalGuard {
    terminal: DefaultTerminal,
}

impl TerminalGuard {
    /// Enters raw mode and the alternate screen.
    pub fn enter() -> std::io::Result<Self> {
        let terminal = ratatui::try_init()?;
        Ok(Self { terminal })
    }

    pub fn terminal(&mut self) -> &mut DefaultTerminal {
        &mut self.terminal
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        // Also leaves the alternate screen and shows the cursor again.
        ratatui::restore();
    }
}
