//! Loose text comparison for content grouping: hosts wrap the user's words in their own prompts.

/// Lines shorter than this are too common to identify a request on their own.
const MIN_LINE: usize = 16;

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether two texts are the same user request: one contains the other (whitespace-insensitive),
/// or a long enough line of one appears in the other (open-webui wraps the question in a template).
pub fn overlaps(a: &str, b: &str) -> bool {
    overlap(a, b) > 0
}

/// How strongly two texts match: 3 equal, 2 one contains the other, 1 a shared long line, 0 not.
pub fn overlap(a: &str, b: &str) -> u8 {
    let (na, nb) = (normalize(a), normalize(b));
    if na.is_empty() || nb.is_empty() {
        return 0;
    }
    if na == nb {
        return 3;
    }
    if na.contains(&nb) || nb.contains(&na) {
        return 2;
    }
    let line_in = |lines: &str, other: &str| {
        lines.lines().map(normalize).any(|line| {
            let core = line.trim_matches(|c: char| !c.is_alphanumeric());
            core.len() >= MIN_LINE && other.contains(core)
        })
    };
    u8::from(line_in(a, &nb) || line_in(b, &na))
}

/// The host part of a peer address (`127.0.0.1:53412` → `127.0.0.1`); other peers unchanged.
pub fn peer_host(peer: &str) -> String {
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
        assert!(overlaps(title, later));
        assert!(overlaps(
            "Add buy milk to my notes",
            "  Add buy milk\nto my notes "
        ));
        assert!(!overlaps(
            "Add buy milk to my notes",
            "Add eggs to my notes"
        ));
        assert!(!overlaps("", "anything"));
        assert_eq!(overlap("Add note 1", "Add note 1"), 3);
        assert_eq!(overlap("Add note 1", "Add note 10"), 2);
    }

    #[test]
    fn peer_hosts_drop_the_port() {
        assert_eq!(peer_host("127.0.0.1:53412"), "127.0.0.1");
        assert_eq!(peer_host("[::1]:8080"), "[::1]");
        assert_eq!(peer_host("notes-server --stdio"), "notes-server --stdio");
    }
}
