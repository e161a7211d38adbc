//! The span model the OTLP encoders share: one `Span` per hop (plus a synthesized root), its
//! typed attributes, and the resource every span of a request is sent under.

/// What goes into spans beyond their metadata.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpanOptions {
    /// Message contents (prompts, answers, tool arguments and results, summaries), as recorded.
    pub content: bool,
}

/// An attribute value, as OTLP's `AnyValue` carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    Str(String),
    Int(i64),
    Double(f64),
    Bool(bool),
    Strs(Vec<String>),
}

/// One `key = value` attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    pub(crate) key: String,
    pub(crate) value: AttrValue,
}

impl Attribute {
    pub fn text(key: &str, value: impl Into<String>) -> Self {
        Self::new(key, AttrValue::Str(value.into()))
    }

    pub(crate) fn int(key: &str, value: i64) -> Self {
        Self::new(key, AttrValue::Int(value))
    }

    pub(crate) fn double(key: &str, value: f64) -> Self {
        Self::new(key, AttrValue::Double(value))
    }

    pub(crate) fn boolean(key: &str, value: bool) -> Self {
        Self::new(key, AttrValue::Bool(value))
    }

    pub(crate) fn strings(key: &str, values: Vec<String>) -> Self {
        Self::new(key, AttrValue::Strs(values))
    }

    fn new(key: &str, value: AttrValue) -> Self {
        Self {
            key: key.to_string(),
            value,
        }
    }
}

/// `opentelemetry.proto.trace.v1.Span.SpanKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Internal = 1,
    Server = 2,
    Client = 3,
}

/// A timed event on a span (the first response byte).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    pub(crate) at_unix_ns: i64,
    pub name: String,
    pub attributes: Vec<Attribute>,
}

/// One span, encoder-neutral. Ids are lower-case hex (32 digits for the trace, 16 for spans).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub(crate) trace_id: String,
    pub(crate) span_id: String,
    pub(crate) parent_span_id: Option<String>,
    pub(crate) name: String,
    pub(crate) kind: SpanKind,
    pub(crate) start_unix_ns: i64,
    pub(crate) end_unix_ns: i64,
    pub(crate) attributes: Vec<Attribute>,
    pub events: Vec<SpanEvent>,
    /// The status message when the span is an error (OTLP status code ERROR); None when unset.
    pub(crate) error: Option<String>,
    /// The hop this span stands for; None for a synthesized root span.
    pub hop_id: Option<String>,
}

impl Span {
    /// A string attribute's value, if the span has it.
    pub fn text_attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| a.key == key)
            .and_then(|a| match &a.value {
                AttrValue::Str(text) => Some(text.as_str()),
                _ => None,
            })
    }
}

/// What every span of an export is sent under: `service.name` and the other resource attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    pub(crate) attributes: Vec<Attribute>,
}

impl Resource {
    /// `service.name = name`, then `extra` (e.g. parsed from `OTEL_RESOURCE_ATTRIBUTES`).
    pub(crate) fn named(name: &str, extra: Vec<Attribute>) -> Self {
        let mut attributes = vec![Attribute::text("service.name", name)];
        attributes.extend(extra.into_iter().filter(|a| a.key != "service.name"));
        Self { attributes }
    }
}

impl Default for Resource {
    fn default() -> Self {
        Self::named("tracer", Vec::new())
    }
}

/// The instrumentation scope every span is under.
pub(crate) const SCOPE_NAME: &str = "tracer";
pub(crate) const SCOPE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// 32 lower-case hex digits: the id itself when it is one, else a stable hash of it.
pub(crate) fn otlp_trace_id(id: &str) -> String {
    if is_hex_id(id, 32) {
        id.to_string()
    } else {
        format!("{:016x}{:016x}", fnv1a(id, 0), fnv1a(id, 1))
    }
}

/// 16 lower-case hex digits for a hop id (its first half when it is a 32-digit hex id).
pub(crate) fn otlp_span_id(hop_id: &str) -> String {
    if is_hex_id(hop_id, 32) || is_hex_id(hop_id, 16) {
        let id = &hop_id[..16];
        if id.bytes().any(|b| b != b'0') {
            return id.to_string();
        }
    }
    format!("{:016x}", fnv1a(hop_id, 2).max(1))
}

/// The span id of a trace's synthesized root (when no agent hop opened the trace).
pub(crate) fn root_span_id(trace_id: &str) -> String {
    format!("{:016x}", fnv1a(trace_id, 3).max(1))
}

fn is_hex_id(id: &str, len: usize) -> bool {
    id.len() == len
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && id.bytes().any(|b| b != b'0')
}

fn fnv1a(text: &str, salt: u8) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in std::iter::once(salt).chain(text.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Hex digits as bytes (empty when the text is not even-length hex).
pub(crate) fn hex_bytes(hex: &str) -> Vec<u8> {
    if !hex.len().is_multiple_of(2) {
        return Vec::new();
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_when_valid_and_hashed_otherwise() {
        let id = "0af7651916cd43dd8448eb211c80319c";
        assert_eq!(otlp_trace_id(id), id);
        assert_eq!(otlp_span_id(id), "0af7651916cd43dd");
        let hashed = otlp_trace_id("setup-1");
        assert_eq!(hashed.len(), 32);
        assert_eq!(hashed, otlp_trace_id("setup-1"));
        assert_ne!(otlp_span_id("a"), otlp_span_id("b"));
        assert_eq!(otlp_span_id("a").len(), 16);
        assert_ne!(root_span_id(id), otlp_span_id(id));
    }

    #[test]
    fn hex_turns_into_bytes() {
        assert_eq!(hex_bytes("0aff"), vec![0x0a, 0xff]);
        assert!(hex_bytes("abc").is_empty());
        assert!(hex_bytes("zz").is_empty());
    }

    #[test]
    fn the_service_name_comes_first_and_only_once() {
        let resource = Resource::named(
            "svc",
            vec![
                Attribute::text("service.name", "other"),
                Attribute::text("deployment.environment", "dev"),
            ],
        );
        assert_eq!(resource.attributes.len(), 2);
        assert_eq!(resource.attributes[0].value, AttrValue::Str("svc".into()));
    }
}
