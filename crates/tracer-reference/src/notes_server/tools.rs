//! The five notes tools: their descriptions and schemas (written for a small model), argument
//! checking, and running them against the notes file. Bad arguments are tool errors the model can
//! act on; only an unknown tool or malformed call params are protocol errors.

use super::notes_file::{Change, NotesFile};
use serde_json::{Map, Value, json};
use tracer_wire::jsonrpc::ErrorObject;
use tracer_wire::mcp::{
    CallToolResult, Tool, ToolAnnotations, call_tool_arguments, call_tool_name, unknown_tool,
};

/// One tool parameter: name and description (all notes-tool parameters are required strings).
struct Param {
    name: &'static str,
    description: &'static str,
}

/// One notes tool as described to the model.
struct ToolSpec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    params: &'static [Param],
    read_only: bool,
    destructive: bool,
    idempotent: bool,
}

/// The tools, in the order `tools/list` returns them (deterministic, as 2026-07-28 asks).
const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "read",
        title: "Read notes",
        description: "Return the whole notes file as text. Use this to see what the notes say \
                      before changing them.",
        params: &[],
        read_only: true,
        destructive: false,
        idempotent: true,
    },
    ToolSpec {
        name: "write",
        title: "Replace all notes",
        description: "Replace the ENTIRE notes file with `content`: everything already in the \
                      file is deleted. To add a note, use `append` instead.",
        params: &[Param {
            name: "content",
            description: "The new text of the whole file. Everything else is lost.",
        }],
        read_only: false,
        destructive: true,
        idempotent: true,
    },
    ToolSpec {
        name: "append",
        title: "Add a note",
        description: "Add `content` as a new line at the end of the notes file, keeping \
                      everything already there. Use this to add a note.",
        params: &[Param {
            name: "content",
            description: "The note to add, e.g. \"buy milk\".",
        }],
        read_only: false,
        destructive: false,
        idempotent: false,
    },
    ToolSpec {
        name: "update",
        title: "Find and replace in notes",
        description: "Replace every occurrence of the text `search` in the notes file with \
                      `replace`. Fails if `search` is not in the file; call `read` first to see \
                      the exact text.",
        params: &[
            Param {
                name: "search",
                description: "The exact text to find.",
            },
            Param {
                name: "replace",
                description: "The text to put in its place.",
            },
        ],
        read_only: false,
        destructive: true,
        idempotent: false,
    },
    ToolSpec {
        name: "clear",
        title: "Delete all notes",
        description: "Delete everything in the notes file, leaving it empty. Only use this when \
                      asked to remove all notes.",
        params: &[],
        read_only: false,
        destructive: true,
        idempotent: true,
    },
];

/// The tool list, as `tools/list` returns it.
pub(crate) fn tool_list() -> Vec<Tool> {
    TOOLS.iter().map(to_tool).collect()
}

fn to_tool(spec: &ToolSpec) -> Tool {
    let mut properties = Map::new();
    for param in spec.params {
        properties.insert(
            param.name.to_owned(),
            json!({"type": "string", "description": param.description}),
        );
    }
    let required: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
    let hints = ToolAnnotations::closed_world(spec.read_only, spec.destructive, spec.idempotent);
    Tool::closed_input(
        spec.name,
        spec.title,
        spec.description,
        Value::Object(properties),
        &required,
        hints,
    )
}

/// Runs `tools/call` with the request's params. `Err` is a protocol error (unknown tool, bad call
/// shape); everything the model can fix comes back as `Ok` with `isError: true`.
pub(crate) async fn call_tool(
    notes: &NotesFile,
    params: Option<&Value>,
) -> Result<CallToolResult, ErrorObject> {
    let name = call_tool_name(params)?;
    let Some(spec) = TOOLS.iter().find(|spec| spec.name == name) else {
        return Err(unknown_tool(name));
    };
    let arguments = call_tool_arguments(params)?;
    match check_arguments(spec, &arguments) {
        Ok(values) => Ok(run(notes, spec.name, &values).await),
        Err(message) => Ok(CallToolResult::tool_error(message)),
    }
}

/// The string values of the spec's params, in order, or the message for the model.
fn check_arguments<'a>(
    spec: &ToolSpec,
    arguments: &'a Map<String, Value>,
) -> Result<Vec<&'a str>, String> {
    if let Some(unknown) = arguments
        .keys()
        .find(|key| !spec.params.iter().any(|p| p.name == *key))
    {
        let takes = if spec.params.is_empty() {
            "no params".to_owned()
        } else {
            let names: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
            format!("only {}", names.join(", "))
        };
        return Err(format!(
            "Unknown param ({unknown}): {} takes {takes}",
            spec.name
        ));
    }
    spec.params
        .iter()
        .map(|param| match arguments.get(param.name) {
            None | Some(Value::Null) => Err(format!("Param ({}) is required", param.name)),
            Some(Value::String(text)) => Ok(text.as_str()),
            Some(other) => Err(format!(
                "Param ({}) must be a string, got {}",
                param.name,
                json_type(other)
            )),
        })
        .collect()
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

async fn run(notes: &NotesFile, name: &str, values: &[&str]) -> CallToolResult {
    let outcome = match (name, values) {
        ("read", []) => notes.read().await.map(|text| {
            if text.is_empty() {
                "The notes file is empty.".to_owned()
            } else {
                text
            }
        }),
        ("write", [content]) => notes
            .write(content)
            .await
            .map(|change| format!("Replaced the whole notes file ({}).", size_words(change))),
        ("append", [""]) => {
            return CallToolResult::tool_error(
                "Param (content) is empty; there is nothing to append",
            );
        }
        ("append", [content]) => notes.append(content).await.map(|change| {
            format!(
                "Appended a new line at the end of the notes ({}).",
                size_words(change)
            )
        }),
        ("update", ["", _]) => {
            return CallToolResult::tool_error("Param (search) must not be empty");
        }
        ("update", [search, replace]) => notes.update(search, replace).await.map(|change| {
            let times = if change.replaced == 1 {
                "occurrence"
            } else {
                "occurrences"
            };
            format!(
                "Replaced {} {times} of {search:?} with {replace:?}.",
                change.replaced
            )
        }),
        ("clear", []) => notes
            .clear()
            .await
            .map(|_| "Cleared the notes file; it is now empty.".to_owned()),
        _ => return CallToolResult::tool_error(format!("Tool {name} got the wrong params")),
    };
    match outcome {
        Ok(text) => CallToolResult::success(text),
        Err(error) => CallToolResult::tool_error(capitalize(&error.to_string())),
    }
}

fn size_words(change: Change) -> String {
    let lines = if change.lines == 1 { "line" } else { "lines" };
    format!("now {} {lines}, {} bytes", change.lines, change.bytes)
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn five_tools_with_strict_schemas_in_a_fixed_order() {
        let tools = tool_list();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read", "write", "append", "update", "clear"]);
        for tool in &tools {
            assert_eq!(tool.input_schema["type"], "object");
            assert_eq!(tool.input_schema["additionalProperties"], false);
            assert!(tool.input_schema["required"].is_array());
        }
        assert_eq!(
            tools[3].input_schema["required"],
            json!(["search", "replace"])
        );
        let write = tools[1].description.as_deref().unwrap();
        assert!(write.contains("ENTIRE") && write.contains("append"));
    }

    #[test]
    fn argument_errors_are_messages_for_the_model() {
        let spec = &TOOLS[2];
        let check = |args: Value| check_arguments(spec, args.as_object().unwrap()).map(|v| v.len());
        assert_eq!(check(json!({})).unwrap_err(), "Param (content) is required");
        assert_eq!(
            check(json!({"content": 5})).unwrap_err(),
            "Param (content) must be a string, got a number"
        );
        assert_eq!(
            check(json!({"content": "x", "extra": 1})).unwrap_err(),
            "Unknown param (extra): append takes only content"
        );
        assert_eq!(check(json!({"content": "x"})).unwrap(), 1);
        let read = check_arguments(&TOOLS[0], json!({"x": 1}).as_object().unwrap()).unwrap_err();
        assert_eq!(read, "Unknown param (x): read takes no params");
    }
}
