//! `Content-Encoding` (gzip, deflate, br, zstd) undone for reading, bounded: a bomb costs at most
//! [`READ_LIMIT`] decoded bytes; the stored bytes and the wire are never changed.
//!
//! Every decoder here works on the recorded bytes in memory and writes at most `limit` bytes,
//! in steps of at most [`STEP`], so what one body costs is bounded whatever it claims to hold:
//! gzip and deflate keep a 32 KiB window, brotli at most 16 MiB, zstd at most
//! [`ZSTD_MAX_WINDOW`] (RFC 9659's limit for HTTP). A body whose encoded bytes stop early (a
//! capture cut at `--max-body`, a body cut on the wire) decodes as far as they go.

mod codecs;
mod readable;

use crate::hop::{Header, header_text};

pub use readable::{ReadableBody, readable};

/// The most decoded bytes a reader keeps of one body: 16 MiB, the default `--max-body` (the
/// proxy's kept-body limit, which readers of a database do not know).
pub(crate) const READ_LIMIT: usize = 16 * 1024 * 1024;

/// The largest zstd window accepted (8 MiB, as RFC 9659 asks of HTTP decoders).
pub(crate) const ZSTD_MAX_WINDOW: u64 = 8 * 1024 * 1024;

/// Decoded bytes written per step: the output grows by at most this much before the bound is
/// checked again.
pub(crate) const STEP: usize = 64 * 1024;

/// More codings than this on one body are not undone (no real server stacks them).
const MAX_CODINGS: usize = 3;

/// One content coding tracer can undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    /// The coding a `Content-Encoding` token names (case-insensitive), if tracer can undo it.
    pub(crate) fn parse(token: &str) -> Option<Coding> {
        match token.trim().to_ascii_lowercase().as_str() {
            "gzip" | "x-gzip" => Some(Coding::Gzip),
            "deflate" => Some(Coding::Deflate),
            "br" => Some(Coding::Brotli),
            "zstd" => Some(Coding::Zstd),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }
}

/// What a message's `Content-Encoding` says of its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encoding {
    /// No header, or `identity`: the bytes are the content.
    Identity,
    /// Codings tracer can undo, in the order they were applied.
    Known(Vec<Coding>),
    /// A coding tracer cannot undo (or too many): the header's value.
    Unknown(String),
}

impl Encoding {
    /// The encoding of a message with these headers.
    pub fn of(headers: &[Header]) -> Encoding {
        match header_text(headers, "content-encoding") {
            Some(value) => Encoding::parse(value),
            None if headers
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case("content-encoding")) =>
            {
                Encoding::Unknown("(not text)".into())
            }
            None => Encoding::Identity,
        }
    }

    /// The encoding a `Content-Encoding` value names (`gzip`, `gzip, br`, `identity`).
    pub(crate) fn parse(value: &str) -> Encoding {
        let tokens: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("identity"))
            .collect();
        if tokens.is_empty() {
            return Encoding::Identity;
        }
        let codings: Option<Vec<Coding>> = tokens.iter().map(|t| Coding::parse(t)).collect();
        match codings {
            Some(codings) if codings.len() <= MAX_CODINGS => Encoding::Known(codings),
            _ => Encoding::Unknown(tokens.join(", ")),
        }
    }

    /// The header's codings as written (`gzip`, `gzip, br`), or None for identity.
    pub(crate) fn label(&self) -> Option<String> {
        match self {
            Encoding::Identity => None,
            Encoding::Known(codings) => Some(
                codings
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            Encoding::Unknown(value) => Some(value.clone()),
        }
    }
}

/// How far decoding went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoding {
    /// The encoded stream was decoded to its end.
    Whole,
    /// Decoding stopped at the bound: the body holds more (or is a bomb).
    AtLimit,
    /// The encoded bytes ended before the stream did: what they hold was decoded.
    Ended,
    /// The bytes are not valid in their coding past the decoded part.
    Corrupt(String),
}

/// A body with its codings undone, as far as they went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    pub bytes: Vec<u8>,
    pub decoding: Decoding,
}

/// Undoes `codings` (listed in the order they were applied) on `encoded`, keeping at most
/// `limit` decoded bytes at every stage.
pub(crate) fn decode(codings: &[Coding], encoded: &[u8], limit: usize) -> Decoded {
    let Some((last, earlier)) = codings.split_last() else {
        return Decoded {
            bytes: encoded.to_vec(),
            decoding: Decoding::Whole,
        };
    };
    let mut current = codecs::decode_one(*last, encoded, limit);
    for coding in earlier.iter().rev() {
        let next = codecs::decode_one(*coding, &current.bytes, limit);
        // The first stage that stopped short decides how the whole stopped.
        let decoding = match current.decoding {
            Decoding::Whole => next.decoding,
            stopped => stopped,
        };
        current = Decoded {
            bytes: next.bytes,
            decoding,
        };
    }
    current
}

#[cfg(test)]
mod tests;
