//! One line per WebSocket message for every face (show, the TUI, the handouts): its direction,
//! time, opcode and size, and what it says: a text as safe one-line text (a JSON event by its
//! `type` first), a binary message by its size only, a close by its code and reason.

use serde_json::Value;

use crate::words::{human_duration, shorten};
use tracer_wire::hop::ws_message::opcode;
use tracer_wire::hop::{WsDirection, WsMessage};

/// Characters of a text message shown on its line.
const SHOWN: usize = 120;

/// `→ +1.2 ms  text 17 B  {"type":"response.create",…}`; times count from `origin_ns`.
pub fn frame_line(message: &WsMessage, origin_ns: i64) -> String {
    let arrow = match message.direction {
        WsDirection::ToUpstream => "→",
        WsDirection::ToClient => "←",
    };
    let at = human_duration(message.at_unix_ns.saturating_sub(origin_ns));
    let mut facts = format!("{} {} B", opcode::name(message.opcode), message.size);
    if message.compressed {
        facts.push_str(&format!(", {} B on the wire", message.wire_size));
    }
    if message.frames > 1 {
        facts.push_str(&format!(", {} frames", message.frames));
    }
    if !message.complete {
        facts.push_str(", cut off");
    }
    let said = said(message);
    let mut line = format!("{arrow} +{at}  {facts}");
    if !said.is_empty() {
        line.push_str("  ");
        line.push_str(&said);
    }
    if let Some(error) = &message.error {
        line.push_str(&format!("  ({})", shorten(error, 80)));
    }
    line
}

/// What a message says, made safe to print.
pub(crate) fn said(message: &WsMessage) -> String {
    let kept = if message.truncated() {
        format!(" (kept {} B)", message.data.len())
    } else {
        String::new()
    };
    match message.opcode {
        opcode::CLOSE => match message.close_status() {
            Some((code, reason)) if reason.is_empty() => format!("code {code}"),
            Some((code, reason)) => format!("code {code} \"{}\"", shorten(&reason, 60)),
            None => String::new(),
        },
        opcode::TEXT | opcode::PING | opcode::PONG | opcode::CONTINUATION => {
            match std::str::from_utf8(&message.data) {
                _ if message.data.is_empty() && message.size > 0 => {
                    "(not kept: --max-body reached)".to_string()
                }
                Ok(text) => text_said(text) + &kept,
                // Cut inside a character by the budget: show what is whole.
                Err(error) if error.error_len().is_none() => {
                    let whole = &message.data[..error.valid_up_to()];
                    text_said(&String::from_utf8_lossy(whole)) + &kept
                }
                Err(_) => format!("{} bytes, not UTF-8", message.data.len()),
            }
        }
        _ => String::new(),
    }
}

fn text_said(text: &str) -> String {
    let json: Option<Value> = serde_json::from_str(text).ok();
    match json
        .as_ref()
        .and_then(|v| v.get("type"))
        .and_then(Value::as_str)
    {
        Some(kind) => format!("{}  {}", shorten(kind, 60), shorten(text, SHOWN)),
        None => shorten(text, SHOWN),
    }
}
