//! The handout's two drawings as inline SVG: the sequence diagram (a lane per process, numbered
//! arrows, failed hops red, tool errors marked) and the timing waterfall (a bar per hop on the
//! trace's time axis, model, tool and host time in their colours, the first chunk of a stream
//! marked, Ollama's own durations under its bars).

use super::escape;
use tracer_trace::explain::lanes::{Lanes, Tone};
use tracer_trace::explain::timing::{Bar, Waterfall};
use tracer_trace::words::{human_duration, shorten};
use tracer_trace::{Case, Direction, ExplainedMessage};

/// The narrowest gap between two lanes; wider when fewer lanes share the figure.
const LANE_GAP: usize = 190;
/// The width inside the diagram's frame (page.css: the body's `max-width: 1120px` less its
/// padding of 24 px a side, less the `.figure`'s padding of 8 px and border of 1 px a side): the
/// diagram spans it, so arrows and their labels use the width a reader sees and the last lane is
/// not cut off. A wider drawing (many lanes) is scaled down to it (`svg.sequence` in page.css).
const FIGURE_WIDTH: usize = 1120 - 2 * 24 - 2 * 8 - 2;
/// A label starts this far right of its arrow's left end (clear of the number's circle).
const LABEL_INSET: usize = 14;
/// About how wide a character of a label is, in px.
const CHAR_PX: usize = 7;

/// The gap between lanes that makes `gaps` of them fill the figure (never under `LANE_GAP`: many
/// lanes make a wider drawing, which the page scales down).
fn lane_gap(gaps: usize) -> usize {
    match gaps {
        0 => LANE_GAP,
        n => ((FIGURE_WIDTH - MARGIN * 2) / n).max(LANE_GAP),
    }
}

/// How many characters a label starting at `left` has before the drawing's right edge.
fn label_room(width: usize, left: usize) -> usize {
    (width.saturating_sub(left + LABEL_INSET + 8) / CHAR_PX).max(12)
}
const MARGIN: usize = 70;
/// One arrow a row, its label on a line of its own above it: the label's box (12 px text,
/// baseline `LABEL_RISE` over the arrow) ends above the number's circle (`CIRCLE` px round the
/// arrow's end) and starts below the circle of the row before, so a label that runs past a
/// circle (a right-to-left arrow's, whose circle is at its right end) never covers it.
const ROW: usize = 40;
const LABEL_RISE: usize = 15;
const CIRCLE: usize = 10;
const TOP: usize = 54;

/// The sequence diagram of explained messages and their lanes.
pub(crate) fn sequence_svg(messages: &[ExplainedMessage], lanes: &Lanes) -> String {
    let gaps = lanes.names.len().saturating_sub(1);
    let gap = lane_gap(gaps);
    let width = MARGIN * 2 + gap * gaps;
    let height = TOP + ROW * messages.len() + 24;
    let x = |lane: usize| MARGIN + gap * lane;
    let mut out = format!(
        "<svg class=\"sequence\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"sequence diagram\">\
         <defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" class=\"head\"/></marker></defs>"
    );
    for (lane, name) in lanes.names.iter().enumerate() {
        let cx = x(lane);
        out.push_str(&format!(
            "<g class=\"lane\"><rect x=\"{}\" y=\"8\" width=\"130\" height=\"28\" rx=\"6\"/><text x=\"{cx}\" y=\"27\" text-anchor=\"middle\">{}</text><line x1=\"{cx}\" y1=\"36\" x2=\"{cx}\" y2=\"{}\"/></g>",
            cx - 65,
            escape(&shorten(name, 18)),
            height - 8
        ));
    }
    for (message, arrow) in messages.iter().zip(&lanes.arrows) {
        let y = TOP + ROW * (message.number - 1) + 14;
        let (x1, x2) = (x(arrow.from), x(arrow.to));
        let mut classes = vec![match message.direction {
            Direction::Request => "request",
            Direction::Response => "response",
        }];
        match arrow.tone {
            Tone::Failed if message.case == Case::McpToolError => classes.push("tool-error"),
            Tone::Failed => classes.push("failed"),
            Tone::InFlight => classes.push("in-flight"),
            Tone::Normal => {}
        }
        let mark = if classes.contains(&"tool-error") {
            "⚠ "
        } else if classes.contains(&"failed") {
            "✕ "
        } else {
            ""
        };
        // One arrow a row: its label may run from the arrow's left end to the drawing's right
        // edge (about 7 px a character), not only over the arrow.
        let left = x1.min(x2);
        let room = label_room(width, left);
        let label = format!("{mark}{}", shorten(&message.summary, room));
        let start = left + LABEL_INSET;
        out.push_str(&format!(
            "<g class=\"arrow {}\" id=\"a{n}\" data-number=\"{n}\"><title>{n}. {} → {}: {}</title>\
             <line x1=\"{x1}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" marker-end=\"url(#head)\"/>\
             <circle cx=\"{x1}\" cy=\"{y}\" r=\"{CIRCLE}\"/><text class=\"num\" x=\"{x1}\" y=\"{}\" text-anchor=\"middle\">{n}</text>\
             <text class=\"label\" x=\"{start}\" y=\"{}\">{}</text></g>",
            classes.join(" "),
            message.from,
            message.to,
            escape(&message.summary),
            y + 4,
            y - LABEL_RISE,
            escape(&label),
            n = message.number,
        ));
    }
    out.push_str("</svg>");
    out
}

const LABEL_WIDTH: usize = 290;
const PLOT_WIDTH: usize = 560;
const BAR_ROW: usize = 30;

/// The timing waterfall.
pub(crate) fn waterfall_svg(waterfall: &Waterfall) -> String {
    let span = waterfall.span_ns.max(1) as f64;
    let width = LABEL_WIDTH + PLOT_WIDTH + 150;
    let height = 30 + BAR_ROW * waterfall.bars.len() + 10;
    let x = |ns: i64| LABEL_WIDTH as f64 + (ns as f64 / span) * PLOT_WIDTH as f64;
    let mut out = format!(
        "<svg class=\"waterfall\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"timing waterfall\">"
    );
    for tick in 0..=4 {
        let ns = waterfall.span_ns * tick / 4;
        let tx = x(ns);
        out.push_str(&format!(
            "<g class=\"tick\"><line x1=\"{tx:.1}\" y1=\"18\" x2=\"{tx:.1}\" y2=\"{}\"/><text x=\"{tx:.1}\" y=\"13\" text-anchor=\"middle\">{}</text></g>",
            height - 6,
            human_duration(ns)
        ));
    }
    for (row, bar) in waterfall.bars.iter().enumerate() {
        out.push_str(&bar_svg(bar, 26 + BAR_ROW * row, &x, waterfall.span_ns));
    }
    out.push_str("</svg>");
    out
}

fn bar_svg(bar: &Bar, y: usize, x: &dyn Fn(i64) -> f64, span: i64) -> String {
    let mut classes = vec![bar.kind.as_str()];
    if bar.failed {
        classes.push("failed");
    }
    if bar.tool_error {
        classes.push("tool-error");
    }
    let end = bar.end_ns.unwrap_or(span);
    let (x1, x2) = (x(bar.start_ns), x(end));
    let width = (x2 - x1).max(2.0);
    let took = bar
        .duration_ns()
        .map_or("in flight".to_owned(), human_duration);
    let mark = if bar.tool_error {
        "⚠ "
    } else if bar.failed {
        "✕ "
    } else {
        ""
    };
    let mut out = format!(
        "<g class=\"bar {}\" id=\"b{n}\" data-hop=\"{n}\"><title>{n}. {} — {took}</title>\
         <text class=\"name\" x=\"4\" y=\"{}\">{n}. {}</text>\
         <rect x=\"{x1:.1}\" y=\"{y}\" width=\"{width:.1}\" height=\"14\" rx=\"2\"/>\
         <text class=\"took\" x=\"{:.1}\" y=\"{}\">{mark}{took}</text>",
        classes.join(" "),
        escape(&bar.label),
        y + 11,
        escape(&shorten(&bar.label, 38)),
        x1 + width + 4.0,
        y + 11,
        n = bar.hop_number,
    );
    if let Some(first) = bar.first_chunk_ns {
        out.push_str(&format!(
            "<g class=\"first-chunk\"><title>first of {} chunks after {}</title><path d=\"M{fx:.1},{} l4,-6 l-8,0 z\"/><line x1=\"{fx:.1}\" y1=\"{y}\" x2=\"{fx:.1}\" y2=\"{}\"/></g>",
            bar.chunks,
            human_duration(first - bar.start_ns),
            y,
            y + 14,
            fx = x(first)
        ));
    }
    if let Some(timings) = &bar.ollama {
        // Ollama's own durations, drawn under the bar and ending where it ends.
        let parts = [
            ("load", timings.load_ns),
            ("prompt", timings.prompt_eval_ns),
            ("generation", timings.eval_ns),
        ];
        let total: i64 = parts
            .iter()
            .filter_map(|(_, ns)| ns.map(|n| n as i64))
            .sum();
        let mut cursor = end - total;
        for (name, ns) in parts {
            let Some(ns) = ns.map(|n| n as i64).filter(|n| *n > 0) else {
                continue;
            };
            let (sx1, sx2) = (x(cursor.max(bar.start_ns)), x(cursor + ns));
            out.push_str(&format!(
                "<rect class=\"ollama {name}\" x=\"{sx1:.1}\" y=\"{}\" width=\"{:.1}\" height=\"4\"><title>Ollama {name}: {}</title></rect>",
                y + 16,
                (sx2 - sx1).max(1.0),
                human_duration(ns)
            ));
            cursor += ns;
        }
    }
    out.push_str("</g>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_use_the_width_to_the_right_edge() {
        // Four lanes fill the page's width; an arrow from the second lane still gets most of it.
        let gap = lane_gap(3);
        let width = MARGIN * 2 + gap * 3;
        assert!(
            width > FIGURE_WIDTH - 10 && width <= FIGURE_WIDTH,
            "{width}"
        );
        assert!(
            label_room(width, MARGIN) >= 130,
            "{}",
            label_room(width, MARGIN)
        );
        assert!(label_room(width, MARGIN + gap) >= 90);
        assert_eq!(label_room(width, width), 12);
        // Many lanes keep their gap and make a wider drawing.
        assert_eq!(lane_gap(9), LANE_GAP);
    }
}
