//! `tracer rerun --step K` with edits, the quick "edit and resend" form: `--set` by JSON Pointer
//! changes the tool descriptions the scripted model reads and so the tool it picks; `--edit`
//! runs a real editor on the body; `--body` sends a file; a pointer to nothing is refused and
//! nothing is sent. The recorded request is never changed.

use serde_json::Value;

use super::doubles::{careless_mcp, description_reading_model};
use super::system::{Setup, System, json, stdout};

async fn recorded(system: &System) -> (String, Value) {
    let original = system.ask("Add buy milk to my notes").await;
    let log = json(&system.tracer(&["show", &original, "--json"]).await);
    (original, log)
}

fn rerun<'a>(original: &'a str, system: &'a System, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "rerun",
        original,
        "--step",
        "1",
        "--model-url",
        &system.model_route,
        "--json",
    ];
    args.extend_from_slice(more);
    args
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_change_what_the_model_reads_and_the_recording_stays() {
    let model = description_reading_model().await;
    let system = System::start(Setup {
        model,
        mcp: Some(careless_mcp().await),
        max_steps: 5,
    });
    // Recorded with the careless descriptions ("write: Add a note…"): the model picked write.
    let (original, before) = recorded(&system).await;

    // The seed article's lesson: change the descriptions, and the model picks the other tool.
    let edits = rerun(
        &original,
        &system,
        &[
            "--set",
            "/tools/1/function/description=\"Replace the whole notes file.\"",
            "--set",
            "/tools/2/function/description=\"Add a note at the end, keeping the rest.\"",
        ],
    );
    let out = system.tracer(&edits).await;
    assert!(out.status.success(), "{out:?}");
    let doc = json(&out);
    assert_eq!(doc["tool_calls_recorded"][0]["name"], "write");
    assert_eq!(doc["tally"][0]["name"], "append", "{doc:#}");
    assert_eq!(
        doc["edits"],
        serde_json::json!([
            "/tools/1/function/description set",
            "/tools/2/function/description set"
        ])
    );

    // A real editor (a script as $EDITOR) edits the body before it is sent.
    let dir = tempfile::tempdir().unwrap();
    let editor = dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i -e 's/Add a note to the notes file./Replace the file./' -e 's/Append text at the end./Add it at the end./' \"$1\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"));
    command
        .arg("--db")
        .arg(&system.db)
        .args(rerun(&original, &system, &["--edit"]));
    command.env("EDITOR", &editor).env_remove("VISUAL");
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc = json(&out);
    assert_eq!(doc["tally"][0]["name"], "append", "{doc:#}");
    assert_eq!(doc["edits"], serde_json::json!(["edited in the editor"]));

    // A whole body from a file: here the recorded one with no tools, so the model reads none.
    let body = before["messages"][0]["body"]["json"].clone();
    let mut body: Value = match body {
        Value::String(text) => serde_json::from_str(&text).unwrap(),
        other => other,
    };
    body["tools"] = serde_json::json!([]);
    let file = dir.path().join("body.json");
    std::fs::write(&file, body.to_string()).unwrap();
    let out = system
        .tracer(&rerun(
            &original,
            &system,
            &["--body", file.to_str().unwrap()],
        ))
        .await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        json(&out)["tally"][0]["name"],
        "read",
        "no tool says add: the model falls back"
    );

    // A pointer to nothing: refused with words, nothing sent.
    let out = system
        .tracer(&rerun(
            &original,
            &system,
            &["--set", "/tools/9/function/description=\"x\""],
        ))
        .await;
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "--set /tools/9/function/description: /tools has 3 items; there is no item `9`"
        ),
        "{said}"
    );
    assert!(stdout(&out).is_empty());

    // The recording is what it was.
    let after = json(&system.tracer(&["show", &original, "--json"]).await);
    assert_eq!(after["messages"][0]["body"], before["messages"][0]["body"]);
}
