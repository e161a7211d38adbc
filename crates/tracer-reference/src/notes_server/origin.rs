//! The DNS-rebinding rule: a request whose `Origin` is not on this machine is refused (403).

/// True for `Origin`s on this machine: http(s)://localhost, 127.0.0.1 or [::1], any port.
pub(crate) fn is_local_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        match bracketed.split_once(']') {
            Some((host, port)) if port.is_empty() || is_port(port) => host,
            _ => return false,
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => authority,
        }
    };
    matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "::1"
    )
}

fn is_port(text: &str) -> bool {
    let digits = text.strip_prefix(':').unwrap_or(text);
    !digits.is_empty() && digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_origins_are_allowed_and_others_refused() {
        for origin in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8080",
            "http://[::1]:1",
            "http://LOCALHOST",
        ] {
            assert!(is_local_origin(origin), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "null",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "file://",
            "http://localhost:abc",
            "ftp://localhost",
        ] {
            assert!(!is_local_origin(origin), "{origin}");
        }
    }
}
