// Row builders shared by the trace list and the session view: a trace row, a session heading row.

import { h, on, routeHref } from './dom.js';
import * as fmt from './format.js';
import { picks, togglePick, search } from './store.js';

/** The title of a trace as the CLI lists it. */
export function titleOf(t) {
  return t && t.title ? t.title : '(untitled)';
}

/** A fork's edits (as `tracer fork` stored them) in one line, as `tracer show` says them. */
export function forkWords(edits) {
  const short = (text, n = 60) => fmt.shorten(text, n);
  const words = (edits || []).map((e) => {
    switch (e.kind) {
      case 'body': return 'the whole body replaced';
      case 'set': return short(`${e.pointer} = ${JSON.stringify(e.value)}`);
      case 'model': return `model ${e.model}`;
      case 'tool-description': return short(`${e.tool}'s description "${e.description}"`);
      case 'result': return short(`the tool returns "${e.text}"`);
      case 'error': return short(`the tool fails: "${e.text}"`);
      case 'upstream': return `live to ${e.upstream}`;
      default: return String(e.kind);
    }
  });
  return words.length ? words.join('; ') : 'no edit';
}

/** The badge of a fork in a list: what it was forked from and where. */
export function forkBadge(t) {
  if (!t || !t.fork) return null;
  return h('a', {
    class: 'badge fork',
    href: routeHref('trace', t.fork.of),
    title: `forked from ${t.fork.of} at message ${t.fork.at}: ${forkWords(t.fork.edits)}`,
    'data-testid': 'fork-badge',
    tabindex: '-1',
  }, `fork of ${t.fork.of.slice(0, 8)} at ${t.fork.at}`);
}

function toolsOf(t) {
  const tools = [...(t.tools_used || [])];
  for (const host of t.host_tools_used || []) tools.push(`${host} (host)`);
  return tools.join(', ');
}

function statusWords(t) {
  return t.side_calls_failed ? `${t.status} · ${t.side_calls_failed} side failed` : t.status;
}

/** A trace row (data-testid trace-row); selected marks the keyboard cursor. */
export function traceRow(t, { selected = false, index = 0 } = {}) {
  if (!t) {
    return h('div', { class: 'trow placeholder', 'aria-hidden': 'true' }, h('span', { class: 'c-title' }, 'loading…'));
  }
  const hits = search.byTrace.get(t.id);
  const pick = h('input', { type: 'checkbox', 'aria-label': `pick ${t.id} to compare` });
  pick.checked = picks.includes(t.id);
  on(pick, 'change', () => togglePick(t.id));
  const row = h('div', {
    class: `trow${selected ? ' cursor' : ''}${hits ? ' hit' : ''}`,
    role: 'option',
    'aria-selected': selected ? 'true' : 'false',
    'data-testid': 'trace-row',
    dataset: { id: t.id, index },
  },
  on(h('label', { class: 'c-pick', title: 'pick two traces, then Compare' }, pick), 'click', (e) => e.stopPropagation()),
  h('span', { class: 'c-started', title: `${fmt.dateTime(t.started_unix_ns)}  ${fmt.clock(t.started_unix_ns)} UTC` }, fmt.dateTime(t.started_unix_ns)),
  h('span', { class: `c-status ${fmt.statusClass(t.status)}` }, statusWords(t)),
  h('span', { class: 'c-hops num', title: `${t.hop_count} hops, ${t.message_count} messages, ${fmt.duration(t.duration_ns)}` }, String(t.hop_count ?? '')),
  h('span', { class: 'c-tokens num', title: fmt.tokensText(t.tokens) }, fmt.tokensShort(t.tokens)),
  h('span', { class: 'c-cost num', title: fmt.costText(t.cost) }, fmt.costShort(t.cost)),
  h('span', { class: 'c-tools', title: toolsOf(t) }, toolsOf(t)),
  h('span', { class: 'c-title' },
    forkBadge(t),
    h('a', { href: routeHref('trace', t.id), tabindex: '-1' }, fmt.shorten(titleOf(t), 300)),
    hits ? h('span', { class: 'badge hit-badge', title: 'matches the search' }, hits.size ? `${hits.size} match${hits.size === 1 ? '' : 'es'}` : 'title') : null));
  on(row, 'click', (e) => {
    if (e.target.closest('a, input, label')) return;
    location.hash = routeHref('trace', t.id);
  });
  return row;
}

/** A session heading row: its id, host id, start, trace count, tokens and cost. */
export function sessionRow(session, { selected = false } = {}) {
  const count = (session.traces || []).length;
  const name = session.id ? `session ${session.id.slice(0, 8)}` : 'no session';
  const row = h('div', { class: `srow${selected ? ' cursor' : ''}`, role: 'option', 'aria-selected': selected ? 'true' : 'false' },
    session.id ? h('a', { href: routeHref('session', session.id) }, name) : h('span', null, name),
    session.host_session_id ? h('span', { class: 'muted', title: 'the host\'s own id of its run' }, session.host_session_id) : null,
    h('span', { class: 'muted' }, fmt.dateTime(session.started_unix_ns)),
    h('span', null, `${count} trace${count === 1 ? '' : 's'}`),
    session.tokens ? h('span', { class: 'num muted', title: fmt.tokensText(session.tokens) }, `tokens ${fmt.tokensShort(session.tokens)}`) : null,
    session.cost ? h('span', { class: 'num muted', title: fmt.costText(session.cost) }, `cost ${fmt.costShort(session.cost)}`) : null);
  return row;
}

/** The column headings of trace rows. */
export function traceHeader() {
  return h('div', { class: 'trow thead', 'aria-hidden': 'true' },
    h('span', { class: 'c-pick' }, ''),
    h('span', { class: 'c-started' }, 'started (UTC)'),
    h('span', { class: 'c-status' }, 'status'),
    h('span', { class: 'c-hops num' }, 'hops'),
    h('span', { class: 'c-tokens num' }, 'tokens'),
    h('span', { class: 'c-cost num' }, 'cost'),
    h('span', { class: 'c-tools' }, 'tools'),
    h('span', { class: 'c-title' }, 'title'));
}

/** Whether a trace matches a filter text (every word, in title, tools or status). */
export function matchesFilter(t, words) {
  if (!words.length) return true;
  const hay = `${t.title || ''} ${toolsOf(t)} ${t.status || ''} ${t.id}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function filterWords(text) {
  return text.toLowerCase().split(/\s+/).filter(Boolean);
}
