//! SEP-2243 header values: plain ASCII as is, anything else as `=?base64?{Base64(UTF-8)}?=`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// True when `text` can go into a header as is: printable ASCII, no leading or trailing
/// whitespace, and not shaped like the base64 sentinel.
fn is_plain(text: &str) -> bool {
    text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && text.trim() == text
        && !(text.starts_with(SENTINEL_START) && text.ends_with(SENTINEL_END))
}

/// Encodes a body value for a `Mcp-Name` / `Mcp-Param-*` header.
pub(crate) fn encode(text: &str) -> String {
    if is_plain(text) {
        text.to_owned()
    } else {
        format!(
            "{SENTINEL_START}{}{SENTINEL_END}",
            STANDARD.encode(text.as_bytes())
        )
    }
}

/// Decodes a header value back to the body value; `None` when the base64 form is broken.
pub(crate) fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix(SENTINEL_START)
        .and_then(|rest| rest.strip_suffix(SENTINEL_END))
    {
        Some(encoded) => {
            let bytes = STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_pass_through() {
        assert_eq!(encode("append"), "append");
        assert_eq!(decode("append").unwrap(), "append");
    }

    #[test]
    fn unsafe_values_round_trip_through_base64() {
        for text in ["héllo", " padded ", "line\nbreak", "=?base64?abc?="] {
            let encoded = encode(text);
            assert!(encoded.starts_with(SENTINEL_START), "{text:?} -> {encoded}");
            assert_eq!(decode(&encoded).unwrap(), text);
        }
        assert_eq!(decode("=?base64?!!!?="), None);
    }
}
