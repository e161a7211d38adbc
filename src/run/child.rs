//! The traced program: started with the terminal (stdin, stdout, stderr inherited), its stop
//! signals passed on, its end told as an exit code (128+N for signal N).

use std::process::ExitStatus;

use tokio::process::{Child, Command};
use tokio::signal::unix::SignalKind;

use tracer_serve::stop_signal::StopSignals;

/// Starts `program args` in `cwd` with the run's environment on top of tracer's own.
pub fn spawn(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &std::path::Path,
) -> std::io::Result<Child> {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .kill_on_drop(false)
        .spawn()
}

/// Waits for the child, passing each stop signal on. A Ctrl-C typed at the terminal reaches the
/// child by itself (it shares tracer's foreground process group): SIGINT is passed on only when
/// tracer is not in the terminal's foreground group, so an agent never sees one keypress twice.
pub async fn wait_passing_signals(
    child: &mut Child,
    signals: &mut StopSignals,
) -> std::io::Result<ExitStatus> {
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    loop {
        tokio::select! {
            status = child.wait() => return status,
            (kind, name) = signals.next() => {
                if kind == SignalKind::interrupt() && terminal_delivers_to_the_group() {
                    tracing::debug!(name, "the terminal sent it to the child too");
                    continue;
                }
                tracing::debug!(name, "passing a signal on to the child");
                pass_on(pid, kind);
            }
        }
    }
}

/// Whether tracer's process group is the terminal's foreground group (a typed Ctrl-C then went
/// to every process in it, the child included).
fn terminal_delivers_to_the_group() -> bool {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return false;
    }
    nix::unistd::tcgetpgrp(stdin).is_ok_and(|group| group == nix::unistd::getpgrp())
}

fn pass_on(pid: Option<i32>, kind: SignalKind) {
    if let (Some(pid), Ok(signal)) = (pid, nix::sys::signal::Signal::try_from(kind.as_raw_value()))
    {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// The child's exit code, or 128+N when signal N ended it (as shells report it).
pub fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(1);
    u8::try_from(code).unwrap_or(1)
}
