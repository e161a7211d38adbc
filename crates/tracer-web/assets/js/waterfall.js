// The timing tab: per message a bar from its timings (started, head, first byte, ended) on the trace's time axis.

import { h } from './dom.js';
import * as fmt from './format.js';
import { hopStart, isSideCall, tone, hopOf } from './trace_model.js';

function pct(model, ns) {
  return Math.max(0, Math.min(100, (100 * (ns - model.start)) / (model.end - model.start)));
}

function seg(model, from, to, cls, words) {
  if (!from || !to || to < from) return null;
  const el = h('span', { class: `w-seg ${cls}`, title: words });
  const left = pct(model, from);
  el.style.left = `${left}%`;
  el.style.width = `max(2px, ${Math.max(0, pct(model, to) - left)}%)`;
  return el;
}

/** The bars of one message. */
function bars(model, m) {
  const t = m.timings || {};
  const out = [];
  if (m.direction === '→') {
    const start = t.started_unix_ns || m.at_unix_ns;
    out.push(seg(model, start, t.ended_unix_ns || start, 'w-send', `request sent: ${fmt.duration((t.ended_unix_ns || start) - start)}`));
    return out;
  }
  const begin = hopStart(model, m);
  const head = t.head_unix_ns || t.first_byte_unix_ns || t.ended_unix_ns;
  const first = t.first_byte_unix_ns || head;
  const end = t.ended_unix_ns || first;
  out.push(seg(model, begin, head, 'w-wait', `waiting for the answer's head: ${fmt.duration(head - begin)}`));
  out.push(seg(model, head, first, 'w-head', `head to first byte: ${fmt.duration(first - head)}`));
  out.push(seg(model, first, end, 'w-body', `first byte to end: ${fmt.duration(end - first)}`));
  for (const c of (t.chunks || []).slice(0, 200)) {
    const tick = h('span', { class: 'w-tick', title: `chunk of ${fmt.bytes(c.size)} after ${fmt.duration(c.offset_ns)}` });
    tick.style.left = `${pct(model, begin + c.offset_ns)}%`;
    out.push(tick);
  }
  return out;
}

/** The time axis above the bars. */
export function waterfallHeader(model) {
  const total = model.end - model.start;
  const axis = h('div', { class: 'w-axis' });
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const tick = h('span', { class: 'w-axis-tick' }, fmt.duration(total * f));
    tick.style.left = `${f * 100}%`;
    axis.appendChild(tick);
  }
  return h('div', { class: 'wrow w-headrow' }, h('span', { class: 'w-label muted' }, `0 → ${fmt.duration(total)}`), axis, h('span', { class: 'w-dur muted' }, 'took'));
}

/** One timing row (a message, or a fold of side calls). */
export function waterfallRow(model, row, { selected, cursor, hits }) {
  if (row.kind === 'agent') {
    const at = row.e.at_unix_ns - model.start;
    const span = Math.max(1, model.end - model.start);
    const tick = h('span', { class: 'w-agent-tick' });
    tick.style.left = `${Math.max(0, Math.min(1, at / span)) * 100}%`;
    return h('div', { class: `wrow agent${cursor ? ' cursor' : ''}`, 'data-testid': 'agent-row' },
      h('span', { class: 'w-label muted', title: row.e.sentence }, `⋯ ${fmt.shorten(row.e.sentence, 80)}`),
      h('div', { class: 'w-track' }, tick), h('span', { class: 'w-dur' }, ''));
  }
  if (row.kind === 'fold') {
    const first = row.members[0];
    const last = row.members[row.members.length - 1];
    return h('div', { class: `wrow fold${cursor ? ' cursor' : ''}` },
      h('span', { class: 'w-label muted' }, `⋯ ${row.members.length} side call message${row.members.length === 1 ? '' : 's'} (${first.number}–${last.number})`),
      h('div', { class: 'w-track' }, ...row.members.flatMap((m) => bars(model, m))), h('span', { class: 'w-dur' }, ''));
  }
  const m = row.m;
  return h('div', {
    class: `wrow${selected ? ' selected' : ''}${cursor ? ' cursor' : ''}${isSideCall(m) ? ' side' : ''}${hits ? ' hit' : ''} tone-${tone(m, hopOf(model, m))}`,
    dataset: { number: m.number }, role: 'option', 'aria-selected': selected ? 'true' : 'false',
  },
  h('span', { class: 'w-label', title: m.summary }, h('span', { class: 'num' }, `${m.number} ${m.direction}`), ' ', fmt.shorten(m.summary, 80)),
  h('div', { class: 'w-track' }, bars(model, m)),
  h('span', { class: 'w-dur num' }, took(model, m)));
}

/** A request's send time, or a response's whole hop time. */
function took(model, m) {
  const t = m.timings || {};
  if (m.direction === '→') return t.ended_unix_ns && t.started_unix_ns ? fmt.duration(t.ended_unix_ns - t.started_unix_ns) : '';
  if (t.duration_ns) return fmt.duration(t.duration_ns);
  return t.ended_unix_ns ? fmt.duration(t.ended_unix_ns - hopStart(model, m)) : '';
}
