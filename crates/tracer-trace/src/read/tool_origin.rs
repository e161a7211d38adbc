//! Where each tool a model request offers comes from: the host's own, or an MCP server's, told by
//! the names hosts give MCP tools (`mcp__notes__append`, `notes_append`, `mcp_notes_append`, a
//! Codex `namespace` entry `mcp__notes`) matched against the `tools/list` answers of the trace.

use tracer_wire::dialect::{HopReading, Reading, ToolDef};

/// The tools one MCP server listed in a `tools/list` answer of the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedTools {
    /// The route the answer came through (a label when the host's names carry no prefix).
    pub route: String,
    pub names: Vec<String>,
}

/// What the trace tells about MCP tools: every `tools/list` answer in it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ToolOrigins {
    pub listed: Vec<ListedTools>,
}

/// The tools offered, counted by where they come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCount {
    pub total: usize,
    /// The host's own (built-in) tools.
    pub host: usize,
    /// Per MCP server (by the name the host gives it), how many of its tools are offered, in
    /// the order first seen.
    pub servers: Vec<(String, usize)>,
}

impl ToolCount {
    /// How many tools came from MCP servers.
    #[cfg(test)]
    pub(crate) fn server_tools(&self) -> usize {
        self.servers.iter().map(|(_, count)| count).sum()
    }
}

/// Where one offered tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Host,
    /// The server's name and the tool's own name on it.
    Server(String, String),
}

impl ToolOrigins {
    /// The `tools/list` answers among a trace's hops (`routes[i]` is the route of `readings[i]`).
    pub(crate) fn of_trace(readings: &[HopReading], routes: &[&str]) -> Self {
        let listed = readings
            .iter()
            .zip(routes)
            .filter_map(|(reading, route)| {
                let Some(Reading::Mcp(mcp)) = reading.response.as_ref().map(|r| &r.reading) else {
                    return None;
                };
                let reply = mcp.reply()?;
                (!reply.tools.is_empty()).then(|| ListedTools {
                    route: route.to_string(),
                    names: reply.tools.clone(),
                })
            })
            .collect();
        Self { listed }
    }

    /// Counts the offered tools by origin.
    pub(crate) fn count(&self, defs: &[ToolDef]) -> ToolCount {
        let origins = self.origins(defs);
        let mut count = ToolCount {
            total: defs.len(),
            ..ToolCount::default()
        };
        for origin in origins {
            match origin {
                Origin::Host => count.host += 1,
                Origin::Server(name, _) => match count.servers.iter_mut().find(|(n, _)| *n == name)
                {
                    Some((_, n)) => *n += 1,
                    None => count.servers.push((name, 1)),
                },
            }
        }
        count
    }

    /// For each offered tool, its own name on the MCP server that has it (`append` for
    /// `mcp__notes__append`, `notes_append`, `mcp_notes_append` and Codex's `append` inside
    /// `mcp__notes`); None for the host's own tools.
    pub(crate) fn server_tool_names(&self, defs: &[ToolDef]) -> Vec<Option<String>> {
        self.origins(defs)
            .into_iter()
            .map(|origin| match origin {
                Origin::Host => None,
                Origin::Server(_, tool) => Some(tool),
            })
            .collect()
    }

    /// Each offered tool's origin, in order: None for the host's own, the server's name for an
    /// MCP server's.
    pub(crate) fn origin_of_each(&self, defs: &[ToolDef]) -> Vec<Option<String>> {
        self.origins(defs)
            .into_iter()
            .map(|origin| match origin {
                Origin::Host => None,
                Origin::Server(name, _) => Some(name),
            })
            .collect()
    }

    fn origins(&self, defs: &[ToolDef]) -> Vec<Origin> {
        // Candidate matches against the listed tools: (def index, server index, prefix).
        let mut candidates: Vec<(usize, usize, String)> = Vec::new();
        for (index, def) in defs.iter().enumerate() {
            for (server, listed) in self.listed.iter().enumerate() {
                for tool in &listed.names {
                    if let Some(prefix) = prefix_before(def, tool) {
                        candidates.push((index, server, prefix));
                    }
                }
            }
        }
        // A host names all of one server's tools alike: per server, only the prefix that
        // matches the most of its tools counts (a host tool `file_read` is not the server's),
        // and only when it matches two of them at least (a host's `todo_write` beside a
        // server's `write`, whose tools the host has not offered yet, is not the server's).
        let mut best: Vec<Option<(String, usize)>> = vec![None; self.listed.len()];
        for (_, server, prefix) in &candidates {
            let hits = candidates
                .iter()
                .filter(|(_, s, p)| s == server && p == prefix)
                .count();
            let enough = hits >= self.listed[*server].names.len().min(2);
            if enough && best[*server].as_ref().is_none_or(|(_, most)| hits > *most) {
                best[*server] = Some((prefix.clone(), hits));
            }
        }
        defs.iter()
            .enumerate()
            .map(|(index, def)| {
                let listed = candidates.iter().find(|(i, server, prefix)| {
                    *i == index && best[*server].as_ref().is_some_and(|(p, _)| p == prefix)
                });
                match listed {
                    Some((_, server, prefix)) => Origin::Server(
                        server_name(prefix, &self.listed[*server].route),
                        listed_name(def, prefix),
                    ),
                    None => by_name_alone(def),
                }
            })
            .collect()
    }
}

/// The part of an offered tool's name (or namespace) before a listed tool's name, when the
/// offered tool is that listed tool: `notes_` for `notes_append`, `mcp__notes` for a Codex
/// namespace entry, empty for the bare name.
fn prefix_before(def: &ToolDef, tool: &str) -> Option<String> {
    if let Some(namespace) = &def.namespace {
        return (def.name == tool).then(|| namespace.clone());
    }
    let prefix = def.name.strip_suffix(tool)?;
    let separated = prefix.is_empty() || prefix.ends_with(['_', '-', '.', ':', '/']);
    separated.then(|| prefix.to_string())
}

/// The listed tool's own name: the offered name after its prefix (the name itself inside a
/// namespace).
fn listed_name(def: &ToolDef, prefix: &str) -> String {
    match &def.namespace {
        Some(_) => def.name.clone(),
        None => def
            .name
            .strip_prefix(prefix)
            .unwrap_or(&def.name)
            .to_string(),
    }
}

/// The server's name from the prefix its tools carry (`mcp__notes__`, `mcp_notes_`, `notes_`);
/// the route's name when there is none.
fn server_name(prefix: &str, route: &str) -> String {
    let name = prefix
        .strip_prefix("mcp__")
        .or_else(|| prefix.strip_prefix("mcp_"))
        .unwrap_or(prefix)
        .trim_end_matches(['_', '-', '.', ':', '/']);
    if name.is_empty() {
        route.to_string()
    } else {
        name.to_string()
    }
}

/// Without a `tools/list` to match, only the names hosts reserve for MCP tools tell:
/// `mcp__SERVER__TOOL` (Claude Code, Qwen Code), a namespace `mcp__SERVER` (Codex),
/// `mcp_SERVER_TOOL` (Gemini CLI).
fn by_name_alone(def: &ToolDef) -> Origin {
    if let Some(server) = def
        .namespace
        .as_deref()
        .and_then(|ns| ns.strip_prefix("mcp__"))
        .filter(|server| !server.is_empty())
    {
        return Origin::Server(server.trim_end_matches('_').to_string(), def.name.clone());
    }
    if let Some(rest) = def.name.strip_prefix("mcp__")
        && let Some((server, tool)) = rest.split_once("__")
        && !server.is_empty()
        && !tool.is_empty()
    {
        return Origin::Server(server.to_string(), tool.to_string());
    }
    if let Some(rest) = def.name.strip_prefix("mcp_")
        && let Some((server, tool)) = rest.split_once('_')
        && !server.is_empty()
        && !tool.is_empty()
    {
        return Origin::Server(server.to_string(), tool.to_string());
    }
    Origin::Host
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, namespace: Option<&str>) -> ToolDef {
        ToolDef {
            name: name.into(),
            namespace: namespace.map(str::to_string),
            bytes: 10,
        }
    }

    fn notes() -> ToolOrigins {
        ToolOrigins {
            listed: vec![ListedTools {
                route: "notes-route".into(),
                names: ["read", "append"].map(str::to_string).to_vec(),
            }],
        }
    }

    #[test]
    fn each_host_naming_is_matched() {
        let claude = [def("Bash", None), def("mcp__notes__append", None)];
        let opencode = [
            def("bash", None),
            def("notes_read", None),
            def("notes_append", None),
        ];
        let gemini = [def("mcp_notes_append", None), def("read_file", None)];
        let codex = [
            def("append", Some("mcp__notes")),
            def("spawn", Some("agents")),
        ];
        for (defs, host) in [
            (&claude[..], 1),
            (&opencode[..], 1),
            (&gemini[..], 1),
            (&codex[..], 1),
        ] {
            let count = notes().count(defs);
            assert_eq!(count.host, host, "{defs:?}");
            assert_eq!(
                count.servers,
                [("notes".to_string(), defs.len() - host)],
                "{defs:?}"
            );
        }
        // `read_file` ends in a listed name but not after a separator of the winning prefix.
        let bare = [
            def("read", None),
            def("append", None),
            def("file_read", None),
        ];
        let count = notes().count(&bare);
        assert_eq!(count.servers, [("notes-route".to_string(), 2)]);
        assert_eq!(count.host, 1);
        // One host tool that happens to end in a listed name is not enough.
        let lone = [def("todo_append", None), def("Bash", None)];
        assert_eq!(notes().count(&lone).host, 2);
    }

    #[test]
    fn reserved_names_tell_without_a_tools_list() {
        let none = ToolOrigins::default();
        let defs = [
            def("mcp__notes__append", None),
            def("mcp_fs_read", None),
            def("append", Some("mcp__notes")),
            def("Bash", None),
            def("list_mcp_resources", None),
        ];
        let count = none.count(&defs);
        assert_eq!(count.host, 2);
        assert_eq!(
            count.servers,
            [("notes".to_string(), 2), ("fs".to_string(), 1)]
        );
        assert_eq!(count.server_tools(), 3);
    }
}
