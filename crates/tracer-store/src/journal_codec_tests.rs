//! The journal codec's round trips: every event, a start frame from before runs, a piece's head.

use super::*;
use tracer_wire::hop::{Role, Transport};

#[test]
fn every_event_round_trips() {
    let events = vec![
        HopEvent::Started(Box::new(HopStart {
            id: "a".into(),
            route: "model".into(),
            role: Role::Model,
            transport: Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: "POST".into(),
            path: "/api/chat".into(),
            url: "http://x/api/chat".into(),
            request_headers: vec![Header::new("x-latin1", b"caf\xe9".to_vec())],
            started_unix_ns: 7,
            run_id: Some("run-1".into()),
        })),
        HopEvent::Ended(Box::new(HopEnd {
            id: "a".into(),
            state: Some(HopState::Complete),
            status: Some(200),
            response_body: BodyCapture::whole(vec![0, 1, 255]),
            chunks: vec![Chunk {
                offset_ns: 5,
                size: 3,
            }],
            error: Some("e".into()),
            response_trailers: vec![Header::new("grpc-status", "0")],
            note: Some("the client stopped reading after the last event ([DONE])".into()),
            ..HopEnd::default()
        })),
        HopEvent::RequestDone(Box::new(RequestDone {
            id: "a".into(),
            request_body: BodyCapture::whole(b"{}".to_vec()),
            request_ended_unix_ns: 9,
        })),
        HopEvent::ServerLog(Box::new(ServerLogLine {
            route: "notes".into(),
            logged_unix_ns: 3,
            line: "hello".into(),
        })),
        HopEvent::BodyPiece(Box::new(BodyPiece {
            id: "a".into(),
            side: BodySide::Response,
            seq: 2,
            bytes: vec![0, 9, 255],
        })),
    ];
    for event in events {
        let mut out = Vec::new();
        encode(&event, &mut out);
        let len = u32::from_le_bytes(out[..4].try_into().unwrap()) as usize;
        assert_eq!(len, out.len() - FRAME_HEADER);
        assert_eq!(decode(&out[FRAME_HEADER..]).unwrap(), event);
        assert!(decode(&out[FRAME_HEADER..out.len() - 1]).is_err());
    }
}

#[test]
fn a_start_journaled_before_runs_decodes_with_no_run() {
    let start = HopStart {
        id: "old".into(),
        route: "model".into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "p".into(),
        method: "GET".into(),
        path: "/".into(),
        url: "http://x/".into(),
        request_headers: Vec::new(),
        started_unix_ns: 1,
        run_id: None,
    };
    let mut out = Vec::new();
    encode(&HopEvent::Started(Box::new(start.clone())), &mut out);
    // The old frame ended after the start time: drop the run's one "none" byte.
    let old = &out[FRAME_HEADER..out.len() - 1];
    assert_eq!(decode(old).unwrap(), HopEvent::Started(Box::new(start)));
}

#[test]
fn a_piece_head_and_its_bytes_make_the_frame_a_piece_event_makes() {
    let piece = BodyPiece {
        id: "hop".into(),
        side: BodySide::Request,
        seq: 7,
        bytes: b"piece bytes".to_vec(),
    };
    let mut whole = Vec::new();
    encode(&HopEvent::BodyPiece(Box::new(piece.clone())), &mut whole);
    let mut split = Vec::new();
    encode_body_piece_head(
        &piece.id,
        piece.side,
        piece.seq,
        piece.bytes.len(),
        &mut split,
    );
    split.extend_from_slice(&piece.bytes);
    assert_eq!(split, whole);
}
