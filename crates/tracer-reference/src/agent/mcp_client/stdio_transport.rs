//! MCP over stdio: the server process is spawned on first use and kept (respawned if it dies).
//! One JSON-RPC message per line; a reader task routes responses to their waiting requests by
//! id and answers the server's `ping`. The era is probed once per process with
//! `server/discover` (an answer or -32022 means modern; another error or silence means legacy,
//! which then gets `initialize` and `notifications/initialized`). On shutdown the server's stdin
//! is closed first and it is killed only if it does not exit.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Mutex, Notify, mpsc, oneshot};

use super::{
    Peer, initialize_request, initialize_result, legacy_meta, modern_meta, server_info_name,
    with_meta,
};
use crate::agent::outbound;
use crate::agent::upstream_error::{FailureKind, UpstreamError, error_chain};
use tracer_wire::agent_api::Upstream;
use tracer_wire::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response};
use tracer_wire::mcp::{self, DiscoverResult, Era, version};
use tracer_wire::stream::NdjsonDecoder;
use tracer_wire::trace_context::TraceContext;

/// The longest the era probe waits before taking silence as "legacy".
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

type Pending = Arc<StdMutex<HashMap<RequestId, oneshot::Sender<Response>>>>;

/// A running server process and what the handshake learned.
struct Process {
    lines: mpsc::Sender<Vec<u8>>,
    pending: Pending,
    alive: Arc<AtomicBool>,
    era: Era,
    server_name: Option<String>,
    /// Tells the writer to close the server's stdin (the polite way to ask it to exit).
    close_stdin: Arc<Notify>,
    /// Taken by [`StdioTransport::shutdown`]; otherwise the process is killed when dropped.
    child: Mutex<Option<Child>>,
}

pub(super) struct StdioTransport {
    program: String,
    args: Vec<String>,
    timeout: Duration,
    peer: Peer,
    process: Mutex<Option<Arc<Process>>>,
}

impl StdioTransport {
    pub(super) fn new(
        program: String,
        args: Vec<String>,
        timeout: Duration,
        upstream: Upstream,
    ) -> Self {
        Self {
            program,
            args,
            timeout,
            peer: Peer::new(upstream),
            process: Mutex::new(None),
        }
    }

    pub(super) fn upstream(&self) -> &Upstream {
        &self.peer.upstream
    }

    pub(super) async fn server_name(&self) -> Option<String> {
        self.process
            .lock()
            .await
            .as_ref()
            .and_then(|p| p.server_name.clone())
    }

    /// Stops the server the way the spec asks: close its stdin, give it `grace` to exit, then
    /// kill it.
    pub(super) async fn shutdown(&self, grace: Duration) {
        let Some(process) = self.process.lock().await.take() else {
            return;
        };
        process.close_stdin.notify_one();
        let Some(mut child) = process.child.lock().await.take() else {
            return;
        };
        if tokio::time::timeout(grace, child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }

    pub(super) async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        trace: &TraceContext,
    ) -> Result<Response, UpstreamError> {
        let process = self.running_process(trace).await?;
        let trace = trace.child();
        let meta = match process.era {
            Era::Modern => modern_meta(&trace),
            Era::Legacy => legacy_meta(&trace),
        };
        let request = Request::new(self.peer.id(), method, Some(with_meta(&params, meta)));
        self.exchange(&process, request, self.timeout).await
    }

    /// The kept process, or a newly spawned one after its handshake.
    async fn running_process(&self, trace: &TraceContext) -> Result<Arc<Process>, UpstreamError> {
        let mut slot = self.process.lock().await;
        if let Some(process) = slot.as_ref()
            && process.alive.load(Ordering::SeqCst)
        {
            return Ok(process.clone());
        }
        *slot = None;
        let process = Arc::new(self.spawn_and_handshake(trace).await?);
        *slot = Some(process.clone());
        Ok(process)
    }

    async fn spawn_and_handshake(&self, trace: &TraceContext) -> Result<Process, UpstreamError> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                self.peer.error(
                    FailureKind::Unreachable,
                    format!("could not start it: {}", error_chain(&e)),
                )
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(self.peer.error(
                FailureKind::Unreachable,
                "its stdin/stdout could not be opened".into(),
            ));
        };
        let pending: Pending = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let (lines, lines_rx) = mpsc::channel::<Vec<u8>>(64);
        let close_stdin = Arc::new(Notify::new());
        tokio::spawn(write_lines(stdin, lines_rx, close_stdin.clone()));
        tokio::spawn(read_lines(
            stdout,
            pending.clone(),
            alive.clone(),
            lines.clone(),
        ));
        let mut process = Process {
            lines,
            pending,
            alive,
            era: Era::Modern,
            server_name: None,
            close_stdin,
            child: Mutex::new(Some(child)),
        };

        let probe_trace = trace.child();
        let discover = Request::new(
            self.peer.id(),
            mcp::method::SERVER_DISCOVER,
            Some(with_meta(&Map::new(), modern_meta(&probe_trace))),
        );
        let probe = self
            .exchange(&process, discover, PROBE_TIMEOUT.min(self.timeout))
            .await;
        let modern = match probe {
            Ok(response) => match response.into_result() {
                Ok(result) => {
                    let discovered: Option<DiscoverResult> = serde_json::from_value(result).ok();
                    process.server_name =
                        discovered.and_then(|d| server_info_name(d.meta.as_ref()));
                    true
                }
                Err(error) if error.code == mcp::code::UNSUPPORTED_PROTOCOL_VERSION => {
                    !offers_legacy(&error)
                }
                Err(_) => false,
            },
            Err(error) if error.kind == FailureKind::Timeout => false,
            Err(error) => return Err(error),
        };
        if modern {
            return Ok(process);
        }
        process.era = Era::Legacy;
        let initialize = initialize_request(self.peer.id(), &trace.child());
        let response = self.exchange(&process, initialize, self.timeout).await?;
        let init = initialize_result(response, |detail| self.peer.failed(detail))?;
        process.server_name = Some(init.server_info.name);
        let note = Notification::new(mcp::method::INITIALIZED, None);
        send_line(&process, &note)
            .await
            .map_err(|detail| self.peer.error(FailureKind::Unreachable, detail))?;
        Ok(process)
    }

    /// Sends a request and waits for the response with the same id.
    async fn exchange(
        &self,
        process: &Process,
        request: Request,
        timeout: Duration,
    ) -> Result<Response, UpstreamError> {
        let (tx, rx) = oneshot::channel();
        let id = request.id.clone();
        if let Ok(mut pending) = process.pending.lock() {
            pending.insert(id.clone(), tx);
        }
        send_line(process, &request)
            .await
            .map_err(|detail| self.peer.error(FailureKind::Unreachable, detail))?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(_)) => Err(self.peer.error(
                FailureKind::Unreachable,
                format!("the process exited before answering {}", request.method),
            )),
            Err(_) => {
                if let Ok(mut pending) = process.pending.lock() {
                    pending.remove(&id);
                }
                Err(self.peer.error(
                    FailureKind::Timeout,
                    format!(
                        "{} got no answer within {}",
                        request.method,
                        outbound::seconds(timeout)
                    ),
                ))
            }
        }
    }
}

/// A -32022 that lists a handshake-era version: the server speaks legacy too.
fn offers_legacy(error: &ErrorObject) -> bool {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .is_some_and(|versions| {
            versions
                .iter()
                .filter_map(Value::as_str)
                .any(|v| version::LEGACY.contains(&v))
        })
}

async fn send_line(process: &Process, message: &impl serde::Serialize) -> Result<(), String> {
    let line = serde_json::to_vec(message).map_err(|e| e.to_string())?;
    if !process.alive.load(Ordering::SeqCst) {
        return Err("the process has exited".to_string());
    }
    process
        .lines
        .send(line)
        .await
        .map_err(|_| "the process's stdin is closed".to_string())
}

async fn write_lines(
    mut stdin: ChildStdin,
    mut lines: mpsc::Receiver<Vec<u8>>,
    close: Arc<Notify>,
) {
    loop {
        let mut line = tokio::select! {
            line = lines.recv() => match line {
                Some(line) => line,
                None => break,
            },
            () = close.notified() => break,
        };
        line.push(b'\n');
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Routes each response line to its waiting request; answers `ping`; refuses other server
/// requests (this host offers no client capabilities). On EOF, fails everything still waiting.
async fn read_lines(
    mut stdout: ChildStdout,
    pending: Pending,
    alive: Arc<AtomicBool>,
    lines: mpsc::Sender<Vec<u8>>,
) {
    let mut decoder = NdjsonDecoder::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let read = match stdout.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for line in decoder.push(&buf[..read]) {
            match serde_json::from_slice::<Message>(&line) {
                Ok(Message::Response(response)) => {
                    let waiter = response
                        .id
                        .as_ref()
                        .and_then(|id| pending.lock().ok()?.remove(id));
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(response);
                    }
                }
                Ok(Message::Request(request)) => {
                    let answer = if request.method == mcp::method::PING {
                        Response::result(request.id, Value::Object(Map::new()))
                    } else {
                        Response::error(
                            Some(request.id),
                            ErrorObject::method_not_found(&request.method),
                        )
                    };
                    if let Ok(line) = serde_json::to_vec(&answer) {
                        let _ = lines.send(line).await;
                    }
                }
                Ok(Message::Notification(_)) => {}
                Err(error) => {
                    tracing::warn!(%error, "an MCP stdio server wrote a line that is not JSON-RPC")
                }
            }
        }
    }
    alive.store(false, Ordering::SeqCst);
    if let Ok(mut pending) = pending.lock() {
        pending.clear();
    }
}
