//! The words every face shares: a duration for people, a text cut to one line, a count with its noun.

/// A duration in nanoseconds for people: `0.4 ms`, `182 ms`, `4.88 s`.
pub fn human_duration(ns: i64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// A text on one line, cut to `max` characters with an ellipsis; control and bidi characters
/// shown as escapes (`tracer_wire::safe_text::one_line`).
pub fn shorten(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = tracer_wire::safe_text::one_line(&line).into_owned();
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `1 message` / `3 messages`.
pub fn plural(count: usize, one: &str) -> String {
    if count == 1 {
        format!("{count} {one}")
    } else {
        format!("{count} {one}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_lines_and_counts_in_words() {
        assert_eq!(human_duration(400_000), "0.4 ms");
        assert_eq!(human_duration(182_242_375), "182 ms");
        assert_eq!(human_duration(4_883_583_458), "4.88 s");
        assert_eq!(shorten("a  b\nc", 10), "a b c");
        assert_eq!(
            shorten("a\x1b]52;c;x\x07 \u{202e}b", 40),
            "a\\x1b]52;c;x\\x07 \\u{202e}b"
        );
        assert_eq!(shorten("abcdefghijkl", 5), "abcd…");
        assert_eq!(plural(1, "tool"), "1 tool");
        assert_eq!(plural(5, "tool"), "5 tools");
    }
}
