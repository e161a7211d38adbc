//! An OpenAPI tool server's hops in words: each REST tool call, its answer and the document of
//! tools, and the links between a REST call, the `tools/call` it ran as and the model that asked.

use serde_json::Value;

use crate::read::numbering::Direction;
use crate::read::openapi_calls::OpenApiTrace;
use crate::{ExplainedMessage, RecordedHop};
use crate::{explain::Case, explain::Explained, explain::McpCase, words::plural, words::shorten};
use tracer_wire::content_encoding::readable;
use tracer_wire::dialect::{Dialect, HopReading};
use tracer_wire::hop::HopState;
use tracer_wire::openapi_tools::{RestAnswer, read_answer};

/// How long a quoted result may be in a summary line.
const QUOTE: usize = 72;

impl OpenApiTrace {
    /// The words for a tool server hop's request or (ended) answer; None for other hops.
    pub(crate) fn explain(
        &self,
        hop: &RecordedHop,
        reading: &HopReading,
        index: usize,
        direction: Direction,
        answer_numbers: &[usize],
    ) -> Option<Explained> {
        if reading.dialect != Dialect::OpenApiTools {
            return None;
        }
        let call = self.calls.get(index).and_then(Option::as_ref);
        let document = self.documents.get(index).and_then(Option::as_ref);
        if direction == Direction::Request {
            if let Some(call) = call {
                let arguments = match &call.arguments {
                    Value::Object(map) if map.is_empty() => String::new(),
                    other => format!(" {other}"),
                };
                let words = format!("{}{arguments}", call.tool);
                return Some(Explained::new(
                    Case::Mcp(McpCase::RestToolCall),
                    &[("call", shorten(&words, QUOTE))],
                ));
            }
            return Some(Explained::new(Case::Mcp(McpCase::RestDocumentRequest), &[]));
        }
        let end = hop
            .end
            .as_ref()
            .filter(|e| e.state == Some(HopState::Complete))?;
        if let Some(document) = document {
            let names: Vec<&str> = document.tools.iter().map(|t| t.name.as_str()).collect();
            let mut explained = Explained::new(
                Case::Mcp(McpCase::RestToolsOffered),
                &[
                    ("tools", plural(names.len(), "tool")),
                    ("names", shorten(&names.join(", "), QUOTE)),
                ],
            );
            if let Some(listed) = self.built_from[index].and_then(|t| answer_numbers.get(t)) {
                explained.note(
                    Case::Mcp(McpCase::NoteRestBuiltFrom),
                    &[("listed", listed.to_string())],
                );
                explained
                    .summary
                    .push_str(", built from the MCP server's tools/list");
            }
            return Some(explained);
        }
        call?;
        let status = end.status.unwrap_or(0);
        let body = readable(&end.response_headers, &end.response_body);
        Some(match read_answer(status, body.bytes()) {
            RestAnswer::Result(value) => {
                let result = match &value {
                    Value::String(text) => format!("{text:?}"),
                    other => other.to_string(),
                };
                Explained::new(
                    Case::Mcp(McpCase::RestToolResult),
                    &[("result", shorten(&result, QUOTE))],
                )
            }
            RestAnswer::Refused(problems) => Explained::new(
                Case::Mcp(McpCase::RestRefused),
                &[
                    ("status", status.to_string()),
                    ("problems", shorten(&problems.join("; "), QUOTE)),
                ],
            ),
            RestAnswer::Error { status, detail } => Explained::new(
                Case::Mcp(McpCase::RestError),
                &[
                    ("status", status.to_string()),
                    ("detail", shorten(&detail, QUOTE)),
                ],
            ),
        })
    }

    /// Adds the links (numbers and words) between REST calls, the `tools/call` each ran as and
    /// the model answer that asked, to a trace's explained messages.
    pub(crate) fn link(&self, out: &mut [ExplainedMessage], requests: &[usize], answers: &[usize]) {
        for message in out.iter_mut().filter(|m| m.part.is_none()) {
            let index = message.hop_index;
            let mut words = Vec::new();
            let mut push = |number: usize, text: String| {
                if number > 0 && !message.links.contains(&number) {
                    message.links.push(number);
                }
                words.push(text);
            };
            match message.direction {
                Direction::Request => {
                    if let Some((m, name)) = self.asked_by.get(index).and_then(Option::as_ref) {
                        let n = answers[*m];
                        push(n, format!(" · asked for in message {n} as {name}"));
                    }
                    if let Some(j) = self.runs_as.get(index).copied().flatten() {
                        let n = requests[j];
                        push(n, format!(" · runs as tools/call in message {n}"));
                    }
                    if let Some(i) = self.run_for.get(index).copied().flatten() {
                        let n = requests[i];
                        push(n, format!(" · for the REST call in message {n}"));
                    }
                }
                Direction::Response => {
                    if let Some(calls) = self.asks.get(index).filter(|c| !c.is_empty()) {
                        let listed: Vec<String> =
                            calls.iter().map(|&i| requests[i].to_string()).collect();
                        for &i in calls {
                            push(requests[i], String::new());
                        }
                        push(
                            0,
                            format!(" · sent as REST in message {}", listed.join(", ")),
                        );
                    }
                }
            }
            message.summary.push_str(&words.concat());
        }
    }
}
