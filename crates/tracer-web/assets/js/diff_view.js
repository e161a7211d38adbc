// The `#/diff/A/B` view: two traces side by side, step by step (diff.json), and the CLI's text.

import { h, replace, clear, routeHref } from './dom.js';
import * as api from './api.js';
import * as fmt from './format.js';
import { list } from './store.js';
import { titleOf } from './rows.js';

function args(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function side(s, differs) {
  if (!s) return h('div', { class: 'diff-cell empty muted' }, 'no such step');
  const facts = [
    s.model,
    `${s.messages} message${s.messages === 1 ? '' : 's'}`,
    `${s.tools_offered} tool${s.tools_offered === 1 ? '' : 's'} offered`,
    s.model_ns ? `model ${fmt.duration(s.model_ns)}` : '',
    s.tool_ns ? `tools ${fmt.duration(s.tool_ns)}` : '',
  ].filter(Boolean).join(' · ');
  const tokens = fmt.tokensText(s.tokens);
  const cost = fmt.looseCost(s.cost);
  const calls = (s.calls || []).map((c) => h('li', { class: 'mono' },
    h('strong', null, c.name), ' ', args(c.arguments),
    c.outcome ? h('div', { class: c.outcome.error ? 'error' : 'muted' },
      '→ ', c.outcome.error ? `error: ${c.outcome.error}` : `ok: ${fmt.shorten(c.outcome.text || '', 300)}`,
      c.outcome.duration_ns ? ` (${fmt.duration(c.outcome.duration_ns)})` : '') : null));
  return h('div', { class: `diff-cell${differs ? ' differs' : ''}` },
    h('p', { class: 'muted' }, facts),
    tokens ? h('p', null, `tokens: ${tokens}`) : null,
    cost ? h('p', null, `cost: ${cost}`) : null,
    calls.length ? h('ul', { class: 'calls' }, calls) : h('p', null, 'no tool call'),
    s.content ? h('p', { class: 'says' }, `says “${fmt.shorten(s.content, 600)}”`) : null,
    s.error ? h('p', { class: 'error' }, `error: ${typeof s.error === 'string' ? s.error : JSON.stringify(s.error)}`) : null);
}

function columnHead(letter, id) {
  const known = list.byId.get(id);
  return h('div', { class: 'diff-cell head' },
    h('strong', null, letter), ' ',
    h('a', { href: routeHref('trace', id), class: 'mono' }, id),
    known ? h('div', null, `“${fmt.shorten(titleOf(known), 120)}” · ${fmt.duration(known.duration_ns)} · ${fmt.costShort(known.cost) || 'no model call'}`) : null);
}

function render(d, text, a, b) {
  const steps = (d.steps || []).map((step) => h('div', { class: 'diff-step' },
    h('h3', null, `step ${step.step}`, h('span', { class: step.same_tool_calls ? 'muted' : 'differs-word' },
      step.same_tool_calls ? '  same tool calls' : '  tool calls differ')),
    h('div', { class: 'diff-grid' }, side(step.a, !step.same_tool_calls), side(step.b, !step.same_tool_calls))));
  const replyDiffers = d.reply_a !== d.reply_b;
  return [
    h('p', { class: 'diff-summary' }, d.summary || ''),
    h('div', { class: 'diff-grid' }, columnHead('A', d.a || a), columnHead('B', d.b || b)),
    steps,
    h('div', { class: 'diff-step' },
      h('h3', null, 'reply', h('span', { class: replyDiffers ? 'differs-word' : 'muted' }, replyDiffers ? '  differs' : '  same')),
      h('div', { class: 'diff-grid' },
        h('div', { class: `diff-cell${replyDiffers ? ' differs' : ''}` }, d.reply_a ? `“${d.reply_a}”` : h('span', { class: 'muted' }, 'no reply')),
        h('div', { class: `diff-cell${replyDiffers ? ' differs' : ''}` }, d.reply_b ? `“${d.reply_b}”` : h('span', { class: 'muted' }, 'no reply')))),
    h('details', { class: 'sec', open: true }, h('summary', null, 'as text (tracer diff)'), h('pre', { class: 'mono diff-text' }, text || '')),
  ];
}

export function mount(root, route) {
  const { a, b } = route;
  const body = h('div', { class: 'diff-body' }, h('p', { class: 'muted' }, 'comparing…'));
  replace(root, h('section', { class: 'diff-view page' },
    h('div', { class: 'crumbs' }, h('a', { href: '#/' }, '← traces')),
    h('h1', null, 'Compare two traces'),
    body));
  const abort = new AbortController();
  api.diff(a, b, abort.signal).then((answer) => {
    replace(body, ...render(answer.json || {}, answer.text, a, b));
  }).catch((e) => {
    if (!api.isAbort(e)) replace(body, h('p', { class: 'error' }, `Cannot compare: ${e.message}`));
  });
  return {
    onEscape() {
      location.hash = '#/';
      return true;
    },
    unmount() {
      abort.abort();
      clear(root);
    },
  };
}
