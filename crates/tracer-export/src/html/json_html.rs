//! A body as HTML for the handout: JSON folded (objects and arrays as `<details>`, the top levels
//! open, and every `tool_calls` open all the way down: they are what a reader looks for) and
//! coloured by kind, NDJSON as one folded value per line, anything else as text. Bounded:
//! past a size the body is shown as cut text.

use serde_json::Value;

use super::escape;
use tracer_trace::words::plural;

/// Bodies larger than this are shown as plain text, cut here.
const MAX_RENDERED: usize = 256 * 1024;
/// Levels opened when the page loads.
const OPEN_DEPTH: usize = 2;

/// The HTML of one recorded body.
pub(crate) fn body_html(bytes: &[u8], total_len: u64, truncated: bool) -> String {
    if bytes.is_empty() {
        return "<p class=\"empty\">(empty body)</p>".to_owned();
    }
    let mut out = String::new();
    if bytes.len() <= MAX_RENDERED {
        if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
            out.push_str("<div class=\"json\">");
            value_html(&mut out, &value, 0, false);
            out.push_str("</div>");
        } else if let Some(lines) = ndjson(bytes) {
            out.push_str("<ol class=\"ndjson\">");
            for value in lines {
                out.push_str("<li><div class=\"json\">");
                value_html(&mut out, &value, OPEN_DEPTH, false);
                out.push_str("</div></li>");
            }
            out.push_str("</ol>");
        }
    }
    if out.is_empty() {
        let shown = &bytes[..bytes.len().min(MAX_RENDERED)];
        let text = String::from_utf8_lossy(shown);
        out.push_str(&format!("<pre class=\"text\">{}</pre>", escape(&text)));
        if shown.len() < bytes.len() {
            out.push_str(&format!(
                "<p class=\"note\">(showing {} of {} bytes)</p>",
                shown.len(),
                bytes.len()
            ));
        }
    }
    if truncated {
        out.push_str(&format!(
            "<p class=\"note\">(the recorder kept {} of {total_len} bytes)</p>",
            bytes.len()
        ));
    }
    out
}

/// Each non-empty line as JSON, when every one is (Ollama's NDJSON streams).
fn ndjson(bytes: &[u8]) -> Option<Vec<Value>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let values: Option<Vec<Value>> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).ok())
        .collect();
    values.filter(|v| v.len() > 1)
}

/// Keys whose values are unfolded whatever their depth.
const ALWAYS_OPEN: [&str; 2] = ["tool_calls", "function_call"];

fn value_html(out: &mut String, value: &Value, depth: usize, open: bool) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            container(
                out,
                (depth, open),
                '{',
                '}',
                &plural(map.len(), "key"),
                |out| {
                    for (i, (key, item)) in map.iter().enumerate() {
                        out.push_str("<div class=\"entry\">");
                        out.push_str(&format!("<span class=\"k\">\"{}\"</span>: ", escape(key)));
                        let open = open || ALWAYS_OPEN.contains(&key.as_str());
                        value_html(out, item, depth + 1, open);
                        if i + 1 < map.len() {
                            out.push(',');
                        }
                        out.push_str("</div>");
                    }
                },
            );
        }
        Value::Array(items) if !items.is_empty() => {
            container(
                out,
                (depth, open),
                '[',
                ']',
                &plural(items.len(), "item"),
                |out| {
                    for (i, item) in items.iter().enumerate() {
                        out.push_str("<div class=\"entry\">");
                        value_html(out, item, depth + 1, open);
                        if i + 1 < items.len() {
                            out.push(',');
                        }
                        out.push_str("</div>");
                    }
                },
            );
        }
        Value::Object(_) => out.push_str("<span class=\"p\">{}</span>"),
        Value::Array(_) => out.push_str("<span class=\"p\">[]</span>"),
        Value::String(text) => {
            let quoted = serde_json::to_string(text).unwrap_or_default();
            out.push_str(&format!("<span class=\"s\">{}</span>", escape(&quoted)));
        }
        Value::Number(number) => out.push_str(&format!("<span class=\"n\">{number}</span>")),
        Value::Bool(flag) => out.push_str(&format!("<span class=\"b\">{flag}</span>")),
        Value::Null => out.push_str("<span class=\"b\">null</span>"),
    }
}

/// An object or array as a `<details>`: its opening bracket and size in the summary; open at
/// the top levels and wherever `unfold` says.
fn container(
    out: &mut String,
    (depth, unfold): (usize, bool),
    open: char,
    close: char,
    size: &str,
    items: impl FnOnce(&mut String),
) {
    let state = if depth < OPEN_DEPTH || unfold {
        " open"
    } else {
        ""
    };
    out.push_str(&format!(
        "<details class=\"fold\"{state}><summary><span class=\"p\">{open}</span><span class=\"size\">{size}</span></summary><div class=\"in\">"
    ));
    items(out);
    out.push_str(&format!("</div><span class=\"p\">{close}</span></details>"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_folded_coloured_and_escaped() {
        let html = body_html(br#"{"a":[1,true,null],"b":{"c":"<x>"}}"#, 0, false);
        assert!(html.starts_with("<div class=\"json\"><details class=\"fold\" open>"));
        assert!(html.contains("<span class=\"k\">\"a\"</span>: "));
        assert!(html.contains("<span class=\"n\">1</span>"));
        assert!(html.contains("<span class=\"s\">&quot;&lt;x&gt;&quot;</span>"));
        assert!(html.contains("2 keys") && html.contains("3 items"));
    }

    #[test]
    fn one_is_singular_and_tool_calls_are_unfolded() {
        let html = body_html(
            br#"{"message":{"role":"assistant","tool_calls":[{"function":{"name":"append","arguments":{"content":"buy milk"}}}]},"x":{"y":{"z":[1]}}}"#,
            0,
            false,
        );
        assert!(
            html.contains(">1 item<") && html.contains(">1 key<"),
            "{html}"
        );
        assert!(
            !html.contains("1 items") && !html.contains("1 keys"),
            "{html}"
        );
        // Under tool_calls every level is open, deep as it is; elsewhere depth 2 stays folded.
        let calls = &html[html.find("tool_calls").unwrap()..html.find("\"x\"").unwrap()];
        assert_eq!(calls.matches("<details").count(), 4, "{calls}");
        assert_eq!(
            calls.matches("<details class=\"fold\" open>").count(),
            4,
            "{calls}"
        );
        let rest = &html[html.find("\"x\"").unwrap()..];
        assert!(rest.contains("<details class=\"fold\"><summary>"), "{rest}");
    }

    #[test]
    fn ndjson_text_and_cuts() {
        let html = body_html(b"{\"a\":1}\n{\"a\":2}\n", 0, false);
        assert!(html.starts_with("<ol class=\"ndjson\">") && html.matches("<li>").count() == 2);
        let text = body_html(b"data: <b>\n\n", 0, false);
        assert_eq!(text, "<pre class=\"text\">data: &lt;b&gt;\n\n</pre>");
        assert!(body_html(b"x", 10, true).contains("kept 1 of 10 bytes"));
        assert_eq!(
            body_html(b"", 0, false),
            "<p class=\"empty\">(empty body)</p>"
        );
    }
}
