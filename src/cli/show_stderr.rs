//! A wrapped server's stderr beside its messages in `tracer show`: the lines `tracer wrap` kept
//! for the trace's stdio servers while the trace lasted, each marked as the server's own.

use tracer_export::hop_log::HopLog;
use tracer_store::Store;
use tracer_trace::words::human_duration;
use tracer_wire::hop::Transport;
use tracer_wire::safe_text::one_line;

/// How far before its first message and after its last a trace's stderr lines are looked for.
const MARGIN_NS: i64 = 1_000_000_000;

/// One line a wrapped server wrote to its stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StderrLine {
    pub route: String,
    pub at_unix_ns: i64,
    pub line: String,
}

/// The stderr lines of the trace's wrapped servers, oldest first; none when the store cannot say.
pub async fn of_trace(store: &Store, log: &HopLog) -> Vec<StderrLine> {
    let mut routes: Vec<&str> = log
        .hops()
        .iter()
        .filter(|hop| hop.transport == Transport::Stdio)
        .map(|hop| hop.route.as_str())
        .collect();
    routes.sort_unstable();
    routes.dedup();
    let times: Vec<i64> = log.shown_messages().map(|m| m.at_unix_ns).collect();
    let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for route in routes {
        let lines = store
            .server_logs_between(route, first - MARGIN_NS, last + MARGIN_NS)
            .await
            .unwrap_or_default();
        out.extend(lines.into_iter().map(|(at_unix_ns, line)| StderrLine {
            route: route.to_string(),
            at_unix_ns,
            line,
        }));
    }
    out.sort_by_key(|l| l.at_unix_ns);
    out
}

/// `    ! mcp stderr (notes)  +1.2 ms  the line` with its newline.
pub fn line_text(line: &StderrLine, origin: i64) -> String {
    let at = line.at_unix_ns - origin;
    let at = if at < 0 {
        format!("-{}", human_duration(-at))
    } else {
        format!("+{}", human_duration(at))
    };
    format!(
        "    ! stderr of {}  {}  ({at})\n",
        one_line(&line.route),
        one_line(&line.line)
    )
}
