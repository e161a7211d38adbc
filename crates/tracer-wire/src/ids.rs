//! Random ids as they cross the wire: trace and span ids, tool call ids, completion ids, hop ids.

/// A new random id of `bytes` bytes as lower-case hex (16 bytes for hops, as W3C trace ids are).
pub fn random_hex_id(bytes: usize) -> String {
    use rand::RngCore;
    let mut raw = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut raw);
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::random_hex_id;

    #[test]
    fn ids_are_hex_of_the_asked_length_and_differ() {
        let a = random_hex_id(16);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, random_hex_id(16));
    }
}
