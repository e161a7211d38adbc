//! The html handout of Claude Code's two recorded turns: per model request its cost, its prompt
//! cache verdict, a stacked bar of its context parts (labelled, ≈ tokens, coloured by kind, with
//! a legend) and what changed since the previous request; all static markup, before the script.

use crate::cost::{claude_code_hops, hop_log_file, tracer};
use crate::html_export::{assert_self_contained, export_html};

#[test]
fn each_model_request_has_its_bar_cost_cache_and_changes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let (file, id) = hop_log_file(dir.path(), "claude-code.json", &claude_code_hops());
    tracer(&db, &["import", file.to_str().unwrap()]);
    let page = export_html(&db, &id, &dir.path().join("cc.html"));
    assert_self_contained(&page);
    let start = page.find("<section id=\"requests\">").expect("the section");
    let end = start + page[start..].find("</section>").unwrap();
    let section = &page[start..end];
    assert!(
        end < page.find("<script>").unwrap(),
        "static markup: read with JavaScript off"
    );
    let requests: Vec<&str> = section
        .split("<article class=\"request\"")
        .skip(1)
        .collect();
    assert_eq!(requests.len(), 2, "{section}");
    for legend in [
        "system prompt",
        "the host's tools",
        "an MCP server's tools",
        "history",
    ] {
        assert!(section.contains(legend), "legend {legend}");
    }
    // The first request: its cost, its cache verdict, a bar whose parts fill the width.
    let first = requests[0];
    assert!(
        first.contains("cost: ≈ $0.1663 (claude-opus-4-8 at list prices)"),
        "{first}"
    );
    assert!(
        first.contains("cache: hit · read 16,901, wrote 17,758, 4,957 uncached"),
        "{first}"
    );
    assert!(
        first.contains("context, 78.3 KB in 39,616 tokens"),
        "{first}"
    );
    let widths: f64 = first
        .split("<rect class=\"part ")
        .skip(1)
        .map(|rect| {
            let at = rect.find("width=\"").unwrap() + 7;
            rect[at..at + rect[at..].find('"').unwrap()]
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    assert!(
        (widths - 800.0).abs() < 1.0,
        "the parts fill the bar: {widths}"
    );
    assert!(first.contains("kind-mcp-tools"), "{first}");
    assert!(
        first.contains("<td>tools: notes (mcp, 5)</td><td>1.6 KB</td><td>≈ 826</td>"),
        "{first}"
    );
    assert!(
        first.contains("<title>tools: the host&#39;s (24): 63.2 KB, ≈ 31,964 tokens</title>"),
        "{first}"
    );
    assert!(
        first.contains("<li>the first request of its conversation</li>"),
        "{first}"
    );
    // The second: what changed since the first (the facts of show --changes).
    let second = requests[1];
    assert!(second.contains("changes since request 1"), "{second}");
    assert!(
        second.contains(
            "<li>message 3 added: assistant, thinking + text + tool call mcp__notes__append: "
        ),
        "{second}"
    );
    assert!(
        second.contains(
            "<li>message 4 added: user, tool result for mcp__notes__append (toolu_01Scripte…): "
        ),
        "{second}"
    );
    assert!(
        second.contains("of the history, new: 2 messages"),
        "{second}"
    );
    let show = tracer(&db, &["show", &id, "--changes"]);
    assert!(show.contains("\n  message 3 added: assistant, "), "{show}");
}
