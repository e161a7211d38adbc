// The `#/session/ID` view: one session (a run of a host) and its traces.

import { h, replace, clear, routeHref } from './dom.js';
import * as fmt from './format.js';
import * as api from './api.js';
import { VList, cssRowHeight } from './vlist.js';
import { traceRow, traceHeader } from './rows.js';
import { changed } from './store.js';

const LIMIT = 1000;

export function mount(root, route) {
  const id = route.id;
  const body = h('div', { class: 'session-body' }, h('p', { class: 'muted' }, 'loading the session…'));
  const view = h('section', { class: 'session-view page' },
    h('div', { class: 'crumbs' }, h('a', { href: '#/' }, '← traces')),
    body);
  replace(root, view);
  let vlist = null;
  let traces = [];
  let cursor = 0;
  const abort = new AbortController();

  api.sessions(LIMIT, abort.signal).then((all) => {
    const session = (all || []).find((s) => s.id === id);
    if (!session) {
      replace(body, h('p', { class: 'error' }, `Session ${id} is not among the ${LIMIT} newest sessions.`));
      return;
    }
    traces = session.traces || [];
    const scroller = h('div', { class: 'scroller', role: 'listbox', tabindex: '0', 'aria-label': 'traces of the session' });
    replace(body,
      h('h1', null, `Session ${id.slice(0, 8)}`),
      h('div', { class: 'trace-facts' },
        h('span', { class: 'mono' }, id),
        session.host_session_id ? h('span', null, `host session: ${session.host_session_id}`) : null,
        h('span', null, `${fmt.dateTime(session.started_unix_ns)} UTC`),
        h('span', null, `${traces.length} trace${traces.length === 1 ? '' : 's'}`),
        session.tokens ? h('span', null, `tokens: ${fmt.tokensText(session.tokens)}`) : null,
        session.cost ? h('span', null, `cost: ${fmt.costText(session.cost)}`) : null),
      h('div', { class: 'list-col' }, traceHeader(), scroller));
    vlist = new VList(scroller, {
      rowHeight: cssRowHeight(view, '--trow-h', 34),
      count: traces.length,
      render: (i) => traceRow(traces[i], { selected: i === cursor, index: i }),
    });
  }).catch((e) => {
    if (!api.isAbort(e)) replace(body, h('p', { class: 'error' }, `Cannot load the sessions: ${e.message}`));
  });

  const onPicks = () => vlist && vlist.refresh();
  changed.addEventListener('picks', onPicks);

  function move(to) {
    if (!vlist || !traces.length) return;
    cursor = Math.max(0, Math.min(traces.length - 1, to));
    vlist.refresh();
    vlist.scrollToIndex(cursor);
  }

  return {
    onKey(e) {
      const k = e.key;
      if (k === 'j' || k === 'ArrowDown') move(cursor + 1);
      else if (k === 'k' || k === 'ArrowUp') move(cursor - 1);
      else if (k === 'g' || k === 'Home') move(0);
      else if (k === 'G' || k === 'End') move(traces.length - 1);
      else if (k === 'Enter' && traces[cursor]) location.hash = routeHref('trace', traces[cursor].id);
      else return false;
      return true;
    },
    onEscape() {
      location.hash = '#/';
      return true;
    },
    unmount() {
      abort.abort();
      changed.removeEventListener('picks', onPicks);
      if (vlist) vlist.destroy();
      clear(root);
    },
  };
}
