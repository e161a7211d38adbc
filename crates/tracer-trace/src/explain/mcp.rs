//! MCP explained, in one place: a trace's JSON-RPC messages numbered and paired, each told by
//! its method and by what it answers, withdraws or reports on; a lone hop's; and the cases' words.
//!
//! `messages` drives a trace's MCP messages; `message_words` tells one (its requests and
//! notifications), `answer_words` an answer by its request, `lone_hop` one by its method or fields
//! alone; `pairing`, `fields` and `content_words` are what they share; `cases`, `answer_cases` and
//! `tool_server_cases` are the table's rows.

pub(crate) mod answer_cases;
pub(crate) mod answer_words;
pub(crate) mod cases;
pub(crate) mod content_words;
pub(crate) mod fields;
pub(crate) mod lone_hop;
pub(crate) mod message_words;
pub mod messages;
pub(crate) mod pairing;
pub(crate) mod tool_server_cases;
pub(crate) mod withdrawn;
