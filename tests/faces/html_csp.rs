//! The HTML handout's Content-Security-Policy: nothing may be fetched or sent, and only the
//! page's own inline style and script run, allowed by their SHA-256 hashes; nothing in the page
//! (an inline `style=` or `on…=` attribute) needs more. A hostile trace's page holds no control
//! or bidi character as it is.

use base64::Engine;

use crate::hostile::{HOSTILE_ID, assert_no_raw_controls, hostile_db};
use crate::html_export::export_html;
use crate::sample_db::{BUY_MILK, sample_db};

/// The `content` of the page's CSP `<meta>`, split into directives.
fn policy(page: &str) -> Vec<(String, Vec<String>)> {
    let marker = "<meta http-equiv=\"Content-Security-Policy\" content=\"";
    let head_end = page.find("</head>").unwrap();
    let at = page.find(marker).expect("a CSP meta");
    assert!(at < head_end, "the CSP is in the head");
    let rest = &page[at + marker.len()..];
    let content = &rest[..rest.find('"').unwrap()];
    content
        .split(';')
        .map(|directive| {
            let mut words = directive.split_whitespace().map(str::to_string);
            (words.next().unwrap(), words.collect())
        })
        .collect()
}

fn sources<'a>(policy: &'a [(String, Vec<String>)], name: &str) -> &'a [String] {
    &policy
        .iter()
        .find(|(directive, _)| directive == name)
        .unwrap_or_else(|| panic!("no {name} in {policy:?}"))
        .1
}

/// The text between `open` and the next `close`, for every such element.
fn elements<'a>(page: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    page.match_indices(open)
        .map(|(at, _)| {
            let inner = &page[at + open.len()..];
            &inner[..inner.find(close).unwrap()]
        })
        .collect()
}

fn hash(code: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, code.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The policy allows exactly the page's inline style and script, and nothing else.
fn assert_strict(page: &str, has_script: bool) {
    let policy = policy(page);
    assert_eq!(sources(&policy, "default-src"), ["'none'"]);
    for name in [
        "connect-src",
        "img-src",
        "font-src",
        "object-src",
        "base-uri",
        "form-action",
    ] {
        assert_eq!(sources(&policy, name), ["'none'"], "{name}");
    }
    let styles = elements(page, "<style>", "</style>");
    assert_eq!(styles.len(), 1);
    assert_eq!(sources(&policy, "style-src"), [hash(styles[0])]);
    let scripts = elements(page, "<script>", "</script>");
    if has_script {
        assert_eq!(scripts.len(), 1);
        assert_eq!(sources(&policy, "script-src"), [hash(scripts[0])]);
    } else {
        assert!(scripts.is_empty());
        assert_eq!(sources(&policy, "script-src"), ["'none'"]);
    }
    for word in policy.iter().flat_map(|(_, sources)| sources) {
        assert!(!word.contains("unsafe"), "{word}");
    }
    // What a hash does not allow: inline style attributes and event-handler attributes.
    for tag in tags(page) {
        let lower = tag.to_lowercase();
        assert!(
            !lower.contains(" style="),
            "an inline style attribute: {tag}"
        );
        let handler = lower.match_indices(" on").any(|(at, _)| {
            let name: String = lower[at + 3..]
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            !name.is_empty() && lower[at + 3 + name.len()..].starts_with('=')
        });
        assert!(!handler, "an event-handler attribute: {tag}");
    }
}

/// Every start tag of the page (`<name …>`), the inline style and script left out.
fn tags(page: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find('<') {
        let after = &rest[at + 1..];
        let Some(end) = after.find('>') else { break };
        let tag = &after[..end];
        if tag.starts_with(|c: char| c.is_ascii_alphabetic()) {
            out.push(tag);
        }
        rest = &after[end + 1..];
        for element in ["style", "script"] {
            if tag == element {
                let close = format!("</{element}>");
                rest = &rest[rest.find(&close).unwrap() + close.len()..];
            }
        }
    }
    out
}

#[test]
fn every_page_carries_a_strict_policy_that_allows_its_own_code_by_hash() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let page = export_html(&db, BUY_MILK, &dir.path().join("milk.html"));
    assert_strict(&page, true);

    let out = dir.path().join("all");
    let output = std::process::Command::new(crate::sample_db::TRACER)
        .arg("--db")
        .arg(&db)
        .args(["export", "--all", "--format", "html", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_strict(
        &std::fs::read_to_string(out.join("index.html")).unwrap(),
        false,
    );
}

#[test]
fn a_hostile_traces_page_is_strict_and_shows_controls_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let (_, db) = hostile_db(dir.path());
    let page = export_html(&db, HOSTILE_ID, &dir.path().join("hostile.html"));
    assert_strict(&page, true);
    assert_no_raw_controls("the html page", &page);
    assert!(
        page.contains("\\u{202e}"),
        "the override shown, not applied"
    );
    assert!(!page.contains("<img"), "no tag from the trace");
}
