//! Progress of a long run on stderr (a bar on a terminal, a plain line per item otherwise), and
//! the stop flag that Ctrl-C raises so a run ends after the item in flight.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

use tracer_serve::stop_signal::StopSignals;

/// Bar width in characters.
const BAR: usize = 24;

/// Reports one line (or one redrawn bar) per item.
pub struct Progress {
    tty: bool,
    total: usize,
    done: usize,
    passed: usize,
    noun: &'static str,
}

impl Progress {
    /// `noun` is what the tally counts (`passed`, `as recorded`).
    pub fn new(total: usize, noun: &'static str) -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            total,
            done: 0,
            passed: 0,
            noun,
        }
    }

    fn bar(&self) -> String {
        let filled = (self.done * BAR).checked_div(self.total).unwrap_or(BAR);
        format!("[{}{}]", "#".repeat(filled), ".".repeat(BAR - filled))
    }

    /// An item starts (only a terminal shows it).
    pub fn start(&mut self, label: &str) {
        if self.tty {
            let line = format!("{} {}/{} {label} …", self.bar(), self.done, self.total);
            let mut err = std::io::stderr();
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
        }
    }

    /// An item ended with `verdict`; `ok` counts it in the tally.
    pub fn finish(&mut self, label: &str, verdict: &str, ok: bool) {
        self.done += 1;
        self.passed += usize::from(ok);
        let tally = format!("{} of {} {}", self.passed, self.done, self.noun);
        let mut err = std::io::stderr();
        if self.tty {
            let _ = write!(
                err,
                "\r\x1b[2K{} {}/{} {label}: {verdict} ({tally})",
                self.bar(),
                self.done,
                self.total
            );
            let _ = err.flush();
        } else {
            let _ = writeln!(
                err,
                "[{}/{}] {label}: {verdict} ({tally})",
                self.done, self.total
            );
        }
    }

    /// Ends the bar's line.
    pub fn end(&mut self) {
        if self.tty {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// Runs `one` `times` times in turn (`run 1`, `run 2`, …) with progress on stderr. Each run
/// gives its result, the verdict the progress line shows, and whether it counts in the tally.
/// The runs stop before the next one once `stop` is raised, and at once when it is abandoned.
pub async fn repeat<T, E, F, Fut>(
    times: u32,
    noun: &'static str,
    stop: &StopFlag,
    mut one: F,
) -> Result<Vec<T>, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(T, String, bool), E>>,
{
    let mut progress = Progress::new(times as usize, noun);
    let mut out = Vec::new();
    for run in 1..=times {
        if stop.raised() {
            break;
        }
        let label = format!("run {run}");
        progress.start(&label);
        let (item, verdict, ok) = tokio::select! {
            done = one() => done?,
            () = stop.abandoned() => break,
        };
        progress.finish(&label, &verdict, ok);
        out.push(item);
    }
    progress.end();
    Ok(out)
}

/// Raised by the first stop signal (Ctrl-C, SIGTERM, SIGHUP): the run ends after the item in
/// flight. A second signal abandons that item too.
#[derive(Clone)]
pub struct StopFlag {
    raised: Arc<AtomicBool>,
    abandon: watch::Receiver<bool>,
}

impl StopFlag {
    /// Starts listening now; `what` names what finishes first (`the question in flight`).
    pub fn listen(what: &'static str) -> Self {
        let flag = Arc::new(AtomicBool::new(false));
        let (abandon_tx, abandon) = watch::channel(false);
        let raised = flag.clone();
        let mut signals = StopSignals::listen();
        tokio::spawn(async move {
            let (_, name) = signals.next().await;
            raised.store(true, Ordering::SeqCst);
            tracer_serve::say!("\ntracer: {name}: stopping after {what} (again to stop now)");
            let (_, name) = signals.next().await;
            tracer_serve::say!("\ntracer: {name}: stopping now");
            let _ = abandon_tx.send(true);
        });
        Self {
            raised: flag,
            abandon,
        }
    }

    pub fn raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    /// Resolves at the second stop signal.
    pub async fn abandoned(&self) {
        let mut abandon = self.abandon.clone();
        if abandon.wait_for(|now| *now).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
