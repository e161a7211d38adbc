//! Interop: the `tracer ui` page in Chromium shows a trace recorded while it is open, comes back
//! after the server restarts, and (`proxy --ui`) an answer while it streams (the harness:
//! interop_ui.rs).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::interop_ui::*;
use crate::sample_db::sample_db;
use crate::ui_live::held_upstream;

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
