//! A listen address as the user writes it: `IP:PORT`, `[IPv6]:PORT`, or `localhost:PORT`
//! (loopback, 127.0.0.1), for every flag that names where tracer listens.

use std::net::{Ipv4Addr, SocketAddr};

/// Parses a listen address; `localhost:PORT` is 127.0.0.1:PORT (no name is looked up).
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let bad = || {
        format!("listen address `{text}` is not IP:PORT or localhost:PORT (e.g. 127.0.0.1:11435)")
    };
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    if !host.eq_ignore_ascii_case("localhost") {
        return Err(bad());
    }
    let port: u16 = port.parse().map_err(|_| bad())?;
    Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_is_loopback_and_others_parse_as_before() {
        assert_eq!(
            parse_listen("localhost:0").unwrap().to_string(),
            "127.0.0.1:0"
        );
        assert_eq!(
            parse_listen("LOCALHOST:8080").unwrap().to_string(),
            "127.0.0.1:8080"
        );
        assert_eq!(parse_listen("[::1]:9").unwrap().to_string(), "[::1]:9");
        assert_eq!(parse_listen("0.0.0.0:1").unwrap().to_string(), "0.0.0.0:1");
        for bad in ["localhost", "localhost:x", "example.com:80", "127.0.0.1"] {
            let error = parse_listen(bad).unwrap_err();
            assert!(error.contains("localhost:PORT"), "{bad}: {error}");
        }
    }
}
