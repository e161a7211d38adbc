//! The HTML handout checked in Rust: `tracer export ID --format html` of the sample traces has
//! every numbered message with its id, the diagram's arrows and the waterfall's bars, failures
//! and tool errors marked, and nothing that would fetch from a network; `--all -o DIR` writes
//! one page per trace and an index.html linking them.

use std::path::Path;
use std::process::Command;

use crate::sample_db::{BUY_MILK, TRACER, sample_db};

/// `tracer export ID --format html -o FILE` and the page it wrote.
pub fn export_html(db: &Path, id: &str, file: &Path) -> String {
    let output = Command::new(TRACER)
        .arg("--db")
        .arg(db)
        .args(["export", id, "--format", "html", "-o"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(file).unwrap()
}

/// Every place a page could load something from is local: no `src`, no `<link>`, no `@import`,
/// and every `href` and `url(` points inside the page.
pub fn assert_self_contained(page: &str) {
    let lower = page.to_lowercase();
    for banned in [
        " src=", "<link", "@import", "<iframe", "<object", "<embed", "srcset",
    ] {
        assert!(!lower.contains(banned), "the page has {banned}");
    }
    for (at, _) in lower.match_indices("href=\"") {
        let target = &lower[at + 6..];
        assert!(
            target.starts_with('#') || !target.contains(':') || target.find(':') > target.find('"'),
            "a link leaves the page: {}",
            &page[at..(at + 80).min(page.len())]
        );
    }
    for (at, _) in lower.match_indices("url(") {
        assert!(
            lower[at + 4..].starts_with('#'),
            "url( outside the page at {at}"
        );
    }
}

#[test]
fn the_buy_milk_page_has_every_message_and_fetches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let page = export_html(&db, &BUY_MILK[..8], &dir.path().join("milk.html"));
    assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(page.contains("<title>Trace: Add buy milk to my notes</title>"));
    assert_self_contained(&page);
    assert_eq!(page.matches("<details class=\"message ").count(), 10);
    for number in 1..=10 {
        assert!(
            page.contains(&format!("id=\"m{number}\" data-number=\"{number}\"")),
            "m{number}"
        );
        assert!(
            page.contains(&format!("id=\"a{number}\" data-number=\"{number}\"")),
            "a{number}"
        );
    }
    // One bar per hop, named by its request's number; the model call carries Ollama's timings
    // only where the answer reported them (the article's bodies do not).
    for hop in [1, 2, 4, 6, 8] {
        assert!(
            page.contains(&format!("id=\"b{hop}\" data-hop=\"{hop}\"")),
            "b{hop}"
        );
    }
    for lane in [">you<", ">agent<", ">ollama<", ">notes<"] {
        assert!(page.contains(lane), "lane {lane}");
    }
    assert!(
        page.contains("<span class=\"k\">\"tool_calls\"</span>"),
        "coloured JSON"
    );
    assert!(page.contains("The model is stateless"), "explanations");
    assert!(
        page.contains("<ol id=\"toc\"></ol>"),
        "the contents are built by the script"
    );
    assert!(page.contains("@media print"));
    // Model, tool and host time told apart (the sample's recorded times).
    assert!(
        page.contains("model 5.6 ms · tools 13 ms · the host's own 20 ms · in all 39 ms"),
        "the totals"
    );
    assert!(
        !page.contains("class=\"arrow request failed"),
        "nothing failed in buy milk"
    );
}

#[test]
fn tool_errors_streams_and_the_index_of_all() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let fixed = export_html(&db, "3b30683a", &dir.path().join("fixed.html"));
    assert!(
        fixed.contains("<g class=\"arrow response tool-error\""),
        "the tool error's arrow"
    );
    assert!(fixed.contains("<span class=\"badge tool-error\">tool error</span>"));
    assert!(
        fixed.contains("class=\"bar tool tool-error\""),
        "and its bar"
    );
    assert!(
        fixed.contains("Ollama reports: total"),
        "Ollama's durations where reported"
    );
    assert!(fixed.contains("class=\"ollama generation\""));
    let streamed = export_html(&db, "122bbabf", &dir.path().join("stream.html"));
    assert!(
        streamed.contains("<g class=\"first-chunk\"><title>first of "),
        "first chunk marked"
    );
    assert!(
        streamed.contains("<table class=\"chunks\">"),
        "chunk timing"
    );
    assert!(
        streamed.contains("<ol class=\"ndjson\">"),
        "NDJSON lines folded one by one"
    );

    let out = dir.path().join("handouts");
    let status = Command::new(TRACER)
        .arg("--db")
        .arg(&db)
        .args(["export", "--all", "--format", "html", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_self_contained(&index);
    assert_eq!(index.matches("<a href=\"").count(), 6);
    for file in crate::sample_db::sample_files() {
        let log: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let id = log["trace"]["id"].as_str().unwrap();
        assert!(index.contains(&format!("<a href=\"{id}.html\">")), "{id}");
        assert!(out.join(format!("{id}.html")).is_file());
    }
}

#[test]
fn a_failed_hop_is_red_and_model_tool_and_host_time_add_up() {
    use tracer_export::body_text::TraceToExport;
    use tracer_export::html::html_page;
    use tracer_trace::explain::timing::{BarKind, waterfall};
    use tracer_trace::explain_trace;
    use tracer_wire::hop::HopState;

    let hops = crate::trace_hops::buy("f", "eggs", 0);
    // The host 0..1000 ms, tools 10..20 and 510..520, the model 30..500 and 530..900.
    let timing = waterfall(&hops, &explain_trace(&hops));
    let ms = 1_000_000;
    assert_eq!(timing.span_ns, 1000 * ms);
    assert_eq!((timing.model_ns, timing.tool_ns), (840 * ms, 20 * ms));
    assert_eq!(
        timing.host_ns,
        140 * ms,
        "the host's own: its 1000 ms less 860 ms of calls"
    );
    let kinds: Vec<BarKind> = timing.bars.iter().map(|b| b.kind).collect();
    use BarKind::{Host, Model, Tool};
    assert_eq!(kinds, [Host, Tool, Model, Tool, Model]);

    let mut broken = hops.clone();
    if let Some(end) = broken[4].end.as_mut() {
        end.state = Some(HopState::Failed);
        end.status = Some(502);
        end.error = Some("upstream refused the connection".into());
    }
    let page = html_page(&TraceToExport {
        fetch: None,
        session: None,
        id: "0123456789abcdef",
        title: Some("Add <eggs> to my notes"),
        hops: &broken,
        agent_events: &[],
    });
    assert!(page.contains("<title>Trace: Add &lt;eggs&gt; to my notes</title>"));
    assert!(
        page.contains("<g class=\"arrow response failed\""),
        "the failed answer's arrow"
    );
    assert!(page.contains("class=\"bar model failed\""), "and its bar");
    assert!(page.contains("<span class=\"badge failed\">failed</span>"));
    assert!(page.contains("error: upstream refused the connection"));
    assert_self_contained(&page);
}
