//! Interop: the handout's layout in a real browser at a 1400×900 window (headless Chromium, the
//! page's own script run and a measuring script added, its Content-Security-Policy taken out for
//! that): the sequence diagram's box fits the window and its frame (the last lane whole, also
//! with nine lanes), no arrow's label meets a number's circle, and no item of the two-column
//! contents list meets another (its number included).

use std::path::Path;

use serde_json::{Value, json};
use tracer_export::body_text::TraceToExport;
use tracer_export::html::html_page;
use tracer_trace::RecordedHop;
use tracer_wire::hop::Role;

use crate::html_export::export_html;
use crate::interop_chromium::{chromium, run_chromium};
use crate::sample_db::{BUY_MILK, sample_db};
use crate::trace_hops::hop;

const MEASURE: &str = include_str!("html_layout_measure.js");

/// The page as Chromium laid it out in a 1400×900 window: what html_layout_measure.js found.
fn measured(chromium: &Path, dir: &Path, name: &str, page: &str) -> Value {
    let csp_start = page
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let csp_end = csp_start + page[csp_start..].find('>').unwrap() + 1;
    let page = format!("{}{}", &page[..csp_start], &page[csp_end..])
        .replace("</body>", &format!("<script>{MEASURE}</script></body>"));
    let file = dir.join(format!("{name}.html"));
    std::fs::write(&file, page).unwrap();
    let dumped = run_chromium(
        chromium,
        &dir.join(format!("profile-{name}")),
        &[
            "--window-size=1400,900".into(),
            "--dump-dom".into(),
            format!("file://{}", file.display()),
        ],
    );
    assert!(dumped.status.success(), "{dumped:?}");
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let start = dom.find("<pre id=\"measured\">").expect("the measure ran") + 19;
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let text = text
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap()
}

fn assert_fits(name: &str, m: &Value) {
    let edge = |b: &Value, side: &str| b[side].as_f64().unwrap();
    let (svg, figure) = (&m["svg"], &m["figure"]);
    let window = m["window"].as_f64().unwrap();
    assert_eq!(window, 1400.0, "{name}: {m}");
    assert!(
        edge(svg, "l") >= 0.0 && edge(svg, "r") <= window,
        "{name}: {m}"
    );
    // Inside the frame's border and padding (9 px a side): nothing scrolled out of sight.
    assert!(
        edge(svg, "l") >= edge(figure, "l") + 8.5 && edge(svg, "r") <= edge(figure, "r") - 8.5,
        "{name}: the diagram {svg} is wider than its frame {figure}"
    );
    let lanes = m["lanes"].as_array().unwrap();
    let last = lanes.last().unwrap();
    assert!(
        edge(last, "r") <= edge(figure, "r") - 8.5,
        "{name}: the last lane {last} is cut off by the frame {figure}"
    );
    assert_eq!(
        m["overlaps"],
        json!([]),
        "{name}: [label, circle] that meet"
    );
    assert_eq!(
        m["collisions"],
        json!([]),
        "{name}: contents items that meet"
    );
}

/// A host calling seven MCP servers, one after another: nine lanes (you, agent, seven servers).
fn nine_lanes() -> Vec<RecordedHop> {
    let mut hops = vec![
        hop("w1", Role::Agent, "/agent", 0, 900)
            .bodies(
                json!({"message": "Ask every server what it offers"}),
                json!({"reply": "Seven servers, one tool each."}),
            )
            .done(),
    ];
    for server in 1..=7 {
        let start = server * 100;
        let mut server_hop = hop(&format!("w{}", server + 1), Role::Mcp, "/mcp", start, start + 20)
            .bodies(
                json!({"jsonrpc": "2.0", "id": server, "method": "tools/list"}),
                json!({"jsonrpc": "2.0", "id": server, "result": {"tools": [{"name": format!("tool_of_server_number_{server}")}]}}),
            )
            .done();
        server_hop.start.route = format!("server{server}");
        hops.push(server_hop);
    }
    hops
}

#[test]
fn interop_chromium_the_handout_fits_a_1400_px_window() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let buy_milk = export_html(&db, BUY_MILK, &dir.path().join("exported.html"));
    let m = measured(&chromium, dir.path(), "buy-milk", &buy_milk);
    assert_eq!(m["lanes"].as_array().unwrap().len(), 4);
    assert_fits("buy milk", &m);

    let hops = nine_lanes();
    let wide = html_page(&TraceToExport {
        id: &hops[0].start.id,
        title: Some("Ask every server what it offers"),
        hops: &hops,
        session: None,
        fetch: None,
        agent_events: &[],
    });
    let m = measured(&chromium, dir.path(), "nine-lanes", &wide);
    assert_eq!(m["lanes"].as_array().unwrap().len(), 9, "{m}");
    assert_fits("nine lanes", &m);
}
