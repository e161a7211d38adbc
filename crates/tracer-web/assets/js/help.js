// The help overlay (`?`): every key of the page, by view.

import { h, button } from './dom.js';

const KEYS = [
  ['everywhere', [
    ['?', 'show or hide this help'],
    ['/', 'search every recorded message (on the trace list)'],
    ['Esc', 'close a message, go back to the list, close this help, leave a text box'],
  ]],
  ['trace list', [
    ['j / ↓, k / ↑', 'next / previous trace'],
    ['g, G', 'first, last trace'],
    ['Enter', 'open the trace (or the session)'],
    ['x or space', 'tick the trace for comparing'],
    ['c', 'compare the two ticked traces'],
    ['f', 'filter the loaded traces by title, tool or status'],
    ['b', 'group the traces by session (on/off)'],
  ]],
  ['trace', [
    ['j / ↓, k / ↑', 'next / previous message (opens it)'],
    ['g, G, PgUp, PgDn', 'first, last, a page up or down'],
    ['Enter', 'open the message, or unfold side calls'],
    ['s', 'show or fold the side calls'],
    ['1, 2, 3', 'messages, sequence diagram, timing waterfall'],
    ['t', 'timing waterfall (on/off)'],
    ['Esc', 'close the message; again: back to the list'],
  ]],
];

/** The overlay (hidden); close() hides it. */
export function helpOverlay(close) {
  const sections = KEYS.map(([title, keys]) => h('section', null,
    h('h3', null, title),
    h('table', { class: 'keys' }, h('tbody', null, keys.map(([k, what]) => h('tr', null, h('th', null, h('kbd', null, k)), h('td', null, what)))))));
  const box = h('div', { class: 'help-box', role: 'document' },
    h('div', { class: 'panel-head' }, h('h2', null, 'Keys'), button('×', close, { class: 'icon', 'aria-label': 'close the help' })),
    sections,
    h('p', { class: 'muted' }, 'Times are UTC. Costs are estimates at list prices. Bodies are loaded only when a message is opened.'));
  const overlay = h('div', { id: 'help', class: 'overlay', 'data-testid': 'help', role: 'dialog', 'aria-modal': 'true', 'aria-label': 'keys' }, box);
  overlay.hidden = true;
  overlay.addEventListener('click', (e) => { if (e.target === overlay) close(); });
  return overlay;
}
