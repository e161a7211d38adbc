//! `tracer run` under a terminal (tmux): the child owns the terminal (its stdin is the tty, what
//! is typed reaches it), a Ctrl-C typed there reaches it exactly once (the terminal sends it to
//! the foreground group; tracer does not send it again), and tracer leaves with its exit code.
//! Skips when tmux is missing, unless `TRACER_INTEROP=1`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(socket: &Path, args: &[&str]) -> String {
    let output = Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn wait_for(socket: &Path, text: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let screen = tmux(socket, &["capture-pane", "-p", "-t", "run", "-S", "-100"]);
        if screen.contains(text) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "no `{text}` on the screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_child_keeps_the_terminal_and_a_typed_ctrl_c_reaches_it_once() {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(
            std::env::var("TRACER_INTEROP").as_deref() != Ok("1"),
            "TRACER_INTEROP=1 but tmux is not installed"
        );
        eprintln!("skipping: tmux is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("tmux.sock");
    let child = "trap 'n=$((n+1)); echo INT-$n' INT\necho READY\ntty\nread line || read line\n\
                 echo GOT-$line\nsleep 0.5\necho INTS-${n:-0}\nexit 7\n";
    let script = dir.path().join("child.sh");
    std::fs::write(&script, child).unwrap();
    let command = format!(
        "TRACER_CA_DIR={ca} {tracer} run --db {db} -- sh {script}; echo TRACER-EXIT-$?; sleep 60",
        ca = dir.path().join("ca").display(),
        tracer = env!("CARGO_BIN_EXE_tracer"),
        db = dir.path().join("t.db").display(),
        script = script.display(),
    );
    tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-s",
            "run",
            "-x",
            "200",
            "-y",
            "50",
            &command,
        ],
    );
    // `tty` prints its line after READY: wait for the line itself, not the screen of the moment
    // READY appeared (under load the capture came between the two; a pipe says "not a tty").
    let screen = wait_for(&socket, "READY");
    assert!(
        !screen.contains("not a tty"),
        "the child's stdin is the terminal:\n{screen}"
    );
    wait_for(&socket, "/dev/pts/");
    tmux(&socket, &["send-keys", "-t", "run", "C-c"]);
    wait_for(&socket, "INT-1");
    tmux(&socket, &["send-keys", "-t", "run", "milk", "Enter"]);
    let screen = wait_for(&socket, "TRACER-EXIT-");
    tmux(&socket, &["kill-server"]);
    assert!(screen.contains("GOT-milk"), "{screen}");
    assert!(
        screen.contains("INTS-1"),
        "one Ctrl-C, seen once:\n{screen}"
    );
    assert!(screen.contains("TRACER-EXIT-7"), "{screen}");
    assert!(screen.contains("tracer run: recording to"), "{screen}");
    assert!(screen.contains("`sh` exited with 7"), "{screen}");
}
