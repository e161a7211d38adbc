//! W3C Trace Context `traceparent` values: parse, format, start a trace and derive a child span.
//!
//! Follows the Level 1 header format (`version-traceid-parentid-flags`, lowercase hex) with the
//! forward-compatibility rule for unknown versions. Used by the reference agent (which propagates
//! it on every call) and by the proxy (which reads and adds it). Pure: no I/O.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::ids::random_hex_id;

/// The header name (lowercase, as the spec recommends).
pub const TRACEPARENT: &str = "traceparent";
/// The vendor-specific companion header, passed along untouched.
pub const TRACESTATE: &str = "tracestate";

/// Why a `traceparent` value was rejected; a rejected header MUST be ignored as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TraceContextError {
    #[error("traceparent is {0} characters long; version 00 needs exactly 55")]
    Length(usize),
    #[error("traceparent field `{field}` is not {len} lowercase hex digits")]
    NotHex { field: &'static str, len: usize },
    #[error("traceparent is missing the `-` separators")]
    Separators,
    #[error("traceparent version ff is forbidden")]
    ForbiddenVersion,
    #[error("traceparent {0} is all zeros")]
    AllZero(&'static str),
}

/// A parsed `traceparent`: 16-byte trace id, 8-byte parent (span) id and the flags byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    pub version: u8,
    pub trace_id: [u8; 16],
    pub parent_id: [u8; 8],
    pub flags: u8,
}

impl TraceParent {
    /// Flag bit 0: the caller may have recorded this trace.
    const SAMPLED: u8 = 0x01;
    /// Flag bit 1 (Level 2): the trace id was generated at random.
    const RANDOM_TRACE_ID: u8 = 0x02;

    /// Starts a new trace: random ids, sampled, random-trace-id flag set.
    pub fn new_root() -> Self {
        Self {
            version: 0,
            trace_id: random_nonzero(),
            parent_id: random_nonzero(),
            flags: Self::SAMPLED | Self::RANDOM_TRACE_ID,
        }
    }

    /// The context for a call made from inside this span: same trace, new parent id, same flags.
    /// Always version 00, since that is the format we write.
    fn child(&self) -> Self {
        Self {
            version: 0,
            trace_id: self.trace_id,
            parent_id: random_nonzero(),
            flags: self.flags,
        }
    }

    #[cfg(test)]
    fn sampled(&self) -> bool {
        self.flags & Self::SAMPLED != 0
    }

    /// The trace id as 32 lowercase hex digits.
    pub fn trace_id_hex(&self) -> String {
        to_hex(&self.trace_id)
    }

    /// The parent id as 16 lowercase hex digits.
    pub fn parent_id_hex(&self) -> String {
        to_hex(&self.parent_id)
    }

    /// Parses a header value. Leading and trailing blanks (OWS) are allowed; a future version may
    /// append `-`-separated fields after the first 55 characters, which are ignored.
    pub fn parse(value: &str) -> Result<Self, TraceContextError> {
        let value = value.trim_matches([' ', '\t']);
        let version = value
            .get(0..2)
            .and_then(hex_byte)
            .ok_or(TraceContextError::NotHex {
                field: "version",
                len: 2,
            })?;
        if version == 0xff {
            return Err(TraceContextError::ForbiddenVersion);
        }
        let len = value.len();
        let fits = if version == 0 {
            len == 55
        } else {
            len == 55 || (len > 55 && value.as_bytes()[55] == b'-')
        };
        if !fits {
            return Err(TraceContextError::Length(len));
        }
        let bytes = value.as_bytes();
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return Err(TraceContextError::Separators);
        }
        let trace_id: [u8; 16] = hex_array(&value[3..35]).ok_or(TraceContextError::NotHex {
            field: "trace-id",
            len: 32,
        })?;
        let parent_id: [u8; 8] = hex_array(&value[36..52]).ok_or(TraceContextError::NotHex {
            field: "parent-id",
            len: 16,
        })?;
        let flags = hex_byte(&value[53..55]).ok_or(TraceContextError::NotHex {
            field: "trace-flags",
            len: 2,
        })?;
        if trace_id.iter().all(|b| *b == 0) {
            return Err(TraceContextError::AllZero("trace-id"));
        }
        if parent_id.iter().all(|b| *b == 0) {
            return Err(TraceContextError::AllZero("parent-id"));
        }
        Ok(Self {
            version,
            trace_id,
            parent_id,
            flags,
        })
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02x}-{}-{}-{:02x}",
            self.version,
            self.trace_id_hex(),
            self.parent_id_hex(),
            self.flags
        )
    }
}

impl FromStr for TraceParent {
    type Err = TraceContextError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The context a request carries onward: its `traceparent` and the opaque `tracestate` (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub parent: TraceParent,
    pub state: Option<String>,
}

impl TraceContext {
    /// Continues the inbound context when its `traceparent` is valid; otherwise starts a new
    /// trace (and, per the spec, drops a `tracestate` that came without a valid parent).
    pub fn continue_or_start(traceparent: Option<&str>, tracestate: Option<&str>) -> Self {
        match traceparent.map(TraceParent::parse) {
            Some(Ok(parent)) => Self {
                parent,
                state: tracestate
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            },
            _ => Self {
                parent: TraceParent::new_root(),
                state: None,
            },
        }
    }

    /// The context for one outbound call: a new span id under the same trace.
    pub fn child(&self) -> Self {
        Self {
            parent: self.parent.child(),
            state: self.state.clone(),
        }
    }
}

fn random_nonzero<const N: usize>() -> [u8; N] {
    loop {
        let hex = random_hex_id(N);
        if let Some(bytes) = hex_array::<N>(&hex)
            && bytes.iter().any(|b| *b != 0)
        {
            return bytes;
        }
    }
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_byte(pair: &str) -> Option<u8> {
    let bytes = pair.as_bytes();
    if bytes.len() != 2 {
        return None;
    }
    Some(lower_hex_digit(bytes[0])? << 4 | lower_hex_digit(bytes[1])?)
}

fn hex_array<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != N * 2 {
        return None;
    }
    let mut out = [0u8; N];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = hex_byte(text.get(i * 2..i * 2 + 2)?)?;
    }
    Some(out)
}

/// Only lowercase hex is valid in `traceparent`.
fn lower_hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SPEC_EXAMPLE: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn parses_and_formats_the_spec_example() {
        let parent = TraceParent::parse(SPEC_EXAMPLE).unwrap();
        assert_eq!(parent.trace_id_hex(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(parent.parent_id_hex(), "b7ad6b7169203331");
        assert!(parent.sampled());
        assert_eq!(parent.to_string(), SPEC_EXAMPLE);
        assert_eq!(format!(" {SPEC_EXAMPLE}\t").parse(), Ok(parent));
    }

    #[test]
    fn rejects_malformed_values() {
        let zero_trace = "00-00000000000000000000000000000000-b7ad6b7169203331-01";
        let zero_parent = "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01";
        let upper = "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01";
        let ff = "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let long_v0 = format!("{SPEC_EXAMPLE}-extra");
        let bad_sep = "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        assert_eq!(
            TraceParent::parse(zero_trace),
            Err(TraceContextError::AllZero("trace-id"))
        );
        assert_eq!(
            TraceParent::parse(zero_parent),
            Err(TraceContextError::AllZero("parent-id"))
        );
        assert!(matches!(
            TraceParent::parse(upper),
            Err(TraceContextError::NotHex { .. })
        ));
        assert_eq!(
            TraceParent::parse(ff),
            Err(TraceContextError::ForbiddenVersion)
        );
        assert_eq!(
            TraceParent::parse(&long_v0),
            Err(TraceContextError::Length(61))
        );
        assert_eq!(
            TraceParent::parse(bad_sep),
            Err(TraceContextError::Separators)
        );
        assert!(TraceParent::parse("").is_err());
        assert!(TraceParent::parse("00-xyz").is_err());
    }

    #[test]
    fn future_versions_may_carry_more_fields() {
        let v1 = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-ever";
        let parent = TraceParent::parse(v1).unwrap();
        assert_eq!(parent.version, 1);
        assert!(TraceParent::parse(&format!("{}x", &v1[..55])).is_err());
        // What we send onward is always version 00.
        assert!(
            parent
                .child()
                .to_string()
                .starts_with("00-0af7651916cd43dd")
        );
    }

    #[test]
    fn roots_and_children_are_valid_and_keep_the_trace() {
        let root = TraceParent::new_root();
        let text = root.to_string();
        assert_eq!(TraceParent::parse(&text), Ok(root));
        let child = root.child();
        assert_eq!(child.trace_id, root.trace_id);
        assert_ne!(child.parent_id, root.parent_id);
        assert_eq!(child.flags, root.flags);
    }

    #[test]
    fn context_continues_a_valid_parent_and_restarts_otherwise() {
        let kept = TraceContext::continue_or_start(Some(SPEC_EXAMPLE), Some("congo=t61rcWkgMzE"));
        assert_eq!(
            kept.parent.trace_id_hex(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(kept.state.as_deref(), Some("congo=t61rcWkgMzE"));
        let fresh = TraceContext::continue_or_start(Some("garbage"), Some("congo=1"));
        assert_ne!(
            fresh.parent.trace_id_hex(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(fresh.state, None);
        let child = kept.child();
        assert_eq!(child.parent.trace_id, kept.parent.trace_id);
        assert_eq!(child.state, kept.state);
    }
}
