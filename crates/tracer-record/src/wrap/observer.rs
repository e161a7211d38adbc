//! Turns the JSON-RPC lines seen on a wrapped server's stdin and stdout into hop events: a request
//! and its response make one hop, in either direction; notifications, stray responses and lines
//! that are not JSON-RPC make one-message hops.

use std::collections::HashMap;

use serde_json::Value;

use tracer_wire::hop::{BodyCapture, Chunk, HopEnd, HopEvent, HopStart, HopState, Role, Transport};
use tracer_wire::ids::hop_id;
use tracer_wire::jsonrpc::{Body, Message, RequestId, parse_body};

/// The notification that withdraws a request (MCP `notifications/cancelled`).
const CANCELLED: &str = "notifications/cancelled";

/// Which way a line travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Direction {
    /// The host wrote it to the server's stdin.
    ClientToServer,
    /// The server wrote it to its stdout.
    ServerToClient,
}

impl Direction {
    /// The label stored as the hop's path: who asked whom.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client→server",
            Direction::ServerToClient => "server→client",
        }
    }

    fn other(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }
}

struct Pending {
    id: String,
    started_unix_ns: i64,
    request: BodyCapture,
}

/// Pairs requests with responses for one wrapped server.
pub(crate) struct StdioObserver {
    name: String,
    command: String,
    max_body: usize,
    /// Secret JSON fields are redacted in the kept copy (the default; `--no-redact` turns it off).
    redact: bool,
    pending: HashMap<(Direction, String), Pending>,
}

impl StdioObserver {
    pub(crate) fn new(name: &str, command: &str, max_body: usize) -> Self {
        Self {
            name: name.to_string(),
            command: command.to_string(),
            max_body,
            redact: true,
            pending: HashMap::new(),
        }
    }

    /// Whether the kept copies are redacted (`--no-redact` keeps them byte-exact).
    pub(crate) fn redacting(mut self, redact: bool) -> Self {
        self.redact = redact;
        self
    }

    /// Requests still waiting for their response.
    #[cfg(test)]
    fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Observes one complete line (without its line end) seen at `at_unix_ns`.
    pub(crate) fn on_line(
        &mut self,
        direction: Direction,
        line: &[u8],
        at_unix_ns: i64,
    ) -> Vec<HopEvent> {
        let mut events = Vec::new();
        match parse_body(line) {
            Err(error) => {
                let reason = format!("not JSON-RPC: {}", error.message);
                self.single(
                    &mut events,
                    direction,
                    "(invalid)",
                    line,
                    at_unix_ns,
                    Some(reason),
                );
            }
            Ok(Body::Single(message)) => {
                self.message(&mut events, direction, message, line.to_vec(), at_unix_ns);
            }
            Ok(Body::Batch(messages)) => {
                let raw: Vec<Value> = serde_json::from_slice(line).unwrap_or_default();
                for (i, message) in messages.into_iter().enumerate() {
                    let bytes = raw
                        .get(i)
                        .and_then(|v| serde_json::to_vec(v).ok())
                        .unwrap_or_default();
                    self.message(&mut events, direction, message, bytes, at_unix_ns);
                }
            }
        }
        events
    }

    /// Ends every request still waiting: the server or the host went away.
    pub(crate) fn finish(&mut self, reason: &str, at_unix_ns: i64) -> Vec<HopEvent> {
        self.pending
            .drain()
            .map(|(_, pending)| {
                HopEvent::Ended(Box::new(HopEnd {
                    id: pending.id,
                    state: Some(HopState::Aborted),
                    request_body: pending.request,
                    request_ended_unix_ns: Some(pending.started_unix_ns),
                    response_ended_unix_ns: Some(at_unix_ns),
                    error: Some(reason.to_string()),
                    ..HopEnd::default()
                }))
            })
            .collect()
    }

    fn message(
        &mut self,
        events: &mut Vec<HopEvent>,
        direction: Direction,
        message: Result<Message, tracer_wire::jsonrpc::InvalidMessage>,
        bytes: Vec<u8>,
        at: i64,
    ) {
        match message {
            Err(invalid) => {
                let reason = format!("not JSON-RPC: {}", invalid.error.message);
                self.single(events, direction, "(invalid)", &bytes, at, Some(reason));
            }
            Ok(Message::Notification(notification)) => {
                if notification.method == CANCELLED {
                    self.cancel(events, direction, notification.params.as_ref(), at);
                }
                self.single(events, direction, &notification.method, &bytes, at, None);
            }
            Ok(Message::Request(request)) => {
                let id = hop_id();
                events.push(HopEvent::Started(Box::new(self.start(
                    &id,
                    direction,
                    &request.method,
                    at,
                ))));
                let key = (direction, id_key(&request.id));
                if let Some(replaced) = self.pending.insert(
                    key,
                    Pending {
                        id,
                        started_unix_ns: at,
                        request: capture(&bytes, self.max_body, self.redact),
                    },
                ) {
                    events.push(HopEvent::Ended(Box::new(HopEnd {
                        id: replaced.id,
                        state: Some(HopState::Aborted),
                        request_body: replaced.request,
                        request_ended_unix_ns: Some(replaced.started_unix_ns),
                        error: Some("a new request reused this request's id".into()),
                        ..HopEnd::default()
                    })));
                }
            }
            Ok(Message::Response(response)) => {
                let key = response.id.as_ref().map(id_key);
                let pending = key.and_then(|key| self.pending.remove(&(direction.other(), key)));
                match pending {
                    Some(pending) => events.push(HopEvent::Ended(Box::new(HopEnd {
                        id: pending.id,
                        state: Some(HopState::Complete),
                        request_body: pending.request,
                        response_body: capture(&bytes, self.max_body, self.redact),
                        request_ended_unix_ns: Some(pending.started_unix_ns),
                        response_head_unix_ns: Some(at),
                        response_first_byte_unix_ns: Some(at),
                        response_ended_unix_ns: Some(at),
                        chunks: vec![Chunk {
                            offset_ns: at - pending.started_unix_ns,
                            size: bytes.len() as u64,
                        }],
                        ..HopEnd::default()
                    }))),
                    None => self.single(
                        events,
                        direction,
                        "(response)",
                        &bytes,
                        at,
                        Some("a response to no request seen".into()),
                    ),
                }
            }
        }
    }

    /// The requester gave up on a request: the server must not answer it, so its hop ends now.
    fn cancel(
        &mut self,
        events: &mut Vec<HopEvent>,
        direction: Direction,
        params: Option<&Value>,
        at: i64,
    ) {
        let Some(id) = params
            .and_then(|p| p.get("requestId"))
            .and_then(RequestId::from_value)
        else {
            return;
        };
        if let Some(pending) = self.pending.remove(&(direction, id_key(&id))) {
            let reason = params
                .and_then(|p| p.get("reason"))
                .and_then(Value::as_str)
                .map_or_else(
                    || "cancelled by the requester".to_string(),
                    |r| format!("cancelled by the requester: {r}"),
                );
            events.push(HopEvent::Ended(Box::new(HopEnd {
                id: pending.id,
                state: Some(HopState::Aborted),
                request_body: pending.request,
                request_ended_unix_ns: Some(pending.started_unix_ns),
                response_ended_unix_ns: Some(at),
                error: Some(reason),
                ..HopEnd::default()
            })));
        }
    }

    /// A one-message hop: started and ended at once, the line as its request body.
    fn single(
        &self,
        events: &mut Vec<HopEvent>,
        direction: Direction,
        method: &str,
        bytes: &[u8],
        at: i64,
        error: Option<String>,
    ) {
        let id = hop_id();
        events.push(HopEvent::Started(Box::new(
            self.start(&id, direction, method, at),
        )));
        events.push(HopEvent::Ended(Box::new(HopEnd {
            id,
            state: Some(HopState::Complete),
            request_body: capture(bytes, self.max_body, self.redact),
            request_ended_unix_ns: Some(at),
            response_ended_unix_ns: Some(at),
            error,
            ..HopEnd::default()
        })));
    }

    fn start(&self, id: &str, direction: Direction, method: &str, at: i64) -> HopStart {
        HopStart {
            id: id.to_string(),
            route: self.name.clone(),
            role: Role::Mcp,
            transport: Transport::Stdio,
            peer: self.command.clone(),
            method: method.to_string(),
            path: direction.label().to_string(),
            url: format!("stdio://{}", self.name),
            request_headers: Vec::new(),
            started_unix_ns: at,
            run_id: None,
        }
    }
}

fn id_key(id: &RequestId) -> String {
    id.to_value().to_string()
}

fn capture(bytes: &[u8], max_body: usize, redact: bool) -> BodyCapture {
    let keep = bytes.len().min(max_body);
    BodyCapture {
        bytes: if redact {
            tracer_wire::redact::redact_json_bytes(&bytes[..keep])
        } else {
            bytes[..keep].to_vec()
        },
        total_len: bytes.len() as u64,
        truncated: keep < bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ClientToServer, ServerToClient};

    fn ends(events: &[HopEvent]) -> Vec<&HopEnd> {
        events
            .iter()
            .filter_map(|e| match e {
                HopEvent::Ended(end) => Some(end.as_ref()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_request_and_its_response_are_one_hop() {
        let mut observer = StdioObserver::new("notes", "notes-server --stdio", 1024);
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}}"#;
        let events = observer.on_line(ClientToServer, request, 10);
        let HopEvent::Started(start) = &events[0] else {
            panic!("{events:?}")
        };
        assert_eq!(
            (start.method.as_str(), start.path.as_str()),
            ("tools/call", "client→server")
        );
        assert_eq!(start.transport, Transport::Stdio);
        assert_eq!(observer.pending(), 1);
        let response = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        let events = observer.on_line(ServerToClient, response, 25);
        let end = ends(&events)[0];
        assert_eq!(end.id, start.id);
        assert_eq!(end.request_body.bytes, request);
        assert_eq!(end.response_body.bytes, response);
        assert_eq!(end.chunks[0].offset_ns, 15);
        assert_eq!(observer.pending(), 0);
    }

    #[test]
    fn server_requests_notifications_batches_and_garbage_are_all_recorded() {
        let mut observer = StdioObserver::new("s", "s", 1024);
        let ping = observer.on_line(
            ServerToClient,
            br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
            1,
        );
        let HopEvent::Started(start) = &ping[0] else {
            panic!()
        };
        assert_eq!(start.path, "server→client");
        let pong = observer.on_line(
            ClientToServer,
            br#"{"jsonrpc":"2.0","id":"p","result":{}}"#,
            2,
        );
        assert_eq!(ends(&pong)[0].state, Some(HopState::Complete));

        let note = observer.on_line(
            ClientToServer,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            3,
        );
        assert_eq!(note.len(), 2, "a notification is a one-message hop");

        let batch =
            br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]"#;
        let events = observer.on_line(ClientToServer, batch, 4);
        assert_eq!(events.len(), 2);
        assert_eq!(observer.pending(), 2);

        let garbage = observer.on_line(ServerToClient, b"Starting server...", 5);
        let end = ends(&garbage)[0];
        assert!(end.error.as_deref().unwrap().starts_with("not JSON-RPC"));
        assert_eq!(end.request_body.bytes, b"Starting server...");

        let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"too slow"}}"#;
        let events = observer.on_line(ClientToServer, cancel, 6);
        let cancelled = ends(&events)[0];
        assert_eq!(cancelled.state, Some(HopState::Aborted));
        assert_eq!(
            cancelled.error.as_deref(),
            Some("cancelled by the requester: too slow")
        );
        assert_eq!(
            observer.pending(),
            1,
            "the cancelled request no longer waits"
        );

        let left = observer.finish("server exited before answering", 7);
        assert_eq!(left.len(), 1);
        assert_eq!(ends(&left)[0].state, Some(HopState::Aborted));
    }
}
