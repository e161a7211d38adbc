//! MCP's rich content told in words: text quoted, an image or audio by its type and size, a
//! resource link by its URI, an embedded resource by its URI, kind and size, annotations, and
//! structured content. Base64 is never quoted, only measured.

use serde_json::Value;

use crate::words::shorten;
pub(crate) use tracer_wire::base64_fold::fold_base64;

/// How long a quoted text may be inside a content summary.
const QUOTE: usize = 60;

pub(crate) use tracer_wire::base64_fold::{base64_size, size_text};

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// An embedded resource's or a read resource's contents: `demo://x (text/plain, 340 bytes)`.
pub(crate) fn resource_text(resource: &Value) -> String {
    let uri = str_of(resource, "uri").unwrap_or("?");
    let mime = str_of(resource, "mimeType");
    let (kind, size) = match (str_of(resource, "text"), str_of(resource, "blob")) {
        (Some(text), _) => ("text", text.len()),
        (None, Some(blob)) => ("binary", base64_size(blob)),
        (None, None) => ("empty", 0),
    };
    let kind = mime.map_or_else(|| kind.to_string(), |m| format!("{kind}, {m}"));
    format!("{uri} ({kind}, {})", size_text(size))
}

/// Who an annotated block is for and how much it matters: `for the user, priority 1`.
pub(crate) fn annotations_text(block: &Value) -> Option<String> {
    let annotations = block.get("annotations")?;
    let mut parts = Vec::new();
    if let Some(Value::Array(audience)) = annotations.get("audience") {
        let names: Vec<&str> = audience.iter().filter_map(Value::as_str).collect();
        if !names.is_empty() {
            parts.push(format!("for the {}", names.join(" and the ")));
        }
    }
    if let Some(priority) = annotations.get("priority").and_then(Value::as_f64) {
        parts.push(format!("priority {priority}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One content block in words.
pub(crate) fn block_text(block: &Value) -> String {
    let mime = str_of(block, "mimeType").unwrap_or("?");
    let said = match str_of(block, "type").unwrap_or("") {
        "text" => format!(
            "\"{}\"",
            shorten(str_of(block, "text").unwrap_or(""), QUOTE)
        ),
        "image" => format!(
            "an image ({mime}, {})",
            size_text(base64_size(str_of(block, "data").unwrap_or("")))
        ),
        "audio" => format!(
            "audio ({mime}, {})",
            size_text(base64_size(str_of(block, "data").unwrap_or("")))
        ),
        "resource_link" => format!(
            "a link to resource {}",
            shorten(str_of(block, "uri").unwrap_or("?"), QUOTE)
        ),
        "resource" => format!(
            "an embedded resource {}",
            block.get("resource").map(resource_text).unwrap_or_default()
        ),
        other => format!("a {} block", shorten(other, 20)),
    };
    match annotations_text(block) {
        Some(annotations) => format!("{said} ({annotations})"),
        None => said,
    }
}

/// A result's content blocks in words, joined.
pub(crate) fn blocks_text(blocks: &[Value]) -> String {
    if blocks.is_empty() {
        return "no content".into();
    }
    blocks.iter().map(block_text).collect::<Vec<_>>().join(", ")
}

/// A tool result in words: its blocks, then its structured content.
pub(crate) fn result_text(result: &Value) -> String {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, Clone::clone);
    let structured = result.get("structuredContent").map(|s| {
        format!(
            "structured content {}",
            shorten(&fold_base64(s).to_string(), QUOTE)
        )
    });
    match (blocks.is_empty(), structured) {
        (true, Some(structured)) => structured,
        (false, Some(structured)) => format!("{}; {structured}", blocks_text(&blocks)),
        (_, None) => blocks_text(&blocks),
    }
}

/// Whether a tool result says more than its text: non-text blocks, annotations, structure.
pub(crate) fn is_rich(result: &Value) -> bool {
    let blocks = result.get("content").and_then(Value::as_array);
    result.get("structuredContent").is_some()
        || blocks.is_some_and(|b| {
            b.iter()
                .any(|b| str_of(b, "type") != Some("text") || b.get("annotations").is_some())
        })
}

/// The sentence under a rich tool result: what kinds of blocks came, the structured content.
pub(crate) fn rich_detail(result: &Value) -> String {
    let mut out = String::new();
    if let Some(structured) = result.get("structuredContent") {
        out.push_str(&format!(
            "With structured content matching the tool's output schema: {}. ",
            shorten(&structured.to_string(), 120)
        ));
    }
    let blocks = result.get("content").and_then(Value::as_array);
    if blocks.is_some_and(|b| b.iter().any(|b| b.get("annotations").is_some())) {
        out.push_str("Annotations say whom a block is for (user, assistant) and how much it matters; they do not make it an error. ");
    }
    if blocks.is_some_and(|b| {
        b.iter()
            .any(|b| matches!(str_of(b, "type"), Some("image" | "audio")))
    }) {
        out.push_str("Images and audio travel as base64, shown here by their size. ");
    }
    out.push_str("isError is false: a normal result.");
    out
}

/// A prompt's messages in words: `user: "…", assistant: an embedded resource …`.
pub(crate) fn prompt_messages_text(messages: &[Value]) -> String {
    messages
        .iter()
        .map(|m| {
            let role = str_of(m, "role").unwrap_or("?");
            let content = m.get("content").map(block_text).unwrap_or_default();
            format!("{role}: {content}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rich_blocks_are_told_without_their_base64() {
        let image = json!({"type":"image","mimeType":"image/png","data":"A".repeat(1600)});
        assert_eq!(block_text(&image), "an image (image/png, 1.2 kB)");
        let link = json!({"type":"resource_link","uri":"demo://resource/dynamic/text/1"});
        assert_eq!(
            block_text(&link),
            "a link to resource demo://resource/dynamic/text/1"
        );
        let embedded = json!({"type":"resource","resource":{"uri":"demo://a.gz","mimeType":"application/gzip","blob":"AAAA"}});
        assert_eq!(
            block_text(&embedded),
            "an embedded resource demo://a.gz (binary, application/gzip, 3 bytes)"
        );
        let annotated = json!({"type":"text","text":"Error: Operation failed","annotations":{"priority":1.0,"audience":["user","assistant"]}});
        assert_eq!(
            block_text(&annotated),
            "\"Error: Operation failed\" (for the user and the assistant, priority 1)"
        );
        assert_eq!(size_text(340), "340 bytes");
        let folded =
            fold_base64(&json!({"data": "data:text/plain;base64,dG91ciB0ZXh0IA==", "n": 1}));
        assert_eq!(folded, json!({"data": "<base64, 10 bytes>", "n": 1}));
        assert!(is_rich(&json!({"content":[image]})));
        assert!(!is_rich(&json!({"content":[{"type":"text","text":"x"}]})));
    }
}
