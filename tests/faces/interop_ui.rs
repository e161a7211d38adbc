//! Interop: the `tracer ui` page in a real headless Chromium, driven by Playwright
//! (tests/interop/ui_browser.py, from .venv; the system Chromium, no browser download). Over a
//! real server: the list and a trace read as `ls --json` and `show --json` print them, a deep
//! link, body search, hostile content shown as text (no dialog, no policy violation, no request
//! off the server's origin), a trace recorded while the page is open, the page reconnecting to
//! a restarted server, a `proxy --ui` page showing an answer while it streams, and screenshots
//! (written to docs/ui-*.png when TRACER_UPDATE_SCREENSHOT=1). One Chromium at a time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::hostile::{HOSTILE_ID, ITEM, RESULT, TITLE, hostile_log};
use crate::interop_chromium::chromium;
use crate::sample_db::{BUY_MILK, TRACER, sample_db};

/// One browser at a time: the tests of this file take turns.
static BROWSER: Mutex<()> = Mutex::new(());

/// How long one run of the script may take.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

/// The Python with Playwright and the Chromium it drives, or None after saying why.
struct Peers {
    python: PathBuf,
    chromium: PathBuf,
    _turn: MutexGuard<'static, ()>,
}

fn peers() -> Option<Peers> {
    let python = crate::interop_peers::venv_python(".venv", "playwright", "playwright")?;
    let chromium = chromium()?;
    Some(Peers {
        python,
        chromium,
        _turn: BROWSER.lock().unwrap_or_else(PoisonError::into_inner),
    })
}

/// A running `tracer` whose stderr said its UI's URL; killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `tracer --db DB ARGS` and waits for its `tracer ui: URL` line on stderr (the rest of
/// stderr is read and dropped).
fn serve(db: &Path, args: &[String]) -> Server {
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
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.strip_prefix("tracer ui: ") {
                    break url.to_string();
                }
                said.push_str(&line);
                said.push('\n');
            }
            _ => {
                let _ = child.kill();
                panic!("tracer {args:?} said no URL: {said}");
            }
        }
    };
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
    Server { child, url }
}

fn ui(db: &Path, port: u16) -> Server {
    let server = serve(
        db,
        &["ui".into(), "--listen".into(), format!("127.0.0.1:{port}")],
    );
    assert_eq!(server.url, format!("http://127.0.0.1:{port}/"));
    server
}

/// A run of ui_browser.py: its stdout lines as they come, its stdin for the interactive ones.
struct Script {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    said: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    scenario: String,
    started: Instant,
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Script {
    fn start(peers: &Peers, url: &str, scenario: &str, args: &[&str]) -> Script {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/ui_browser.py");
        let mut child = Command::new(&peers.python)
            .arg(script)
            .args(["--url", url, "--scenario", scenario, "--tracer", TRACER])
            .arg("--chromium")
            .arg(&peers.chromium)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Script {
            child,
            stdin,
            lines,
            said: Vec::new(),
            stderr: Some(stderr),
            scenario: scenario.to_string(),
            started: Instant::now(),
        }
    }

    /// The next stdout line starting with `prefix` (what follows it), within `within`.
    fn expect(&mut self, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.said.push(line.clone());
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_string();
                    }
                }
                Err(_) => panic!(
                    "{}: no `{prefix}` line within {within:?}: {:?}",
                    self.scenario, self.said
                ),
            }
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the script's end and returns its JSON result, which must say `ok`.
    fn finish(mut self) -> Value {
        self.stdin = None;
        let deadline = self.started + SCRIPT_DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.said.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{}: not done within {SCRIPT_DEADLINE:?}", self.scenario)
                }
            }
        }
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        let last = self.said.last().cloned().unwrap_or_default();
        let result: Value = serde_json::from_str(&last).unwrap_or_else(|e| {
            panic!(
                "{}: the last line is not JSON ({e}): {:?}\n{stderr}",
                self.scenario, self.said
            )
        });
        assert!(
            status.success() && result["ok"] == true,
            "{} failed: {result:#}\n{stderr}",
            self.scenario
        );
        assert_eq!(result["scenario"], self.scenario.as_str());
        eprintln!(
            "ui_browser.py {}: ok in {:.1} s",
            self.scenario,
            self.started.elapsed().as_secs_f64()
        );
        result
    }
}

fn run(peers: &Peers, url: &str, scenario: &str, args: &[&str]) -> Value {
    Script::start(peers, url, scenario, args).finish()
}

/// Nothing ran that the page did not write, nothing was fetched off its origin.
#[track_caller]
fn assert_clean(result: &Value) {
    for key in [
        "foreign_requests",
        "dialogs",
        "violations",
        "console_errors",
    ] {
        assert_eq!(result[key], Value::Array(vec![]), "{key}: {result:#}");
    }
    assert!(result["requests"].as_u64().unwrap() > 3, "{result:#}");
}

fn ids(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

fn cli_json(db: &Path, args: &[&str]) -> Value {
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A PNG's width and height.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    (
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
    )
}

#[test]
fn interop_ui_reads_links_searches_and_draws_like_the_cli() {
    let Some(peers) = peers() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let server = ui(&db, crate::free_ports::free_port());
    let db_arg = db.to_str().unwrap();
    let common = ["--db", db_arg, "--trace", BUY_MILK];

    let reads = run(&peers, &server.url, "reads", &common);
    assert_clean(&reads);
    let listed = cli_json(&db, &["ls", "--json", "-n", "1000"]);
    let listed: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids(&reads["rows"]), listed);
    assert_eq!(reads["title"], "Add buy milk to my notes");
    assert_eq!(
        reads["messages"],
        serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    );
    assert_eq!(
        reads["message_8_summary"],
        "qwen2.5:7b, 4 messages (2 more than last time), 5 tools"
    );

    let deeplink = run(&peers, &server.url, "deeplink", &common);
    assert_clean(&deeplink);
    assert_eq!(deeplink["selected"], serde_json::json!([7]));
    assert!(
        deeplink["summary"]
            .as_str()
            .unwrap()
            .starts_with("result: \"Appended a new line"),
        "{deeplink:#}"
    );

    let search = run(&peers, &server.url, "search", &common);
    assert_clean(&search);
    assert_eq!(search["trace_hits"], search["cli_trace_hits"]);
    assert!(
        search["trace_hits"].as_array().unwrap().len() >= 3,
        "{search:#}"
    );

    let shots = dir.path().join("shots");
    let screens = run(
        &peers,
        &server.url,
        "screens",
        &[
            "--db",
            db_arg,
            "--trace",
            BUY_MILK,
            "--shots",
            shots.to_str().unwrap(),
        ],
    );
    assert_clean(&screens);
    for name in ["ui-list.png", "ui-trace.png", "ui-message.png"] {
        let png = std::fs::read(shots.join(name)).unwrap();
        assert_eq!(png_size(&png), (1280, 800), "{name}");
        assert!(png.len() > 20_000, "{name} is drawn: {} bytes", png.len());
        if std::env::var("TRACER_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
            let docs = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("docs")
                .join(name);
            std::fs::write(docs, &png).unwrap();
        }
    }
}

/// What the hostile trace of hostile.rs carries besides its own payloads: a script, a link that
/// runs code, HTML and Markdown; a textarea's end (breaking out of an editor).
const MORE: &str = "<script>alert('script')</script> <a href=\"javascript:alert('link')\">open</a> \
                    [open](javascript:alert('md')) </textarea><textarea autofocus onfocus=alert('ta')>";

/// hostile.rs's trace with `MORE` in its model text, tool result and title, and the tool result
/// made huge (300 000 characters).
fn sharper_hostile_log() -> Value {
    fn sharpen(value: &mut Value) {
        match value {
            Value::String(text) => {
                if text == RESULT {
                    *text = format!("{RESULT} {MORE} {}", "A".repeat(300_000));
                } else if text.contains(ITEM) {
                    *text = text.replace(ITEM, &format!("{ITEM} {MORE}"));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(sharpen),
            Value::Object(map) => map.values_mut().for_each(sharpen),
            _ => {}
        }
    }
    let mut log = hostile_log();
    sharpen(&mut log);
    log["trace"]["title"] = Value::from(format!("{TITLE} {MORE}"));
    log
}

#[test]
fn interop_ui_shows_hostile_content_as_text_and_runs_nothing() {
    let Some(peers) = peers() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hostile.json");
    std::fs::write(&file, serde_json::to_vec(&sharper_hostile_log()).unwrap()).unwrap();
    let db = dir.path().join("tracer.db");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces/buy-milk.json");
    for source in [&file, &sample] {
        let output = Command::new(TRACER)
            .arg("--db")
            .arg(&db)
            .arg("import")
            .arg(source)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    let server = ui(&db, crate::free_ports::free_port());
    let hostile = run(
        &peers,
        &server.url,
        "hostile",
        &[
            "--db",
            db.to_str().unwrap(),
            "--trace",
            HOSTILE_ID,
            "--shots",
            dir.path().join("shots").to_str().unwrap(),
        ],
    );
    assert_clean(&hostile);
    assert_eq!(hostile["messages"].as_array().unwrap().len(), 10);
    assert_eq!(
        hostile["shown"],
        serde_json::json!([
            "<script>",
            "<img src=x onerror=alert(1)>",
            "javascript:",
            "</textarea>"
        ])
    );
    assert!(
        hostile["title"].as_str().unwrap().contains("<script>"),
        "{hostile:#}"
    );
    assert!(
        hostile["elements"]["longest_text"].as_u64().unwrap() >= 300_000,
        "the huge result is there to read: {hostile:#}"
    );
    let png = std::fs::read(dir.path().join("shots/ui-hostile.png")).unwrap();
    assert_eq!(png_size(&png), (1280, 800));
    // A U+202E and an OSC 52 are shown as escapes (the script fails on any raw one).
    assert_eq!(
        hostile["escapes"],
        serde_json::json!(["\\u{202e}", "\\x1b]52"])
    );
}

/// The buy-milk sample as another trace: its trace and hop ids begin with `prefix`, its title is
/// `title`.
fn renamed_log(prefix: &str, title: &str) -> Value {
    fn rename(value: &mut Value, ids: &[String], prefix: &str) {
        match value {
            Value::String(text) => {
                for id in ids {
                    if text.contains(id.as_str()) {
                        *text = text.replace(id.as_str(), &format!("{prefix}{}", &id[4..]));
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| rename(v, ids, prefix)),
            Value::Object(map) => map.values_mut().for_each(|v| rename(v, ids, prefix)),
            _ => {}
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces/buy-milk.json");
    let mut log: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut ids: Vec<String> = log["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hop| hop["id"].as_str().unwrap().to_string())
        .collect();
    ids.push(log["trace"]["id"].as_str().unwrap().to_string());
    rename(&mut log, &ids, prefix);
    log["trace"]["title"] = Value::from(title);
    log
}

fn write_log(dir: &Path, name: &str, log: &Value) -> PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, serde_json::to_vec(log).unwrap()).unwrap();
    file
}

#[test]
fn interop_ui_shows_new_traces_live_and_comes_back_after_a_restart() {
    let Some(peers) = peers() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let db_arg = db.to_str().unwrap();
    let port = crate::free_ports::free_port();
    let mut server = ui(&db, port);

    let live_log = renamed_log("11fe", "Recorded while the page was open");
    let live_file = write_log(dir.path(), "live.json", &live_log);
    let live = run(
        &peers,
        &server.url,
        "live",
        &["--db", db_arg, "--import", live_file.to_str().unwrap()],
    );
    assert_clean(&live);
    assert_eq!(live["new_id"], live_log["trace"]["id"]);
    assert!(live["row_seconds"].as_f64().unwrap() <= 5.0, "{live:#}");

    // The server goes away and comes back on its port while the page stays open.
    let later_log = renamed_log("2ec0", "Recorded after the restart");
    let later_file = write_log(dir.path(), "later.json", &later_log);
    let url = server.url.clone();
    let mut page = Script::start(
        &peers,
        &url,
        "reconnect",
        &["--db", db_arg, "--import", later_file.to_str().unwrap()],
    );
    page.expect("READY", Duration::from_secs(60));
    drop(server);
    std::thread::sleep(Duration::from_secs(1));
    server = ui(&db, port);
    page.send("restarted");
    let reconnect = page.finish();
    drop(server);
    for key in [
        "foreign_requests",
        "dialogs",
        "violations",
        "console_errors",
    ] {
        assert_eq!(reconnect[key], Value::Array(vec![]), "{key}: {reconnect:#}");
    }
    assert!(
        reconnect["live_again_seconds"].as_f64().unwrap() <= 10.0,
        "{reconnect:#}"
    );
    let states = reconnect["states"].as_array().unwrap();
    assert!(
        states.iter().any(|s| s != "live") && states.last().unwrap() == "live",
        "{reconnect:#}"
    );
    assert_eq!(reconnect["new_id"], later_log["trace"]["id"]);
    eprintln!(
        "live: a new row after {} s; reconnect: live again after {} s ({}), a new row after {} s",
        live["row_seconds"],
        reconnect["live_again_seconds"],
        reconnect["states"],
        reconnect["row_seconds"]
    );
}

/// An upstream that answers one streamed chat completion: the first half at once, the rest when
/// `release` is sent (as tests/faces/ui_live.rs's).
fn held_upstream() -> (u16, mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (release, released) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let chunk = |text: &str| format!("{:x}\r\n{text}\r\n", text.len());
        let first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Added buy \"}}]}\n\n";
        let rest = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"milk.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{}",
            chunk(first)
        )
        .unwrap();
        stream.flush().unwrap();
        let _ = released.recv_timeout(Duration::from_secs(120));
        write!(stream, "{}0\r\n\r\n", chunk(rest)).unwrap();
        stream.flush().unwrap();
    });
    (port, release)
}

#[test]
fn interop_ui_of_a_proxy_shows_an_answer_while_it_streams() {
    let Some(peers) = peers() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (upstream, release) = held_upstream();
    let route_port = crate::free_ports::free_port();
    let ui_port = crate::free_ports::free_port();
    let proxy = serve(
        &dir.path().join("t.db"),
        &[
            "proxy".into(),
            "--route".into(),
            format!("model=127.0.0.1:{route_port}=http://127.0.0.1:{upstream}"),
            "--ui".into(),
            format!("127.0.0.1:{ui_port}"),
        ],
    );
    assert_eq!(proxy.url, format!("http://127.0.0.1:{ui_port}/"));
    let mut page = Script::start(
        &peers,
        &proxy.url,
        "streaming",
        &[
            "--title",
            "Add buy milk to my notes",
            "--shots",
            dir.path().join("shots").to_str().unwrap(),
        ],
    );
    page.expect("READY", Duration::from_secs(60));

    // The agent's request, through the proxy; its answer is read on its own thread.
    let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"Add buy milk to my notes"}]}"#;
    let mut client = TcpStream::connect(("127.0.0.1", route_port)).unwrap();
    write!(
        client,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{route_port}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let answer = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = client.read_to_string(&mut text);
        text
    });
    page.send("sent");

    // The page shows the first half while the upstream still holds the rest.
    let seen: Value = serde_json::from_str(&page.expect("SEEN", Duration::from_secs(60))).unwrap();
    let strip = seen["strip"].as_str().unwrap();
    assert!(
        strip.contains("now streaming") && strip.contains("Added buy ") && !strip.contains("milk."),
        "{strip}"
    );
    assert!(!answer.is_finished(), "the answer is still held");

    release.send(()).unwrap();
    page.send("released");
    let streamed = page.finish();
    assert_clean(&streamed);
    // The same item, its newest text shown: the rest of the answer.
    let grown = streamed["grown"].as_str().unwrap();
    assert!(grown.contains("milk.") && grown != strip, "{streamed:#}");
    assert_eq!(streamed["row_title"], "Add buy milk to my notes");
    let answer = answer.join().unwrap();
    assert!(
        answer.contains("milk.") && answer.contains("[DONE]"),
        "{answer}"
    );
}
