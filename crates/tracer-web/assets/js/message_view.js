// The message pane: one message's words, context, tokens, cost, cache, changes, headers, body, events.

import { h, replace, button, visible } from './dom.js';
import * as api from './api.js';
import * as fmt from './format.js';
import { jsonTree } from './json_tree.js';
import { hopOf, hopStart, isSideCall } from './trace_model.js';
import { wsFrames, eventList } from './frames.js';
import { forkSection } from './fork_form.js';

const TEXT_LIMIT = 200000;

function section(title, ...content) {
  return h('details', { class: 'sec', open: true }, h('summary', null, title), ...content);
}

function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(([, v]) => v !== '' && v !== null && v !== undefined)
    .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

function contextBar(ctx) {
  const total = ctx.bytes || ctx.parts.reduce((a, p) => a + p.bytes, 0) || 1;
  const bar = h('div', { class: 'ctx-bar', role: 'img', 'aria-label': 'what the context is made of' });
  const legend = h('ul', { class: 'ctx-legend' });
  ctx.parts.forEach((p, i) => {
    const pct = (100 * p.bytes) / total;
    const tokens = p.approx_tokens !== undefined ? `, ≈ ${fmt.thousands(p.approx_tokens)} tokens` : '';
    const words = `${p.part}: ${fmt.thousands(p.bytes)} bytes${tokens} (${pct.toFixed(1)}%)`;
    const seg = h('span', { class: `ctx-seg seg-${i % 8}`, title: words });
    seg.style.width = `${pct}%`;
    bar.appendChild(seg);
    legend.appendChild(h('li', null, h('span', { class: `swatch seg-${i % 8}` }), words));
  });
  const notes = [];
  if (ctx.prompt_tokens !== undefined) notes.push(`${fmt.thousands(ctx.prompt_tokens)} prompt tokens reported by the model server`);
  const n = ctx.new_since_previous;
  if (n) notes.push(`new since the previous request: ${n.messages} message${n.messages === 1 ? '' : 's'}, ${fmt.bytes(n.bytes)}${n.approx_tokens !== undefined ? `, ≈ ${fmt.thousands(n.approx_tokens)} tokens` : ''}`);
  return section(`context: ${fmt.bytes(total)}`, bar, legend, notes.map((t) => h('p', { class: 'muted' }, t)));
}

function tokensSection(t) {
  const rows = fmt.tokenBuckets(t).map(([k, v]) => h('tr', null, h('th', null, k), h('td', { class: 'num' }, fmt.thousands(v))));
  return section('tokens', h('p', null, fmt.tokensText(t)), h('table', { class: 'kv' }, h('tbody', null, rows)));
}

function timingsSection(model, m) {
  const t = m.timings || {};
  const base = model.start;
  const rel = (ns) => (ns ? `${fmt.offset(ns - base)} (${fmt.clock(ns)})` : '');
  const chunks = t.chunks || [];
  return section('timings', facts([
    ['started', rel(t.started_unix_ns)],
    ['head', rel(t.head_unix_ns)],
    ['first byte', rel(t.first_byte_unix_ns)],
    ['ended', rel(t.ended_unix_ns)],
    ['hop took', t.duration_ns ? fmt.duration(t.duration_ns) : ''],
    ['chunks', chunks.length ? `${chunks.length}${t.chunks_truncated ? ' (more not kept)' : ''}, ${fmt.bytes(chunks.reduce((a, c) => a + c.size, 0))}` : ''],
  ]));
}

function headersSection(headers) {
  if (!headers || !headers.length) return null;
  return h('details', { class: 'sec' }, h('summary', null, `headers (${headers.length})`),
    h('table', { class: 'kv headers mono' }, h('tbody', null, headers.map((x) =>
      h('tr', null, h('th', null, x.name), h('td', null, x.value === null || x.value === undefined ? '(not text)' : x.value))))));
}

function bodyView(body) {
  const note = [];
  if (body.length !== undefined) note.push(fmt.bytes(body.length));
  if (body.truncated) note.push('truncated: only the start was kept');
  const head = h('p', { class: 'muted' }, note.join(' · '));
  if (body.json !== undefined) {
    const box = h('div', { class: 'body-box' }, jsonTree(body.json));
    let raw = false;
    const toggle = button('raw', () => {
      raw = !raw;
      toggle.textContent = raw ? 'tree' : 'raw';
      replace(box, raw ? h('pre', { class: 'mono raw' }, JSON.stringify(body.json, null, 2)) : jsonTree(body.json));
    }, { class: 'small', title: 'switch between the tree and the JSON text' });
    return [h('div', { class: 'body-tools' }, head, toggle), box];
  }
  if (typeof body.text === 'string') {
    if (!body.text.length) return [h('p', { class: 'muted' }, 'empty body')];
    const pre = h('pre', { class: 'mono body-text' }, body.text.slice(0, TEXT_LIMIT));
    const more = body.text.length > TEXT_LIMIT
      ? button(`show all ${fmt.bytes(body.text.length)}`, (e) => { pre.textContent = visible(body.text); e.target.remove(); }, { class: 'link' })
      : null;
    return [head, pre, more];
  }
  if (typeof body.base64 === 'string') {
    return [head, h('p', null, `binary body: ${fmt.bytes(body.length)} (base64, ${fmt.thousands(body.base64.length)} characters; not shown)`)];
  }
  return [head, h('p', { class: 'muted' }, body.length ? 'the body was not kept' : 'no body')];
}

function hopSection(hop) {
  if (!hop) return null;
  return h('details', { class: 'sec' }, h('summary', null, `hop ${hop.number}: ${hop.route} (${hop.role})`), facts([
    ['id', hop.id], ['route', hop.route], ['role', hop.role], ['transport', hop.transport],
    ['url', hop.url], ['peer', hop.peer], ['state', hop.state], ['error', hop.error || ''], ['note', hop.note || ''],
  ]));
}

/** The pane on the right of a trace (below it on a phone). */
export class MessagePane {
  constructor(el, traceId, onClose) {
    this.el = el;
    this.traceId = traceId;
    this.onClose = onClose;
    this.number = null;
    this.entry = null;
    this.abort = null;
    this.timer = null;
    this.empty();
  }

  empty() {
    this.number = null;
    this.entry = null;
    replace(this.el, h('div', { class: 'detail-empty muted' },
      h('p', null, 'Pick a message: click it, or move with j / k.'),
      h('p', null, 'Enter opens, Esc closes, ? lists every key.')));
  }

  /** Shows message number of the model now; its body is fetched (after a short pause). */
  show(model, number, { immediate = false } = {}) {
    if (this.abort) this.abort.abort();
    clearTimeout(this.timer);
    const m = model.byNumber.get(number);
    this.number = number;
    this.entry = m || null;
    // Asked for first, drawn while it comes: the request does not wait for the pane.
    const early = m && immediate ? this.ask(m) : null;
    if (!m) {
      replace(this.el, h('div', { class: 'detail', 'data-testid': 'message-detail' },
        h('p', { class: 'error' }, `Message ${number} is not in this trace${model.trace.status === 'in flight' ? ' yet' : ''}.`)));
      return;
    }
    const hop = hopOf(model, m);
    this.stream = h('pre', { class: 'mono stream-text', 'data-testid': 'stream-text', 'aria-live': 'polite' });
    this.stream.hidden = true;
    this.bodySlot = h('div', { class: 'body-slot' }, h('p', { class: 'muted' }, 'loading the body…'));
    this.extraSlot = h('div');
    this.changesSlot = h('div', { class: 'changes-slot' });
    const cache = model.cache[String(number)];
    const close = button('×', () => this.onClose(), { class: 'icon', title: 'close (Esc)', 'aria-label': 'close the message' });
    replace(this.el, h('article', { class: 'detail', 'data-testid': 'message-detail', dataset: { number } },
      h('div', { class: 'detail-head' },
        h('h2', null, `${number} ${m.direction} `, h('span', { class: 'route' }, `${m.from} → ${m.to}`)),
        h('span', { class: 'badge', title: 'the explanation case' }, m.case),
        isSideCall(m) ? h('span', { class: 'badge side' }, 'side call') : null,
        close),
      h('p', { class: 'summary' }, m.summary),
      h('p', { class: 'explanation' }, m.explanation),
      this.stream,
      facts([
        ['request', `${m.method} ${m.path}`],
        ['status', m.status === null || m.status === undefined ? '' : String(m.status)],
        ['dialect', m.dialect],
        ['at', `${fmt.offset(m.at_unix_ns - model.start)} (${fmt.clock(m.at_unix_ns)} UTC)`],
        ['hop', hop ? `${hop.route} · ${hop.state}${hop.error ? ` · ${hop.error}` : ''}` : m.hop_id],
        ['hop took', m.timings && m.timings.duration_ns ? fmt.duration(m.timings.duration_ns) : ''],
      ]),
      m.context ? contextBar(m.context) : null,
      m.tokens ? tokensSection(m.tokens) : null,
      m.cost ? section('cost', h('p', null, fmt.callCostText(m.cost)), h('p', { class: 'muted' }, m.cost.prices || '')) : null,
      cache ? section('cache', h('p', null, cache)) : null,
      this.changesSlot,
      section('body', this.bodySlot),
      this.extraSlot,
      headersSection(m.headers),
      timingsSection(model, m),
      hopSection(hop),
      forkSection(this.traceId, m)));
    this.el.scrollTop = 0;
    const load = () => this.load(model, m, early || this.ask(m));
    if (immediate) load();
    else this.timer = setTimeout(load, 120);
  }

  /** Starts fetching message m's body (the one in flight before is let go). */
  ask(m) {
    if (this.abort) this.abort.abort();
    const abort = new AbortController();
    this.abort = abort;
    return { abort, answer: api.message(this.traceId, m.number, abort.signal) };
  }

  async load(model, m, { abort, answer }) {
    let data;
    try {
      data = await answer;
    } catch (e) {
      if (api.isAbort(e)) return;
      replace(this.bodySlot, h('p', { class: 'error' }, `cannot load the body: ${e.message}`));
      return;
    }
    if (this.number !== m.number) return;
    const body = (data.message && data.message.body) || m.body || {};
    replace(this.bodySlot, bodyView(body));
    const hop = data.hop || hopOf(model, m);
    const start = hopStart(model, m);
    replace(this.extraSlot,
      Array.isArray(data.events) && data.events.length ? eventList(data.events) : null,
      hop && hop.websocket ? wsFrames(hop.websocket, start) : null);
    // A model request's changes compare two bodies on the server: fetched after the body shows.
    if (m.direction === '→') this.loadChanges(m, abort.signal);
  }

  async loadChanges(m, signal) {
    let changes;
    try {
      changes = await api.changes(this.traceId, m.number, signal);
    } catch (e) {
      if (api.isAbort(e)) return;
      replace(this.changesSlot, h('p', { class: 'error' }, `cannot compare with the previous request: ${e.message}`));
      return;
    }
    if (this.number !== m.number || !changes) return;
    const lines = Array.isArray(changes.lines) ? changes.lines : [];
    const since = changes.previous ? ` (request ${changes.previous})` : '';
    replace(this.changesSlot, lines.length
      ? section(`changes since the previous request${since}`, h('ul', { class: 'changes mono' }, lines.map((line) => h('li', null, line))))
      : null);
  }

  /** Shows streamed text when it belongs to the shown message's hop (the words it spells once
   *  there are any, else its bytes as they come); true if it did. */
  appendStream(hopId, text, words) {
    if (!this.entry || this.entry.hop_id !== hopId || !this.stream) return false;
    this.stream.hidden = false;
    if (words) this.stream.textContent = visible(words);
    else this.stream.appendChild(document.createTextNode(visible(text)));
    const max = 400000;
    if (this.stream.textContent.length > max) this.stream.textContent = this.stream.textContent.slice(-max);
    return true;
  }

  destroy() {
    if (this.abort) this.abort.abort();
    clearTimeout(this.timer);
  }
}

