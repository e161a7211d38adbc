//! What a model request is made of: its system parts and tool definitions, with their sizes.

/// Where one part of the system prompt sits in the request.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SystemSource {
    /// Anthropic's top-level `system` (a string or one of its blocks).
    SystemField,
    /// The Responses API's `instructions`.
    Instructions,
    /// Gemini's `systemInstruction` (one of its parts).
    SystemInstruction,
    /// A message inside the conversation with this role (`system`, `developer`).
    Message(String),
}

/// One part of the system prompt: where it is, its size, and whether it carries a cache mark.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SystemPart {
    pub source: SystemSource,
    pub bytes: usize,
    pub cache_marked: bool,
}

/// One callable tool the request offers the model.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ToolDef {
    /// The name the model calls it by.
    pub name: String,
    /// The entry that holds it, for tools grouped inside one (Codex's `namespace` entries).
    pub namespace: Option<String>,
    /// Bytes of its definition (name, description, schema) as sent.
    pub bytes: usize,
}
