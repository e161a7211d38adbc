//! A WebSocket hop's messages in the journal: batches of an open socket's messages as they
//! complete (`WsMessages` frames), and, from a tracer before those, all of them after the end's
//! note (which is then always written, so the decoder knows where they start).

use tracer_wire::hop::{WsBatch, WsDirection, WsMessage, WsRecord};

/// Appends a batch of an open socket's messages, after its frame kind.
pub(crate) fn encode_batch(kind: u8, batch: &WsBatch, out: &mut Vec<u8>) {
    out.push(kind);
    bytes(out, batch.id.as_bytes());
    out.extend_from_slice(&batch.first_seq.to_le_bytes());
    encode(&batch.record, out);
}

/// Reads what [`encode_batch`] wrote.
pub(crate) fn decode_batch(input: &mut &[u8]) -> Result<WsBatch, String> {
    Ok(WsBatch {
        id: string(input)?,
        first_seq: u64_le(input)?,
        record: decode(input)?,
    })
}

/// The end of an `Ended` frame: its note (only when there is one, or when messages follow),
/// then a WebSocket's messages.
pub(crate) fn encode_tail(note: Option<&str>, websocket: Option<&WsRecord>, out: &mut Vec<u8>) {
    match (note, websocket) {
        (None, None) => {}
        (note, record) => {
            match note {
                Some(note) => {
                    out.push(1);
                    bytes(out, note.as_bytes());
                }
                None => out.push(0),
            }
            if let Some(record) = record {
                encode(record, out);
            }
        }
    }
}

/// Reads what [`encode_tail`] wrote (nothing, from an older tracer).
pub(crate) fn decode_tail(input: &mut &[u8]) -> Result<(Option<String>, Option<WsRecord>), String> {
    if input.is_empty() {
        return Ok((None, None));
    }
    let note = match take(input, 1)?[0] {
        0 => None,
        _ => Some(string(input)?),
    };
    let websocket = (!input.is_empty()).then(|| decode(input)).transpose()?;
    Ok((note, websocket))
}

/// Appends `record` to an `Ended` frame.
pub(crate) fn encode(record: &WsRecord, out: &mut Vec<u8>) {
    bytes(out, record.extensions.as_bytes());
    out.extend_from_slice(&record.not_listed.to_le_bytes());
    out.extend_from_slice(&(record.messages.len() as u64).to_le_bytes());
    for m in &record.messages {
        out.push(match m.direction {
            WsDirection::ToUpstream => 0,
            WsDirection::ToClient => 1,
        });
        out.extend_from_slice(&m.at_unix_ns.to_le_bytes());
        out.push(m.opcode);
        out.extend_from_slice(&m.size.to_le_bytes());
        out.extend_from_slice(&m.wire_size.to_le_bytes());
        out.extend_from_slice(&m.frames.to_le_bytes());
        out.push(u8::from(m.compressed) | (u8::from(m.complete) << 1));
        bytes(out, &m.data);
        bytes(out, m.error.as_deref().unwrap_or("").as_bytes());
    }
}

/// Reads what [`encode`] wrote; never trusts a length.
pub(crate) fn decode(input: &mut &[u8]) -> Result<WsRecord, String> {
    let extensions = string(input)?;
    let not_listed = u64_le(input)?;
    let count = usize::try_from(u64_le(input)?).map_err(|e| e.to_string())?;
    let mut messages = Vec::with_capacity(count.min(input.len() / 40));
    for _ in 0..count {
        let direction = match take(input, 1)?[0] {
            0 => WsDirection::ToUpstream,
            1 => WsDirection::ToClient,
            other => return Err(format!("unknown WebSocket direction {other}")),
        };
        let at_unix_ns = u64_le(input)? as i64;
        let opcode = take(input, 1)?[0];
        let size = u64_le(input)?;
        let wire_size = u64_le(input)?;
        let frames = u32::from_le_bytes(array(take(input, 4)?)?);
        let flags = take(input, 1)?[0];
        let data = take_bytes(input)?.to_vec();
        let error = string(input)?;
        messages.push(WsMessage {
            direction,
            at_unix_ns,
            opcode,
            size,
            wire_size,
            frames,
            compressed: flags & 1 != 0,
            complete: flags & 2 != 0,
            data,
            error: (!error.is_empty()).then_some(error),
        });
    }
    Ok(WsRecord {
        messages,
        not_listed,
        extensions,
    })
}

fn bytes(out: &mut Vec<u8>, v: &[u8]) {
    out.extend_from_slice(&(v.len() as u64).to_le_bytes());
    out.extend_from_slice(v);
}

fn take<'a>(input: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if input.len() < n {
        return Err("the WebSocket messages end early".to_string());
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Ok(head)
}

fn array<const N: usize>(bytes: &[u8]) -> Result<[u8; N], String> {
    bytes.try_into().map_err(|_| "short field".to_string())
}

fn u64_le(input: &mut &[u8]) -> Result<u64, String> {
    Ok(u64::from_le_bytes(array(take(input, 8)?)?))
}

fn take_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let n = usize::try_from(u64_le(input)?).map_err(|e| e.to_string())?;
    take(input, n)
}

fn string(input: &mut &[u8]) -> Result<String, String> {
    String::from_utf8(take_bytes(input)?.to_vec()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal_codec::{FRAME_HEADER, decode as decode_event, encode as encode_event};
    use tracer_wire::hop::{HopEnd, HopEvent, HopState};

    #[test]
    fn a_batch_of_an_open_socket_round_trips() {
        let event = HopEvent::WsMessages(Box::new(WsBatch {
            id: "ws".into(),
            first_seq: 7,
            record: record(),
        }));
        let mut out = Vec::new();
        encode_event(&event, &mut out);
        assert_eq!(decode_event(&out[FRAME_HEADER..]), Ok(event));
    }

    #[test]
    fn an_end_with_messages_round_trips_with_and_without_a_note() {
        for note in [None, Some("n".to_string())] {
            let event = HopEvent::Ended(Box::new(HopEnd {
                id: "ws".into(),
                state: Some(HopState::Aborted),
                note,
                websocket: Some(record()),
                ..HopEnd::default()
            }));
            let mut out = Vec::new();
            encode_event(&event, &mut out);
            assert_eq!(decode_event(&out[FRAME_HEADER..]), Ok(event));
        }
    }

    /// A record with both directions, a binary and a close message (for the codec's tests).
    fn record() -> WsRecord {
        let message = |direction, opcode, data: &[u8]| WsMessage {
            direction,
            at_unix_ns: 11,
            opcode,
            size: data.len() as u64 + 5,
            wire_size: 99,
            frames: 2,
            compressed: true,
            complete: opcode != 8,
            data: data.to_vec(),
            error: (opcode == 2).then(|| "inflate failed".to_string()),
        };
        WsRecord {
            messages: vec![
                message(
                    WsDirection::ToUpstream,
                    1,
                    b"{\"type\":\"response.create\"}",
                ),
                message(WsDirection::ToClient, 2, &[0, 255, 7]),
                message(WsDirection::ToClient, 8, &[3, 243, b'x']),
            ],
            not_listed: 4,
            extensions: "permessage-deflate".into(),
        }
    }
}
