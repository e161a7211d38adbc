//! The HTML handout: one self-contained page per trace (inline CSS, JS and SVG; nothing fetched,
//! opens from `file://`) with the sequence diagram, the timing waterfall and every numbered
//! message expandable (summary, explanation, timing, headers, folded coloured JSON, chunk timing);
//! and the `index.html` of `--all`. Built from the same explained messages, lanes and waterfall
//! as `show`, the Markdown handout and the TUI.

mod context_bars;
mod growth;
mod json_html;
mod svg;

use super::body_text::{TraceToExport, iso8601_utc};
use tracer_trace::account::summary::trace_name;
use tracer_trace::explain::lanes::{Tone, lanes};
use tracer_trace::explain::timing::{Bar, waterfall};
use tracer_trace::words::{human_duration, plural};
use tracer_trace::{Case, Direction, ExplainedMessage, RecordedHop, explain_trace, summarize};
use tracer_wire::hop::Header;
use tracer_wire::safe_text::multi_line;

const CSS: &str = include_str!("html/page.css");
const JS: &str = include_str!("html/page.js");
/// Stream chunks listed per message.
const CHUNK_ROWS: usize = 100;

/// Text made safe for HTML element content and attribute values: markup characters as
/// entities, control and bidi characters (but newlines and tabs) as visible escapes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in multi_line(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// `'sha256-…'`: a CSP source allowing exactly this inline script or style.
fn csp_hash(code: &str) -> String {
    use base64::Engine;
    let digest = ring::digest::digest(&ring::digest::SHA256, code.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    )
}

/// The page's Content-Security-Policy: nothing fetched, nothing sent, no plugin, no frame; only
/// the page's own inline style and (with `script`) its own inline script run, by their hashes.
fn content_security_policy(script: bool) -> String {
    let script_src = if script {
        csp_hash(JS)
    } else {
        "'none'".to_string()
    };
    format!(
        "default-src 'none'; style-src {}; script-src {script_src}; img-src 'none'; \
         connect-src 'none'; font-src 'none'; object-src 'none'; media-src 'none'; \
         frame-src 'none'; worker-src 'none'; manifest-src 'none'; base-uri 'none'; \
         form-action 'none'",
        csp_hash(CSS)
    )
}

fn page(title: &str, body: &str, script: bool) -> String {
    let csp = content_security_policy(script);
    let script = if script {
        format!("<script>{JS}</script>")
    } else {
        String::new()
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"tracer {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n\
         <body>\n{body}\n{script}\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

/// The handout of one trace.
pub fn html_page(trace: &TraceToExport<'_>) -> String {
    let messages = explain_trace(trace.hops);
    let lanes = lanes(trace.hops, &messages);
    let timing = waterfall(trace.hops, &messages);
    let summary = summarize(trace.hops);
    let name = trace_name(trace.title, None, trace.hops);
    let title = name.as_deref().unwrap_or("(untitled trace)");
    let mut body = format!("<header>\n<h1>{}</h1>\n", escape(title));
    body.push_str(&format!(
        "<p class=\"meta\">trace <code>{}</code>{} · {} · {} · {} · {} · tools: {}{}{}</p>\n",
        escape(trace.id),
        summary.started_ns.map_or(String::new(), |at| format!(
            " · started {}",
            iso8601_utc(at)
        )),
        plural(summary.hops, "hop"),
        plural(summary.messages, "message"),
        summary
            .duration_ns
            .map_or("in flight".into(), human_duration),
        escape(&summary.status_words()),
        escape(
            &summary
                .tools_words(", ")
                .unwrap_or_else(|| "none".to_owned())
        ),
        summary
            .tokens
            .short()
            .map_or_else(String::new, |t| format!(" · tokens: {}", escape(&t))),
        summary.cost.text().map_or_else(String::new, |c| format!(
            " · cost: {} ({})",
            escape(&c),
            escape(&tracer_trace::account::cost::estimate_label())
        ))
    ));
    body.push_str(
        "<p class=\"keys\"><kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move between \
         messages · <kbd>space</kbd> steps through them as <code>tracer replay</code> does · \
         <kbd>enter</kbd> opens one · <kbd>esc</kbd> shows all · click an arrow</p>\n\
         <nav><ol id=\"toc\"></ol></nav>\n</header>\n",
    );
    body.push_str(
        "<section id=\"diagram\">\n<h2>The messages on the wire</h2>\n<div class=\"figure\">",
    );
    body.push_str(&svg::sequence_svg(&messages, &lanes));
    body.push_str("</div>\n</section>\n<section id=\"timing\">\n<h2>Timing</h2>\n");
    body.push_str(&format!(
        "<p class=\"totals\">model {} · tools {} · the host's own {} · in all {}</p>\n<div class=\"figure\">",
        human_duration(timing.model_ns),
        human_duration(timing.tool_ns),
        human_duration(timing.host_ns),
        human_duration(timing.span_ns)
    ));
    body.push_str(&svg::waterfall_svg(&timing));
    body.push_str(
        "</div>\n<p class=\"legend\"><span><i class=\"key-host\"></i>host (you → agent)</span>\
         <span><i class=\"key-model\"></i>model</span><span><i class=\"key-tool\"></i>tool (MCP)</span>\
         <span>▾ first chunk of a stream</span><span><i class=\"key-load\"></i>Ollama load</span>\
         <span><i class=\"key-prompt\"></i>prompt</span><span><i class=\"key-generation\"></i>generation</span>\
         <span class=\"key-failed\">✕ failed</span><span class=\"key-tool-error\">⚠ tool error</span></p>\n</section>\n",
    );
    body.push_str(&context_bars::requests_section(trace, &messages));
    body.push_str("<section id=\"messages\">\n<h2>Every message, explained</h2>\n");
    let start = timing.start_unix_ns;
    // A request that adds to an earlier one of its conversation shows what it adds.
    let views = tracer_trace::read::request_views::request_views(trace.hops);
    let mut growth = growth::Growth::default();
    // The last request sent on each route, with its headers: the next with the same headers
    // says so instead of listing them again.
    let mut sent_on: std::collections::HashMap<&str, (usize, &[Header])> = Default::default();
    body.push_str(&crate::agent_lines::html(trace.agent_events, None, escape));
    for (message, arrow) in messages.iter().zip(&lanes.arrows) {
        let hop = &trace.hops[message.hop_index];
        let bar = timing
            .bars
            .iter()
            .find(|b| b.hop_index == message.hop_index);
        let new = views
            .iter()
            .find(|v| v.hop_index == message.hop_index && message.direction == Direction::Request)
            .and_then(|v| v.anatomy.new_messages)
            .map(|new| (&mut growth, new));
        // A request body let go of once read is fetched back for its message alone.
        let request_body = match message.direction {
            Direction::Request => Some(trace.request_body(hop)),
            Direction::Response => None,
        };
        let same_headers_as = match message.direction {
            Direction::Request => {
                let headers = hop.start.request_headers.as_slice();
                let before = sent_on.insert(&hop.start.route, (message.number, headers));
                before
                    .filter(|(_, was)| *was == headers)
                    .map(|(number, _)| number)
            }
            Direction::Response => None,
        };
        let shown = Shown {
            hop,
            request_body: request_body.as_deref(),
            same_headers_as,
        };
        body.push_str(&message_html(message, arrow.tone, shown, bar, start, new));
        body.push_str(&crate::agent_lines::html(
            trace.agent_events,
            Some(message.number),
            escape,
        ));
    }
    body.push_str(&growth.blob_html());
    body.push_str("</section>\n");
    page(&format!("Trace: {title}"), &body, true)
}

/// The hop of a message, its request body as shown (fetched back when let go of), and the
/// earlier message whose headers it repeats exactly.
struct Shown<'h> {
    hop: &'h RecordedHop,
    request_body: Option<&'h tracer_wire::hop::BodyCapture>,
    same_headers_as: Option<usize>,
}

fn message_html(
    message: &ExplainedMessage,
    tone: Tone,
    shown: Shown<'_>,
    bar: Option<&Bar>,
    start: i64,
    growth: Option<(&mut growth::Growth, usize)>,
) -> String {
    let hop = shown.hop;
    let direction = match message.direction {
        Direction::Request => "request",
        Direction::Response => "response",
    };
    let (state, badge) = match tone {
        Tone::Failed if message.case == Case::McpToolError => (
            " tool-error",
            "<span class=\"badge tool-error\">tool error</span>",
        ),
        Tone::Failed => (" failed", "<span class=\"badge failed\">failed</span>"),
        _ => ("", ""),
    };
    let mut out = format!(
        "<details class=\"message {direction}{state}\" id=\"m{n}\" data-number=\"{n}\" data-hop=\"{}\">\n\
         <summary><span class=\"num\">{n}</span> <span class=\"dir\">{}</span> {} → {} <code>{}</code> {} {badge}</summary>\n<div class=\"content\">\n",
        message.hop_number,
        message.direction.arrow(),
        message.from,
        message.to,
        escape(&message.head),
        escape(&message.summary),
        n = message.number,
    );
    out.push_str(&format!(
        "<p class=\"explanation\">{}</p>\n<h4>Timing</h4>\n<ul class=\"timing\">\n",
        escape(&message.explanation)
    ));
    out.push_str(&format!(
        "<li>at +{} on the trace's clock; route <code>{}</code>, {}</li>\n",
        human_duration(message.at_unix_ns - start),
        escape(&hop.start.route),
        escape(&hop.start.url)
    ));
    let no_end = tracer_wire::hop::HopEnd::default();
    let end = hop.end.as_ref().unwrap_or(&no_end);
    if let Some(tokens) = message.tokens.and_then(|t| t.text()) {
        out.push_str(&format!(
            "<li class=\"tokens\">tokens: {}</li>\n",
            escape(&tokens)
        ));
    }
    if let Some(cost) = &message.cost {
        out.push_str(&format!(
            "<li class=\"cost\">cost: {}</li>\n",
            escape(&cost.text())
        ));
    }
    if message.direction == Direction::Response {
        if let Some(took) = bar.and_then(Bar::duration_ns) {
            out.push_str(&format!(
                "<li>{} after its request (message {})</li>\n",
                human_duration(took),
                message.hop_number
            ));
        }
        if let Some(first) = end.response_first_byte_unix_ns {
            out.push_str(&format!(
                "<li>first byte after {}</li>\n",
                human_duration(first - hop.start.started_unix_ns)
            ));
        }
        if let Some(timings) = bar.and_then(|b| b.ollama) {
            let part = |name: &str, ns: Option<u64>| {
                ns.map(|ns| format!("{name} {}", human_duration(ns as i64)))
            };
            let mut parts: Vec<String> = [
                part("total", timings.total_ns),
                part("load", timings.load_ns),
                part("prompt", timings.prompt_eval_ns),
                part("generation", timings.eval_ns),
            ]
            .into_iter()
            .flatten()
            .collect();
            if let Some(count) = timings.prompt_eval_count {
                parts.push(format!("{count} prompt tokens"));
            }
            if let Some(count) = timings.eval_count {
                parts.push(format!("{count} output tokens"));
            }
            if let Some(rate) = timings.tokens_per_second() {
                parts.push(format!("{rate:.1} tokens/s"));
            }
            out.push_str(&format!("<li>Ollama reports: {}</li>\n", parts.join(" · ")));
        }
        if let Some(error) = &end.error {
            out.push_str(&format!(
                "<li class=\"failed\">error: {}</li>\n",
                escape(error)
            ));
        }
        if let Some(note) = &end.note {
            out.push_str(&format!("<li>{}</li>\n", escape(note)));
        }
    }
    out.push_str("</ul>\n");
    let (headers, body) = match message.direction {
        Direction::Request => (
            &hop.start.request_headers,
            shown.request_body.unwrap_or(&end.request_body),
        ),
        Direction::Response => (&end.response_headers, &end.response_body),
    };
    match shown.same_headers_as {
        Some(number) if !headers.is_empty() => out.push_str(&format!(
            "<h4>Headers</h4>\n<p class=\"same\">the same {} as <a href=\"#m{number}\">message \
             {number}</a></p>\n",
            plural(headers.len(), "header")
        )),
        _ => out.push_str(&headers_html(headers)),
    }
    let frames = super::ws_frames_text::frame_lines(hop);
    if message.direction == Direction::Response && !frames.is_empty() {
        out.push_str("<h4>WebSocket messages</h4>\n<ol class=\"ws-messages\">\n");
        for line in &frames {
            out.push_str(&format!("<li><code>{}</code></li>\n", escape(line)));
        }
        out.push_str("</ol>\n");
    }
    out.push_str("<h4>Body</h4>\n");
    // As it reads: its Content-Encoding undone, a body that is not text named.
    let readable = tracer_wire::content_encoding::readable(headers, body);
    if let Some(note) = readable.note() {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(&note)));
    }
    match &readable.binary {
        Some(binary) => out.push_str(&format!("<p class=\"note\">{}</p>", escape(binary))),
        None => {
            let grown = growth.and_then(|(growth, new)| {
                growth.request_html(readable.bytes(), new, body.total_len)
            });
            out.push_str(&grown.unwrap_or_else(|| {
                json_html::body_html(readable.bytes(), body.total_len, body.truncated)
            }));
        }
    }
    if message.direction == Direction::Response && end.chunks.len() > 1 {
        out.push_str(&format!(
            "\n<h4>Chunks ({} arrived{})</h4>\n<table class=\"chunks\"><tr><th>#</th><th>after the request</th><th>gap</th><th>bytes</th></tr>",
            end.chunks.len(),
            if end.chunks_truncated { ", more than were kept" } else { "" }
        ));
        let mut previous = 0;
        for (i, chunk) in end.chunks.iter().take(CHUNK_ROWS).enumerate() {
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                human_duration(chunk.offset_ns),
                human_duration(chunk.offset_ns - previous),
                chunk.size
            ));
            previous = chunk.offset_ns;
        }
        out.push_str("</table>");
        if end.chunks.len() > CHUNK_ROWS {
            out.push_str(&format!(
                "<p class=\"note\">(the first {CHUNK_ROWS} of {} chunks)</p>",
                end.chunks.len()
            ));
        }
    }
    out.push_str("\n</div>\n</details>\n");
    out
}

fn headers_html(headers: &[Header]) -> String {
    if headers.is_empty() {
        return "<h4>Headers</h4>\n<p class=\"empty\">(none recorded)</p>\n".to_owned();
    }
    let mut out = String::from("<h4>Headers</h4>\n<table class=\"headers\">");
    for header in headers {
        let value = header.text().map_or_else(
            || format!("({} bytes, not text)", header.value.len()),
            str::to_owned,
        );
        out.push_str(&format!(
            "<tr><td class=\"name\">{}</td><td class=\"value\">{}</td></tr>",
            escape(&header.name),
            escape(&value)
        ));
    }
    out.push_str("</table>\n");
    out
}

/// One line of `index.html`.
#[derive(Debug, Clone)]
pub struct IndexEntry {
    /// The page's file name, beside index.html.
    pub file: String,
    pub id: String,
    pub title: Option<String>,
    pub hops: Vec<RecordedHop>,
}

/// `index.html` of `--all`: every trace, newest first, linking to its page.
pub fn html_index(entries: &[IndexEntry]) -> String {
    let mut body = format!(
        "<header>\n<h1>Traces</h1>\n<p class=\"meta\">{}, newest first</p>\n</header>\n<table class=\"index\">\n\
         <tr><th>trace</th><th>started</th><th>hops</th><th>time</th><th>status</th><th>tools</th><th>request</th></tr>\n",
        plural(entries.len(), "trace")
    );
    for entry in entries {
        let summary = summarize(&entry.hops);
        body.push_str(&format!(
            "<tr><td><a href=\"{}\"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(&entry.file),
            escape(entry.id.get(..8).unwrap_or(&entry.id)),
            summary.started_ns.map_or(String::new(), iso8601_utc),
            summary.hops,
            summary.duration_ns.map_or("in flight".into(), human_duration),
            escape(&summary.status_words()),
            escape(&summary.tools_words(", ").unwrap_or_default()),
            escape(
                &tracer_trace::trace_name(entry.title.as_deref(), None, &entry.hops)
                    .unwrap_or_else(|| "(untitled)".into())
            )
        ));
    }
    body.push_str("</table>\n");
    page("Traces", &body, false)
}
