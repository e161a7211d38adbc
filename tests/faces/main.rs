//! What people and tools see, one test binary (see RULES: issues 15-17 add their faces here).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../notes_agent/scripted_checks.rs"]
mod scripted_checks;
#[allow(dead_code)]
#[path = "../notes_agent/scripted_model.rs"]
mod scripted_model;
#[allow(dead_code)]
#[path = "../notes_agent/scripted_replies.rs"]
mod scripted_replies;

mod compare;
