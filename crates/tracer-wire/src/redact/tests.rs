//! Unit tests of the redaction rules and the streaming redactors.

use super::*;

fn json(text: &str) -> String {
    String::from_utf8(redact_json_bytes(text.as_bytes())).unwrap()
}

#[test]
fn secret_headers_by_name_and_correlation_ids_kept() {
    for name in [
        "Authorization",
        "cookie",
        "X-Api-Key",
        "x-auth-token",
        "Client-Secret",
        "anthropic-api-key",
        "Set-Cookie",
        "proxy-authorization",
        "mcp-session-id",
        "X-Password",
        "X-Signature-Ed25519",
        "X-Hub-Signature-256",
        "X-Csrf-Token",
        "X-XSRF-TOKEN",
        "X-Amz-Credential",
    ] {
        assert!(is_secret_header(name), "{name}");
    }
    for name in [
        "content-type",
        "traceparent",
        "mcp-protocol-version",
        "x-claude-code-session-id",
        "session-id",
        "Thread-Id",
        "x-request-id",
        "request-id",
    ] {
        assert!(!is_secret_header(name), "{name}");
    }
}

#[test]
fn queries_redact_the_listed_names_in_any_case_and_encoding() {
    let target = "/cb?code=abc&state=s&Client_Secret=c&password=p&refresh_token=r&id_token=i\
                  &X-Amz-Signature=a&X-Amz-Credential=b&X-Amz-Security-Token=t&api-key=k\
                  &subscription-key=s2&api%5Fkey=e&%61ccess_token=f&q=1#frag";
    assert_eq!(
        redact_query(target, true),
        "/cb?code=[redacted]&state=s&Client_Secret=[redacted]&password=[redacted]\
         &refresh_token=[redacted]&id_token=[redacted]&X-Amz-Signature=[redacted]\
         &X-Amz-Credential=[redacted]&X-Amz-Security-Token=[redacted]&api-key=[redacted]\
         &subscription-key=[redacted]&api%5Fkey=[redacted]&%61ccess_token=[redacted]&q=1#frag"
    );
    assert_eq!(redact_query("/p?key=1", false), "/p?key=1");
    assert_eq!(
        redact_query("/p?monkey=1&keys=2&codes=3", true),
        "/p?monkey=1&keys=2&codes=3"
    );
}

#[test]
fn userinfo_is_redacted_wherever_a_url_has_one() {
    assert_eq!(
        redact_userinfo("http://user:pass@host:8080/p?q=1"),
        "http://[redacted]@host:8080/p?q=1"
    );
    assert_eq!(redact_userinfo("https://host/a@b"), "https://host/a@b");
    assert_eq!(redact_userinfo("/just/a/path"), "/just/a/path");
    assert_eq!(
        redact_url("https://u:p@h/cb?code=x&state=y"),
        "https://[redacted]@h/cb?code=[redacted]&state=y"
    );
    assert_eq!(
        header_value("Location", b"https://app/cb?code=xyz&state=1"),
        b"https://app/cb?code=[redacted]&state=1"
    );
    assert_eq!(
        header_value("X-Hub-Signature-256", b"sha256=ab"),
        b"[redacted]"
    );
    assert_eq!(header_value("x-request-id", b"req-1"), b"req-1");
}

#[test]
fn json_fields_at_any_depth_keep_their_shape() {
    let body = r#"{"model":"m","api_key":"sk-1","nested":{"apiKey":"sk-2","list":[{"password":"p\"w"}]},
"token": 42, "max_tokens": 10, "access_token" : "at", "Client-Secret":"cs", "key":"title",
"text":"{\"api_key\":\"inside a string\"}"}"#;
    let out = json(body);
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["api_key"], REDACTED);
    assert_eq!(value["nested"]["apiKey"], REDACTED);
    assert_eq!(value["nested"]["list"][0]["password"], REDACTED);
    assert_eq!(value["access_token"], REDACTED);
    assert_eq!(value["Client-Secret"], REDACTED);
    assert_eq!(value["token"], 42, "only string values are secrets");
    assert_eq!(value["max_tokens"], 10);
    assert_eq!(value["key"], "title", "`key` is no secret in JSON");
    assert_eq!(value["model"], "m");
    assert!(!out.contains("sk-1") && !out.contains("sk-2") && !out.contains("p\\\"w"));
    // A string value that names a field is not a key.
    assert_eq!(
        json(r#"["password", "x", {"a":"password","b":"kept"}]"#),
        r#"["password", "x", {"a":"password","b":"kept"}]"#
    );
    assert_eq!(
        json("{\"note\":\"a \\\"b\\\": password\", \"secret\" :\t\"s\", \"n\": [1, \"token\"]}"),
        "{\"note\":\"a \\\"b\\\": password\", \"secret\" :\t\"[redacted]\", \"n\": [1, \"token\"]}"
    );
    // Escaped names are read as JSON reads them.
    assert_eq!(
        json(r#"{"api\u005fkey":"s"}"#),
        r#"{"api\u005fkey":"[redacted]"}"#
    );
}

#[test]
fn pieces_split_anywhere_give_the_same_redaction() {
    type Make = fn() -> BodyRedactor;
    let cases: [(&str, Make); 2] = [
        (
            "data: {\"id_token\":\"abc\\\"def\",\"refresh_token\":\"r\"}\n\n{\"note\":\"a \\\"b\\\": password\",\n \"secret\" :\t\"s\", \"n\": [1, \"token\"]}\n",
            || BodyRedactor::Json(JsonRedactor::default()),
        ),
        (
            "grant_type=refresh_token&refresh_token=rt&client_secret=cs&code_verifier=v&x=1",
            || BodyRedactor::Form(FormRedactor::default()),
        ),
    ];
    for (text, make) in cases {
        let mut whole = Vec::new();
        make().feed(text.as_bytes(), &mut whole);
        for split in 0..text.len() {
            for size in [1, 2, 3, 7] {
                let mut redactor = make();
                let mut out = Vec::new();
                redactor.feed(&text.as_bytes()[..split], &mut out);
                for piece in text.as_bytes()[split..].chunks(size) {
                    redactor.feed(piece, &mut out);
                }
                assert_eq!(out, whole, "split at {split}, pieces of {size}");
            }
        }
        let whole = String::from_utf8(whole).unwrap();
        assert!(!whole.contains("rt&") && !whole.contains("\"s\"") && !whole.contains("cs"));
        assert!(
            !whole.contains("abc") && !whole.contains("\"r\""),
            "{whole}"
        );
    }
}

#[test]
fn bodies_get_a_redactor_by_type_and_none_when_compressed() {
    let kind = |t: Option<&str>, e: Option<&str>| match BodyRedactor::for_body(t, e) {
        Some(BodyRedactor::Json(_)) => "json",
        Some(BodyRedactor::Form(_)) => "form",
        Some(BodyRedactor::Sniff) => "sniff",
        Some(BodyRedactor::SniffElse { form: true }) => "json or form",
        Some(BodyRedactor::SniffElse { form: false }) => "json or none",
        Some(BodyRedactor::Verbatim) | None => "none",
    };
    assert_eq!(kind(Some("application/json; charset=utf-8"), None), "json");
    assert_eq!(kind(Some("application/vnd.api+json"), None), "json");
    assert_eq!(kind(Some("text/event-stream"), None), "json");
    assert_eq!(kind(Some("application/x-ndjson"), None), "json");
    assert_eq!(kind(None, None), "sniff");
    assert_eq!(
        kind(Some("application/x-www-form-urlencoded"), None),
        "json or form"
    );
    assert_eq!(kind(Some("application/octet-stream"), None), "none");
    assert_eq!(kind(Some("text/plain"), None), "json or none");
    assert_eq!(kind(Some("application/json"), Some("gzip")), "none");
    assert_eq!(kind(Some("application/json"), Some("identity")), "json");
}

#[test]
fn userinfo_splits_off_decoded() {
    assert_eq!(
        split_userinfo("http://us%40r:p+w@h:4318/v1/traces"),
        (
            "http://h:4318/v1/traces".to_string(),
            Some("us@r:p+w".to_string())
        )
    );
    assert_eq!(
        split_userinfo("http://h/p@q"),
        ("http://h/p@q".to_string(), None)
    );
}

#[test]
fn a_body_without_a_type_is_redacted_when_it_starts_as_json() {
    let run = |pieces: &[&str]| {
        let mut redactor = BodyRedactor::for_body(None, None).unwrap();
        let mut out = Vec::new();
        for piece in pieces {
            redactor.feed(piece.as_bytes(), &mut out);
        }
        String::from_utf8(out).unwrap()
    };
    assert_eq!(
        run(&["  ", "\n {\"token\":", "\"t\"}"]),
        "  \n {\"token\":\"[redacted]\"}"
    );
    assert_eq!(
        run(&["[{\"password\":\"p\"}]"]),
        "[{\"password\":\"[redacted]\"}]"
    );
    let binary = "GIF89a \"token\":\"t\"";
    assert_eq!(run(&[binary]), binary, "not JSON: kept as it came");
}

#[test]
fn json_labelled_a_form_or_plain_text_is_redacted_as_json() {
    let run = |content_type: &str, pieces: &[&str]| {
        let mut redactor = BodyRedactor::for_body(Some(content_type), None).unwrap();
        let mut out = Vec::new();
        for piece in pieces {
            redactor.feed(piece.as_bytes(), &mut out);
        }
        String::from_utf8(out).unwrap()
    };
    let form = "application/x-www-form-urlencoded";
    // `curl -d '{...}' …/api/v1/auths/signin`: open-webui's sign-in, as curl labels it.
    assert_eq!(
        run(
            form,
            &[
                "{\"email\": \"u@example.com\", \"pass",
                "word\": \"hunter2\"}"
            ]
        ),
        "{\"email\": \"u@example.com\", \"password\": \"[redacted]\"}"
    );
    assert_eq!(
        run("text/plain;charset=UTF-8", &["{\"password\":\"p\"}"]),
        "{\"password\":\"[redacted]\"}"
    );
    assert_eq!(
        run(form, &["user=u&password=p"]),
        "user=u&password=[redacted]"
    );
    assert_eq!(run("text/plain", &["password: p"]), "password: p");
}
