//! Content-defined chunking of bodies (a gear rolling hash): cut points depend only on the bytes
//! just before them, so what one body repeats from another is cut into the same chunks.
//!
//! A chunk is at least `MIN_CHUNK` and at most `MAX_CHUNK` bytes (the last may be shorter); past
//! the minimum a cut falls where the top `MASK_BITS` bits of the hash are zero, about every
//! `2^MASK_BITS` bytes (about 5 KiB on average with the minimum added: small enough that the
//! partial chunk at the end of a growing history, new on every turn, stays small). The hash of a byte position
//! reads the 64 bytes before it, so an edit moves the cuts of at most a chunk or two around it.

/// No chunk is shorter (except a body's last).
const MIN_CHUNK: usize = 1024;
/// No chunk is longer.
const MAX_CHUNK: usize = 64 * 1024;
/// Bits of the hash that must be zero for a cut: one cut in `2^MASK_BITS` positions.
const MASK_BITS: u32 = 12;
const CUT_MASK: u64 = ((1u64 << MASK_BITS) - 1) << (64 - MASK_BITS);

/// One pseudo-random 64-bit value per byte value (splitmix64 from a fixed seed), fixed forever:
/// changing it would cut new bodies differently from stored ones (still correct, less shared).
const GEAR: [u64; 256] = gear_table();

const fn gear_table() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut state: u64 = 0x7472_6163_6572_2e32; // "tracer.2"
    let mut i = 0;
    while i < 256 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        table[i] = z ^ (z >> 31);
        i += 1;
    }
    table
}

/// The chunks of `bytes`, in order; together they are `bytes` exactly. Empty input, no chunks.
pub(crate) fn chunks(bytes: &[u8]) -> Chunks<'_> {
    Chunks { rest: bytes }
}

/// Iterator over the chunks of one body.
pub(crate) struct Chunks<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Chunks<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let cut = cut_point(self.rest);
        let (chunk, rest) = self.rest.split_at(cut);
        self.rest = rest;
        Some(chunk)
    }
}

/// Where the first chunk of `bytes` ends.
fn cut_point(bytes: &[u8]) -> usize {
    if bytes.len() <= MIN_CHUNK {
        return bytes.len();
    }
    let end = bytes.len().min(MAX_CHUNK);
    let mut hash: u64 = 0;
    // The 64 bytes before the minimum warm the hash up, so a cut depends on content only.
    for &byte in &bytes[MIN_CHUNK - 64..MIN_CHUNK] {
        hash = (hash << 1).wrapping_add(GEAR[usize::from(byte)]);
    }
    for (at, &byte) in bytes.iter().enumerate().take(end).skip(MIN_CHUNK) {
        hash = (hash << 1).wrapping_add(GEAR[usize::from(byte)]);
        if hash & CUT_MASK == 0 {
            return at + 1;
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Deterministic test bytes: English-like words from a seeded xorshift.
    fn words(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed.max(1);
        let mut out = Vec::with_capacity(len + 16);
        const WORDS: [&str; 12] = [
            "the", "model", "tool", "call", "file", "read", "error", "result", "path", "json",
            "value", "stream",
        ];
        while out.len() < len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.extend_from_slice(WORDS[(state % 12) as usize].as_bytes());
            out.push(if state.is_multiple_of(11) {
                b'\n'
            } else {
                b' '
            });
        }
        out
    }

    #[test]
    fn chunks_join_back_to_the_bytes_and_respect_their_bounds() {
        for len in [
            0,
            1,
            MIN_CHUNK - 1,
            MIN_CHUNK,
            MIN_CHUNK + 1,
            100_000,
            1_000_003,
        ] {
            let bytes = words(len as u64 + 7, len);
            let bytes = &bytes[..len];
            let parts: Vec<&[u8]> = chunks(bytes).collect();
            assert_eq!(parts.concat(), bytes);
            let (last, rest) = match parts.split_last() {
                Some(split) => split,
                None => continue,
            };
            assert!(last.len() <= MAX_CHUNK);
            for part in rest {
                assert!(
                    (MIN_CHUNK..=MAX_CHUNK).contains(&part.len()),
                    "{}",
                    part.len()
                );
            }
        }
    }

    #[test]
    fn zeros_are_cut_at_the_maximum() {
        let bytes = vec![0u8; 3 * MAX_CHUNK + 5];
        let lens: Vec<usize> = chunks(&bytes).map(<[u8]>::len).collect();
        assert_eq!(lens, vec![MAX_CHUNK, MAX_CHUNK, MAX_CHUNK, 5]);
    }

    #[test]
    fn the_average_chunk_is_about_five_kibibytes() {
        let bytes = words(42, 4_000_000);
        let count = chunks(&bytes).count();
        let average = bytes.len() / count;
        assert!((3_500..8_000).contains(&average), "average {average}");
    }

    #[test]
    fn an_edit_in_the_middle_leaves_the_other_chunks_shared() {
        let before = words(9, 400_000);
        let mut after = before.clone();
        after.splice(
            200_000..200_010,
            b"an inserted sentence of new words".iter().copied(),
        );
        let old: HashSet<&[u8]> = chunks(&before).collect();
        let new: Vec<&[u8]> = chunks(&after).collect();
        let fresh: usize = new
            .iter()
            .filter(|c| !old.contains(*c))
            .map(|c| c.len())
            .sum();
        assert!(
            fresh <= 2 * MAX_CHUNK,
            "{fresh} new bytes for a 33-byte edit"
        );
        assert!(fresh > 0);
    }
}
