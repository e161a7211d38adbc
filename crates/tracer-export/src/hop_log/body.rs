//! Bodies and headers in a hop log: JSON bodies embedded as JSON (key order kept) with the layout
//! that rebuilds their exact bytes, other UTF-8 bodies as text, the rest as base64.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::embedded_json::EmbeddedJson;
use super::json_layout::{Layout, as_json};
use tracer_wire::hop::{BodyCapture, Header};

/// One header: `value` when it is UTF-8, else `value_base64`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderEntry {
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value_base64: Option<String>,
}

impl HeaderEntry {
    pub(crate) fn encode(header: &Header) -> Self {
        match header.text() {
            Some(text) => Self {
                name: header.name.clone(),
                value: Some(text.to_string()),
                value_base64: None,
            },
            None => Self {
                name: header.name.clone(),
                value: None,
                value_base64: Some(STANDARD.encode(&header.value)),
            },
        }
    }

    pub(crate) fn decode(&self) -> Result<Header, String> {
        match (&self.value, &self.value_base64) {
            (Some(text), None) => Ok(Header::new(self.name.clone(), text.as_bytes())),
            (None, Some(b64)) => STANDARD
                .decode(b64)
                .map(|bytes| Header::new(self.name.clone(), bytes))
                .map_err(|e| format!("header `{}`: value_base64: {e}", self.name)),
            _ => Err(format!(
                "header `{}` needs exactly one of value and value_base64",
                self.name
            )),
        }
    }
}

/// A recorded body: its full length, whether the record is cut short, and exactly one of `json`
/// (with its `layout`), `text` or `base64` holding the recorded bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    /// Bytes the body had on the wire (more than were kept when `truncated`).
    pub(crate) length: u64,
    pub(crate) truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) json: Option<EmbeddedJson>,
    /// How `json` was written on the wire: `compact`, `spaced` or `pretty`, then `+ascii`,
    /// `+html`, `+newline` as they apply (see docs/hop-log.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) base64: Option<String>,
}

impl Body {
    /// A recorded body as the hop log holds it (JSON embedded, else text, else base64).
    pub fn encode(capture: &BodyCapture) -> Self {
        let mut body = Self {
            length: capture.total_len,
            truncated: capture.truncated,
            json: None,
            layout: None,
            text: None,
            base64: None,
        };
        if let Some((value, layout)) = as_json(&capture.bytes) {
            body.json = Some(EmbeddedJson::of(&value));
            body.layout = Some(layout.name());
        } else if let Ok(text) = std::str::from_utf8(&capture.bytes) {
            body.text = Some(text.to_string());
        } else {
            body.base64 = Some(STANDARD.encode(&capture.bytes));
        }
        body
    }

    pub fn decode(&self) -> Result<BodyCapture, String> {
        let bytes = match (&self.json, &self.text, &self.base64) {
            (Some(json), None, None) => {
                let value = json.value()?;
                let name = self.layout.as_deref().ok_or("a json body needs a layout")?;
                let layout =
                    Layout::parse(name).ok_or_else(|| format!("unknown layout `{name}`"))?;
                layout.write(&value).into_bytes()
            }
            (None, Some(text), None) if self.layout.is_none() => text.as_bytes().to_vec(),
            (None, None, Some(b64)) if self.layout.is_none() => {
                STANDARD.decode(b64).map_err(|e| format!("base64: {e}"))?
            }
            _ => {
                return Err(
                    "a body needs exactly one of json (with layout), text and base64".into(),
                );
            }
        };
        // A redacted copy may be longer than the wire's bytes (the marker outgrows a short
        // secret); any other copy longer than its length is a broken file.
        let redacted = || {
            let marker = tracer_wire::redact::REDACTED.as_bytes();
            bytes.windows(marker.len()).any(|w| w == marker)
        };
        if (bytes.len() as u64) > self.length && !redacted() {
            return Err(format!(
                "length {} is less than the {} bytes recorded",
                self.length,
                bytes.len()
            ));
        }
        Ok(BodyCapture {
            bytes,
            total_len: self.length,
            truncated: self.truncated,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) -> Body {
        let capture = BodyCapture::whole(bytes.to_vec());
        let body = Body::encode(&capture);
        assert_eq!(body.decode().unwrap(), capture, "{body:?}");
        body
    }

    #[test]
    fn json_bodies_keep_their_exact_bytes_in_each_layout() {
        let cases: [(&[u8], &str); 7] = [
            (br#"{"b":1,"a":[true,null,"x"]}"#, "compact"),
            (
                b"{\"b\": 1, \"a\": [2.5, {}], \"c\": \"caf\\u00e9\"}",
                "spaced+ascii",
            ),
            (
                b"{\n  \"model\": \"q\",\n  \"list\": [\n    1\n  ],\n  \"e\": []\n}\n",
                "pretty+newline",
            ),
            ("{\"t\":\"<tool_call> é\"}".as_bytes(), "compact"),
            (br#"{"t":"\u003ctool_call\u003e"}"#, "compact+html"),
            (b"[1,2]\n", "compact+newline"),
            (b"\"just a string\"", "compact"),
        ];
        for (bytes, layout) in cases {
            let body = round_trip(bytes);
            assert_eq!(
                body.layout.as_deref(),
                Some(layout),
                "{}",
                String::from_utf8_lossy(bytes)
            );
            assert!(body.json.is_some());
        }
    }

    #[test]
    fn other_bodies_are_text_or_base64() {
        for bytes in [
            &b"{\"a\" :1}"[..],
            b" {\"a\":1}",
            b"{\"x\":1e-07}",
            b"{\"a\":1,\"a\":2}",
            b"data: {\"a\":1}\n\n",
            b"{\"a\":1}\n{\"a\":2}\n",
            b"null",
            b"",
        ] {
            let body = round_trip(bytes);
            assert!(body.json.is_none() && body.text.is_some(), "{body:?}");
        }
        let body = round_trip(b"\xff\x00binary");
        assert!(body.base64.is_some());
    }

    #[test]
    fn truncated_bodies_keep_their_length_and_bad_ones_are_refused() {
        let capture = BodyCapture {
            bytes: b"{\"a\":".to_vec(),
            total_len: 90,
            truncated: true,
        };
        let body = Body::encode(&capture);
        assert_eq!(body.text.as_deref(), Some("{\"a\":"));
        assert_eq!(body.decode().unwrap(), capture);
        let mut two = body.clone();
        two.base64 = Some("AA==".into());
        assert!(two.decode().is_err());
        let mut short = body;
        short.length = 2;
        assert!(short.decode().unwrap_err().contains("length 2"));
        assert!(Layout::parse("compact+newline+ascii").is_none());
        assert!(Layout::parse("compact+ascii+ascii").is_none());
        assert!(Layout::parse("pretty+ascii+html+newline").is_some());
    }

    #[test]
    fn headers_that_are_not_utf8_go_as_base64() {
        let header = Header::new("x-latin1", b"caf\xe9".to_vec());
        let entry = HeaderEntry::encode(&header);
        assert!(entry.value.is_none());
        assert_eq!(entry.decode().unwrap(), header);
        let text = Header::new("content-type", "application/json");
        assert_eq!(HeaderEntry::encode(&text).decode().unwrap(), text);
    }
}
