//! Credentials in an OTLP URL (`http://user:password@collector:4318`) are sent as HTTP Basic
//! auth and taken out of the URL, which is printed, stored and used as the spans' target.

use base64::Engine as _;
use http::header::AUTHORIZATION;
use http::{HeaderName, HeaderValue};

/// `url` without its userinfo; the userinfo becomes `Authorization: Basic …` unless a header
/// already authorizes (a header given explicitly wins).
pub(crate) fn to_basic_auth(url: &str, headers: &mut Vec<(HeaderName, HeaderValue)>) -> String {
    let (url, userinfo) = tracer_wire::redact::split_userinfo(url);
    if let Some(userinfo) = userinfo
        && !headers.iter().any(|(name, _)| name == AUTHORIZATION)
    {
        let basic = base64::engine::general_purpose::STANDARD.encode(userinfo);
        if let Ok(value) = HeaderValue::from_str(&format!("Basic {basic}")) {
            headers.push((AUTHORIZATION, value));
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_becomes_basic_auth_and_leaves_the_url() {
        let mut headers = Vec::new();
        let url = to_basic_auth("http://ann:p%40ss@c:4318/v1/traces", &mut headers);
        assert_eq!(url, "http://c:4318/v1/traces");
        // base64("ann:p@ss")
        assert_eq!(
            headers,
            [(
                AUTHORIZATION,
                HeaderValue::from_static("Basic YW5uOnBAc3M=")
            )]
        );
        let mut given = vec![(AUTHORIZATION, HeaderValue::from_static("Bearer t"))];
        assert_eq!(to_basic_auth("http://a:b@c/x", &mut given), "http://c/x");
        assert_eq!(given.len(), 1, "an explicit header wins");
        let mut none = Vec::new();
        assert_eq!(to_basic_auth("http://c/x", &mut none), "http://c/x");
        assert!(none.is_empty());
    }
}
