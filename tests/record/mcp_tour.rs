//! The MCP tour, recorded: the MCP Python SDK client (tests/interop/mcp_tour.py) drove
//! `@modelcontextprotocol/server-everything` through every feature, over stdio through
//! `tracer wrap` and over Streamable HTTP through a `tracer proxy` mcp route, and logged every
//! message it sent and received (tests/fixtures/mcp-tour/*-client.ndjson). For each feature:
//! who sent the message, what it pairs with, its number and its words; and on both transports
//! the messages tracer shows are exactly the messages the client logged.

use std::collections::BTreeMap;
use std::path::Path;

use tracer_export::hop_log::HopLog;
use tracer_trace::explain::mcp::messages::{Side, message_of_explained};
use tracer_trace::{ExplainedMessage, RecordedHop, explain_trace};
use tracer_wire::dialect::{HopReading, JsonRpcKind};

pub(crate) struct Tour {
    hops: Vec<RecordedHop>,
    readings: Vec<HopReading>,
    messages: Vec<ExplainedMessage>,
    log: HopLog,
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp-tour")
        .join(name)
}

fn tour(transport: &str) -> Tour {
    let bytes = std::fs::read(fixture(&format!("{transport}.json"))).unwrap();
    Tour::of_hop_log(&bytes)
}

impl Tour {
    /// A hop log (`tracer show --json`), re-explained.
    pub(crate) fn of_hop_log(bytes: &[u8]) -> Tour {
        let log = HopLog::from_file(bytes).unwrap();
        let hops = log.recorded_hops();
        let readings = hops.iter().map(RecordedHop::reading).collect();
        let messages = explain_trace(&hops);
        Tour {
            hops,
            readings,
            messages,
            log,
        }
    }
}

/// What a message is: its method, or `result` / `error`.
fn kind_of(method: Option<&str>, kind: JsonRpcKind) -> String {
    match (method, kind) {
        (_, JsonRpcKind::Result) => "result".into(),
        (_, JsonRpcKind::Error) => "error".into(),
        (Some(method), _) => method.into(),
        (None, _) => "invalid".into(),
    }
}

impl Tour {
    /// Every JSON-RPC message tracer shows, as (`sent` by the host | `received` from the
    /// server, its kind), in order.
    pub(crate) fn json_rpc(&self) -> Vec<(String, String)> {
        self.messages
            .iter()
            .filter_map(|m| {
                let (hop, reading) = (&self.hops[m.hop_index], &self.readings[m.hop_index]);
                let (message, side) = message_of_explained(hop, reading, m)?;
                let way = if side == Side::Host {
                    "sent"
                } else {
                    "received"
                };
                Some((
                    way.to_string(),
                    kind_of(message.method.as_deref(), message.kind),
                ))
            })
            .collect()
    }

    /// The first message whose summary holds `needle`.
    fn find(&self, needle: &str) -> &ExplainedMessage {
        self.messages
            .iter()
            .find(|m| m.summary.contains(needle))
            .unwrap_or_else(|| panic!("no message says {needle:?}:\n{}", self.lines()))
    }

    fn all(&self, needle: &str) -> Vec<&ExplainedMessage> {
        self.messages
            .iter()
            .filter(|m| m.summary.contains(needle))
            .collect()
    }

    fn lines(&self) -> String {
        self.messages
            .iter()
            .map(|m| format!("{}\n      {}", m.line(), m.explanation))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The client's log: (`sent` | `received`, kind) per message, in order.
fn client_log(transport: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fixture(&format!("{transport}-client.ndjson"))).unwrap();
    client_log_of(&text)
}

/// A client log's (`sent` | `received`, kind) per message, in order.
pub(crate) fn client_log_of(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            let message = &entry["message"];
            let kind = if message.get("result").is_some() {
                "result".to_string()
            } else if message.get("error").is_some() {
                "error".to_string()
            } else {
                message["method"].as_str().unwrap().to_string()
            };
            (entry["way"].as_str().unwrap().to_string(), kind)
        })
        .collect()
}

pub(crate) fn counted(items: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    for item in items {
        *out.entry(item.clone()).or_insert(0) += 1;
    }
    out
}

#[test]
fn every_message_the_client_logged_is_shown_once_the_right_way_on_both_transports() {
    for transport in ["stdio", "http"] {
        let tour = tour(transport);
        let shown = tour.json_rpc();
        let logged = client_log(transport);
        assert_eq!(shown.len(), logged.len(), "{transport}:\n{}", tour.lines());
        assert_eq!(counted(&shown), counted(&logged), "{transport}");
        // Numbered 1..M with nothing left out; the only other lines are HTTP's transport moves.
        let numbers: Vec<usize> = tour.messages.iter().map(|m| m.number).collect();
        assert_eq!(numbers, (1..=tour.messages.len()).collect::<Vec<_>>());
        let transport_lines = tour.messages.len() - shown.len();
        let expected = if transport == "stdio" { 0 } else { 3 }; // GET, DELETE and its answer
        assert_eq!(transport_lines, expected, "{transport}:\n{}", tour.lines());
        assert_eq!(
            tour.log.trace().message_count,
            tour.messages.len(),
            "{transport}: the trace counts what it shows"
        );
    }
}

#[test]
fn the_servers_requests_point_from_the_server_and_their_answers_pair_with_them() {
    for transport in ["stdio", "http"] {
        let tour = tour(transport);
        for (asks, answer, words) in [
            (
                "the server asks the host's model to write",
                "the host's model wrote",
                "sampling",
            ),
            (
                "the server asks the user: \"Please provide inputs",
                "the user accepted: {",
                "elicitation",
            ),
            (
                "the server asks the user to open https://example.com/login",
                "the user accepted",
                "elicitation",
            ),
            (
                "the server asks for the host's roots",
                "1 root: file:///work/project",
                "roots",
            ),
        ] {
            let request = tour.find(asks);
            assert_eq!(
                (request.from.as_str(), request.to.as_str()),
                ("everything", "agent"),
                "{transport} {asks}"
            );
            let reply = tour
                .messages
                .iter()
                .find(|m| m.number > request.number && m.summary.starts_with(answer))
                .unwrap_or_else(|| panic!("{transport}: no answer to {asks}\n{}", tour.lines()));
            assert_eq!(
                (reply.from.as_str(), reply.to.as_str()),
                ("agent", "everything"),
                "{transport} {answer}"
            );
            assert!(
                reply.explanation.contains(&format!("({})", request.number)),
                "{transport}: the {words} answer names request {}: {}",
                request.number,
                reply.explanation
            );
            if transport == "stdio" {
                assert_eq!(reply.hop_number, request.number, "one hop on stdio");
            } else {
                assert!(
                    reply.explanation.contains("202 and no body"),
                    "{}",
                    reply.explanation
                );
            }
        }
        let sampling = tour.find("the server asks the host's model to write");
        assert!(
            sampling.explanation.contains("up to 20 tokens"),
            "{}",
            sampling.explanation
        );
        let url = tour.find("the server asks the user to open");
        assert!(url.explanation.contains("URL mode"), "{}", url.explanation);
    }
}

#[test]
fn notifications_are_one_message_tied_to_what_they_are_about() {
    for transport in ["stdio", "http"] {
        let tour = tour(transport);
        let long_call = tour.find("tools/call trigger-long-running-operation {\"duration\":1");
        let progress = tour.all("progress ");
        assert_eq!(progress.len(), 3, "{transport}");
        for (step, message) in progress.iter().enumerate() {
            assert_eq!(
                message.summary,
                format!("progress {}/3 on {}", step + 1, long_call.number),
                "{transport}"
            );
            assert_eq!(
                (message.from.as_str(), message.to.as_str()),
                ("everything", "agent")
            );
            assert!(message.number > long_call.number);
            assert!(message.explanation.contains("progressToken"));
        }
        let withdrawn = tour.find("tools/call trigger-long-running-operation {\"duration\":5");
        let cancel = tour.find("withdraws");
        assert_eq!(
            cancel.summary,
            format!("withdraws {}: caller cancelled", withdrawn.number)
        );
        assert!(
            cancel.explanation.contains("cancelled by the host"),
            "{}",
            cancel.explanation
        );
        assert!(
            !tour
                .messages
                .iter()
                .any(|m| m.hop_index == withdrawn.hop_index && m.number != withdrawn.number),
            "{transport}: the withdrawn call has no answer, aborted or otherwise\n{}",
            tour.lines()
        );
        for (needle, _why) in [
            ("log info", "The host's logs"),
            (
                "resource demo://resource/dynamic/text/1 changed",
                "subscribed",
            ),
            ("the resources list changed", "list of resources"),
            ("task ", "task"),
        ] {
            let message = tour.find(needle);
            assert_eq!(
                (message.from.as_str(), message.to.as_str()),
                ("everything", "agent"),
                "{transport} {needle}"
            );
        }
        let log = tour.find("log info");
        assert!(
            log.explanation.contains("not for the model"),
            "{}",
            log.explanation
        );
        let status = tour
            .all("task ")
            .into_iter()
            .find(|m| m.case.name() == "mcp_task_status")
            .unwrap();
        assert!(
            status.summary.contains(": working (\""),
            "{}",
            status.summary
        );
        let initialized = tour.find("notifications/initialized");
        let roots_changed = tour.find("the host's roots changed");
        if transport == "stdio" {
            assert!(
                initialized
                    .explanation
                    .ends_with("On stdio it is one line, and nothing comes back.")
            );
            for message in &tour.messages {
                let words = format!("{} {}", message.summary, message.explanation);
                for http in ["202 ", "Accepted", "session id", "Mcp-Session-Id", "HTTP"] {
                    assert!(
                        !words.contains(http),
                        "HTTP words ({http}) on a pipe: {}\n{}",
                        message.line(),
                        message.explanation
                    );
                }
            }
        } else {
            assert!(
                initialized.explanation.contains("202 and no body"),
                "{}",
                initialized.explanation
            );
        }
        assert_eq!(
            (roots_changed.from.as_str(), roots_changed.to.as_str()),
            ("agent", "everything")
        );
    }
}

#[test]
fn every_method_is_explained_for_what_it_does() {
    for transport in ["stdio", "http"] {
        let tour = tour(transport);
        let pairs = [
            ("ping", "pong (to "),
            ("resources/list", "8 resources: architecture.md"),
            (
                "resources/templates/list",
                "2 templates: demo://resource/dynamic/text/{resourceId}",
            ),
            (
                "resources/read demo://resource/dynamic/text/1",
                "demo://resource/dynamic/text/1 (text, text/plain, 62 bytes)",
            ),
            (
                "resources/read demo://resource/dynamic/blob/1",
                "demo://resource/dynamic/blob/1 (binary, text/plain, 55 bytes)",
            ),
            ("resources/subscribe demo://", "done (to "),
            ("resources/unsubscribe demo://", "done (to "),
            ("logging/setLevel debug", "done (to "),
            (
                "prompts/list",
                "4 prompts: simple-prompt, args-prompt, completable-prompt, resource-prompt",
            ),
            (
                "prompts/get args-prompt {\"city\":\"Paris\",\"state\":\"IDF\"}",
                "1 message: user: \"What's weather in Paris, IDF?\"",
            ),
            (
                "prompts/get resource-prompt",
                "2 messages: user: \"This prompt includes",
            ),
            (
                "completion/complete department=E of completable-prompt",
                "1 suggestion: Engineering",
            ),
            ("as a task", " created (working)"),
            ("tasks/list", "1 task: "),
            ("tasks/result", "result: \"# Research Report: tides"),
            ("server/discover", "no server/discover here"),
        ];
        for (asked, answered) in pairs {
            let request = tour.find(asked);
            assert_eq!(
                (request.from.as_str(), request.to.as_str()),
                ("agent", "everything"),
                "{transport} {asked}"
            );
            let reply = tour
                .messages
                .iter()
                .find(|m| m.number > request.number && m.summary.contains(answered))
                .unwrap_or_else(|| {
                    panic!(
                        "{transport}: no {answered:?} after {asked:?}\n{}",
                        tour.lines()
                    )
                });
            assert_eq!(
                (reply.from.as_str(), reply.to.as_str()),
                ("everything", "agent"),
                "{transport} {answered}"
            );
            if reply.summary.starts_with("done (to ") || reply.summary.starts_with("pong (to ") {
                assert!(
                    reply.summary.contains(&format!("to {}", request.number)),
                    "{}",
                    reply.summary
                );
            }
            for generic in [
                "A JSON-RPC request to the MCP server",
                "The MCP server answers the request",
            ] {
                assert!(
                    !request.explanation.contains(generic),
                    "{transport}: {}",
                    request.line()
                );
                assert!(
                    !reply.explanation.contains(generic),
                    "{transport}: {}",
                    reply.line()
                );
            }
        }
        let url_error =
            tour.find("the user must first open https://modelcontextprotocol.io (-32042)");
        assert!(
            url_error.explanation.contains("Not a wrong request"),
            "{}",
            url_error.explanation
        );
        let host_call = tour.find("tools/call echo");
        assert!(
            host_call.explanation.contains("no model asked for it"),
            "{}",
            host_call.explanation
        );
        // Nothing but transport moves reads as an unknown request or a bare result.
        for message in &tour.messages {
            assert!(
                !matches!(
                    message.case.name(),
                    "http_request"
                        | "http_plain_request"
                        | "http_response"
                        | "mcp_other_result"
                        | "mcp_other_request"
                ),
                "{transport}: {}",
                message.line()
            );
        }
    }
}

#[test]
fn rich_results_are_told_in_words_without_base64() {
    for transport in ["stdio", "http"] {
        let tour = tour(transport);
        for needle in [
            "an image (image/png, 4.0 kB)",
            "\"Error: Operation failed\" (for the user and the assistant, priority 1)",
            "a link to resource demo://resource/dynamic/",
            "an embedded resource demo://resource/dynamic/text/1 (text, text/plain,",
            "an embedded resource demo://resource/session/tour.txt.gz (binary, application/gzip, 35 bytes)",
            "; structured content {\"temperature\":",
            "2 messages: user: \"This prompt includes the Text resource with id: 2. Please a…\", user: an embedded resource",
        ] {
            tour.find(needle);
        }
        let annotated = tour.find("\"Error: Operation failed\"");
        assert!(
            annotated.explanation.contains("isError is false"),
            "{}",
            annotated.explanation
        );
        assert_ne!(annotated.case.name(), "mcp_tool_error");
        let gzip_call = tour.find("tools/call gzip-file-as-resource");
        assert!(
            gzip_call
                .summary
                .contains("\"data\":\"<base64, 300 bytes>\""),
            "{}",
            gzip_call.summary
        );
        for message in &tour.messages {
            let words = format!("{} {}", message.summary, message.explanation);
            assert!(
                !words.contains("iVBORw0KGgo"),
                "a PNG's base64 in {}",
                message.line()
            );
            assert!(
                !words.contains(";base64,"),
                "a data URI in {}",
                message.line()
            );
        }
    }
}

#[test]
fn the_servers_own_stream_is_the_transport_not_tool_time() {
    let tour = tour("http");
    let stream = tour.find("opens the host's standing stream for server messages");
    assert!(
        stream.explanation.contains("the host opens a GET stream"),
        "{}",
        stream.explanation
    );
    // Told once: its end is no message, its messages are each their own.
    let of_stream: Vec<_> = tour
        .messages
        .iter()
        .filter(|m| m.hop_index == stream.hop_index)
        .collect();
    assert!(
        of_stream.iter().skip(1).all(|m| m.part.is_some()),
        "{}",
        tour.lines()
    );
    assert!(
        of_stream.len() > 5,
        "the GET stream carried the server's notifications"
    );
    let waterfall = tracer_trace::explain::timing::waterfall(&tour.hops, &tour.messages);
    let stream_bar = waterfall
        .bars
        .iter()
        .find(|b| b.hop_index == stream.hop_index)
        .unwrap();
    assert_eq!(
        stream_bar.kind,
        tracer_trace::explain::timing::BarKind::Other
    );
    assert!(
        waterfall.tool_ns < 5_000_000_000,
        "tool time is the calls', not the 13 s stream: {} ns",
        waterfall.tool_ns
    );
}

#[test]
fn a_sampling_answer_names_the_model_call_the_host_made_for_it() {
    use crate::trace_hops::hop;
    use serde_json::json;
    use tracer_wire::hop::{Role, Transport};
    let stdio = |mut hop: RecordedHop, path: &str, method: &str| {
        hop.start.transport = Transport::Stdio;
        hop.start.path = path.into();
        hop.start.method = method.into();
        hop.start.route = "everything".into();
        if let Some(end) = hop.end.as_mut() {
            end.status = None;
        }
        hop
    };
    let hops = vec![
        stdio(
            hop("s1", Role::Mcp, "/", 0, 100)
                .bodies(
                    json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-sampling-request","arguments":{"prompt":"Say hi"}}}),
                    json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"LLM sampling result: hi"}]}}),
                )
                .done(),
            "client→server",
            "tools/call",
        ),
        stdio(
            hop("s2", Role::Mcp, "/", 10, 60)
                .bodies(
                    json!({"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":20}}),
                    json!({"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"Hi!"},"model":"qwen2.5:7b"}}),
                )
                .done(),
            "server→client",
            "sampling/createMessage",
        ),
        hop("m1", Role::Model, "/api/chat", 20, 50)
            .bodies(
                json!({"model":"qwen2.5:7b","messages":[{"role":"user","content":"Say hi"}]}),
                json!({"model":"qwen2.5:7b","message":{"role":"assistant","content":"Hi!"},"done":true}),
            )
            .done(),
    ];
    let messages = explain_trace(&hops);
    let lines: Vec<String> = messages.iter().map(ExplainedMessage::line).collect();
    let sampling = messages
        .iter()
        .find(|m| m.summary.starts_with("the server asks the host's model"))
        .unwrap();
    assert_eq!(
        (sampling.from.as_str(), sampling.to.as_str()),
        ("everything", "agent"),
        "{lines:#?}"
    );
    let model_call = messages
        .iter()
        .find(|m| m.from == "agent" && m.to == "model")
        .unwrap();
    let answer = messages
        .iter()
        .find(|m| {
            m.summary
                .starts_with("the host's model wrote: \"Hi!\" (qwen2.5:7b)")
        })
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert_eq!(
        (answer.from.as_str(), answer.to.as_str()),
        ("agent", "everything")
    );
    assert!(
        answer.explanation.contains(&format!(
            "The host's model wrote it in call {} (route model)",
            model_call.number
        )),
        "{}",
        answer.explanation
    );
    assert_eq!(
        messages.len(),
        6,
        "two stdio calls and a model call, each asked and answered: {lines:#?}"
    );
}
