//! A model's tool call and the MCP `tools/call` that ran it, as one link whatever name the host
//! gave the tool (`mcp__notes__append`, `notes_append`, `mcp_notes_append`, Codex's `append`
//! inside `mcp__notes`, open-webui's `tool_append_post` for mcpo's REST route): the one place every
//! face asks, from the tool origins of the trace.

use serde_json::Value;

use super::tool_origin::ToolOrigins;
use crate::RecordedHop;
use tracer_wire::dialect::{HopReading, Reading};

/// The names a trace's model requests give MCP tools, each with the tool's own name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolNames {
    /// (the name the model calls, the tool's name on its MCP server).
    offered: Vec<(String, String)>,
}

/// Separators hosts put between a server's name and its tool's.
const SEPARATORS: [char; 5] = ['_', '-', '.', ':', '/'];

impl ToolNames {
    /// What a trace's hops (and `readings[i]`, the reading of `hops[i]`) tell about tool names.
    pub fn of_trace(hops: &[RecordedHop], readings: &[HopReading]) -> Self {
        let routes: Vec<&str> = hops.iter().map(|hop| hop.start.route.as_str()).collect();
        Self::of_readings(readings, &routes)
    }

    /// The same from readings and the route of each.
    pub(crate) fn of_readings(readings: &[HopReading], routes: &[&str]) -> Self {
        let origins = ToolOrigins::of_trace(readings, routes);
        let mut offered: Vec<(String, String)> = Vec::new();
        for reading in readings {
            let Reading::ModelRequest(request) = &reading.request.reading else {
                continue;
            };
            let names = origins.server_tool_names(&request.tool_defs);
            for (def, tool) in request.tool_defs.iter().zip(names) {
                if let Some(tool) = tool
                    && !offered.iter().any(|(name, _)| *name == def.name)
                {
                    offered.push((def.name.clone(), tool));
                }
            }
        }
        Self { offered }
    }

    /// Whether a `tools/call` of `called` runs the model's call of `asked`.
    pub fn runs(&self, asked: &str, called: &str) -> bool {
        if asked == called || called.is_empty() {
            return asked == called;
        }
        if let Some((_, tool)) = self.offered.iter().find(|(name, _)| name == asked) {
            return tool == called;
        }
        // Nothing offered it under that name here: a prefix of the usual shape still tells, or
        // the operation id of the REST route an OpenAPI tool server (mcpo) made of the tool.
        let prefixed = |name: &str| {
            name.strip_suffix(called)
                .is_some_and(|prefix| prefix.ends_with(SEPARATORS))
        };
        prefixed(asked) || openapi_operation_tool(asked).is_some_and(|tool| tool == called)
    }
}

/// HTTP methods FastAPI ends a generated operation id with.
const OPERATION_METHODS: [&str; 5] = ["_post", "_get", "_put", "_patch", "_delete"];

/// The tool an OpenAPI operation id names, for the ids FastAPI generates for an OpenAPI tool
/// server's routes (`{route name}_{path}_{method}`): mcpo's `POST /get_phonenumber`, route
/// `tool`, is `tool_get_phonenumber_post`, which open-webui offers the model as a function of
/// that name. `get_phonenumber` for it; None for a name of no such shape.
pub(crate) fn openapi_operation_tool(operation_id: &str) -> Option<&str> {
    let bare = OPERATION_METHODS
        .iter()
        .find_map(|method| operation_id.strip_suffix(method))?;
    let tool = bare.strip_prefix("tool_").unwrap_or(bare);
    (!tool.is_empty()).then_some(tool)
}

/// One model call asked for, as linking compares it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Asked<'a> {
    pub name: &'a str,
    pub arguments: &'a Value,
}

/// Which of `calls` (the `tools/call`s after the asking, in order, each with its tool name and
/// arguments, those already linked marked `true`) runs the model's call `asked`: the same
/// arguments first, else the first of that tool.
pub fn pick_run(
    names: &ToolNames,
    asked: Asked<'_>,
    calls: &[(&str, &Value, bool)],
) -> Option<usize> {
    let free = |(_, (name, _, used)): &(usize, &(&str, &Value, bool))| {
        !*used && names.runs(asked.name, name)
    };
    let same_arguments = calls
        .iter()
        .enumerate()
        .filter(free)
        .find(|(_, (_, arguments, _))| *arguments == asked.arguments);
    same_arguments
        .or_else(|| calls.iter().enumerate().find(free))
        .map(|(index, _)| index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_operation_ids_link_to_the_mcp_tool() {
        assert_eq!(
            openapi_operation_tool("tool_get_phonenumber_post"),
            Some("get_phonenumber")
        );
        assert_eq!(openapi_operation_tool("get_phonenumber"), None);
        assert_eq!(openapi_operation_tool("tool__post"), None);
        let names = ToolNames::default();
        assert!(names.runs("tool_get_phonenumber_post", "get_phonenumber"));
        assert!(!names.runs("tool_get_phonenumber_post", "phonenumber_get"));
        assert!(!names.runs("tool_get_address_post", "get_phonenumber"));
    }

    #[test]
    fn bare_prefixed_names_link_without_a_tools_list() {
        let names = ToolNames::default();
        for asked in [
            "append",
            "mcp__notes__append",
            "notes_append",
            "mcp_notes_append",
        ] {
            assert!(names.runs(asked, "append"), "{asked}");
        }
        assert!(!names.runs("appendix", "append"));
        assert!(!names.runs("mcp__notes__read", "append"));
        let args = serde_json::json!({"content": "milk"});
        let other = serde_json::json!({"content": "eggs"});
        let calls = [
            ("read", &other, false),
            ("append", &other, false),
            ("append", &args, false),
        ];
        let asked = Asked {
            name: "mcp__notes__append",
            arguments: &args,
        };
        assert_eq!(pick_run(&names, asked, &calls), Some(2));
        let used = [("append", &other, true), ("append", &other, false)];
        assert_eq!(pick_run(&names, asked, &used), Some(1));
    }
}
