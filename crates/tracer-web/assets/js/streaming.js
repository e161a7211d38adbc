// The "now streaming" strip: answers still streaming that the open message pane does not show.

import { h, replace, routeHref } from './dom.js';

const KEEP = 240;
const hops = new Map(); // hop_id -> {trace, text, timer}
const traceOf = new Map(); // hop_id -> trace id, from hop events (the newest 500)
let strip = null;

/** The end of a stream's text on one line (what came last), cut at the start with an ellipsis. */
function tail(text, max) {
  // Runs of white space as one space; a word's trailing space kept (the next word comes).
  const line = String(text).replace(/\s+/g, ' ').replace(/^ /, '');
  return line.length <= max ? line : `…${line.slice(-(max - 1))}`;
}

function draw() {
  if (!strip) return;
  strip.hidden = hops.size === 0;
  replace(strip, h('span', { class: 'strip-label' }, 'now streaming'),
    [...hops.entries()].slice(-3).map(([hop, s]) => {
      const words = [h('span', { class: 'mono muted' }, hop.slice(0, 8)), ' ', h('span', { class: 'mono' }, tail(s.text, 120))];
      return s.trace ? h('a', { href: routeHref('trace', s.trace), class: 'strip-item' }, words) : h('span', { class: 'strip-item' }, words);
    }));
}

export function initStrip(el) {
  strip = el;
  draw();
}

/** Streamed text of a hop that no open pane took. */
export function addStream(hopId, text, words) {
  const s = hops.get(hopId) || { trace: traceOf.get(hopId) || null, text: '', timer: null };
  // The words the answer spells once there are any; its bytes until then.
  s.text = words ? words.slice(-KEEP) : (s.text + text).slice(-KEEP);
  hops.set(hopId, s);
  draw();
}

/** A hop's state: its trace is remembered; once it is no longer open it leaves the strip. */
export function hopState(d) {
  if (d.trace_id) {
    traceOf.set(d.hop_id, d.trace_id);
    if (traceOf.size > 500) traceOf.delete(traceOf.keys().next().value);
  }
  const s = hops.get(d.hop_id);
  if (!s) return;
  if (d.trace_id) s.trace = d.trace_id;
  clearTimeout(s.timer);
  if (d.state && d.state !== 'open' && d.state !== 'in_flight') {
    s.timer = setTimeout(() => {
      hops.delete(d.hop_id);
      draw();
    }, 3000);
  }
  draw();
}
