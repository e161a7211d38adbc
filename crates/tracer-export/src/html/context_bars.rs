//! The handout's "What each model request carries": per model request, its cost and prompt
//! cache verdict, a stacked bar of its context parts (labelled, ≈ tokens, one colour per kind,
//! a legend; plain SVG and HTML, so it reads with JavaScript off) and what changed since the
//! previous request of its conversation (the facts of `tracer show --changes`).

use super::escape;
use crate::body_text::TraceToExport;
use tracer_trace::account::cache_verdict::cache_reports;
use tracer_trace::account::context_shares::{ContextShares, context_shares};
use tracer_trace::account::tokens::thousands;
use tracer_trace::read::changes_by_call::changes_by_call_with;
use tracer_trace::read::request_anatomy::human_bytes;
use tracer_trace::{Direction, ExplainedMessage};

/// The bar's drawn width (SVG user units, scaled to the page).
const BAR_WIDTH: f64 = 800.0;

/// The kinds of part, their class names, colours and legend words.
const KINDS: [(&str, &str, &str); 5] = [
    ("system", "#0891b2", "system prompt"),
    ("host-tools", "#2563eb", "the host's tools"),
    ("mcp-tools", "#a21caf", "an MCP server's tools"),
    ("history", "#16a34a", "history"),
    ("rest", "#9ca3af", "parameters, JSON framing"),
];

/// A part's kind, from its label.
fn kind_of(label: &str) -> &'static str {
    if label.starts_with("system") {
        "system"
    } else if label.starts_with("tools: the host's") {
        "host-tools"
    } else if label.starts_with("tools:") {
        "mcp-tools"
    } else if label.starts_with("history") {
        "history"
    } else {
        "rest"
    }
}

fn colour(kind: &str) -> &'static str {
    KINDS
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map_or("#9ca3af", |(_, c, _)| c)
}

/// A square of a kind's colour, drawn by the page's style (`i.swatch.kind-…`): a few bytes
/// where a table of hundreds of requests names its parts.
fn swatch(kind: &str) -> String {
    format!("<i class=\"swatch kind-{kind}\" aria-hidden=\"true\"></i>")
}

/// The section, or nothing when the trace has no model request.
pub(crate) fn requests_section(trace: &TraceToExport<'_>, messages: &[ExplainedMessage]) -> String {
    let hops = trace.hops;
    let contexts = context_shares(hops);
    // Bodies let go of once read are fetched back to be compared.
    let changes = changes_by_call_with(hops, |hop| {
        let body = trace.request_body(hop);
        let body = tracer_wire::content_encoding::readable(&hop.start.request_headers, &body);
        serde_json::from_slice(&body.body.bytes).ok()
    });
    if contexts.is_empty() && changes.is_empty() {
        return String::new();
    }
    let caches = cache_reports(hops);
    let number = |hop: &str, direction: Direction| {
        messages
            .iter()
            .find(|m| m.hop_id == hop && m.direction == direction)
    };
    let mut out = String::from(
        "<section id=\"requests\">\n<h2>What each model request carries</h2>\n<p class=\"legend\">",
    );
    for (kind, _, words) in KINDS {
        out.push_str(&format!(
            "<span class=\"kind-{kind}\">{}{words}</span>",
            swatch(kind)
        ));
    }
    out.push_str("</p>\n<p class=\"meta\">token shares are estimates (≈): each part's bytes, calibrated by the input tokens the API reported for that request</p>\n");
    for call in &changes {
        let request = number(&call.hop_id, Direction::Request);
        let answer = number(&call.hop_id, Direction::Response);
        let here = request.map_or(0, |m| m.number);
        out.push_str(&format!(
            "<article class=\"request\" id=\"request-{here}\">\n<h3><a href=\"#m{here}\">request {here}</a></h3>\n<ul class=\"call\">\n"
        ));
        if let Some(cost) = answer.and_then(|m| m.cost.as_ref()) {
            out.push_str(&format!(
                "<li class=\"cost\">cost: {}</li>\n",
                escape(&cost.text())
            ));
        }
        if let Some(cache) = caches.iter().find(|c| c.hop_id == call.hop_id) {
            out.push_str(&format!(
                "<li class=\"cache\">{}</li>\n",
                escape(&cache.line())
            ));
        }
        out.push_str("</ul>\n");
        if let Some(shares) = contexts.iter().find(|c| c.hop_id == call.hop_id) {
            out.push_str(&stacked_bar(shares));
        }
        let previous = (call.previous_hop_id.as_deref())
            .and_then(|p| number(p, Direction::Request))
            .map(|m| m.number);
        let before = previous.map_or(String::new(), |n| format!(" since request {n}"));
        out.push_str(&format!(
            "<div class=\"changes\"><h4>changes{before}</h4>\n<ul>\n"
        ));
        for line in call.lines(previous) {
            out.push_str(&format!("<li>{}</li>\n", escape(&line)));
        }
        out.push_str("</ul></div>\n</article>\n");
    }
    out.push_str("</section>\n");
    out
}

/// One request's parts as a stacked SVG bar and a table of label, bytes, ≈ tokens.
fn stacked_bar(shares: &ContextShares) -> String {
    let total = shares.total_bytes.max(1) as f64;
    let heading = shares.lines().into_iter().next().unwrap_or_default();
    let mut out = format!(
        "<p class=\"context\">{}</p>\n<div class=\"figure\"><svg class=\"context-bar\" viewBox=\"0 0 {BAR_WIDTH} 24\" width=\"100%\" height=\"24\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}\">",
        escape(&heading),
        escape(&heading)
    );
    let mut x = 0.0;
    for part in &shares.parts {
        let width = BAR_WIDTH * part.bytes as f64 / total;
        let kind = kind_of(&part.label);
        let tokens = shares
            .share(part.bytes)
            .map_or_else(String::new, |t| format!(", ≈ {} tokens", thousands(t)));
        out.push_str(&format!(
            "<rect class=\"part kind-{kind}\" x=\"{x:.1}\" y=\"0\" width=\"{width:.1}\" height=\"24\" fill=\"{}\"><title>{}: {}{}</title></rect>",
            colour(kind),
            escape(&part.label),
            human_bytes(part.bytes),
            tokens
        ));
        x += width;
    }
    out.push_str("</svg></div>\n<table class=\"parts\">\n<tr><th></th><th>part</th><th>bytes</th><th>≈ tokens</th></tr>\n");
    let mut rows: Vec<(String, usize, &str)> = shares
        .parts
        .iter()
        .map(|p| (p.label.clone(), p.bytes, kind_of(&p.label)))
        .collect();
    if let Some((messages, bytes)) = shares.new_since_previous {
        let noun = if messages == 1 { "message" } else { "messages" };
        rows.push((
            format!("of the history, new: {messages} {noun}"),
            bytes,
            "history",
        ));
    }
    for (label, bytes, kind) in rows {
        out.push_str(&format!(
            "<tr class=\"kind-{kind}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            swatch(kind),
            escape(&label),
            human_bytes(bytes),
            shares
                .share(bytes)
                .map_or_else(|| "?".to_string(), |t| format!("≈ {}", thousands(t)))
        ));
    }
    out.push_str("</table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_style_draws_each_kind_in_its_colour() {
        let css = include_str!("page.css");
        for (kind, colour, _) in KINDS {
            let rule = format!("i.swatch.kind-{kind} {{ background: {colour}; }}");
            assert!(css.contains(&rule), "page.css lacks `{rule}`");
        }
    }
}
