//! What the record must not keep: the one list of secret names (headers, query and form
//! parameters, JSON fields), and the redaction of URLs, header values and bodies. Pure.
//!
//! The rules are listed for users in `docs/security.md`; keep the two in step.

mod form_stream;
mod json_stream;

pub(crate) use form_stream::FormRedactor;
pub(crate) use json_stream::JsonRedactor;

/// What a secret is replaced with in the record.
pub const REDACTED: &str = "[redacted]";

/// A header whose lowercased name contains one of these holds a secret (`authorization`,
/// `x-goog-api-key`, `set-cookie`, `mcp-session-id`, `x-hub-signature-256`, `x-csrf-token`, ...).
const SECRET_HEADER_PARTS: [&str; 12] = [
    "key",
    "token",
    "secret",
    "auth",
    "cookie",
    "session",
    "password",
    "passwd",
    "signature",
    "csrf",
    "xsrf",
    "credential",
];

/// Correlation ids: they name a session, thread or request and grant nothing, so they stay in
/// the clear although their names match a part above (`Mcp-Session-Id` is not one of them: it
/// lets its holder act in that MCP session).
const CORRELATION_HEADERS: [&str; 7] = [
    "session-id",
    "x-session-id",
    "x-claude-code-session-id",
    "thread-id",
    "x-thread-id",
    "request-id",
    "x-request-id",
];

/// Headers whose value is a URL: its userinfo and secret query parameters are redacted.
const URL_HEADERS: [&str; 3] = ["location", "content-location", "referer"];

/// Query and form parameters whose values are secrets, as `listed` spells them (`api_key`,
/// `API-Key` and `apiKey` are all `apikey`).
const SECRET_PARAMS: [&str; 29] = [
    "key",
    "apikey",
    "token",
    "accesstoken",
    "sig",
    "signature",
    "code",
    "clientsecret",
    "password",
    "passwd",
    "refreshtoken",
    "idtoken",
    "xamzsignature",
    "xamzcredential",
    "xamzsecuritytoken",
    "xgoogsignature",
    "xgoogcredential",
    "subscriptionkey",
    "codeverifier",
    "assertion",
    "clientassertion",
    "subjecttoken",
    "actortoken",
    "devicecode",
    "secret",
    "authtoken",
    "apitoken",
    "sessiontoken",
    "otp",
];

/// JSON fields whose string values are secrets, as `listed` spells them. Shorter than the
/// parameter list: `key`, `code` and `sig` are ordinary field names in JSON.
const SECRET_FIELDS: [&str; 22] = [
    "apikey",
    "xapikey",
    "password",
    "passwd",
    "clientsecret",
    "secret",
    "secretkey",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "token",
    "authtoken",
    "apitoken",
    "bearertoken",
    "sessiontoken",
    "authorization",
    "privatekey",
    "secretaccesskey",
    "clientassertion",
    "assertion",
    "codeverifier",
    "subscriptionkey",
];

/// Whether `name`, spelled as the lists above spell names (lowercase, without `_`, `-`, `.` and
/// spaces: `api_key`, `API-Key` and `apiKey` are all `apikey`), is in `list`. No name on a list is
/// longer than 32 letters, so longer names (and non-ASCII ones) are not looked at further.
fn listed(name: &str, list: &[&str]) -> bool {
    let mut spelled = [0u8; 32];
    let mut len = 0;
    for byte in name.bytes() {
        if matches!(byte, b'_' | b'-' | b'.' | b' ') {
            continue;
        }
        if len == spelled.len() || !byte.is_ascii() {
            return false;
        }
        spelled[len] = byte.to_ascii_lowercase();
        len += 1;
    }
    let spelled = &spelled[..len];
    list.iter().any(|entry| entry.as_bytes() == spelled)
}

/// Whether a header's value is a secret that the record must not keep.
/// Compared without copying or lowercasing the name: every header of every hop passes here.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.as_bytes();
    let has_part = (0..name.len()).any(|at| {
        let rest = &name[at..];
        SECRET_HEADER_PARTS.iter().any(|part| {
            rest.get(..part.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(part.as_bytes()))
        })
    });
    has_part
        && !CORRELATION_HEADERS
            .iter()
            .any(|kept| kept.as_bytes().eq_ignore_ascii_case(name))
}

/// Whether a query or form parameter (its name already percent-decoded) holds a secret.
pub(crate) fn is_secret_param(decoded_name: &str) -> bool {
    listed(decoded_name, &SECRET_PARAMS)
}

/// Whether a JSON field (its name unescaped) holds a secret when its value is a string.
pub fn is_secret_field(name: &str) -> bool {
    listed(name, &SECRET_FIELDS)
}

/// The record's copy of one header value: the marker for a secret header, the URL redacted for
/// `Location`, `Content-Location` and `Referer`, else the value as it came.
pub fn header_value(name: &str, value: &[u8]) -> Vec<u8> {
    if is_secret_header(name) {
        return REDACTED.as_bytes().to_vec();
    }
    let is_url = URL_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name));
    match std::str::from_utf8(value) {
        Ok(text) if is_url => redact_url(text).into_bytes(),
        _ => value.to_vec(),
    }
}

/// A path or URL with the values of secret query parameters replaced by the marker (when
/// `redact`); everything else, including the parameters' order and spelling, is kept.
pub fn redact_query(target: &str, redact: bool) -> String {
    let Some((head, query)) = target.split_once('?').filter(|_| redact) else {
        return target.to_string();
    };
    let (query, fragment) = match query.split_once('#') {
        Some((query, fragment)) => (query, Some(fragment)),
        None => (query, None),
    };
    let mut redactor = FormRedactor::default();
    let mut kept = Vec::with_capacity(query.len());
    redactor.feed(query.as_bytes(), &mut kept);
    let mut out = format!("{head}?{}", String::from_utf8_lossy(&kept));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// A URL with its userinfo (`user:password@`) replaced by the marker: `http://[redacted]@host/`.
/// Text that is not an absolute URL with an authority is returned as it is.
pub fn redact_userinfo(url: &str) -> String {
    match split_userinfo(url) {
        (rest, Some(_)) => match rest.find("://") {
            Some(at) => format!("{}{REDACTED}@{}", &rest[..at + 3], &rest[at + 3..]),
            None => rest,
        },
        (rest, None) => rest,
    }
}

/// A URL without its userinfo, and the userinfo percent-decoded (`user:password`) if it had one.
pub fn split_userinfo(url: &str) -> (String, Option<String>) {
    let Some(scheme_end) = url.find("://") else {
        return (url.to_string(), None);
    };
    let authority_start = scheme_end + 3;
    let rest = &url[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_len].rfind('@') {
        Some(at) => (
            format!("{}{}", &url[..authority_start], &rest[at + 1..]),
            Some(percent_decoded(&rest.as_bytes()[..at], false)),
        ),
        None => (url.to_string(), None),
    }
}

/// A URL with its userinfo and its secret query parameters redacted.
pub fn redact_url(url: &str) -> String {
    redact_query(&redact_userinfo(url), true)
}

/// Which redactor a body gets, from its `Content-Type` and `Content-Encoding`.
#[derive(Debug)]
pub enum BodyRedactor {
    Json(JsonRedactor),
    Form(FormRedactor),
    /// A body without a type: JSON if its first byte that is not white space is `{` or `[`.
    Sniff,
    /// A body labelled as a form or as plain text: JSON if it starts as JSON does (`curl -d
    /// '{"password": …}'` labels its JSON a form), else a form (`form`) or kept as it comes.
    SniffElse {
        form: bool,
    },
    /// Decided to be no JSON: kept as it comes.
    Verbatim,
}

impl BodyRedactor {
    /// JSON (also `+json`, NDJSON and server-sent events, whose data lines are JSON),
    /// `application/x-www-form-urlencoded`, and a body without a type, of type `text/plain` or
    /// labelled a form that starts as JSON does.
    /// A compressed body (`Content-Encoding` other than `identity`) gets none: its bytes are not
    /// text.
    pub fn for_body(content_type: Option<&str>, content_encoding: Option<&str>) -> Option<Self> {
        let encoded = content_encoding
            .map(str::trim)
            .is_some_and(|e| !e.is_empty() && !e.eq_ignore_ascii_case("identity"));
        if encoded {
            return None;
        }
        let Some(content_type) = content_type else {
            return Some(BodyRedactor::Sniff);
        };
        let mime = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if mime == "application/x-www-form-urlencoded" {
            return Some(BodyRedactor::SniffElse { form: true });
        }
        if mime == "text/plain" {
            return Some(BodyRedactor::SniffElse { form: false });
        }
        let json = mime.ends_with("/json")
            || mime.ends_with("+json")
            || matches!(
                mime.as_str(),
                "application/x-ndjson"
                    | "application/jsonl"
                    | "application/jsonlines"
                    | "application/json-seq"
                    | "text/event-stream"
            );
        json.then(|| BodyRedactor::Json(JsonRedactor::default()))
    }

    /// Appends the redacted form of `bytes`, the next bytes of the body, to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let form = match self {
            BodyRedactor::Sniff => Some(false),
            BodyRedactor::SniffElse { form } => Some(*form),
            _ => None,
        };
        if let Some(form) = form {
            match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
                Some(b'{' | b'[') => *self = BodyRedactor::Json(JsonRedactor::default()),
                Some(_) if form => *self = BodyRedactor::Form(FormRedactor::default()),
                Some(_) => *self = BodyRedactor::Verbatim,
                None if form => {
                    // White space before the first byte of a form is the form's own text.
                    *self = BodyRedactor::Form(FormRedactor::default());
                }
                None => {}
            }
        }
        // The redacted form is about as long as the bytes: one allocation, not one per
        // doubling of a vector that grows byte by byte.
        out.reserve(bytes.len());
        match self {
            BodyRedactor::Json(json) => json.feed(bytes, out),
            BodyRedactor::Form(form) => form.feed(bytes, out),
            BodyRedactor::Sniff | BodyRedactor::SniffElse { .. } | BodyRedactor::Verbatim => {
                out.extend_from_slice(bytes)
            }
        }
    }
}

/// A whole JSON text (a stdio line) with its secret fields redacted.
pub fn redact_json_bytes(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    JsonRedactor::default().feed(bytes, &mut out);
    out
}

/// Percent-decodes text (`+` is a space when `plus_is_space`, as in forms).
pub fn percent_decoded(raw: &[u8], plus_is_space: bool) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < raw.len() => {
                let hex = std::str::from_utf8(&raw[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
