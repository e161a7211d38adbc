//! The article's processes as real child processes: notes-server, notes-agent behind
//! `tracer proxy` (agent, model and MCP routes), recording to a database in a temp folder.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;
use tracer::compare::send::{RECORD_WAIT, post_json, wait_for_trace};
use tracer_store::Store;
use tracer_wire::trace_context::TraceParent;

pub const LIMIT: Duration = Duration::from_secs(30);

pub fn free_port() -> u16 {
    crate::free_ports::free_port()
}

/// A child process killed when the test ends.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &str, args: &[String]) -> Running {
    Running(
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program}: {e}")),
    )
}

/// Waits until every port accepts; false when a child exited first (its port was taken by
/// someone else between choosing it and binding it).
fn wait_listening(ports: &[u16], children: &mut [Running]) -> bool {
    let deadline = Instant::now() + LIMIT;
    for &port in ports {
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if children
                .iter_mut()
                .any(|c| matches!(c.0.try_wait(), Ok(Some(_))))
            {
                return false;
            }
            assert!(Instant::now() < deadline, "nothing listens on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    true
}

/// What to put behind the proxy.
pub struct Setup {
    /// The model server's base URL (the scripted model, or a double).
    pub model: String,
    /// An MCP server to use instead of notes-server (still started, for --tools-from).
    pub mcp: Option<String>,
    pub max_steps: u32,
}

pub struct System {
    pub dir: TempDir,
    pub db: PathBuf,
    /// The proxy's agent route (`http://127.0.0.1:P`).
    pub agent: String,
    /// The proxy's model route.
    pub model_route: String,
    /// notes-server itself, not through the proxy.
    pub notes_server: String,
    _children: Vec<Running>,
}

impl System {
    pub fn start(setup: Setup) -> System {
        for _ in 0..3 {
            if let Some(system) = Self::try_start(&setup) {
                return system;
            }
        }
        panic!("the processes did not start three times over");
    }

    fn try_start(setup: &Setup) -> Option<System> {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("tracer.db");
        let notes_file = dir.path().join("notes");
        let [notes_port, agent_port, agent_route, model_route, mcp_route] =
            [(); 5].map(|()| free_port());
        let notes_server = format!("http://127.0.0.1:{notes_port}/mcp");
        let notes = spawn(
            env!("CARGO_BIN_EXE_notes-server"),
            &[
                "--listen".into(),
                format!("127.0.0.1:{notes_port}"),
                "--file".into(),
                notes_file.display().to_string(),
            ],
        );
        let mcp_upstream = setup
            .mcp
            .clone()
            .unwrap_or_else(|| format!("http://127.0.0.1:{notes_port}"));
        let mcp_upstream = mcp_upstream.trim_end_matches("/mcp").to_string();
        let proxy = spawn(
            env!("CARGO_BIN_EXE_tracer"),
            &[
                "--db".into(),
                db.display().to_string(),
                "proxy".into(),
                "--route".into(),
                format!("agent=127.0.0.1:{agent_route}=http://127.0.0.1:{agent_port}"),
                "--route".into(),
                format!("model=127.0.0.1:{model_route}={}", setup.model),
                "--route".into(),
                format!("mcp=127.0.0.1:{mcp_route}={mcp_upstream}"),
            ],
        );
        let agent = spawn(
            env!("CARGO_BIN_EXE_notes-agent"),
            &[
                "--listen".into(),
                format!("127.0.0.1:{agent_port}"),
                "--model-url".into(),
                format!("http://127.0.0.1:{model_route}"),
                "--mcp".into(),
                format!("http://127.0.0.1:{mcp_route}/mcp"),
                "--max-steps".into(),
                setup.max_steps.to_string(),
                "--model-timeout".into(),
                "5".into(),
                "--mcp-timeout".into(),
                "5".into(),
            ],
        );
        let mut children = vec![notes, proxy, agent];
        let ports = [notes_port, agent_port, agent_route, model_route, mcp_route];
        if !wait_listening(&ports, &mut children) {
            return None;
        }
        Some(System {
            dir,
            db,
            agent: format!("http://127.0.0.1:{agent_route}"),
            model_route: format!("http://127.0.0.1:{model_route}"),
            notes_server,
            _children: children,
        })
    }

    /// `POST /agent {"message"}` through the proxy; returns the trace id once it is recorded.
    pub async fn ask(&self, message: &str) -> String {
        let parent = TraceParent::new_root();
        let body = serde_json::to_vec(&serde_json::json!({ "message": message })).unwrap();
        let answer = post_json(&format!("{}/agent", self.agent), body, Some(&parent), LIMIT)
            .await
            .unwrap();
        assert!(
            answer.status < 500,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        let id = parent.trace_id_hex();
        let store = Store::open(&self.db).await.unwrap();
        let trace = wait_for_trace(&store, &id, RECORD_WAIT).await.unwrap();
        store.close().await;
        assert!(trace.is_some(), "trace {id} was not recorded");
        id
    }

    /// Stops the recording proxy (Ctrl-C: it says its routes stopped) and waits for it; the
    /// agent and notes-server keep running.
    pub fn stop_proxy(&mut self) {
        let proxy = &mut self._children[1].0;
        let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        let _ = proxy.wait();
    }

    /// Runs `tracer --db DB ARGS…` to the end.
    pub async fn tracer(&self, args: &[&str]) -> Output {
        tracer_in(&self.db, args).await
    }
}

/// Runs `tracer --db DB ARGS…` without blocking the test's runtime.
pub async fn tracer_in(db: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
    command.arg("--db").arg(db).args(args);
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Stdout as JSON, failing with both streams when it is not.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            stdout(output),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// `tracer --db DB ARGS` as a child process, returned once `model` has been asked something
/// (a run is in flight), ready for a Ctrl-C.
pub async fn tracer_asking(
    db: &Path,
    args: &[&str],
    model: &crate::scripted_model::ScriptedModel,
) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + LIMIT;
    while model.received().is_empty() {
        assert!(Instant::now() < deadline, "the run never reached the model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child
}

/// Sends a child Ctrl-C (SIGINT).
pub fn ctrl_c(child: &Child) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
}

/// Waits for a child off the runtime's threads and returns what it printed.
pub async fn output_of(child: Child) -> Output {
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap()
}
