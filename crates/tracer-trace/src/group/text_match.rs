//! Loose text comparison for content grouping: hosts wrap the user's words in their own prompts.

/// Lines shorter than this are too common to identify a request on their own.
const MIN_LINE: usize = 16;

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A text prepared for comparison: whitespace-normalized, with its long lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MatchText {
    norm: String,
    lines: Vec<String>,
}

impl MatchText {
    pub(crate) fn new(text: &str) -> Self {
        let lines = text
            .lines()
            .map(|line| {
                normalize(line)
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_string()
            })
            .filter(|core| core.len() >= MIN_LINE)
            .collect();
        Self {
            norm: normalize(text),
            lines,
        }
    }

    /// How strongly two texts match: 3 equal, 2 one contains the other, 1 a long line of one
    /// appears in the other (open-webui wraps the question in a template), 0 not at all.
    pub(crate) fn overlap(&self, other: &MatchText) -> u8 {
        let (a, b) = (&self.norm, &other.norm);
        if a.is_empty() || b.is_empty() {
            return 0;
        }
        if a == b {
            return 3;
        }
        if a.contains(b.as_str()) || b.contains(a.as_str()) {
            return 2;
        }
        let line_in =
            |lines: &[String], text: &str| lines.iter().any(|l| text.contains(l.as_str()));
        u8::from(line_in(&self.lines, b) || line_in(&other.lines, a))
    }
}

/// `MatchText::overlap` of two plain texts.
#[cfg(test)]
fn overlap(a: &str, b: &str) -> u8 {
    MatchText::new(a).overlap(&MatchText::new(b))
}

/// The host part of a peer address (`127.0.0.1:53412` → `127.0.0.1`); other peers unchanged.
pub(crate) fn peer_host(peer: &str) -> String {
    if let Some(rest) = peer.strip_prefix('[')
        && let Some(end) = rest.find(']')
    {
        return format!("[{}]", &rest[..end]);
    }
    match peer.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            host.to_string()
        }
        _ => peer.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_questions_overlap_and_different_ones_do_not() {
        let title = "Query: History:\nUSER: \"\"\"What is the phone number of Joshua Wilson?\"\"\"\nQuery: What is the phone number of Joshua Wilson?";
        let later = "<context>\n<source id=\"1\">555-66666666</source>\n</context>\n<user_query>\nWhat is the phone number of Joshua Wilson?\n</user_query>";
        assert_eq!(overlap(title, later), 1);
        assert_eq!(
            overlap("Add buy milk to my notes", "  Add buy milk\nto my notes "),
            3
        );
        assert_eq!(
            overlap("Add buy milk to my notes", "Add eggs to my notes"),
            0
        );
        assert_eq!(overlap("", "anything"), 0);
        assert_eq!(overlap("Add note 1", "Add note 10"), 2);
    }

    #[test]
    fn peer_hosts_drop_the_port() {
        assert_eq!(peer_host("127.0.0.1:53412"), "127.0.0.1");
        assert_eq!(peer_host("[::1]:8080"), "[::1]");
        assert_eq!(peer_host("notes-server --stdio"), "notes-server --stdio");
    }
}
