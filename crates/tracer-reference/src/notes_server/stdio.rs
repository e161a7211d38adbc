//! MCP over stdio for the notes server (and any other `ToolServer`, e.g. `tracer mcp`):
//! newline-delimited JSON-RPC in, one JSON line per answer out; nothing else is
//! ever written to the output. `initialize` selects legacy semantics for the process; a request
//! with a modern `_meta` is served statelessly.

use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tracer_wire::jsonrpc::{
    Body, ErrorObject, InvalidMessage, Message, Request, Response, parse_body,
};
use tracer_wire::mcp::server::ToolServer;
use tracer_wire::mcp::{self, meta, method, version};

/// One line read from the input.
enum Line {
    Message(Vec<u8>),
    TooLong,
    End,
}

/// Serves MCP on `input`/`output` until the input ends.
pub async fn serve<S, R, W>(server: &S, input: R, mut output: W) -> std::io::Result<()>
where
    S: ToolServer,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(input);
    let mut session = StdioSession {
        legacy_version: None,
    };
    let limit = server.max_body_bytes();
    loop {
        let bytes = match read_line(&mut reader, limit).await? {
            Line::End => return Ok(()),
            Line::TooLong => {
                let message =
                    format!("Invalid Request: a message is larger than the limit of {limit} bytes");
                let error = ErrorObject::new(tracer_wire::jsonrpc::code::INVALID_REQUEST, message);
                write_line(&mut output, &Response::error(None, error)).await?;
                continue;
            }
            Line::Message(bytes) => bytes,
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_body(&bytes) {
            Err(error) => write_line(&mut output, &Response::error(None, error)).await?,
            Ok(Body::Single(item)) => {
                if let Some(response) = session.handle(server, item).await {
                    write_line(&mut output, &response).await?;
                }
            }
            Ok(Body::Batch(items)) => {
                if session.legacy_version.as_deref() != Some(version::V2025_03_26) {
                    let error = ErrorObject::invalid_request(
                        "JSON-RPC batches are only allowed after initialize with 2025-03-26",
                    );
                    write_line(&mut output, &Response::error(None, error)).await?;
                    continue;
                }
                let mut responses = Vec::new();
                for item in items {
                    if let Some(response) = session.handle(server, item).await {
                        responses.push(response);
                    }
                }
                if !responses.is_empty() {
                    write_line(&mut output, &responses).await?;
                }
            }
        }
    }
}

/// What one stdio process has negotiated.
struct StdioSession {
    legacy_version: Option<String>,
}

impl StdioSession {
    async fn handle<S: ToolServer>(
        &mut self,
        server: &S,
        item: Result<Message, InvalidMessage>,
    ) -> Option<Response> {
        let request = match item {
            Err(invalid) => return Some(invalid.into_response()),
            Ok(Message::Notification(_) | Message::Response(_)) => return None,
            Ok(Message::Request(request)) => request,
        };
        if request.method == method::INITIALIZE {
            let initialized = server.initialize(&request);
            if let Some(negotiated) = initialized.version {
                tracing::info!(version = %negotiated, "legacy stdio session started");
                self.legacy_version = Some(negotiated);
            }
            return Some(initialized.response);
        }
        if request
            .params
            .as_ref()
            .and_then(mcp::meta_protocol_version)
            .is_some()
        {
            return Some(server.modern_request(&request, None).await.response);
        }
        if self.legacy_version.is_some() || request.method == method::PING {
            return Some(server.legacy_request(&request).await);
        }
        Some(not_initialized(&request))
    }
}

fn not_initialized(request: &Request) -> Response {
    let message = format!(
        "Missing required _meta field: {} (send initialize first for protocol 2025-11-25 and older)",
        meta::PROTOCOL_VERSION
    );
    Response::error(
        Some(request.id.clone()),
        ErrorObject::invalid_params(message),
    )
}

async fn write_line<W: AsyncWrite + Unpin>(
    output: &mut W,
    value: &impl Serialize,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    output.write_all(&line).await?;
    output.flush().await
}

/// Reads one newline-terminated line of at most `limit` bytes; a longer line is skipped whole.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, limit: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Message(line),
            });
        }
        let (chunk, found_newline) = match available.iter().position(|&b| b == b'\n') {
            Some(position) => (&available[..position], true),
            None => (available, false),
        };
        if !too_long {
            if line.len() + chunk.len() > limit {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = chunk.len() + usize::from(found_newline);
        reader.consume(used);
        if found_newline {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Message(line)
            });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_split_and_bounded() {
        let input = b"short\nthis line is too long\n\nlast".to_vec();
        let mut reader = BufReader::with_capacity(4, input.as_slice());
        assert!(
            matches!(read_line(&mut reader, 8).await.unwrap(), Line::Message(l) if l == b"short")
        );
        assert!(matches!(
            read_line(&mut reader, 8).await.unwrap(),
            Line::TooLong
        ));
        assert!(
            matches!(read_line(&mut reader, 8).await.unwrap(), Line::Message(l) if l.is_empty())
        );
        assert!(
            matches!(read_line(&mut reader, 8).await.unwrap(), Line::Message(l) if l == b"last")
        );
        assert!(matches!(
            read_line(&mut reader, 8).await.unwrap(),
            Line::End
        ));
    }
}
