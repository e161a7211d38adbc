// A streamed answer's events (SSE / NDJSON) and a WebSocket hop's messages, as lists in the pane.

import { h, on } from './dom.js';
import * as fmt from './format.js';

const SHOW = 300;
const PREVIEW = 160;

function dataCell(text) {
  const value = text === null || text === undefined ? '' : String(text);
  if (value.length <= PREVIEW) return h('code', { class: 'mono' }, value);
  return h('details', { class: 'cell' }, h('summary', { class: 'mono' }, fmt.shorten(value, PREVIEW)), h('pre', { class: 'mono' }, value));
}

/** Rows in chunks of SHOW, with a button for the next chunk. */
function chunked(items, rowOf, tbody) {
  let shown = 0;
  const more = h('button', { type: 'button', class: 'link' });
  const next = () => {
    const to = Math.min(items.length, shown + SHOW);
    for (let i = shown; i < to; i++) tbody.appendChild(rowOf(items[i], i));
    shown = to;
    more.textContent = `more: ${items.length - shown} left`;
    more.hidden = shown >= items.length;
  };
  on(more, 'click', next);
  next();
  return more;
}

/** The events of a streamed answer with their time since the request. */
export function eventList(events) {
  const tbody = h('tbody');
  const more = chunked(events, (e, i) => h('tr', null,
    h('td', { class: 'num' }, String(i + 1)),
    h('td', { class: 'num' }, fmt.offset(e.offset_ns)),
    h('td', null, e.kind || ''),
    h('td', null, e.event === null || e.event === undefined ? '' : String(e.event)),
    h('td', { class: 'data' }, dataCell(e.data))), tbody);
  return h('details', { class: 'sec', open: true },
    h('summary', null, `events (${events.length})`),
    h('table', { class: 'list-table' },
      h('thead', null, h('tr', null, h('th', null, '#'), h('th', null, 'after'), h('th', null, 'kind'), h('th', null, 'event'), h('th', null, 'data'))),
      tbody),
    more);
}

const OPCODES = { 0: 'continuation', 1: 'text', 2: 'binary', 8: 'close', 9: 'ping', 10: 'pong' };

/** A WebSocket hop's messages: direction, time since the hop started, opcode, sizes, text. */
export function wsFrames(ws, startNs) {
  const messages = ws.messages || [];
  const tbody = h('tbody');
  const more = chunked(messages, (m, i) => h('tr', { class: m.direction === 'send' ? 'ws-send' : 'ws-recv' },
    h('td', { class: 'num' }, String(i + 1)),
    h('td', null, m.direction === 'send' ? '→ sent' : '← received'),
    h('td', { class: 'num' }, startNs ? fmt.offset(m.at_unix_ns - startNs) : fmt.clock(m.at_unix_ns)),
    h('td', null, OPCODES[m.opcode] || String(m.opcode)),
    h('td', { class: 'num', title: `${fmt.thousands(m.wire_size)} bytes on the wire, ${m.frames} frame${m.frames === 1 ? '' : 's'}${m.compressed ? ', compressed' : ''}` },
      fmt.bytes(m.size)),
    h('td', { class: 'data' },
      m.error ? h('span', { class: 'error' }, m.error) : null,
      typeof m.text === 'string' ? dataCell(m.text) : (m.base64 ? h('span', { class: 'muted' }, `binary, ${fmt.bytes(m.size)}`) : null),
      m.complete === false ? h('span', { class: 'muted' }, ' (incomplete)') : null)), tbody);
  const words = [`${messages.length} message${messages.length === 1 ? '' : 's'}`];
  if (ws.extensions) words.push(ws.extensions);
  if (ws.not_listed) words.push(`${ws.not_listed} more not kept`);
  return h('details', { class: 'sec', open: true },
    h('summary', null, `WebSocket (${words.join(', ')})`),
    h('table', { class: 'list-table' },
      h('thead', null, h('tr', null, h('th', null, '#'), h('th', null, 'way'), h('th', null, 'after'), h('th', null, 'opcode'), h('th', null, 'size'), h('th', null, 'data'))),
      tbody),
    more);
}
