//! Base64 folded for reading: every base64 string in recorded JSON (an image's data, a blob, a
//! `data:` URI) shown as `<base64, 1.2 kB>`, so no summary, handout or screen fills with it.

use serde_json::Value;

/// `340 bytes`, `1.2 kB`, `3.4 MB`.
pub fn size_text(bytes: usize) -> String {
    if bytes < 1000 {
        format!("{bytes} bytes")
    } else if bytes < 1_000_000 {
        format!("{:.1} kB", bytes as f64 / 1000.0)
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
}

/// The size of the data a base64 text carries.
pub fn base64_size(text: &str) -> usize {
    let trimmed = text.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

/// Whether a text is base64 data worth folding: a `data:` URI, or a long run of the alphabet.
fn is_base64(text: &str) -> bool {
    if text.starts_with("data:") && text.contains(";base64,") {
        return true;
    }
    text.len() >= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_'))
}

/// A JSON value with every base64 string folded to `<base64, 1.2 kB>` (its data's size).
pub fn fold_base64(value: &Value) -> Value {
    match value {
        Value::String(text) if is_base64(text) => {
            let data = text
                .split_once(";base64,")
                .map_or(text.as_str(), |(_, d)| d);
            Value::String(format!("<base64, {}>", size_text(base64_size(data))))
        }
        Value::Array(items) => Value::Array(items.iter().map(fold_base64).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fold_base64(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A body's text with its base64 folded: JSON as a whole, or each SSE `data:` line or NDJSON
/// line that holds JSON; anything else as it is.
pub fn fold_text(text: &str) -> String {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return fold_base64(&value).to_string();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let (prefix, rest) = match body.strip_prefix("data:") {
            Some(rest) => ("data: ", rest.trim_start()),
            None => ("", body),
        };
        match serde_json::from_str::<Value>(rest) {
            Ok(value @ (Value::Object(_) | Value::Array(_))) => {
                out.push_str(prefix);
                out.push_str(&fold_base64(&value).to_string());
            }
            _ => out.push_str(body),
        }
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_folds_to_its_size_in_json_and_in_streams() {
        let png = "iVBORw0KGgo".to_string() + &"A".repeat(1589);
        let folded = fold_base64(&json!({"content": [{"type": "image", "data": png}], "n": 1}));
        assert_eq!(
            folded,
            json!({"content": [{"type": "image", "data": "<base64, 1.2 kB>"}], "n": 1})
        );
        let stream = format!(
            "event: message\ndata: {{\"blob\":\"{}\"}}\n\n",
            "QUJD".repeat(40)
        );
        assert_eq!(
            fold_text(&stream),
            "event: message\ndata: {\"blob\":\"<base64, 120 bytes>\"}\n\n"
        );
        assert_eq!(fold_text("plain words"), "plain words");
        assert_eq!(base64_size("QUJD"), 3);
    }
}
