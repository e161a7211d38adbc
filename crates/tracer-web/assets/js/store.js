// The page's shared state: the trace list (loaded page by page), sessions, search hits, compare picks.

import * as api from './api.js';
import { bus } from './live.js';

const PAGE = 100;

/** Tells views that something here changed: 'list', 'sessions', 'search', 'picks'. */
export const changed = new EventTarget();
const tell = (what) => changed.dispatchEvent(new Event(what));

/** The trace list, newest first: rows is sparse (holes are traces not fetched yet). */
export const list = {
  rows: [],
  total: 0,
  byId: new Map(),
  started: false,
  error: null,
  inFlight: false,
  inserted: 0,
  want: [0, 50],
  scrollTop: 0,
  cursor: 0,
};

function firstHole(first, last) {
  for (let i = first; i <= Math.min(last, list.total - 1); i++) if (list.rows[i] === undefined) return i;
  return -1;
}

function put(entry, index) {
  const known = list.byId.get(entry.id);
  if (known) {
    Object.assign(known, entry);
    return;
  }
  list.byId.set(entry.id, entry);
  list.rows[index] = entry;
}

async function fetchFrom(offset) {
  list.inFlight = true;
  const insertedBefore = list.inserted;
  try {
    const page = await api.traces(offset, PAGE);
    const shift = list.inserted - insertedBefore;
    list.error = null;
    list.total = Math.max(page.total + shift, list.total);
    if (list.rows.length < list.total) list.rows.length = list.total;
    page.traces.forEach((t, i) => put(t, offset + shift + i));
  } catch (e) {
    list.error = e.message;
  } finally {
    list.inFlight = false;
  }
  tell('list');
  if (!list.error) ensureRows(...list.want);
}

/** Fetches the rows first..last if some are missing (one page at a time). */
export function ensureRows(first, last) {
  list.want = [first, last];
  if (list.inFlight) return;
  if (!list.started) {
    list.started = true;
    fetchFrom(0);
    return;
  }
  const hole = firstHole(first, last);
  if (hole >= 0) fetchFrom(hole);
}

/** Loads the next page after the loaded prefix (for filtering beyond what was scrolled). */
export function loadMore() {
  const hole = firstHole(0, list.total - 1);
  if (hole >= 0 && !list.inFlight) fetchFrom(hole);
}

export function loadedCount() {
  return list.byId.size;
}

/** A new or changed trace from the live stream: updated in place, or inserted by start time. */
export function upsert(entry) {
  if (!entry || typeof entry.id !== 'string') return;
  const known = list.byId.get(entry.id);
  if (known) {
    for (const key of Object.keys(known)) if (!(key in entry)) delete known[key];
    Object.assign(known, entry);
  } else if (list.started) {
    let at = 0;
    while (at < list.rows.length && list.rows[at] !== undefined &&
           (list.rows[at].started_unix_ns || 0) > (entry.started_unix_ns || 0)) at++;
    // Its place is among the fetched rows (not in a part not fetched yet, which will bring it).
    if (at === list.rows.length || list.rows[at] !== undefined) {
      list.rows.splice(at, 0, entry);
      list.byId.set(entry.id, entry);
      list.total += 1;
      list.inserted += 1;
    }
  }
  tell('list');
}

/** Forgets every fetched row and starts again (after a `reset` event). */
export function resetList() {
  list.rows = [];
  list.total = 0;
  list.byId.clear();
  list.started = false;
  list.error = null;
  list.inserted += 1;
  ensureRows(...list.want);
  tell('list');
}

/** Sessions with their traces, newest first. */
export const sessions = { items: null, limit: 100, error: null, loading: false };

export async function loadSessions(limit = sessions.limit) {
  sessions.limit = limit;
  sessions.loading = true;
  try {
    sessions.items = await api.sessions(limit);
    sessions.error = null;
  } catch (e) {
    sessions.error = e.message;
  } finally {
    sessions.loading = false;
  }
  tell('sessions');
}

/** The last search: its text, the answer, and per trace id the matching message numbers. */
export const search = { text: '', result: null, error: null, byTrace: new Map(), loading: false };
let searchAbort = null;

export async function runSearch(text) {
  if (searchAbort) searchAbort.abort();
  search.text = text;
  search.error = null;
  if (!text.trim()) {
    search.result = null;
    search.byTrace = new Map();
    tell('search');
    return;
  }
  searchAbort = new AbortController();
  search.loading = true;
  tell('search');
  try {
    const result = await api.search(text, searchAbort.signal);
    search.result = result;
    search.byTrace = new Map((result.traces || []).map((t) => [t.id, new Set((t.messages || []).map((m) => m.number))]));
  } catch (e) {
    if (api.isAbort(e)) return;
    search.error = e.message;
    search.result = null;
    search.byTrace = new Map();
  }
  search.loading = false;
  tell('search');
}

/** The traces ticked for comparing (at most two, oldest pick dropped first). */
export const picks = [];

export function togglePick(id) {
  const at = picks.indexOf(id);
  if (at >= 0) picks.splice(at, 1);
  else {
    picks.push(id);
    while (picks.length > 2) picks.shift();
  }
  tell('picks');
}

// The live stream feeds the list; a session refresh is batched.
let sessionTimer = null;
bus.addEventListener('trace', (e) => {
  upsert(e.detail);
  if (sessions.items) {
    clearTimeout(sessionTimer);
    sessionTimer = setTimeout(() => loadSessions(), 1000);
  }
});
bus.addEventListener('reset', () => {
  resetList();
  if (sessions.items) loadSessions();
});
