//! Frames made by hand (masked, fragmented, compressed with and without context takeover)
//! read back into the messages they carry.

use flate2::{Compress, Compression, FlushCompress};

use super::*;

fn frame(fin: bool, rsv1: bool, code: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut out = vec![(u8::from(fin) << 7) | (u8::from(rsv1) << 6) | code];
    let m = if mask.is_some() { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => out.push(m | n as u8),
        n if n <= 0xffff => {
            out.push(m | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(m | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    match mask {
        Some(key) => {
            out.extend_from_slice(&key);
            out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        }
        None => out.extend_from_slice(payload),
    }
    out
}

/// Deflates one message as RFC 7692 says: a sync flush, its 00 00 ff ff tail taken off.
fn deflate(compressor: &mut Compress, text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 64);
    compressor
        .compress_vec(text, &mut out, FlushCompress::Sync)
        .expect("deflate");
    assert!(out.ends_with(&[0, 0, 0xff, 0xff]));
    out.truncate(out.len() - 4);
    out
}

fn read_all(reader: FrameReader, wire: &[u8], step: usize) -> Vec<WsMessage> {
    let mut reader = reader;
    for (i, piece) in wire.chunks(step).enumerate() {
        reader.feed(piece, i as i64);
    }
    reader.finish(-1).0
}

#[test]
fn masked_fragmented_text_and_controls_are_read_whatever_the_cut() {
    let key = Some([1, 2, 3, 4]);
    let mut wire = frame(false, false, opcode::TEXT, b"hello ", key);
    wire.extend(frame(true, false, opcode::PING, b"p", key));
    wire.extend(frame(true, false, opcode::CONTINUATION, b"world", key));
    wire.extend(frame(true, false, opcode::BINARY, &[0, 159, 255], key));
    wire.extend(frame(true, false, opcode::PONG, b"", key));
    let mut close = 1011u16.to_be_bytes().to_vec();
    close.extend_from_slice(b"bye");
    wire.extend(frame(true, false, opcode::CLOSE, &close, key));
    for step in [1, 3, 7, wire.len()] {
        let reader = FrameReader::new(WsDirection::ToUpstream, None, 1 << 20);
        let messages = read_all(reader, &wire, step);
        let summary: Vec<(u8, &[u8], u32)> = messages
            .iter()
            .map(|m| (m.opcode, m.data.as_slice(), m.frames))
            .collect();
        assert_eq!(
            summary,
            vec![
                (opcode::PING, &b"p"[..], 1),
                (opcode::TEXT, &b"hello world"[..], 2),
                (opcode::BINARY, &[0, 159, 255][..], 1),
                (opcode::PONG, &b""[..], 1),
                (opcode::CLOSE, &close[..], 1),
            ],
            "cut every {step} bytes"
        );
        let wire_total: u64 = messages.iter().map(|m| m.wire_size).sum();
        assert_eq!(wire_total, wire.len() as u64);
        assert!(messages.iter().all(|m| m.complete));
        assert_eq!(messages[4].close_status(), Some((1011, "bye".to_string())));
    }
}

#[test]
fn permessage_deflate_is_inflated_with_and_without_context_takeover() {
    let texts: [&[u8]; 3] = [
        b"{\"type\":\"response.create\"}",
        b"{\"type\":\"response.create\"}",
        b"x",
    ];
    for takeover in [true, false] {
        let mut compressor = Compress::new(Compression::default(), false);
        let mut wire = Vec::new();
        for text in texts {
            if !takeover {
                compressor.reset();
            }
            wire.extend(frame(
                true,
                true,
                opcode::TEXT,
                &deflate(&mut compressor, text),
                None,
            ));
        }
        let header = if takeover {
            "permessage-deflate"
        } else {
            "permessage-deflate; server_no_context_takeover; client_max_window_bits=15"
        };
        let terms = DeflateTerms::negotiated(header);
        assert_eq!(terms.map(|t| t.server_no_context_takeover), Some(!takeover));
        for step in [1, 5, wire.len()] {
            let reader = FrameReader::new(WsDirection::ToClient, terms, 1 << 20);
            let messages = read_all(reader, &wire, step);
            let data: Vec<&[u8]> = messages.iter().map(|m| m.data.as_slice()).collect();
            assert_eq!(data, texts.to_vec(), "takeover {takeover}, step {step}");
            assert!(messages.iter().all(|m| m.compressed && m.error.is_none()));
        }
    }
}

#[test]
fn a_big_compressed_message_keeps_only_the_budget_and_counts_the_rest() {
    let big = vec![b'a'; 8 * 1024 * 1024];
    let mut compressor = Compress::new(Compression::default(), false);
    let payload = deflate(&mut compressor, &big);
    let wire = frame(true, true, opcode::TEXT, &payload, Some([9, 8, 7, 6]));
    let terms = DeflateTerms::negotiated("permessage-deflate");
    let reader = FrameReader::new(WsDirection::ToUpstream, terms, 1000);
    let messages = read_all(reader, &wire, 16 * 1024);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].size, big.len() as u64);
    assert_eq!(messages[0].data.len(), 1000);
    assert!(messages[0].truncated());
    assert_eq!(messages[0].wire_size, wire.len() as u64);
}

#[test]
fn a_connection_ending_inside_a_message_lists_it_incomplete() {
    let wire = frame(true, false, opcode::TEXT, b"half of this", None);
    let reader = FrameReader::new(WsDirection::ToClient, None, 1 << 20);
    let messages = read_all(reader, &wire[..7], 100);
    assert_eq!(messages.len(), 1);
    assert!(!messages[0].complete);
    assert_eq!(messages[0].data, b"half ");
}

#[test]
fn extensions_without_permessage_deflate_agree_to_none() {
    assert_eq!(DeflateTerms::negotiated(""), None);
    assert_eq!(DeflateTerms::negotiated("x-webkit-deflate-frame"), None);
    assert!(
        DeflateTerms::negotiated("foo, permessage-deflate; client_no_context_takeover")
            .is_some_and(|t| t.client_no_context_takeover && !t.server_no_context_takeover)
    );
}
