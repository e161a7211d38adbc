//! A model request in the html page as what is new since the previous request of its
//! conversation, with its whole body one click away and kept once: each body is cut at the
//! elements of its `messages` (or `input`, `contents`) array, each distinct piece is stored once
//! in a JSON blob, each body's list of pieces as an earlier body's first pieces plus its own,
//! and the page's script joins a body's pieces again when it is asked for, so a long
//! conversation's page grows with what is new, not with every resent message.

use std::collections::{HashMap, VecDeque};

use serde_json::value::RawValue;

use super::escape;
use super::json_html::body_html;
use tracer_trace::read::request_anatomy::human_bytes;

/// The arrays a conversation's history is in, by dialect.
const HISTORY_KEYS: [&str; 3] = ["messages", "input", "contents"];

/// The pieces of the bodies shown as growth, each distinct piece once.
#[derive(Default)]
pub(crate) struct Growth {
    pieces: Vec<String>,
    known: HashMap<String, usize>,
    bodies: Vec<BodyPieces>,
    /// The piece lists of the last [`RECENT`] bodies, by index: a body is said as the one it
    /// shares the longest start with, plus the rest.
    recent: VecDeque<(usize, Vec<usize>)>,
}

/// The bodies a new one is compared with: its conversation's previous request is among them
/// even with a few side requests (titles, routing) between.
const RECENT: usize = 4;

/// A body's pieces in the blob: all of them, or the first `keep` of body `from`'s and then
/// these (the page's script follows `from` back to a whole list).
#[derive(serde::Serialize)]
#[serde(untagged)]
enum BodyPieces {
    Whole(Vec<usize>),
    From {
        from: usize,
        keep: usize,
        then: Vec<usize>,
    },
}

/// A JSON body cut at its history's elements: the text between and around them, and them.
struct Cut<'a> {
    /// Pieces in order; joined they are the body's exact text.
    pieces: Vec<&'a str>,
    /// The history's elements, in order.
    messages: Vec<&'a str>,
}

fn cut(text: &str) -> Option<Cut<'_>> {
    let top: HashMap<&str, &RawValue> = serde_json::from_str(text).ok()?;
    let history = HISTORY_KEYS.iter().find_map(|key| top.get(key))?;
    let messages: Vec<&RawValue> = serde_json::from_str(history.get()).ok()?;
    let base = text.as_ptr() as usize;
    let mut pieces = Vec::with_capacity(2 * messages.len() + 1);
    let mut at = 0;
    for message in &messages {
        let start = message.get().as_ptr() as usize - base;
        pieces.push(text.get(at..start)?);
        pieces.push(message.get());
        at = start + message.get().len();
    }
    pieces.push(text.get(at..)?);
    Some(Cut {
        pieces,
        messages: messages.iter().map(|m| m.get()).collect(),
    })
}

impl Growth {
    /// The body section of a request whose conversation had `new` of its messages before this
    /// one added the rest: the new messages shown, the whole body behind a button. None when
    /// the body is not JSON with a history array (it is shown whole, as before).
    pub(crate) fn request_html(
        &mut self,
        bytes: &[u8],
        new: usize,
        total_len: u64,
    ) -> Option<String> {
        let text = std::str::from_utf8(bytes).ok()?;
        let cut = cut(text)?;
        let shown = new.min(cut.messages.len());
        let index = self.bodies.len();
        let ids: Vec<usize> = cut.pieces.iter().map(|piece| self.piece(piece)).collect();
        self.bodies.push(self.said(&ids));
        self.recent.push_back((index, ids));
        if self.recent.len() > RECENT {
            self.recent.pop_front();
        }
        let added = cut.messages[cut.messages.len() - shown..].join(",\n");
        let mut out = format!(
            "<p class=\"growth\">the previous request of this conversation plus {}:</p>\n",
            escape(&tracer_trace::words::plural(shown, "new message"))
        );
        out.push_str(&body_html(format!("[{added}]").as_bytes(), 0, false));
        out.push_str(&format!(
            "\n<button type=\"button\" class=\"full-body\" data-body=\"{index}\">the whole body \
             ({})</button>\n<pre class=\"full-body\" hidden></pre>\n",
            escape(&human_bytes(
                usize::try_from(total_len).unwrap_or(usize::MAX)
            ))
        ));
        Some(out)
    }

    /// A body's pieces as the recent body it starts like, plus the rest; whole when none
    /// shares more than its first piece.
    fn said(&self, ids: &[usize]) -> BodyPieces {
        let shared =
            |earlier: &[usize]| earlier.iter().zip(ids).take_while(|(a, b)| a == b).count();
        let best = (self.recent.iter())
            .map(|(index, earlier)| (shared(earlier), *index))
            .max();
        match best {
            Some((keep, from)) if keep > 1 => BodyPieces::From {
                from,
                keep,
                then: ids[keep..].to_vec(),
            },
            _ => BodyPieces::Whole(ids.to_vec()),
        }
    }

    fn piece(&mut self, piece: &str) -> usize {
        if let Some(&id) = self.known.get(piece) {
            return id;
        }
        let id = self.pieces.len();
        self.pieces.push(piece.to_owned());
        self.known.insert(piece.to_owned(), id);
        id
    }

    /// The blob the page's script reads (`{"pieces": [...], "bodies": [[piece, ...], ...]}`), as
    /// a script element that is data, not code; empty when no body was cut.
    pub(crate) fn blob_html(&self) -> String {
        if self.bodies.is_empty() {
            return String::new();
        }
        let blob = serde_json::json!({ "pieces": self.pieces, "bodies": self.bodies });
        // `<` only ever appears inside JSON strings, where `\u003c` is the same character: the
        // element cannot be closed early by a recorded `</script>`.
        let text = tracer_wire::safe_text::json_text(&blob.to_string()).replace('<', "\\u003c");
        format!("<script type=\"application/json\" id=\"bodies\">{text}</script>\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Growth {
        /// Body `index`'s pieces, followed back as the page's script does.
        fn pieces_of(&self, index: usize) -> Vec<usize> {
            match &self.bodies[index] {
                BodyPieces::Whole(ids) => ids.clone(),
                BodyPieces::From { from, keep, then } => {
                    let mut ids = self.pieces_of(*from);
                    ids.truncate(*keep);
                    ids.extend(then);
                    ids
                }
            }
        }
    }

    #[test]
    fn a_body_is_its_pieces_joined_and_repeated_pieces_are_kept_once() {
        let first =
            r#"{"system":"s","messages":[{"role":"user","content":"a</script>"}], "stream":true}"#;
        let second = r#"{"system":"s","messages":[{"role":"user","content":"a</script>"}, {"role":"assistant","content":"b"}], "stream":true}"#;
        let mut growth = Growth::default();
        let html = growth.request_html(second.as_bytes(), 1, 10).unwrap();
        assert!(html.contains("1 new message"), "{html}");
        growth.request_html(first.as_bytes(), 1, 10).unwrap();
        let kept: usize = growth.pieces.iter().map(String::len).sum();
        assert!(kept < second.len() + 20, "{:?}", growth.pieces);
        let third = r#"{"system":"s","messages":[{"role":"user","content":"a</script>"}, {"role":"assistant","content":"b"}, {"role":"user","content":"c"}], "stream":true}"#;
        growth.request_html(third.as_bytes(), 1, 10).unwrap();
        assert!(matches!(growth.bodies[2], BodyPieces::From { from: 0, .. }));
        for (index, text) in [second, first, third].into_iter().enumerate() {
            let joined: String = (growth.pieces_of(index).iter())
                .map(|&i| growth.pieces[i].as_str())
                .collect();
            assert_eq!(joined, text);
        }
        let blob = growth.blob_html();
        assert!(!blob.contains("</script>\"") && blob.matches("</script>").count() == 1);
        assert_eq!(growth.request_html(b"{\"model\":\"m\"}", 1, 10), None);
    }
}
