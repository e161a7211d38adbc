// tracer ui: the entry point: hash router (#/, #/trace/ID[/N], #/diff/A/B, #/session/ID), keys, live.

import { startLive, bus } from './js/live.js';
import { helpOverlay } from './js/help.js';
import { initStrip, addStream, hopState } from './js/streaming.js';
import { feed } from './js/stream_words.js';
import * as listView from './js/list_view.js';
import * as traceView from './js/trace_view.js';
import * as diffView from './js/diff_view.js';
import * as sessionView from './js/session_view.js';

const VIEWS = { list: listView, trace: traceView, diff: diffView, session: sessionView };

const viewEl = document.getElementById('view');
let current = null;
let focusSearchNext = false;

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The route of a location hash. */
export function parse(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decode);
  if (parts[0] === 'trace' && parts[1]) {
    const number = parts[2] !== undefined && /^\d+$/.test(parts[2]) ? Number(parts[2]) : null;
    return { name: 'trace', id: parts[1], number };
  }
  if (parts[0] === 'diff' && parts[1] && parts[2]) return { name: 'diff', a: parts[1], b: parts[2] };
  if (parts[0] === 'session' && parts[1]) return { name: 'session', id: parts[1] };
  return { name: 'list' };
}

const TITLES = {
  list: () => 'traces · tracer',
  trace: (r) => `trace ${r.id.slice(0, 8)}${r.number !== null ? ` #${r.number}` : ''} · tracer`,
  diff: (r) => `compare ${r.a.slice(0, 8)} / ${r.b.slice(0, 8)} · tracer`,
  session: (r) => `session ${r.id.slice(0, 8)} · tracer`,
};

function route() {
  const r = parse(location.hash);
  document.title = TITLES[r.name](r);
  document.body.dataset.view = r.name;
  if (current && current.accepts && current.accepts(r)) {
    current.update(r);
    return;
  }
  if (current) current.unmount();
  current = null;
  window.scrollTo(0, 0);
  current = VIEWS[r.name].mount(viewEl, r);
  if (focusSearchNext && current.focusSearch) current.focusSearch();
  focusSearchNext = false;
}

// Help overlay.
const help = helpOverlay(() => setHelp(false));
document.body.appendChild(help);
let helpReturn = null;
function setHelp(open) {
  if (open === !help.hidden) return;
  help.hidden = !open;
  if (open) {
    helpReturn = document.activeElement;
    help.querySelector('button').focus();
  } else if (helpReturn && helpReturn.focus) {
    helpReturn.focus();
  }
}
document.getElementById('help-button').addEventListener('click', () => setHelp(help.hidden));

function isTyping(el) {
  return el && el.matches && el.matches('input:not([type=checkbox]):not([type=radio]):not([type=button]), textarea, select, [contenteditable=""], [contenteditable="true"]');
}

document.addEventListener('keydown', (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
  const target = e.target;
  if (e.key === 'Escape') {
    if (!help.hidden) setHelp(false);
    else if (isTyping(target)) target.blur();
    else if (current && current.onEscape) current.onEscape();
    e.preventDefault();
    return;
  }
  if (isTyping(target)) return;
  if (e.key === '?') {
    setHelp(help.hidden);
    e.preventDefault();
    return;
  }
  if (!help.hidden) return;
  if (e.key === '/') {
    e.preventDefault();
    if (current && current.focusSearch) current.focusSearch();
    else {
      focusSearchNext = true;
      location.hash = '#/';
    }
    return;
  }
  // Enter and space on a focused control keep their own meaning.
  if ((e.key === 'Enter' || e.key === ' ') && target.closest && target.closest('a, button, summary, label, input')) return;
  if (current && current.onKey && current.onKey(e)) {
    e.preventDefault();
    document.body.classList.add('kbd');
  }
});
// The keyboard cursor is drawn only while the keyboard is in use.
document.addEventListener('mousedown', () => document.body.classList.remove('kbd'));

// Live events: streamed text goes to the open message when it is its hop's, else to the strip.
initStrip(document.getElementById('now-streaming'));
bus.addEventListener('stream', (e) => {
  const d = e.detail || {};
  if (typeof d.hop_id !== 'string' || typeof d.text !== 'string') return;
  // The words the stream spells (a model's text), when its events are ones tracer reads.
  const words = feed(d.hop_id, d.text);
  if (current && current.acceptStream && current.acceptStream({ ...d, words })) return;
  addStream(d.hop_id, d.text, words);
});
bus.addEventListener('hop', (e) => hopState(e.detail || {}));

window.addEventListener('hashchange', route);
startLive(document.getElementById('live'));
route();
