//! The tools of one request, gathered from every MCP server: the names the model sees (a
//! server's own names, prefixed with the server's name only when two servers offer the same
//! one), and the way back from a name the model used to the server and tool that run it.

use std::collections::HashMap;

use super::model_client::ModelTool;
use tracer_wire::mcp::Tool;

/// One tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolEntry {
    /// The name the model sees and calls.
    pub exposed: String,
    /// Index of the server in the agent's server list.
    pub server: usize,
    pub server_name: String,
    pub tool: Tool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Toolbox {
    entries: Vec<ToolEntry>,
}

impl Toolbox {
    /// Builds the toolbox from each server's name and tool list, in server order.
    pub(crate) fn new(servers: Vec<(String, Vec<Tool>)>) -> Self {
        let server_names = distinct_names(servers.iter().map(|(name, _)| name.as_str()));
        let mut offered: HashMap<&str, usize> = HashMap::new();
        for (_, tools) in &servers {
            let mut seen_here = std::collections::HashSet::new();
            for tool in tools {
                if seen_here.insert(tool.name.as_str()) {
                    *offered.entry(tool.name.as_str()).or_default() += 1;
                }
            }
        }
        let mut entries: Vec<ToolEntry> = Vec::new();
        for (server, ((_, tools), server_name)) in servers.iter().zip(&server_names).enumerate() {
            for tool in tools {
                let clashes = offered.get(tool.name.as_str()).copied().unwrap_or(0) > 1;
                let mut exposed = if clashes {
                    model_safe(&format!("{server_name}_{}", tool.name))
                } else {
                    tool.name.clone()
                };
                if entries.iter().any(|e| e.exposed == exposed) {
                    if entries
                        .iter()
                        .any(|e| e.server == server && e.tool.name == tool.name)
                    {
                        continue; // the same server listed the same tool twice
                    }
                    exposed = format!("{exposed}_{}", server + 1);
                }
                entries.push(ToolEntry {
                    exposed,
                    server,
                    server_name: server_name.clone(),
                    tool: tool.clone(),
                });
            }
        }
        Self { entries }
    }

    pub(crate) fn find(&self, exposed: &str) -> Option<&ToolEntry> {
        self.entries.iter().find(|e| e.exposed == exposed)
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.exposed.as_str()).collect()
    }

    /// The tools as the model API describes them: `inputSchema` becomes `parameters` unchanged.
    pub(crate) fn model_tools(&self) -> Vec<ModelTool> {
        self.entries
            .iter()
            .map(|entry| ModelTool {
                name: entry.exposed.clone(),
                description: entry.tool.description.clone(),
                parameters: entry.tool.input_schema.clone(),
            })
            .collect()
    }
}

/// Server names made distinct in order: a second `notes` becomes `notes-2`.
fn distinct_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let mut candidate = name.to_string();
        let mut n = 2;
        while out.contains(&candidate) {
            candidate = format!("{name}-{n}");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// Function names may only use `A-Z a-z 0-9 _ -` and be at most 64 long (OpenAI's rule).
fn model_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> Tool {
        serde_json::from_value(json!({"name": name, "description": format!("{name} tool"),
            "inputSchema": {"type": "object"}}))
        .unwrap()
    }

    #[test]
    fn names_stay_as_the_server_gave_them_without_clashes() {
        let toolbox = Toolbox::new(vec![
            ("notes".into(), vec![tool("read"), tool("append")]),
            ("phonebook".into(), vec![tool("get_phonenumber")]),
        ]);
        assert_eq!(toolbox.names(), ["read", "append", "get_phonenumber"]);
        assert_eq!(toolbox.find("get_phonenumber").unwrap().server, 1);
        assert_eq!(
            toolbox.model_tools()[0].parameters,
            json!({"type": "object"})
        );
    }

    #[test]
    fn clashing_names_are_prefixed_with_distinct_server_names() {
        let toolbox = Toolbox::new(vec![
            ("notes-server".into(), vec![tool("read"), tool("append")]),
            ("notes-server".into(), vec![tool("read")]),
        ]);
        assert_eq!(
            toolbox.names(),
            ["notes-server_read", "append", "notes-server-2_read"]
        );
        let second = toolbox.find("notes-server-2_read").unwrap();
        assert_eq!((second.server, second.tool.name.as_str()), (1, "read"));
        assert_eq!(second.server_name, "notes-server-2");
    }

    #[test]
    fn prefixed_names_are_safe_for_model_apis() {
        let toolbox = Toolbox::new(vec![
            ("my server.v2".into(), vec![tool("read")]),
            ("other".into(), vec![tool("read")]),
        ]);
        assert_eq!(toolbox.names(), ["my_server_v2_read", "other_read"]);
    }
}
