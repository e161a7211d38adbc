//! The one line a failed command prints: the error and its causes, each said once.

/// `error: cause: cause`, leaving out a cause whose words the line already holds (an error that
/// prints its source, as `reading x.toml: No such file…` does, would otherwise say it twice).
pub fn error_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
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
