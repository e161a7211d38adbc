//! The html handout of a long conversation (200 model turns, each re-sending the whole history)
//! grows with what is new: each request shows the messages it adds, its whole body is rebuilt
//! exactly from the page's blob of shared pieces, and the page stays a small multiple of the
//! session's unique content (it was over 100× when every request was rendered whole).

use std::process::Command;

use serde_json::{Value, json};
use tracer_wire::hop::Role;

use crate::cost::hop_log_file;
use crate::html_export::export_html;
use crate::sample_db::TRACER;
use crate::trace_hops::hop;

const TURNS: usize = 200;

/// Words that differ from turn to turn (a small linear congruential generator).
fn prose(seed: &mut u64, words: usize) -> String {
    const WORDS: [&str; 12] = [
        "cargo", "trace", "body", "stream", "parse", "query", "header", "value", "cache", "test",
        "line", "bytes",
    ];
    (0..words)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            WORDS[(*seed >> 33) as usize % WORDS.len()]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_200_turn_page_shows_growth_and_rebuilds_every_body_from_its_shared_pieces() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 7;
    let system = prose(&mut seed, 4000);
    let mut unique = system.len();
    let mut history: Vec<Value> = vec![json!({"role": "user", "content": prose(&mut seed, 40)})];
    let mut hops = Vec::new();
    let mut bodies = Vec::new();
    for turn in 0..TURNS {
        let at = turn as i64 * 100;
        let request = json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": system,
            "messages": history, "stream": false});
        let call = format!("toolu_{turn}");
        let answer = json!({"id": format!("msg_{turn}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": call, "name": "read_file",
                         "input": {"path": format!("src/f{turn}.rs")}}],
            "usage": {"input_tokens": 100 + turn, "output_tokens": 20}});
        unique += history.last().unwrap().to_string().len() + answer.to_string().len();
        bodies.push(request.to_string());
        hops.push(
            hop(
                &format!("ab{turn:04x}"),
                Role::Model,
                "/v1/messages",
                at,
                at + 50,
            )
            .header("anthropic-version", "2023-06-01")
            .bodies(request, answer.clone())
            .done(),
        );
        history.push(json!({"role": "assistant", "content": answer["content"]}));
        history.push(json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": call, "content": prose(&mut seed, 60)}]}));
        unique += history[history.len() - 2].to_string().len();
    }
    let (file, id) = hop_log_file(dir.path(), "long.json", &hops);
    let db = dir.path().join("tracer.db");
    let imported = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&file)
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    let page = export_html(&db, &id, &dir.path().join("long.html"));

    // Every request after the first shows what it adds, not the history again.
    let growth = page.matches("<p class=\"growth\">").count();
    assert_eq!(growth, TURNS - 1);
    assert!(page.contains("the previous request of this conversation plus 2 new messages"));

    // The whole bodies, rebuilt as the page's script does, are the bytes recorded.
    let start = page
        .find("<script type=\"application/json\" id=\"bodies\">")
        .unwrap();
    let blob = &page[start..];
    let blob = &blob[blob.find('>').unwrap() + 1..blob.find("</script>").unwrap()];
    let blob: Value = serde_json::from_str(blob).unwrap();
    let pieces = blob["pieces"].as_array().unwrap();
    let listed = blob["bodies"].as_array().unwrap();
    // A body's pieces: its own list, or the first `keep` of an earlier body's and then its own.
    fn pieces_of(listed: &[Value], index: usize) -> Vec<u64> {
        let body = &listed[index];
        if let Some(ids) = body.as_array() {
            return ids.iter().map(|i| i.as_u64().unwrap()).collect();
        }
        let mut ids = pieces_of(listed, body["from"].as_u64().unwrap() as usize);
        ids.truncate(body["keep"].as_u64().unwrap() as usize);
        ids.extend(
            body["then"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap()),
        );
        ids
    }
    let rebuilt: Vec<String> = (0..listed.len())
        .map(|index| {
            (pieces_of(listed, index).iter())
                .map(|&i| pieces[i as usize].as_str().unwrap())
                .collect()
        })
        .collect();
    // Each body's list is said by what it adds: the blob does not grow with the history.
    let said: usize = listed.iter().map(|body| body.to_string().len()).sum();
    assert!(
        said < 80 * TURNS,
        "{said} bytes of piece lists for {TURNS} bodies"
    );
    assert_eq!(rebuilt, bodies[1..].to_vec());
    for (index, _) in rebuilt.iter().enumerate() {
        assert!(page.contains(&format!("data-body=\"{index}\"")));
    }
    // Each distinct piece is kept once: the blob is about the unique content, not the bodies.
    let kept: usize = pieces.iter().map(|p| p.as_str().unwrap().len()).sum();
    let raw: usize = bodies.iter().map(String::len).sum();
    assert!(
        kept < 2 * unique,
        "{kept} bytes of pieces for {unique} unique"
    );
    assert!(raw > 50 * unique, "the session re-sends its history");
    // The page: measured 14.6× here (its explanations, diagrams and coloured JSON markup); with
    // every request rendered whole it is larger than all the bodies, over 50×.
    assert!(
        page.len() < 20 * unique,
        "page {} bytes, unique content {unique}",
        page.len()
    );
}
