//! The one line a failed command prints: the error and its causes, each said once.

/// `error: cause: cause`, leaving out a cause whose words the line already holds (an error that
/// prints its source, as `reading x.toml: No such file…` does, would otherwise say it twice).
/// One line: a cause that spans lines (a TOML parser's caret block) is folded onto it, and
/// recorded text in it (a route name, a path) has its control characters shown as escapes.
pub fn error_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause
            .to_string()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let text = tracer_wire::safe_text::one_line(&text).into_owned();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading {path}: {source}")]
    struct Read {
        path: String,
        source: std::io::Error,
    }

    #[test]
    fn a_cause_over_several_lines_and_control_characters_stay_on_one_safe_line() {
        let error = anyhow::anyhow!("TOML parse error at line 1\n  |\n1 | a = =\n  |     ^\n")
            .context("route agent\u{1b}]52;c;SGk=\u{7}\u{202e}");
        let line = error_line(&error);
        assert!(!line.contains('\n') && !line.contains('\u{1b}') && !line.contains('\u{202e}'));
        assert!(
            line.contains("\\x1b") && line.contains("TOML parse error at line 1 | 1 | a = ="),
            "{line}"
        );
    }

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file (os error 2)");
        let error = anyhow::Error::new(Read {
            path: "nosuch.toml".into(),
            source: io,
        });
        assert_eq!(
            error_line(&error),
            "reading nosuch.toml: No such file (os error 2)"
        );
        let wrapped = anyhow::anyhow!("disk full").context("writing out.json");
        assert_eq!(error_line(&wrapped), "writing out.json: disk full");
    }
}
