//! Test support: an in-process notes server on 127.0.0.1:0 and a raw HTTP/1.1 client that sends
//! exactly the bytes a test asks for.

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tracer_reference::notes_server::{self, NotesServer, NotesServerConfig};

pub const MODERN: &str = "2026-07-28";

/// A running in-process server; dropped at the end of the test.
pub struct TestServer {
    pub addr: SocketAddr,
    pub file: PathBuf,
    _dir: tempfile::TempDir,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(|_| {}).await
    }

    pub async fn start_with(adjust: impl FnOnce(&mut NotesServerConfig)) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data").join("db");
        let mut config = NotesServerConfig::new(&file);
        adjust(&mut config);
        let server = NotesServer::open(config).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(notes_server::serve_http(listener, server, async {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            file,
            _dir: dir,
            _stop: stop,
        }
    }

    pub fn notes(&self) -> String {
        std::fs::read_to_string(&self.file).unwrap()
    }

    /// POSTs a JSON body to /mcp with extra headers.
    pub async fn post(&self, headers: &[(&str, &str)], body: &Value) -> Reply {
        let bytes = serde_json::to_vec(body).unwrap();
        send(self.addr, "POST", "/mcp", headers, &bytes).await
    }

    /// A modern (2026-07-28) request with the right headers and `_meta`.
    pub async fn modern(&self, id: i64, method: &str, params: Value) -> Reply {
        let body = modern_body(id, method, params);
        let name = body["params"]["name"].as_str().map(str::to_owned);
        let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
        if let Some(name) = name.as_deref() {
            headers.push(("Mcp-Name", name));
        }
        self.post(&headers, &body).await
    }

    /// A modern tools/call; returns the reply.
    pub async fn call(&self, tool: &str, arguments: Value) -> Reply {
        self.modern(
            7,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// Starts a legacy session with `version`; returns the session id.
    pub async fn initialize(&self, version: &str) -> String {
        let reply = self.post(&[], &initialize_body(version)).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.header("mcp-session-id").unwrap().to_owned()
    }
}

pub fn initialize_body(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
}

/// A JSON-RPC request whose params get the modern `_meta` envelope added.
pub fn modern_body(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// One HTTP response as received.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("body is not JSON ({error}): {}", self.text()))
    }

    /// The JSON-RPC error code of the body.
    pub fn error_code(&self) -> i64 {
        self.json()["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error: {}", self.text()))
    }

    /// The text of a tools/call result.
    pub fn tool_text(&self) -> String {
        let body = self.json();
        body["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no tool text: {body}"))
            .to_owned()
    }

    pub fn is_tool_error(&self) -> bool {
        self.json()["result"]["isError"] == json!(true)
    }
}

/// Sends one request on a fresh connection (`Connection: close`) and reads the whole response.
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    let has_type = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
    if !has_type && !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (413) before reading everything: a failed write is not a failure.
    let _ = stream.write_all(body).await;
    read_reply(&mut stream).await
}

pub async fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no end of headers");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}
