//! HAR 1.2's required fields and types (protocols.md F), checked on a whole document.

use serde_json::Value;

pub fn number(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

fn check_name_values(list: &Value, what: &str) {
    for item in list
        .as_array()
        .unwrap_or_else(|| panic!("{what} is not an array"))
    {
        assert!(
            item["name"].is_string() && item["value"].is_string(),
            "{what}: {item}"
        );
    }
}

/// Checks one HAR document against the required fields and types of HAR 1.2.
pub fn check_har(har: &Value) -> usize {
    let log = &har["log"];
    assert_eq!(log["version"], "1.2");
    assert!(log["creator"]["name"].is_string() && log["creator"]["version"].is_string());
    let entries = log["entries"].as_array().expect("entries");
    for entry in entries {
        let started = entry["startedDateTime"].as_str().expect("startedDateTime");
        assert!(
            started.len() == 24 && started.ends_with('Z') && &started[10..11] == "T",
            "{started}"
        );
        let request = &entry["request"];
        assert!(request["method"].is_string());
        let url = request["url"].as_str().unwrap();
        assert!(url.starts_with("http://") && !url.contains('#'), "{url}");
        assert!(request["httpVersion"].is_string());
        assert!(request["cookies"].is_array());
        check_name_values(&request["headers"], "request headers");
        check_name_values(&request["queryString"], "queryString");
        assert_eq!(request["headersSize"], -1);
        number(&request["bodySize"], "request bodySize");
        if let Some(post) = request.get("postData") {
            assert!(post["mimeType"].is_string() && post["text"].is_string());
        }
        let response = &entry["response"];
        assert!(response["status"].is_u64());
        assert!(response["statusText"].is_string());
        assert!(response["httpVersion"].is_string());
        assert!(response["cookies"].is_array());
        check_name_values(&response["headers"], "response headers");
        let content = &response["content"];
        number(&content["size"], "content size");
        assert!(content["mimeType"].is_string());
        if let Some(encoding) = content.get("encoding") {
            assert_eq!(encoding, "base64");
        }
        assert!(response["redirectURL"].is_string());
        assert_eq!(response["headersSize"], -1);
        number(&response["bodySize"], "response bodySize");
        assert!(entry["cache"].is_object());
        let timings = &entry["timings"];
        let mut sum = 0.0;
        for field in ["send", "wait", "receive"] {
            let value = number(&timings[field], field);
            assert!(value >= 0.0, "{field} = {value}");
            sum += value;
        }
        assert!((number(&entry["time"], "time") - sum).abs() < 1e-6);
        for (key, _) in entry.as_object().unwrap() {
            let known = [
                "startedDateTime",
                "time",
                "request",
                "response",
                "cache",
                "timings",
                "pageref",
                "comment",
            ];
            assert!(
                known.contains(&key.as_str()) || key.starts_with('_'),
                "{key}"
            );
        }
    }
    entries.len()
}
