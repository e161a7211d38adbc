// A collapsible JSON tree, built lazily: a node's children are made only when it is opened.

import { h, on, visible } from './dom.js';

const CHUNK = 200;
const LONG_STRING = 600;

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function leaf(value) {
  const k = kind(value);
  if (k === 'string') {
    if (value.length <= LONG_STRING) return h('span', { class: 'jt-str' }, JSON.stringify(value));
    const shown = h('span', { class: 'jt-str' }, JSON.stringify(value.slice(0, LONG_STRING)).slice(0, -1) + '…"');
    const more = h('button', { type: 'button', class: 'link' }, `show all ${value.length.toLocaleString('en-US')} characters`);
    on(more, 'click', () => {
      shown.textContent = visible(JSON.stringify(value));
      more.remove();
    });
    return h('span', null, shown, ' ', more);
  }
  return h('span', { class: `jt-${k}` }, String(value));
}

function summaryOf(value) {
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? '' : 's'}]`;
  const n = Object.keys(value).length;
  return `{${n} key${n === 1 ? '' : 's'}}`;
}

/** Appends children of an array or object from `from`, CHUNK at a time, with a "more" button. */
function fillChildren(box, value, from, depth, openDepth) {
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const to = Math.min(entries.length, from + CHUNK);
  for (let i = from; i < to; i++) {
    const [key, child] = entries[i];
    box.appendChild(node(key, child, depth + 1, openDepth, Array.isArray(value)));
  }
  if (to < entries.length) {
    const more = h('button', { type: 'button', class: 'link jt-more' },
      `more: ${Math.min(CHUNK, entries.length - to)} of the ${entries.length - to} left`);
    on(more, 'click', () => {
      more.remove();
      fillChildren(box, value, to, depth, openDepth);
    });
    box.appendChild(h('div', { class: 'jt-row' }, more));
  }
}

function node(key, value, depth, openDepth, inArray) {
  const label = key === null ? null : h('span', { class: inArray ? 'jt-index' : 'jt-key' }, inArray ? `${key}` : JSON.stringify(String(key)), ': ');
  const k = kind(value);
  if (k !== 'array' && k !== 'object') return h('div', { class: 'jt-row' }, label, leaf(value));
  const size = Array.isArray(value) ? value.length : Object.keys(value).length;
  if (size === 0) return h('div', { class: 'jt-row' }, label, h('span', { class: 'jt-punct' }, Array.isArray(value) ? '[]' : '{}'));
  const toggle = h('button', { type: 'button', class: 'jt-toggle', 'aria-expanded': 'false' }, '▸');
  const summary = h('span', { class: 'jt-summary' }, summaryOf(value));
  const children = h('div', { class: 'jt-children' });
  children.hidden = true;
  let built = false;
  const setOpen = (open) => {
    if (open && !built) {
      fillChildren(children, value, 0, depth, openDepth);
      built = true;
    }
    children.hidden = !open;
    toggle.textContent = open ? '▾' : '▸';
    toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
  };
  on(toggle, 'click', () => setOpen(children.hidden));
  const head = h('div', { class: 'jt-row jt-head' }, toggle, label, summary);
  on(summary, 'click', () => setOpen(children.hidden));
  if (depth < openDepth) setOpen(true);
  return h('div', { class: 'jt-node' }, head, children);
}

/** The tree of a JSON value, opened to openDepth levels. */
export function jsonTree(value, { openDepth = 2 } = {}) {
  return h('div', { class: 'json-tree mono' }, node(null, value, 0, openDepth, false));
}
