//! JSON with comments and trailing commas (opencode's `.jsonc`, Gemini CLI's settings) read as
//! JSON: comments and trailing commas outside strings are dropped before parsing.

/// Parses JSONC text into a JSON value.
pub fn parse(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(&strip(text))
}

/// The text without `//` and `/* */` comments, then without a comma before `}` or `]`.
fn strip(text: &str) -> String {
    let chars: Vec<char> = text.trim_start_matches('\u{feff}').chars().collect();
    let uncommented = pass(&chars, |chars, i, out| match (chars[i], chars.get(i + 1)) {
        ('/', Some('/')) => {
            let mut j = i;
            while j < chars.len() && chars[j] != '\n' {
                j += 1;
            }
            j
        }
        ('/', Some('*')) => {
            let mut j = i + 2;
            while j < chars.len() && !(chars[j] == '*' && chars.get(j + 1) == Some(&'/')) {
                j += 1;
            }
            out.push(' ');
            (j + 2).min(chars.len())
        }
        (c, _) => {
            out.push(c);
            i + 1
        }
    });
    let chars: Vec<char> = uncommented.chars().collect();
    pass(&chars, |chars, i, out| {
        let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
        if chars[i] != ',' || !matches!(next, Some('}' | ']')) {
            out.push(chars[i]);
        }
        i + 1
    })
}

/// Copies strings whole and lets `step` handle everything outside them; `step` pushes what it
/// keeps and returns where to go on.
fn pass(chars: &[char], mut step: impl FnMut(&[char], usize, &mut String) -> usize) -> String {
    let mut out = String::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '"' {
            i = step(chars, i, &mut out);
            continue;
        }
        out.push('"');
        i += 1;
        while i < chars.len() {
            out.push(chars[i]);
            if chars[i] == '\\' {
                if let Some(next) = chars.get(i + 1) {
                    out.push(*next);
                }
                i += 2;
                continue;
            }
            i += 1;
            if chars[i - 1] == '"' {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_dropped_outside_strings() {
        let text = "{\n // a comment\n \"url\": \"http://x/*y*/\", /* block */ \"a\": [1, 2, /* c */],\n \"b\": 1, // last\n}";
        let value = parse(text).unwrap();
        assert_eq!(value["url"], "http://x/*y*/");
        assert_eq!(value["a"], serde_json::json!([1, 2]));
        assert_eq!(parse(r#"{"s": "a\"//b"}"#).unwrap()["s"], "a\"//b");
    }
}
