// The `#/` view: traces newest first (virtualized), filter, body search, by-session grouping, compare.

import { h, on, clear, replace, routeHref, button } from './dom.js';
import { VList, cssRowHeight } from './vlist.js';
import * as fmt from './format.js';
import * as store from './store.js';
import { traceRow, sessionRow, traceHeader, matchesFilter, filterWords, titleOf } from './rows.js';

const ARROWS = { request: '→', response: '←' };
const ui = { filter: '', bySession: false };

function searchPanel(onClose) {
  const { text, result, error, loading } = store.search;
  if (!text.trim()) return null;
  const head = h('div', { class: 'panel-head' },
    h('strong', null, `“${text}”`),
    h('span', { class: 'muted' }, loading ? 'searching…' : result ? `${result.traces.length} trace${result.traces.length === 1 ? '' : 's'}` : ''),
    button('×', onClose, { class: 'icon', title: 'close the search (Esc)', 'aria-label': 'close the search' }));
  if (error) return h('aside', { class: 'search-panel' }, head, h('p', { class: 'error' }, error));
  if (!result) return h('aside', { class: 'search-panel' }, head);
  const groups = result.traces.map((t) => h('div', { class: 'shit-trace' },
    h('div', { class: 'shit-title' },
      h('a', { href: routeHref('trace', t.id) }, fmt.shorten(titleOf(t), 120)),
      t.in_title ? h('span', { class: 'badge' }, 'in title') : null,
      h('span', { class: 'muted' }, String(t.started || '').replace('T', ' ').replace('Z', ' UTC'))),
    h('ul', { class: 'shits' }, (t.messages || []).map((m) => h('li', null,
      h('a', {
        href: routeHref('trace', t.id, m.number), class: 'search-hit',
        'data-testid': 'search-hit', dataset: { id: t.id, number: m.number },
      },
      h('span', { class: 'num' }, `${m.number} ${ARROWS[m.direction] || ''}`),
      h('span', { class: 'excerpt' }, m.excerpt)))))));
  return h('aside', { class: 'search-panel' }, head,
    result.traces.length ? groups : h('p', { class: 'muted' }, 'no match'),
    result.more ? h('p', { class: 'muted' }, `and ${result.more} more trace${result.more === 1 ? '' : 's'} (narrow the search)`) : null,
    result.ungrouped_hops ? h('p', { class: 'muted' }, `${result.ungrouped_hops} matching hop${result.ungrouped_hops === 1 ? ' is' : 's are'} in no trace`) : null);
}

export function mount(root) {
  const list = store.list;
  const filterInput = h('input', { type: 'search', class: 'filter', placeholder: 'filter: title, tool, status', 'aria-label': 'filter the loaded traces' });
  filterInput.value = ui.filter;
  const searchInput = h('input', { type: 'search', 'data-testid': 'search', placeholder: 'search bodies… (/)', 'aria-label': 'search all recorded messages' });
  searchInput.value = store.search.text;
  const bySession = h('input', { type: 'checkbox' });
  bySession.checked = ui.bySession;
  const compare = button('Compare', () => {
    if (store.picks.length === 2) location.hash = routeHref('diff', store.picks[0], store.picks[1]);
  }, { class: 'primary', title: 'tick two traces, then compare them (c)' });
  const count = h('span', { class: 'count muted' });
  const scroller = h('div', { class: 'scroller', role: 'listbox', 'aria-label': 'traces', tabindex: '0' });
  const panelSlot = h('div', { class: 'panel-slot' });
  const view = h('section', { class: 'list-view' },
    h('div', { class: 'toolbar' },
      filterInput,
      on(h('form', { class: 'searchform', role: 'search' }, searchInput), 'submit', (e) => {
        e.preventDefault();
        store.runSearch(searchInput.value);
      }),
      h('label', { class: 'toggle', title: 'group the traces by session' }, bySession, 'by session'),
      compare, count),
    h('div', { class: 'list-body' },
      h('div', { class: 'list-col' }, traceHeader(), scroller),
      panelSlot));
  replace(root, view);

  let items = null; // null: the plain list (store rows by index); else [{kind, t|s}]
  let cursor = list.cursor;

  function rebuild() {
    const words = filterWords(ui.filter);
    if (ui.bySession) {
      if (!store.sessions.items) {
        items = [];
        if (!store.sessions.loading) store.loadSessions();
      } else {
        items = [];
        for (const s of store.sessions.items) {
          const traces = (s.traces || []).filter((t) => matchesFilter(t, words));
          if (!traces.length) continue;
          items.push({ kind: 'session', s });
          for (const t of traces) items.push({ kind: 'trace', t });
        }
        if (store.sessions.items.length >= store.sessions.limit) items.push({ kind: 'more-sessions' });
      }
    } else if (words.length) {
      items = [];
      for (let i = 0; i < list.rows.length; i++) {
        const t = list.rows[i];
        if (t && matchesFilter(t, words)) items.push({ kind: 'trace', t });
      }
      if (store.loadedCount() < list.total) items.push({ kind: 'more' });
    } else {
      items = null;
    }
    cursor = Math.min(cursor, Math.max(0, size() - 1));
    vlist.setCount(size());
    if (!items) store.ensureRows(...store.list.want);
    updateCount();
  }

  function size() {
    return items ? items.length : list.total;
  }

  function traceAt(i) {
    if (!items) return list.rows[i];
    return items[i] && items[i].kind === 'trace' ? items[i].t : null;
  }

  function updateCount() {
    const loaded = store.loadedCount();
    let words;
    if (list.error) words = `cannot load the traces: ${list.error}`;
    else if (ui.bySession) words = store.sessions.items ? `${store.sessions.items.length} sessions` : 'loading sessions…';
    else if (items) words = `${items.filter((x) => x.kind === 'trace').length} match among ${fmt.thousands(loaded)} loaded of ${fmt.thousands(list.total)}`;
    else words = list.started && list.total === 0 && !list.inFlight ? 'no traces recorded yet' : `${fmt.thousands(list.total)} traces`;
    count.textContent = words;
    count.classList.toggle('error', Boolean(list.error));
    compare.disabled = store.picks.length !== 2;
    compare.textContent = `Compare (${store.picks.length}/2)`;
  }

  function render(i) {
    if (!items) return traceRow(list.rows[i], { selected: i === cursor, index: i });
    const item = items[i];
    if (item.kind === 'session') return sessionRow(item.s, { selected: i === cursor });
    if (item.kind === 'more') {
      return h('div', { class: 'srow more' }, button(`load ${fmt.thousands(Math.min(200, list.total - store.loadedCount()))} more to filter`, () => store.loadMore()));
    }
    if (item.kind === 'more-sessions') {
      return h('div', { class: 'srow more' }, button('load more sessions', () => store.loadSessions(store.sessions.limit * 2)));
    }
    return traceRow(item.t, { selected: i === cursor, index: i });
  }

  const vlist = new VList(scroller, {
    rowHeight: cssRowHeight(view, '--trow-h', 34),
    count: 0,
    render,
    onRange: (first, last) => { if (!items) store.ensureRows(first, last); },
  });
  rebuild();
  scroller.scrollTop = list.scrollTop;
  vlist.draw();

  function drawPanel() {
    replace(panelSlot, searchPanel(() => {
      searchInput.value = '';
      store.runSearch('');
    }));
    view.classList.toggle('with-panel', Boolean(store.search.text.trim()));
  }
  drawPanel();

  on(filterInput, 'input', () => {
    ui.filter = filterInput.value;
    rebuild();
  });
  let searchTimer = null;
  on(searchInput, 'input', () => {
    clearTimeout(searchTimer);
    const text = searchInput.value;
    if (!text.trim()) store.runSearch('');
    else if (text.trim().length >= 3) searchTimer = setTimeout(() => store.runSearch(text), 500);
  });
  on(bySession, 'change', () => {
    ui.bySession = bySession.checked;
    cursor = 0;
    scroller.scrollTop = 0;
    rebuild();
  });

  const listeners = {
    list: () => (items || ui.bySession ? rebuild() : (vlist.setCount(list.total), updateCount())),
    sessions: () => { if (ui.bySession) rebuild(); },
    search: () => { drawPanel(); vlist.refresh(); },
    picks: () => { vlist.refresh(); updateCount(); },
  };
  for (const [k, fn] of Object.entries(listeners)) store.changed.addEventListener(k, fn);
  const onResize = () => vlist.setRowHeight(cssRowHeight(view, '--trow-h', 34));
  window.addEventListener('resize', onResize);

  function moveCursor(to) {
    const n = size();
    if (!n) return;
    const old = cursor;
    cursor = Math.max(0, Math.min(n - 1, to));
    vlist.refreshIndex(old);
    vlist.refreshIndex(cursor);
    vlist.scrollToIndex(cursor);
  }

  return {
    onKey(e) {
      const k = e.key;
      // The cursor is drawn only once the keyboard is used: the first j or k shows it in place.
      const step = document.body.classList.contains('kbd') ? 1 : 0;
      if (k === 'j' || k === 'ArrowDown') moveCursor(cursor + step);
      else if (k === 'k' || k === 'ArrowUp') moveCursor(cursor - step);
      else if (k === 'g' || k === 'Home') moveCursor(0);
      else if (k === 'G' || k === 'End') moveCursor(size() - 1);
      else if (k === 'PageDown') moveCursor(cursor + Math.floor(scroller.clientHeight / vlist.rowHeight));
      else if (k === 'PageUp') moveCursor(cursor - Math.floor(scroller.clientHeight / vlist.rowHeight));
      else if (k === 'Enter') {
        const item = items ? items[cursor] : null;
        if (item && item.kind === 'session' && item.s.id) location.hash = routeHref('session', item.s.id);
        else {
          const t = traceAt(cursor);
          if (t) location.hash = routeHref('trace', t.id);
        }
      } else if (k === 'x' || k === ' ') {
        const t = traceAt(cursor);
        if (t) store.togglePick(t.id);
      } else if (k === 'c') compare.click();
      else if (k === 'b') { bySession.checked = !bySession.checked; bySession.dispatchEvent(new Event('change')); }
      else if (k === 'f') filterInput.focus();
      else return false;
      return true;
    },
    onEscape() {
      if (store.search.text) {
        searchInput.value = '';
        store.runSearch('');
        return true;
      }
      if (ui.filter) {
        filterInput.value = '';
        ui.filter = '';
        rebuild();
        return true;
      }
      return false;
    },
    focusSearch() {
      searchInput.focus();
      searchInput.select();
    },
    unmount() {
      list.scrollTop = scroller.scrollTop;
      list.cursor = cursor;
      for (const [k, fn] of Object.entries(listeners)) store.changed.removeEventListener(k, fn);
      window.removeEventListener('resize', onResize);
      vlist.destroy();
      clear(root);
    },
  };
}
