//! A long agent session (issue 28) recorded through a real `tracer proxy` against a scripted
//! model: 200 turns, each request a ~20 KB system prompt plus the growing history, each answer a
//! streamed SSE message. Every body reads back byte-exact (store, `show --json`, `export` json
//! and har), the database is at most a tenth of the bodies' raw bytes, `tracer ls` reads no body
//! once it has kept the summaries, kill -9 mid-session loses no hop, and a database of the schema
//! before chunks opens and reads after the migration.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::{Value, json};
use tracer_store::Store;

use crate::proxy::harness::{client, full, spawn_upstream};
use crate::store_faults::process::{ProxyProcess, hold_exclusive_lock, journals};

#[allow(dead_code)]
#[path = "../../examples/bench_sessions/session.rs"]
mod session;

use session::{Answer, Rng};

/// What the agent sent and got, per turn.
pub(crate) struct Sent {
    request: Vec<u8>,
    response: Vec<u8>,
}

/// A model that answers each request with the next scripted SSE answer, one event per write.
pub(crate) async fn scripted_model(answers: Arc<Mutex<VecDeque<Vec<String>>>>) -> SocketAddr {
    spawn_upstream(move |req: Request<Incoming>| {
        let answers = answers.clone();
        async move {
            let _ = req.into_body().collect().await;
            let events = answers.lock().unwrap().pop_front().unwrap_or_default();
            let frames = futures_util::stream::iter(
                events
                    .into_iter()
                    .map(|e| Ok::<_, Infallible>(Frame::data(Bytes::from(e)))),
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(StreamBody::new(frames).boxed())
                .unwrap()
        }
    })
    .await
}

/// The agent's side of a session: a system prompt, tools, and a history that grows by the
/// answer and a tool result every turn.
pub(crate) struct Agent {
    rng: Rng,
    system: Value,
    tools: Value,
    history: Vec<Value>,
    answers: Arc<Mutex<VecDeque<Vec<String>>>>,
}

impl Agent {
    fn new(seed: u64, answers: Arc<Mutex<VecDeque<Vec<String>>>>) -> Agent {
        Agent::with_prompt(seed, answers, 20_000)
    }

    /// An agent whose system prompt is `prompt_len` bytes of prose.
    pub(crate) fn with_prompt(
        seed: u64,
        answers: Arc<Mutex<VecDeque<Vec<String>>>>,
        prompt_len: usize,
    ) -> Agent {
        let mut rng = Rng::new(seed);
        let system = json!([{"type": "text", "text": session::prose(&mut rng, prompt_len)}]);
        let tools = json!([{"name": "read_file", "description": session::prose(&mut rng, 400),
            "input_schema": {"type": "object"}}]);
        let history = vec![json!({"role": "user", "content": "fix the failing test"})];
        Agent {
            rng,
            system,
            tools,
            history,
            answers,
        }
    }

    /// One turn through the proxy; returns what was sent and answered.
    pub(crate) async fn turn(&mut self, proxy: SocketAddr, turn: usize, turns: usize) -> Sent {
        let request = session::request_body(&self.system, &self.tools, &self.history);
        let answer = session::answer_for(&mut self.rng, turn, turns, usize::MAX);
        let events = session::sse_events(&answer, turn);
        let expected = events.concat().into_bytes();
        self.answers.lock().unwrap().push_back(events);
        let post = Request::post(format!("http://{proxy}/v1/messages"))
            .header("content-type", "application/json")
            .body(full(request.clone()))
            .unwrap();
        let answered = client().request(post).await.unwrap();
        let response = answered.into_body().collect().await.unwrap().to_bytes();
        assert!(response == expected, "turn {turn}: the answer was changed");
        self.history.push(session::assistant_message(&answer));
        if let Answer::ToolUse { id, .. } = &answer {
            let len = 300 + self.rng.below(1_200) as usize;
            let output = session::prose(&mut self.rng, len);
            self.history.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": output}]}));
        }
        Sent {
            request,
            response: response.to_vec(),
        }
    }
}

pub(crate) fn tracer(db: &Path, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tracer {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Every hop of the store, by request order, has the bytes that were sent and answered.
async fn assert_stored(db: &Path, sent: &[Sent]) {
    let store = Store::open_existing(db).await.unwrap();
    let hops = store.all_hops().await.unwrap();
    assert_eq!(hops.len(), sent.len());
    for (turn, (hop, sent)) in hops.iter().zip(sent).enumerate() {
        assert!(hop.end.request_body.bytes == sent.request, "request {turn}");
        assert!(
            hop.end.response_body.bytes == sent.response,
            "response {turn}"
        );
        assert_eq!(hop.end.request_body.total_len, sent.request.len() as u64);
    }
    store.close().await;
}

/// The bodies of a hop log (`show --json`, `export --format json`): (hop id, request, response).
fn hop_log_bodies(log: &Value) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut bodies: Vec<(String, Vec<u8>, Vec<u8>)> = Vec::new();
    for message in log["messages"].as_array().unwrap() {
        let body: tracer_export::hop_log::Body =
            serde_json::from_value(message["body"].clone()).unwrap();
        let bytes = body.decode().unwrap().bytes;
        let id = message["hop_id"].as_str().unwrap().to_string();
        if message["direction"] == "→" {
            bodies.push((id, bytes, Vec::new()));
        } else if let Some(entry) = bodies.iter_mut().find(|(hop, _, _)| *hop == id) {
            entry.2 = bytes;
        }
    }
    bodies
}

/// Peak RSS of `tracer ls`, in KiB, read from /proc while it runs (VmHWM only grows).
fn ls_peak_kib(db: &Path) -> (u64, Vec<u8>) {
    peak_kib(db, &["ls", "--json"])
}

/// Peak RSS of a tracer command, in KiB, and its output.
fn peak_kib(db: &Path, args: &[&str]) -> (u64, Vec<u8>) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let reader = std::thread::spawn({
        let mut stdout = child.stdout.take().unwrap();
        move || {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut stdout, &mut out).unwrap();
            out
        }
    });
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = std::fs::read_to_string(&status).ok().and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        }) {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(peak > 0, "VmHWM was never read");
    (peak, reader.join().unwrap())
}

/// Text whose bytes never repeat (so no chunk of it is shared): hex of a counter's hash.
fn unique_text(len: usize) -> Vec<u8> {
    let mut rng = Rng::new(99);
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        out.extend_from_slice(format!("{:016x}", rng.next()).as_bytes());
    }
    out.truncate(len);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_200_turn_session_is_kept_in_a_tenth_of_its_bytes_and_read_back_exact() {
    const TURNS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let answers = Arc::new(Mutex::new(VecDeque::new()));
    let upstream = scripted_model(answers.clone()).await;
    let proxy = ProxyProcess::start(&db, upstream).await;
    let mut agent = Agent::new(28, answers.clone());
    let mut sent = Vec::new();
    for turn in 0..TURNS {
        sent.push(agent.turn(proxy.addr, turn, TURNS).await);
    }
    let exit = proxy.terminate().await;
    assert_eq!(exit.written, TURNS as u64, "{}", exit.line);
    let clock = std::time::Instant::now();

    let raw: usize = sent
        .iter()
        .map(|s| s.request.len() + s.response.len())
        .sum();
    let size = std::fs::metadata(&db).unwrap().len() as usize
        + std::fs::metadata(dir.path().join("t.db-wal")).map_or(0, |m| m.len() as usize);
    // What is kept takes a tenth of the bodies' bytes: measured on a vacuumed copy without the
    // readings and listings the proxy kept while recording (a cache any reader makes again). The
    // file itself also holds free pages (pieces taken in from the journal, rewritten rows): from
    // 8.6% to 12.4% of the raw bytes from run to run, so it is bounded apart.
    let bodies_alone = size_without_kept_readings(&db, dir.path()).await;
    let percent = |bytes: usize| bytes as f64 * 100.0 / raw as f64;
    assert!(
        bodies_alone * 10 <= raw,
        "the database without its kept readings is {bodies_alone} bytes for {raw} raw body bytes ({:.1}%)",
        percent(bodies_alone)
    );
    assert!(
        size * 100 <= raw * 15,
        "the database is {size} bytes for {raw} raw body bytes ({:.1}%)",
        percent(size)
    );
    eprintln!(
        "database {size} bytes ({:.1}%), {bodies_alone} without its kept readings ({:.1}%), for {raw} raw body bytes",
        percent(size),
        percent(bodies_alone)
    );
    assert_stored(&db, &sent).await;
    eprintln!("stored bodies checked after {:?}", clock.elapsed());

    // The readers and exports give the same bytes.
    let listed: Value = serde_json::from_slice(&tracer(&db, &["ls", "--json"])).unwrap();
    let trace = listed[0]["id"].as_str().unwrap().to_string();
    assert_eq!(listed[0]["hop_count"], TURNS);
    let shown: Value = serde_json::from_slice(&tracer(&db, &["show", &trace, "--json"])).unwrap();
    let json_file = dir.path().join("t.json");
    let json_path = json_file.to_str().unwrap();
    tracer(&db, &["export", &trace, "-f", "json", "-o", json_path]);
    let exported: Value = serde_json::from_slice(&std::fs::read(&json_file).unwrap()).unwrap();
    for log in [&shown, &exported] {
        let bodies = hop_log_bodies(log);
        assert_eq!(bodies.len(), TURNS);
        for (turn, ((_, request, response), sent)) in bodies.iter().zip(&sent).enumerate() {
            assert!(*request == sent.request, "hop log request {turn}");
            assert!(*response == sent.response, "hop log response {turn}");
        }
    }
    let har_file = dir.path().join("t.har");
    tracer(
        &db,
        &[
            "export",
            &trace,
            "-f",
            "har",
            "-o",
            har_file.to_str().unwrap(),
        ],
    );
    let har: Value = serde_json::from_slice(&std::fs::read(&har_file).unwrap()).unwrap();
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), TURNS);
    for (turn, (entry, sent)) in entries.iter().zip(&sent).enumerate() {
        let text = |v: &Value| v.as_str().unwrap().as_bytes().to_vec();
        assert!(
            text(&entry["request"]["postData"]["text"]) == sent.request,
            "har {turn}"
        );
        assert!(
            text(&entry["response"]["content"]["text"]) == sent.response,
            "har {turn}"
        );
    }

    eprintln!("readers checked after {:?}", clock.elapsed());
    // Once a trace is read, each model request's reading is kept (`hop_readings`): the faces
    // read from it say what they said reading every body.
    let faces = |db: &Path| {
        let md = dir.path().join("t.md");
        tracer(
            db,
            &["export", &trace, "-f", "md", "-o", md.to_str().unwrap()],
        );
        let html = dir.path().join("t.html");
        tracer(
            db,
            &["export", &trace, "-f", "html", "-o", html.to_str().unwrap()],
        );
        (
            tracer(db, &["show", &trace]),
            std::fs::read(md).unwrap(),
            std::fs::read(html).unwrap(),
        )
    };
    let kept = faces(&db);
    assert_eq!(
        count(&db, "select count(*) from hop_readings").await,
        TURNS as i64
    );
    sql(&db, "delete from hop_readings").await;
    let read_again = faces(&db);
    assert!(kept.0 == read_again.0, "show from kept readings differs");
    assert!(kept.1 == read_again.1, "md from kept readings differs");
    assert!(kept.2 == read_again.2, "html from kept readings differs");
    assert_eq!(
        count(&db, "select count(*) from hop_readings").await,
        TURNS as i64
    );
    // One more trace whose one body is larger than all the others together: `ls` keeps the
    // summaries the first time, and from then on reads none of the bodies.
    let (baseline_kib, _) = ls_peak_kib(&db);
    let clock = std::time::Instant::now();
    // A model request of one message, so `show` reads it as the session's requests are read.
    let big = serde_json::to_vec(&json!({"model": "m", "max_tokens": 1, "messages": [
        {"role": "user", "content": String::from_utf8(unique_text(raw + 1024 * 1024)).unwrap()}]}))
    .unwrap();
    let args = ["--max-body", "200000000"];
    let proxy = ProxyProcess::start_with(&db, upstream, &args).await;
    answers
        .lock()
        .unwrap()
        .push_back(vec!["data: {}\n\n".to_string()]);
    // Its own trace however soon after the session it comes (grouping's window would join it).
    let post = Request::post(format!("http://{}/v1/messages", proxy.addr))
        .header(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        .body(full(big.clone()))
        .unwrap();
    let _ = client()
        .request(post)
        .await
        .unwrap()
        .into_body()
        .collect()
        .await;
    proxy.terminate().await;
    eprintln!("big body recorded after {:?}", clock.elapsed());
    let (first_kib, first) = ls_peak_kib(&db);
    eprintln!("first ls after {:?}", clock.elapsed());
    let (kib, again) = ls_peak_kib(&db);
    assert_eq!(first, again, "a kept summary lists as a computed one");
    let listed: Value = serde_json::from_slice(&again).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    // Reading the big body would take its bytes at least once more than before it was there.
    assert!(
        (kib.saturating_sub(baseline_kib) as usize) * 1024 < big.len() / 4,
        "tracer ls peaked at {kib} KiB (before the big body {baseline_kib} KiB, the first time \
         after it {first_kib} KiB) with a body of {} bytes",
        big.len()
    );
    // `show` reads each request once and lets go of its body: the whole session shows in less
    // memory than the one request that is larger than all of it.
    let big_trace = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap());
    let big_trace = big_trace
        .into_iter()
        .find(|id| *id != trace)
        .unwrap()
        .to_string();
    let (big_kib, big_shown) = peak_kib(&db, &["show", &big_trace]);
    assert!(String::from_utf8_lossy(&big_shown).contains("1 hop"));
    let (show_kib, shown) = peak_kib(&db, &["show", &trace]);
    assert!(String::from_utf8_lossy(&shown).contains(&format!("{TURNS} hops")));
    // `show --json` prints every body, fetching each let-go request body back in its turn.
    let (json_kib, json) = peak_kib(&db, &["show", &trace, "--json"]);
    let json: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(hop_log_bodies(&json).len(), TURNS);
    eprintln!(
        "show peaked at {show_kib} KiB, show --json at {json_kib} KiB, {big_kib} KiB for the \
         one big request"
    );
    assert!(
        json_kib < big_kib,
        "tracer show --json of {TURNS} turns peaked at {json_kib} KiB, show of one request \
         larger than all of them at {big_kib} KiB"
    );
    assert!(
        show_kib < big_kib,
        "tracer show of {TURNS} turns ({raw} body bytes) peaked at {show_kib} KiB, of one \
         request of {} bytes at {big_kib} KiB",
        big.len()
    );
    // With its readings kept, `show` reads no large request body at all: spoiled, they change
    // nothing it prints.
    sql(
        &db,
        "update body_chunks set bytes = zeroblob(length(bytes))
         where id in (select chunk_id from hop_body_chunks where side = 0)",
    )
    .await;
    let spoiled = tracer(&db, &["show", &trace]);
    assert!(
        spoiled == kept.0,
        "show read a request body it had kept the reading of"
    );
}

/// Runs one statement on the database.
pub(crate) async fn sql(db: &Path, statement: &'static str) {
    let store = Store::open_existing(db).await.unwrap();
    sqlx::query(statement).execute(store.pool()).await.unwrap();
    store.close().await;
}

/// The one integer a query gives.
pub(crate) async fn count(db: &Path, query: &'static str) -> i64 {
    let store = Store::open_existing(db).await.unwrap();
    let n: i64 = sqlx::query_scalar(query)
        .fetch_one(store.pool())
        .await
        .unwrap();
    store.close().await;
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_long_session_loses_no_hop_and_the_journal_is_taken_in() {
    const TURNS: usize = 80;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let answers = Arc::new(Mutex::new(VecDeque::new()));
    let upstream = scripted_model(answers.clone()).await;
    let mut agent = Agent::new(9, answers.clone());
    let mut sent = Vec::new();
    let proxy = ProxyProcess::start(&db, upstream).await;
    for turn in 0..30 {
        sent.push(agent.turn(proxy.addr, turn, TURNS).await);
    }
    // The database takes nothing for a while: the next turns are only in the journal.
    let lock = hold_exclusive_lock(&db).await;
    for turn in 30..50 {
        sent.push(agent.turn(proxy.addr, turn, TURNS).await);
    }
    proxy.kill();
    lock.release().await;
    assert!(
        !journals(&db).is_empty(),
        "the killed proxy left its journal"
    );

    // A new proxy on the same database takes the journal in; the session goes on.
    let proxy = ProxyProcess::start(&db, upstream).await;
    for turn in 50..TURNS {
        sent.push(agent.turn(proxy.addr, turn, TURNS).await);
    }
    proxy.terminate().await;
    assert!(journals(&db).is_empty(), "the journal was taken in");
    assert_stored(&db, &sent).await;
}

#[tokio::test]
async fn a_database_from_before_chunks_opens_and_reads_after_the_migration() {
    let dir = tempfile::tempdir().unwrap();
    // The schema as the previous release made it: every migration before the chunks.
    let old_migrations = dir.path().join("migrations");
    std::fs::create_dir(&old_migrations).unwrap();
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.as_str() < "20261202000000" {
            std::fs::copy(&path, old_migrations.join(&name)).unwrap();
        }
    }
    let db = dir.path().join("old.db");
    let url = format!("sqlite://{}?mode=rwc", db.display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::migrate::Migrator::new(old_migrations.as_path())
        .await
        .unwrap()
        .run(&pool)
        .await
        .unwrap();
    let inline = unique_text(40_000);
    let (piece, tail) = (unique_text(300_000), b"and the tail".to_vec());
    sqlx::query(
        "insert into hops (id, route, role, transport, peer, method, path, url, state,
             request_headers, request_body, request_body_len, request_body_truncated,
             response_body, response_body_len, response_body_truncated, request_started_unix_ns,
             response_ended_unix_ns, body_pieces)
         values ('0123456789abcdef0123456789abcdef', 'test', 'model', 'http', '127.0.0.1:1',
             'POST', '/v1/messages', 'http://127.0.0.1:2/v1/messages', 'complete', '[]',
             ?1, ?2, 0, ?3, ?4, 0, 1000, 2000, 2)",
    )
    .bind(&inline)
    .bind(inline.len() as i64)
    .bind(&tail)
    .bind((piece.len() + tail.len()) as i64)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "insert into hop_body_pieces (hop_id, side, seq, bytes)
         values ('0123456789abcdef0123456789abcdef', 1, 0, ?1)",
    )
    .bind(&piece)
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;

    let store = Store::open_existing(&db).await.unwrap();
    let hop = store.hop("0123456789abcdef").await.unwrap();
    assert!(hop.end.request_body.bytes == inline);
    assert!(hop.end.response_body.bytes == [piece.as_slice(), &tail].concat());
    let tables: i64 = sqlx::query_scalar(
        "select count(*) from sqlite_master where name in ('body_chunks', 'hop_body_chunks', 'trace_summaries')",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(tables, 3, "the migration ran");
    store.close().await;
    // The readers list and show it.
    let listed: Value = serde_json::from_slice(&tracer(&db, &["ls", "--json"])).unwrap();
    let trace = listed[0]["id"].as_str().unwrap().to_string();
    let shown: Value = serde_json::from_slice(&tracer(&db, &["show", &trace, "--json"])).unwrap();
    let bodies = hop_log_bodies(&shown);
    assert!(bodies[0].1 == inline);
    assert!(bodies[0].2 == [piece.as_slice(), &tail].concat());
}

/// The size of a vacuumed copy of the database (no free pages) with the proxy's kept readings
/// and listings (derived data, made again by any reader) taken out.
async fn size_without_kept_readings(db: &Path, dir: &Path) -> usize {
    let copy = dir.join("bodies-alone.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}", db.display()))
        .await
        .unwrap();
    sqlx::query("vacuum into ?1")
        .bind(copy.to_str().unwrap())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}", copy.display()))
        .await
        .unwrap();
    for statement in [
        "delete from hop_readings",
        "delete from reading_texts",
        "delete from trace_summaries",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    sqlx::query("vacuum").execute(&pool).await.unwrap();
    pool.close().await;
    std::fs::metadata(&copy).unwrap().len() as usize
}
