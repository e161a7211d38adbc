//! The decoders on bodies encoded here: whole, cut, stacked, past the bound, and bombs.

use std::io::Write;
use std::time::{Duration, Instant};

use super::readable::looks_binary;
use super::*;
use crate::hop::{BodyCapture, Header};

const TEXT: &[u8] = b"data: {\"type\":\"response.output_text.delta\",\"delta\":\"buy milk\"}\n\n";

fn text(repeats: usize) -> Vec<u8> {
    TEXT.repeat(repeats)
}

/// Events that differ one from the next, so every part of the encoded stream carries some.
fn numbered_events(count: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut seed = 7u64;
    for i in 0..count {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.extend(format!("data: {{\"n\":{i},\"noise\":{}}}\n\n", seed >> 40).into_bytes());
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn zlib(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn raw_deflate(bytes: &[u8]) -> Vec<u8> {
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn brotli(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut writer = ::brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        writer.write_all(bytes).unwrap();
    }
    out
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

#[test]
fn every_coding_decodes_whole() {
    let plain = text(200);
    for (coding, encoded) in [
        (Coding::Gzip, gzip(&plain)),
        (Coding::Deflate, zlib(&plain)),
        (Coding::Deflate, raw_deflate(&plain)),
        (Coding::Brotli, brotli(&plain)),
        (Coding::Zstd, zstd(&plain)),
    ] {
        assert!(encoded.len() < plain.len() / 4, "{coding:?} compresses");
        let decoded = decode(&[coding], &encoded, READ_LIMIT);
        assert_eq!(decoded.decoding, Decoding::Whole, "{coding:?}");
        assert_eq!(decoded.bytes, plain, "{coding:?}");
    }
}

#[test]
fn gzip_members_and_zstd_frames_follow_one_another() {
    let mut members = gzip(b"first ");
    members.extend(gzip(b"second"));
    let decoded = decode(&[Coding::Gzip], &members, READ_LIMIT);
    assert_eq!(decoded.bytes, b"first second");
    assert_eq!(decoded.decoding, Decoding::Whole);
    let mut frames = zstd(b"first ");
    frames.extend(zstd(b"second"));
    let decoded = decode(&[Coding::Zstd], &frames, READ_LIMIT);
    assert_eq!(decoded.bytes, b"first second");
    assert_eq!(decoded.decoding, Decoding::Whole);
}

#[test]
fn stacked_codings_are_undone_last_first() {
    let plain = text(10);
    let encoded = brotli(&gzip(&plain));
    assert_eq!(
        Encoding::parse("gzip, br"),
        Encoding::Known(vec![Coding::Gzip, Coding::Brotli])
    );
    let decoded = decode(&[Coding::Gzip, Coding::Brotli], &encoded, READ_LIMIT);
    assert_eq!(decoded.bytes, plain);
    assert_eq!(decoded.decoding, Decoding::Whole);
}

#[test]
fn header_values_are_read_leniently() {
    assert_eq!(Encoding::parse("GZIP"), Encoding::Known(vec![Coding::Gzip]));
    assert_eq!(
        Encoding::parse("x-gzip"),
        Encoding::Known(vec![Coding::Gzip])
    );
    assert_eq!(Encoding::parse(" identity "), Encoding::Identity);
    assert_eq!(Encoding::parse(""), Encoding::Identity);
    assert_eq!(
        Encoding::parse("compress"),
        Encoding::Unknown("compress".into())
    );
    assert_eq!(
        Encoding::parse("gzip, gzip, gzip, gzip"),
        Encoding::Unknown("gzip, gzip, gzip, gzip".into())
    );
    assert_eq!(Encoding::of(&[]), Encoding::Identity);
}

#[test]
fn a_cut_body_decodes_as_far_as_it_goes() {
    // zstd decodes whole blocks only (up to 128 KiB each): enough of them to cut between.
    let plain = numbered_events(16_000);
    for (coding, encoded) in [
        (Coding::Gzip, gzip(&plain)),
        (Coding::Deflate, zlib(&plain)),
        (Coding::Brotli, brotli(&plain)),
        (Coding::Zstd, zstd(&plain)),
    ] {
        let cut = &encoded[..encoded.len() * 3 / 4];
        let decoded = decode(&[coding], cut, READ_LIMIT);
        assert_eq!(decoded.decoding, Decoding::Ended, "{coding:?}");
        assert!(
            decoded.bytes.len() > plain.len() / 3,
            "{coding:?}: {} of {}",
            decoded.bytes.len(),
            plain.len()
        );
        assert!(plain.starts_with(&decoded.bytes), "{coding:?}: a prefix");
    }
}

#[test]
fn a_gzip_body_without_its_trailer_is_whole_in_content_but_ended() {
    let plain = text(30);
    let encoded = gzip(&plain);
    let decoded = decode(&[Coding::Gzip], &encoded[..encoded.len() - 8], READ_LIMIT);
    assert_eq!(decoded.bytes, plain);
    assert_eq!(decoded.decoding, Decoding::Ended);
}

#[test]
fn corrupt_bytes_say_so() {
    let decoded = decode(&[Coding::Gzip], b"{\"not\":\"gzip\"}", READ_LIMIT);
    assert!(
        matches!(decoded.decoding, Decoding::Corrupt(_)),
        "{decoded:?}"
    );
    let decoded = decode(&[Coding::Zstd], b"\x00\x01\x02\x03 not zstd", READ_LIMIT);
    assert!(
        matches!(decoded.decoding, Decoding::Corrupt(_)),
        "{decoded:?}"
    );
    let decoded = decode(&[Coding::Brotli], &[0xff; 64], READ_LIMIT);
    assert!(
        matches!(decoded.decoding, Decoding::Corrupt(_)),
        "{decoded:?}"
    );
}

#[test]
fn decoding_stops_at_the_bound_and_a_body_of_exactly_the_bound_is_whole() {
    let plain = text(1000);
    for (coding, encoded) in [
        (Coding::Gzip, gzip(&plain)),
        (Coding::Brotli, brotli(&plain)),
        (Coding::Zstd, zstd(&plain)),
    ] {
        let decoded = decode(&[coding], &encoded, 1000);
        assert_eq!(decoded.decoding, Decoding::AtLimit, "{coding:?}");
        assert_eq!(decoded.bytes, plain[..1000], "{coding:?}");
        let exact = decode(&[coding], &encoded, plain.len());
        assert_eq!(exact.decoding, Decoding::Whole, "{coding:?}");
        assert_eq!(exact.bytes.len(), plain.len(), "{coding:?}");
    }
}

/// 10 GiB of zeros as gzip members of 1 MiB each, written one after another: about 10 MB,
/// which fits in the default `--max-body`; never held decoded.
fn ten_gib_of_gzip(out: &mut impl Write) {
    let member = gzip(&vec![0; 1024 * 1024]);
    for _ in 0..10 * 1024 {
        out.write_all(&member).unwrap();
    }
}

/// The peak resident size of this process so far (Linux), in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn read_bomb(headers: &[Header], bomb: &[u8]) -> (usize, Duration) {
    let capture = BodyCapture::whole(bomb.to_vec());
    let started = Instant::now();
    let body = readable(headers, &capture);
    let elapsed = started.elapsed();
    assert_eq!(body.decoding, Some(Decoding::AtLimit));
    assert!(
        body.note().unwrap().contains("reading bound"),
        "{:?}",
        body.note()
    );
    (body.bytes().len(), elapsed)
}

#[test]
fn a_gzip_bomb_costs_the_reading_bound_and_no_more() {
    let mut bomb = Vec::new();
    ten_gib_of_gzip(&mut bomb);
    // The same 10 GiB gzipped twice more: under 1 KiB with `Content-Encoding: gzip, gzip, gzip`.
    let mut twice = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    ten_gib_of_gzip(&mut twice);
    let tiny = gzip(&twice.finish().unwrap());
    assert!(bomb.len() < 12 * 1024 * 1024, "{} bytes", bomb.len());
    assert!(tiny.len() < 2048, "{} bytes", tiny.len());
    let before = peak_rss_kib();
    for (label, encoded) in [("gzip", &bomb), ("gzip, gzip, gzip", &tiny)] {
        let headers = [Header::new("content-encoding", label)];
        let (len, elapsed) = read_bomb(&headers, encoded);
        assert_eq!(len, READ_LIMIT, "{label}");
        assert!(elapsed < Duration::from_secs(5), "{label}: {elapsed:?}");
        eprintln!(
            "bomb {label}: {} encoded bytes, {len} decoded in {elapsed:?}",
            encoded.len()
        );
    }
    if let (Some(before), Some(after)) = (before, peak_rss_kib()) {
        eprintln!("peak RSS {before} KiB before reading, {after} KiB after");
        // The bound (16 MiB) and its copy in steps, not the 10 GiB the bomb holds.
        assert!(after - before < 200 * 1024, "{before} → {after} KiB");
    }
}

#[test]
fn a_binary_body_is_named_not_shown() {
    // An OTLP export as Codex sends it: protobuf, zstd.
    let protobuf: Vec<u8> = (0u8..=255).cycle().take(3000).collect();
    let encoded = zstd(&protobuf);
    let headers = [
        Header::new("content-type", "application/x-protobuf"),
        Header::new("content-encoding", "zstd"),
    ];
    let capture = BodyCapture::whole(encoded.clone());
    let body = readable(&headers, &capture);
    assert_eq!(body.decoding, Some(Decoding::Whole));
    let summary = body.binary.clone().unwrap();
    assert_eq!(
        summary,
        format!("{} bytes of application/x-protobuf (zstd)", encoded.len())
    );
    assert!(!summary.chars().any(char::is_control), "{summary:?}");
    let raw = BodyCapture::whole(vec![0, 1, 2, 0x1b, b'[', b'2', b'J', 0xff]);
    let named = readable(&[], &raw).binary.unwrap();
    assert_eq!(named, "8 bytes of binary data");
    let unknown = readable(&[Header::new("content-encoding", "compress")], &raw);
    assert_eq!(
        unknown.binary.as_deref(),
        Some("8 bytes of binary data (compress)")
    );
}

#[test]
fn text_stays_text_and_a_mislabelled_body_is_read_as_recorded() {
    assert!(!looks_binary("buy milk \u{1b}[1m ünïcode\t\r\n".as_bytes()));
    assert!(
        !looks_binary(&"é".as_bytes()[..1]),
        "a character cut by the end"
    );
    assert!(looks_binary(b"a\0b"));
    let json = BodyCapture::whole(b"{\"model\":\"x\"}".to_vec());
    let body = readable(&[Header::new("content-encoding", "gzip")], &json);
    assert_eq!(body.bytes(), json.bytes.as_slice());
    assert!(body.binary.is_none());
    assert!(
        body.note().unwrap().contains("read as recorded"),
        "{:?}",
        body.note()
    );
}

#[test]
fn a_cut_capture_says_how_far_it_decoded() {
    let plain = text(2000);
    let encoded = gzip(&plain);
    let kept = encoded.len() / 2;
    let capture = BodyCapture {
        bytes: encoded[..kept].to_vec(),
        total_len: encoded.len() as u64,
        truncated: true,
    };
    let headers = [Header::new("content-encoding", "gzip")];
    let body = readable(&headers, &capture);
    assert!(body.stopped_short());
    assert!(body.body.truncated);
    let note = body.note().unwrap();
    assert!(
        note.starts_with(&format!(
            "gzip: decoded as far as the {kept} kept bytes of {} go",
            encoded.len()
        )),
        "{note}"
    );
}
