//! `tracer ui` as a user and a browser meet it, over real sockets: its URL as the first stderr
//! line, the JSON API equal to the CLI's `--json`, the guard (Host, token, methods, CSP), and a
//! `tracer proxy --ui` page told of an answer while it still streams.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::sample_db::{BUY_MILK, TRACER, sample_db};

/// A running `tracer` whose stderr's first line was read; killed when dropped.
struct Running {
    child: Child,
    first_line: String,
    rest: std::sync::mpsc::Receiver<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(db: &std::path::Path, args: &[&str]) -> Running {
    let mut child = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap());
    let mut first_line = String::new();
    lines.read_line(&mut first_line).unwrap();
    let (tx, rest) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    Running {
        child,
        first_line: first_line.trim_end().to_string(),
        rest,
    }
}

/// An HTTP/1.1 answer: status, head lines, body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

/// One request on its own connection (`Connection: close`), the answer read whole.
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    stream.write_all(text.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut body = raw[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = unchunk(&body);
    }
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Answer { status, head, body }
}

fn get(addr: &str, path: &str) -> Answer {
    request(addr, "GET", path, &[])
}

fn unchunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = bytes.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&bytes[..line_end]).unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&bytes[line_end + 2..line_end + 2 + size]);
        bytes = &bytes[line_end + 2 + size + 2..];
    }
}

fn cli_json(db: &std::path::Path, args: &[&str]) -> Value {
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap()
}

fn addr_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn tracer_ui_says_its_url_first_and_serves_what_the_cli_prints() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let port = crate::free_ports::free_port();
    let listen = format!("127.0.0.1:{port}");
    let ui = start(&db, &["ui", "--listen", &listen]);
    assert_eq!(ui.first_line, format!("tracer ui: http://{listen}/"));
    let addr = addr_of(&ui.first_line["tracer ui: ".len()..]);

    // The page, with its policy.
    let page = get(&addr, "/");
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "{csp}"
    );
    assert_eq!(
        page.header("x-content-type-options").as_deref(),
        Some("nosniff")
    );
    assert_eq!(get(&addr, "/app.js").status, 200);

    // The listing is `tracer ls --json`'s, and says how many there are.
    let listed = get(&addr, "/api/traces?limit=1000").json();
    let cli = cli_json(&db, &["ls", "--json", "-n", "1000"]);
    assert_eq!(listed["traces"], cli);
    assert_eq!(
        listed["total"].as_u64().unwrap() as usize,
        cli.as_array().unwrap().len()
    );
    let page2 = get(&addr, "/api/traces?offset=2&limit=3").json();
    assert_eq!(
        page2["traces"].as_array().unwrap()[..],
        cli.as_array().unwrap()[2..5]
    );
    assert_eq!(
        get(&addr, "/api/sessions").json(),
        cli_json(&db, &["ls", "--sessions", "--json"])
    );
    assert_eq!(
        get(&addr, "/api/search?q=buy%20milk").json(),
        cli_json(&db, &["search", "buy milk", "--json"])
    );

    // A trace is its hop log (bodies as lengths), and a message its body as `show --json` has it.
    let shown = cli_json(&db, &["show", BUY_MILK, "--json"]);
    let trace = get(&addr, &format!("/api/trace/{BUY_MILK}")).json();
    assert_eq!(trace["trace"], shown["trace"]);
    let messages = trace["messages"].as_array().unwrap();
    assert_eq!(messages.len(), shown["messages"].as_array().unwrap().len());
    for (page_message, cli_message) in messages.iter().zip(shown["messages"].as_array().unwrap()) {
        assert_eq!(page_message["summary"], cli_message["summary"]);
        assert_eq!(page_message["explanation"], cli_message["explanation"]);
        assert_eq!(
            page_message["body"]["length"],
            cli_message["body"]["length"]
        );
        assert!(
            page_message["body"].get("json").is_none(),
            "bodies are fetched when opened"
        );
    }
    assert_eq!(trace["ui"]["lanes"][0], "you");
    for cli_message in shown["messages"].as_array().unwrap() {
        let number = cli_message["number"].as_u64().unwrap();
        let opened = get(&addr, &format!("/api/trace/{BUY_MILK}/message/{number}")).json();
        assert_eq!(
            opened["message"]["body"], cli_message["body"],
            "message {number}"
        );
    }
    // A model request says what changed since the previous one.
    let second_model = messages
        .iter()
        .find(|m| m["case"] == "model_request_again")
        .unwrap()["number"]
        .as_u64()
        .unwrap();
    let changes = get(
        &addr,
        &format!("/api/trace/{BUY_MILK}/message/{second_model}/changes"),
    )
    .json();
    assert_eq!(changes["previous"], 4, "{changes}");
    let lines = changes["lines"].as_array().unwrap();
    assert!(!lines.is_empty(), "{changes}");
    // Any other message has none.
    let none = get(&addr, &format!("/api/trace/{BUY_MILK}/message/1/changes"));
    assert_eq!(none.json(), Value::Null);

    // Exports, as downloads.
    let html = get(&addr, &format!("/api/trace/{BUY_MILK}/export?format=html"));
    assert_eq!(html.status, 200);
    assert!(
        html.header("content-disposition")
            .unwrap()
            .contains("attachment")
    );
    let json = get(&addr, &format!("/api/trace/{BUY_MILK}/export?format=json")).json();
    assert_eq!(json["messages"], shown["messages"]);

    // Mistakes are JSON with a status.
    let unknown = get(&addr, "/api/trace/ffffffffffff");
    assert_eq!(unknown.status, 404);
    assert!(
        unknown.json()["error"]
            .as_str()
            .unwrap()
            .contains("no trace")
    );
    assert_eq!(get(&addr, "/api/search?q=").status, 400);
    assert_eq!(get(&addr, "/no-such-file.js").status, 404);
}

#[test]
fn a_loopback_ui_refuses_other_hosts_and_anything_but_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let listen = format!("127.0.0.1:{}", crate::free_ports::free_port());
    let ui = start(&db, &["ui", "--listen", &listen]);
    let addr = addr_of(&ui.first_line["tracer ui: ".len()..]);
    let port = listen.rsplit(':').next().unwrap().to_string();
    // DNS rebinding: a page of another site whose name now points at loopback.
    let rebound = request(
        &addr,
        "GET",
        "/api/traces",
        &[("Host", &format!("attacker.example:{port}"))],
    );
    assert_eq!(rebound.status, 403);
    assert!(
        rebound.body.is_empty() || !String::from_utf8_lossy(&rebound.body).contains("\"traces\"")
    );
    let localhost = request(
        &addr,
        "GET",
        "/api/traces",
        &[("Host", &format!("localhost:{port}"))],
    );
    assert_eq!(localhost.status, 200);
    assert_eq!(
        request(&addr, "POST", "/api/traces", &[("Content-Length", "0")]).status,
        405
    );
    assert_eq!(request(&addr, "DELETE", "/api/trace/x", &[]).status, 405);
}

#[test]
fn beyond_loopback_the_ui_needs_its_token_once_then_its_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let port = crate::free_ports::free_port();
    let ui = start(&db, &["ui", "--listen", &format!("0.0.0.0:{port}")]);
    let url = ui
        .first_line
        .strip_prefix("tracer ui: ")
        .unwrap()
        .to_string();
    let token = url
        .split("?token=")
        .nth(1)
        .expect("a token in the URL")
        .to_string();
    assert_eq!(token.len(), 32, "{url}");
    let warning = ui.rest.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(
        warning.contains("warning") && warning.contains("not a loopback"),
        "{warning}"
    );
    let addr = format!("127.0.0.1:{port}");

    assert_eq!(get(&addr, "/api/traces").status, 401);
    assert_eq!(
        get(&addr, "/api/traces?token=0123456789abcdef0123456789abcdef").status,
        401
    );
    let given = get(&addr, &format!("/?token={token}"));
    assert_eq!(given.status, 303);
    assert_eq!(given.header("location").as_deref(), Some("/"));
    let cookie = given.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let with_cookie = request(&addr, "GET", "/api/traces", &[("Cookie", &pair)]);
    assert_eq!(with_cookie.status, 200);
    assert!(with_cookie.json()["total"].as_u64().unwrap() > 0);
    let wrong = request(&addr, "GET", "/api/traces", &[("Cookie", "tracer_ui=nope")]);
    assert_eq!(wrong.status, 401);
}
