//! The TUI on the recorded database, driven in-process as `tracer tui` drives it (`App`,
//! `Effects` on tokio, a `TestBackend` terminal): the time to the first frame, to the long trace
//! opened (its numbered messages loaded and drawn), and a scroll step at its top and bottom. It
//! runs in a re-executed child (`--tui-child`) under the measurer, so its peak RSS is its own.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tracer::tui::action::Action;
use tracer::tui::app::App;
use tracer::tui::effects::Effects;
use tracer::tui::view;
use tracer_store::Store;

use super::readers::verdict;

/// Scroll steps averaged at each end of the trace.
const STEPS: u32 = 20;

/// How long any one wait for background work may take before the run is given up.
const PATIENCE: Duration = Duration::from_secs(900);

/// Runs the child under the measurer and prints the TUI's figures beside their goals.
pub fn run(dir: &Path, db: &Path, id: &str) -> Result<()> {
    let out = dir.join("tui.out");
    let exe = std::env::current_exe()?;
    let output = Command::new(&exe)
        .arg("--measure-child")
        .arg(&out)
        .arg(&exe)
        .arg("--tui-child")
        .arg(db)
        .arg(id)
        .output()?;
    if !output.status.success() {
        bail!(
            "the TUI run failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let kib: f64 = String::from_utf8_lossy(&output.stdout).trim().parse()?;
    let figures: Value = serde_json::from_slice(&std::fs::read(&out)?).context("tui figures")?;
    let ms = |name: &str| figures[name].as_f64().unwrap_or(f64::NAN);
    let (first, open) = (ms("first_frame_ms"), ms("open_ms"));
    println!(
        "{:<34} {:>9.1} ms    <= 300 ms   {}",
        "tui: first frame (trace list)",
        first,
        verdict(first <= 300.0)
    );
    println!(
        "{:<34} {:>9.1} ms    <= 500 ms   {}  ({} messages)",
        "tui: open the long trace",
        open,
        verdict(open <= 500.0),
        figures["messages"]
    );
    println!(
        "{:<34} {:>9.1} ms    (no goal: the view built on the render loop)",
        "tui: of which the view's update",
        ms("on_loop_ms")
    );
    let (top, bottom) = (ms("top_ms"), ms("bottom_ms"));
    println!("{:<34} {:>9.2} ms", "tui: scroll step at its top", top);
    let ratio = bottom / top;
    println!(
        "{:<34} {:>9.2} ms    independent of length: bottom/top {ratio:.2}x (<= 2x)  {}",
        "tui: scroll step at its bottom",
        bottom,
        verdict(ratio <= 2.0)
    );
    println!(
        "{:<34} {:>9.1} MiB   (no goal)",
        "tui: peak RSS",
        kib / 1024.0
    );
    Ok(())
}

/// Hidden mode `--tui-child DB TRACE_ID`: measures, then prints the figures as JSON.
pub fn child(argv: &[String]) -> ExitCode {
    let [db, id] = argv else {
        eprintln!("--tui-child DB TRACE_ID");
        return ExitCode::FAILURE;
    };
    let measured = tokio::runtime::Runtime::new()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(measure(Path::new(db), id)));
    match measured {
        Ok(figures) => {
            println!("{figures}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tui: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn key(code: KeyCode) -> Action {
    Action::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// The TUI as its loop runs it: each action updated, its effects spawned, a frame drawn.
struct Driven {
    app: App,
    effects: Effects,
    actions: UnboundedReceiver<Action>,
    terminal: Terminal<TestBackend>,
}

impl Driven {
    fn apply(&mut self, action: Action) -> Result<()> {
        for effect in self.app.update(action) {
            self.effects.spawn(effect);
        }
        self.terminal
            .draw(|frame| view::render(&mut self.app, frame))?;
        Ok(())
    }

    /// The next result of background work (a failure ends the run).
    async fn next(&mut self) -> Result<Action> {
        let action = tokio::time::timeout(PATIENCE, self.actions.recv())
            .await
            .context("the TUI waited too long for the store")?
            .context("the effects' channel closed")?;
        if let Action::Failed(message) = &action {
            bail!("the TUI says: {message}");
        }
        Ok(action)
    }

    /// The average time of `STEPS` presses of `code`, each updated and drawn.
    fn scroll(&mut self, code: KeyCode) -> Result<f64> {
        let started = Instant::now();
        for _ in 0..STEPS {
            self.apply(key(code))?;
        }
        Ok(started.elapsed().as_secs_f64() * 1000.0 / f64::from(STEPS))
    }
}

async fn measure(db: &Path, id: &str) -> Result<Value> {
    let export_dir = tempfile::tempdir()?;
    let started = Instant::now();
    let store = Store::open_existing(db).await?;
    let (sender, actions) = unbounded_channel();
    let mut tui = Driven {
        app: App::browser(db.display().to_string()),
        effects: Effects::new(Some(store.clone()), export_dir.path().to_path_buf(), sender),
        actions,
        terminal: Terminal::new(TestBackend::new(120, 40))?,
    };
    for effect in tui.app.start() {
        tui.effects.spawn(effect);
    }
    // The list: the first frame with rows, then on until the whole list and its facts are in.
    let (mut first_frame, mut whole) = (None, false);
    while !whole || !tui.app.list.pending.is_empty() {
        let action = tui.next().await?;
        whole |= matches!(action, Action::TracesLoaded { partial: false, .. });
        tui.apply(action)?;
        if first_frame.is_none() && !tui.app.list.rows.is_empty() {
            first_frame = Some(started.elapsed());
        }
    }
    let first_frame = first_frame.context("the TUI listed no trace")?;
    let list = &tui.app.list;
    let index = list
        .shown
        .iter()
        .position(|&i| list.rows[i].id == id)
        .context("the long trace is not in the TUI's list")?;
    tui.app.list.select(index);
    tui.apply(Action::Resize)?;
    // Open it: from the key to the frame that draws its numbered messages.
    let opening = Instant::now();
    tui.apply(key(KeyCode::Enter))?;
    let mut on_loop = Duration::ZERO;
    loop {
        let action = tui.next().await?;
        let loaded = matches!(&action, Action::TraceLoaded { trace_id, .. } if trace_id == id);
        let applying = Instant::now();
        tui.apply(action)?;
        if loaded {
            // The view is built in `update`, on the render loop: that part of opening blocks it.
            on_loop = applying.elapsed();
        }
        if loaded && tui.app.view.as_ref().is_some_and(|v| v.trace_id == id) {
            break;
        }
    }
    let open = opening.elapsed();
    let messages = tui.app.view.as_ref().map_or(0, |v| v.messages.len());
    tui.apply(key(KeyCode::Char('g')))?;
    let top = tui.scroll(KeyCode::Down)?;
    tui.app.update(key(KeyCode::Char('G')));
    for _ in 0..STEPS {
        tui.app.update(key(KeyCode::Up));
    }
    tui.apply(Action::Resize)?;
    let bottom = tui.scroll(KeyCode::Down)?;
    store.close().await;
    Ok(json!({
        "first_frame_ms": first_frame.as_secs_f64() * 1000.0,
        "open_ms": open.as_secs_f64() * 1000.0,
        "on_loop_ms": on_loop.as_secs_f64() * 1000.0,
        "messages": messages,
        "top_ms": top,
        "bottom_ms": bottom,
    }))
}
