//! Interop: the `tracer ui` page in Chromium reads as the CLI prints (the list as `ls --json`,
//! a trace as `show --json`, a deep link, search, screenshots), and shows hostile recorded
//! content as text, running nothing (the harness: interop_ui.rs).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::hostile::{HOSTILE_ID, ITEM, RESULT, TITLE, hostile_log};
use crate::interop_ui::*;
use crate::sample_db::{BUY_MILK, TRACER, sample_db};

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
