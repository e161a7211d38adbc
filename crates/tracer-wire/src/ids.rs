//! Random ids as they cross the wire: trace and span ids, tool call ids, completion ids, hop ids.

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A new random id of `bytes` bytes as lower-case hex (16 bytes for hops, as W3C trace ids are).
pub fn random_hex_id(bytes: usize) -> String {
    use rand::RngCore;
    let mut raw = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut raw);
    hex(&raw)
}

/// A new hop id: 32 lower-case hex digits, the first 8 the low 32 bits of the microseconds since
/// the Unix epoch and the other 24 random. Hops stored one after another get ids that sort one
/// after another, so the `hops.id` index (and `traces.id`, a trace taking its first hop's id)
/// grows at one place instead of at a random page per row; the first 8 digits, the ones a
/// listing shows, still differ from hop to hop, and 96 random bits keep ids unique across
/// processes. The low bits wrap every 71 minutes: the index then grows at a new place.
pub fn hop_id() -> String {
    use rand::RngCore;
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_micros());
    let mut raw = [0u8; 16];
    // The low 32 bits, on purpose: see above.
    raw[..4].copy_from_slice(&((micros & 0xffff_ffff) as u32).to_be_bytes());
    rand::rng().fill_bytes(&mut raw[4..]);
    hex(&raw)
}

fn hex(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len() * 2);
    for byte in raw {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{hop_id, random_hex_id};

    #[test]
    fn ids_are_hex_of_the_asked_length_and_differ() {
        let a = random_hex_id(16);
        assert_eq!(a.len(), 32);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, random_hex_id(16));
        assert_eq!(random_hex_id(3).len(), 6);
    }

    #[test]
    fn hop_ids_made_one_after_another_sort_one_after_another() {
        let ids: Vec<String> = (0..50)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_micros(20));
                hop_id()
            })
            .collect();
        for id in &ids {
            assert_eq!(id.len(), 32);
            assert!(id.bytes().all(|b| HEXES.contains(&b)), "{id}");
        }
        // The first 8 digits differ from hop to hop (what a listing shows).
        let shown: std::collections::HashSet<&str> = ids.iter().map(|id| &id[..8]).collect();
        assert_eq!(shown.len(), ids.len());
        // In order, but for the one wrap of the low 32 bits that may fall among them.
        let out_of_order = ids.windows(2).filter(|pair| pair[0] >= pair[1]).count();
        assert!(out_of_order <= 1, "{ids:?}");
        // The random part differs even for ids of the same microsecond.
        assert_ne!(hop_id()[8..], hop_id()[8..]);
    }

    const HEXES: &[u8] = b"0123456789abcdef";
}
