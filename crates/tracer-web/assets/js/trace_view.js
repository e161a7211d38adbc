// The `#/trace/ID[/N]` view: header, tabs (messages, diagram, timing), the message pane, live refresh.

import { h, on, clear, replace, routeHref, button } from './dom.js';
import * as api from './api.js';
import * as fmt from './format.js';
import { bus } from './live.js';
import { search } from './store.js';
import { VList, cssRowHeight } from './vlist.js';
import { buildModel, displayRows, isSideCall, sidePurpose, tone, hopOf, subagentOf, agentDetail } from './trace_model.js';
import { lanesHeader, laneStrip } from './lanes.js';
import { MessagePane } from './message_view.js';
import { waterfallHeader, waterfallRow } from './waterfall.js';
import { diagramHeader, diagramRow, diagramGeometry } from './diagram.js';
import { titleOf, forkWords } from './rows.js';

const FORMATS = ['html', 'md', 'json', 'har'];
const TABS = [['messages', 'Messages', '1'], ['diagram', 'Diagram', '2'], ['timing', 'Timing', '3']];
const prefs = { tab: 'messages' };

function header(model, id) {
  const t = model.trace;
  const session = t.session && t.session.id;
  return h('header', { class: 'trace-head' },
    h('div', { class: 'crumbs' },
      h('a', { href: '#/' }, '← traces'),
      session ? h('a', { href: routeHref('session', session) }, `session ${session.slice(0, 8)}`) : null,
      h('span', { class: 'muted mono' }, id)),
    h('h1', { 'data-testid': 'trace-title' }, titleOf(t)),
    t.fork ? h('p', { class: 'fork-line', 'data-testid': 'fork-line' },
      'fork of ', h('a', { href: routeHref('trace', t.fork.of) }, t.fork.of.slice(0, 8)),
      ` at message ${t.fork.at}: ${forkWords(t.fork.edits)} · ${t.fork.replayed} from the recording`,
      t.fork.live_at ? `, live from message ${t.fork.live_at} (${t.fork.live_reason})` : '') : null,
    h('div', { class: 'trace-facts' },
      h('span', { class: `chip ${fmt.statusClass(t.status)}` }, t.side_calls_failed ? `${t.status} · ${t.side_calls_failed} side calls failed` : t.status),
      h('span', null, `${fmt.dateTime(t.started_unix_ns)} UTC`),
      h('span', null, fmt.duration(t.duration_ns)),
      h('span', null, `${t.hop_count} hops · ${model.messages.length} messages`),
      t.tokens ? h('span', { title: 'tokens reported by the model calls' }, `tokens: ${fmt.tokensText(t.tokens)}`) : null,
      t.cost ? h('span', { title: t.cost.prices || '' }, `cost: ${fmt.costText(t.cost)}`) : null,
      (t.tools_used || []).length ? h('span', null, `tools: ${t.tools_used.join(', ')}`) : null,
      (t.host_tools_used || []).length ? h('span', null, `host tools: ${t.host_tools_used.join(', ')}`) : null),
    h('div', { class: 'exports' }, 'export:',
      FORMATS.map((f) => h('a', { href: api.exportHref(id, f), download: '', class: 'export' }, f))));
}

function sideWords(n) {
  return `${n} side call message${n === 1 ? '' : 's'}`;
}

export function mount(root, route) {
  const id = route.id;
  let model = null;
  let rows = [];
  let indexOf = new Map();
  let showSide = false;
  let cursor = 0;
  let selected = null;
  let tab = prefs.tab;
  let refetchTimer = null;
  let loading = null;
  let again = false;
  const panels = {};

  const main = h('div', { class: 'trace-main' }, h('p', { class: 'muted pad' }, 'loading the trace…'));
  const detail = h('div', { class: 'trace-detail', tabindex: '-1' });
  const view = h('section', { class: 'trace-view' }, main, detail);
  replace(root, view);
  const pane = new MessagePane(detail, id, () => { location.hash = routeHref('trace', id); });

  const hitsOf = () => search.byTrace.get(id) || null;

  function rebuildRows() {
    rows = displayRows(model, showSide);
    indexOf = new Map();
    rows.forEach((r, i) => {
      if (r.kind === 'msg') indexOf.set(r.m.number, i);
      else if (r.members) for (const m of r.members) indexOf.set(m.number, i);
    });
    cursor = Math.min(cursor, Math.max(0, rows.length - 1));
  }

  function messageRow(i) {
    const row = rows[i];
    const height = panels.messages.vlist.rowHeight;
    if (row.kind === 'fold') {
      const purposes = [...new Set(row.members.map(sidePurpose).filter(Boolean))].join(', ');
      const first = row.members[0].number;
      const last = row.members[row.members.length - 1].number;
      return on(h('div', { class: `mrow fold${i === cursor ? ' cursor' : ''}`, 'data-testid': 'side-fold', role: 'option', 'aria-selected': 'false' },
        h('span', { class: 'm-num' }, '⋯'), h('span', { class: 'm-dir' }, ''),
        laneStrip(model, null, height),
        h('div', { class: 'm-text' },
          h('div', { class: 'm-line1' }, `${sideWords(row.members.length)} folded (${first}–${last})${purposes ? `: ${purposes}` : ''}`),
          h('div', { class: 'm-line2' }, 'the host asking the model for itself, beside the conversation · click or s to show'))),
      'click', () => toggleSide());
    }
    if (row.kind === 'agent') {
      return h('div', { class: `mrow agent${i === cursor ? ' cursor' : ''}`, 'data-testid': 'agent-row', role: 'option', 'aria-selected': 'false', title: JSON.stringify(row.e.attributes, null, 1) },
        h('span', { class: 'm-num' }, '⋯'), h('span', { class: 'm-dir' }, ''),
        laneStrip(model, null, height),
        h('div', { class: 'm-text' },
          h('div', { class: 'm-line1' }, h('span', { class: 'badge agent-badge' }, 'agent'), h('span', { class: 'm-summary' }, row.e.sentence)),
          h('div', { class: 'm-line2' }, agentDetail(row.e))));
    }
    const m = row.m;
    const hits = hitsOf();
    const hit = hits && hits.has(m.number);
    const thread = subagentOf(m);
    const el = h('div', {
      class: `mrow${m.number === selected ? ' selected' : ''}${i === cursor ? ' cursor' : ''}${isSideCall(m) ? ' side' : ''}${hit ? ' hit' : ''}${thread ? ' subagent' : ''} tone-${tone(m, hopOf(model, m))}`,
      role: 'option', 'data-testid': 'message-row', 'aria-selected': m.number === selected ? 'true' : 'false',
      dataset: { number: m.number },
    },
    h('span', { class: 'm-num', title: hit ? 'matches the search' : null }, String(m.number)),
    h('span', { class: `m-dir ${m.direction === '→' ? 'req' : 'resp'}`, title: m.direction === '→' ? 'request' : 'response' }, m.direction),
    laneStrip(model, m, height),
    h('div', { class: 'm-text' },
      h('div', { class: 'm-line1' },
        thread ? h('span', { class: 'badge thread', title: `a subagent's thread: ${thread.why}` }, thread.name) : null,
        h('span', { class: 'm-route' }, `${m.from} → ${m.to}`),
        h('span', { class: 'm-summary' }, thread ? thread.rest : m.summary)),
      h('div', { class: 'm-line2', title: m.explanation }, m.explanation)));
    return on(el, 'click', () => select(m.number, 'click'));
  }

  function otherRow(kind, i) {
    const row = rows[i];
    const opts = { selected: row.kind === 'msg' && row.m.number === selected, cursor: i === cursor, hits: row.kind === 'msg' && hitsOf() && hitsOf().has(row.m.number) };
    const el = kind === 'timing' ? waterfallRow(model, row, opts) : diagramRow(model, panels.diagram.geo, row, panels.diagram.vlist.rowHeight, opts);
    return on(el, 'click', () => {
      if (row.kind === 'fold') toggleSide();
      else if (row.kind === 'msg') select(row.m.number, 'click');
    });
  }

  function makePanel(kind) {
    const scroller = h('div', { class: 'scroller', role: 'listbox', tabindex: '0', 'aria-label': `${kind} of the trace` });
    let head = null;
    let box;
    let geo = null;
    if (kind === 'messages') {
      head = h('div', { class: 'mlist-head' }, h('span', { class: 'm-num' }, '#'), h('span', { class: 'm-dir' }, ''), lanesHeader(model), h('span', { class: 'm-text muted' }, 'from → to · summary · explanation'));
      box = h('div', { class: 'panel' }, head, scroller);
    } else if (kind === 'timing') {
      head = waterfallHeader(model);
      box = h('div', { class: 'panel' }, head, scroller);
    } else {
      geo = diagramGeometry(model, main.clientWidth - 16);
      head = h('div', { class: 'diagram-sticky' }, diagramHeader(model, geo));
      scroller.appendChild(head);
      box = h('div', { class: 'panel' }, scroller);
    }
    const rowVar = { messages: ['--mrow-h', 48], timing: ['--wrow-h', 26], diagram: ['--drow-h', 34] }[kind];
    const panel = { box, head, scroller, kind, geo };
    panel.vlist = new VList(scroller, {
      rowHeight: cssRowHeight(view, rowVar[0], rowVar[1]),
      count: rows.length,
      render: (i) => (kind === 'messages' ? messageRow(i) : otherRow(kind, i)),
      headerHeight: kind === 'diagram' ? 30 : 0,
    });
    panel.rowVar = rowVar;
    return panel;
  }

  function sideToggleLabel() {
    if (!model.sideCount) return null;
    return button(showSide ? `fold ${sideWords(model.sideCount)} (s)` : `${sideWords(model.sideCount)} folded · show (s)`,
      () => toggleSide(), { class: 'small side-toggle' });
  }

  function drawMain() {
    const tabBar = h('div', { class: 'tabs', role: 'tablist' },
      TABS.map(([key, label, k]) => on(h('button', {
        type: 'button', role: 'tab', class: key === tab ? 'active' : '', 'aria-selected': key === tab ? 'true' : 'false', title: `${label} (${k})`,
      }, label), 'click', () => setTab(key))),
      h('span', { class: 'spacer' }), sideToggleLabel());
    for (const p of Object.values(panels)) if (p) p.vlist.destroy();
    for (const k of Object.keys(panels)) delete panels[k];
    const body = h('div', { class: 'tab-body' });
    replace(main, header(model, id), tabBar, body);
    for (const [key] of TABS) {
      const p = makePanel(key);
      p.box.hidden = key !== tab;
      body.appendChild(p.box);
      panels[key] = p;
      p.vlist.draw();
    }
  }

  function active() {
    return panels[tab];
  }

  function redrawRows() {
    for (const p of Object.values(panels)) if (p) p.vlist.setCount(rows.length);
  }

  function setTab(key) {
    tab = key;
    prefs.tab = key;
    drawMain();
    active().vlist.scrollToIndex(cursor, 'center');
  }

  function toggleSide() {
    showSide = !showSide;
    const keep = selected;
    rebuildRows();
    if (keep !== null && indexOf.has(keep)) cursor = indexOf.get(keep);
    drawMain();
    active().vlist.scrollToIndex(cursor, 'center');
  }

  /** Selects message number: via 'route' (the URL says so), 'click' or 'key'. */
  function select(number, via) {
    if (!model) return;
    const m = model.byNumber.get(number);
    if (m && isSideCall(m) && !showSide) {
      showSide = true;
      rebuildRows();
      drawMain();
    }
    const previous = selected;
    const wasAt = cursor;
    selected = number;
    if (indexOf.has(number)) cursor = indexOf.get(number);
    // The pane first: it asks for the body before the list is drawn again.
    if (previous !== number || via === 'route') pane.show(model, number, { immediate: via !== 'key' });
    const p = active();
    // Only the rows whose marks changed are drawn again (a long trace's list is not redrawn).
    for (const index of new Set([wasAt, cursor, indexOf.get(previous)])) {
      if (index !== undefined && index !== null) p.vlist.refreshIndex(index);
    }
    p.vlist.scrollToIndex(cursor, via === 'route' ? 'center' : 'auto');
    const target = routeHref('trace', id, number);
    if (via === 'key') history.replaceState(null, '', target);
    else if (via === 'click' && location.hash !== target) location.hash = target;
  }

  function deselect() {
    selected = null;
    pane.empty();
    if (model) active().vlist.refresh();
  }

  function moveCursor(to) {
    if (!rows.length) return;
    const was = cursor;
    cursor = Math.max(0, Math.min(rows.length - 1, to));
    const row = rows[cursor];
    if (row.kind === 'msg') {
      select(row.m.number, 'key');
      active().vlist.refreshIndex(was);
    } else {
      active().vlist.refresh();
      active().vlist.scrollToIndex(cursor);
    }
  }

  async function load(first) {
    if (loading) {
      again = true;
      return;
    }
    again = false;
    loading = new AbortController();
    let log;
    try {
      log = await api.trace(id, loading.signal);
    } catch (e) {
      loading = null;
      if (api.isAbort(e)) return;
      if (first || e.status === 404) {
        replace(main, h('div', { class: 'pad' },
          h('p', { class: 'error' }, e.status === 404 ? `No trace ${id}: ${e.message}` : `Cannot load the trace: ${e.message}`),
          h('p', null, h('a', { href: '#/' }, '← back to the traces'))));
        pane.empty();
      }
      return;
    }
    loading = null;
    const old = model;
    const follow = old && active() && active().vlist.atEnd();
    const before = old && selected !== null ? JSON.stringify(old.byNumber.get(selected) || null) : null;
    model = buildModel(log);
    rebuildRows();
    if (selected !== null && indexOf.has(selected)) cursor = indexOf.get(selected);
    if (!old || old.lanes.join('\n') !== model.lanes.join('\n') || old.sideCount !== model.sideCount) drawMain();
    else {
      replace(main.querySelector('.trace-head'), ...header(model, id).childNodes);
      redrawRows();
    }
    if (first && route.number !== null) select(route.number, 'route');
    else if (selected !== null && JSON.stringify(model.byNumber.get(selected) || null) !== before) pane.show(model, selected, { immediate: true });
    if (follow && !first) active().vlist.scrollToEnd();
    if (again) refetchSoon();
  }

  function refetchSoon() {
    clearTimeout(refetchTimer);
    refetchTimer = setTimeout(() => load(false), 250);
  }

  const onTrace = (e) => { if (e.detail && e.detail.id === id) refetchSoon(); };
  const onHop = (e) => {
    const d = e.detail || {};
    if (d.trace_id === id || (model && model.hopsById.has(d.hop_id))) refetchSoon();
  };
  const onReset = () => refetchSoon();
  // The agent's own events arrive apart from the hops (Claude Code sends them as it exits).
  const onAgent = () => refetchSoon();
  bus.addEventListener('agent', onAgent);
  bus.addEventListener('trace', onTrace);
  bus.addEventListener('hop', onHop);
  bus.addEventListener('reset', onReset);
  let resizeTimer = null;
  const onResize = () => {
    for (const p of Object.values(panels)) if (p) p.vlist.setRowHeight(cssRowHeight(view, p.rowVar[0], p.rowVar[1]));
    clearTimeout(resizeTimer);
    if (model && tab === 'diagram') resizeTimer = setTimeout(() => drawMain(), 200);
  };
  window.addEventListener('resize', onResize);

  load(true);

  return {
    accepts(next) {
      return next.name === 'trace' && next.id === id;
    },
    update(next) {
      if (!model) {
        route = next;
        return;
      }
      if (next.number === null) deselect();
      else if (next.number !== selected) select(next.number, 'route');
    },
    acceptStream(data) {
      return pane.appendStream(data.hop_id, data.text, data.words);
    },
    onKey(e) {
      if (!model) return false;
      const k = e.key;
      const page = Math.max(1, Math.floor(active().scroller.clientHeight / active().vlist.rowHeight) - 1);
      // Nothing picked yet: the first j or k picks the row the cursor is on.
      const step = selected === null && !document.body.classList.contains('kbd') ? 0 : 1;
      if (k === 'j' || k === 'ArrowDown') moveCursor(cursor + step);
      else if (k === 'k' || k === 'ArrowUp') moveCursor(cursor - step);
      else if (k === 'g' || k === 'Home') moveCursor(0);
      else if (k === 'G' || k === 'End') moveCursor(rows.length - 1);
      else if (k === 'PageDown') moveCursor(cursor + page);
      else if (k === 'PageUp') moveCursor(cursor - page);
      else if (k === 'Enter') {
        const row = rows[cursor];
        if (!row) return true;
        if (row.kind === 'fold') toggleSide();
        else if (row.kind === 'msg') select(row.m.number, 'click');
      } else if (k === 's') toggleSide();
      else if (k === '1' || k === '2' || k === '3') setTab(TABS[Number(k) - 1][0]);
      else if (k === 't') setTab(tab === 'timing' ? 'messages' : 'timing');
      else return false;
      return true;
    },
    onEscape() {
      if (selected !== null) location.hash = routeHref('trace', id);
      else location.hash = '#/';
      return true;
    },
    unmount() {
      clearTimeout(refetchTimer);
      if (loading) loading.abort();
      pane.destroy();
      bus.removeEventListener('trace', onTrace);
      bus.removeEventListener('hop', onHop);
      bus.removeEventListener('reset', onReset);
      bus.removeEventListener('agent', onAgent);
      window.removeEventListener('resize', onResize);
      for (const p of Object.values(panels)) if (p) p.vlist.destroy();
      clear(root);
    },
  };
}
