// The server's JSON API: one function per endpoint, ids always passed through encodeURIComponent.

const enc = encodeURIComponent;

/** An API error with the server's {"error": "..."} words and the HTTP status. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function getJson(path, signal) {
  let response;
  try {
    response = await fetch(path, { signal, headers: { Accept: 'application/json' } });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, `the server cannot be reached (${e.message})`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    if (response.ok) throw new ApiError(response.status, 'the server answered with something that is not JSON');
  }
  if (!response.ok) {
    const words = body && typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
    throw new ApiError(response.status, words);
  }
  return body;
}

export function traces(offset, limit, signal) {
  return getJson(`/api/traces?offset=${enc(offset)}&limit=${enc(limit)}`, signal);
}

export function sessions(limit, signal) {
  return getJson(`/api/sessions?limit=${enc(limit)}`, signal);
}

export function search(text, signal) {
  return getJson(`/api/search?q=${enc(text)}`, signal);
}

export function trace(id, signal) {
  return getJson(`/api/trace/${enc(id)}`, signal);
}

export function message(id, number, signal) {
  return getJson(`/api/trace/${enc(id)}/message/${enc(number)}`, signal);
}

/** What changed since the previous model request (null for any other message). */
export function changes(id, number, signal) {
  return getJson(`/api/trace/${enc(id)}/message/${enc(number)}/changes`, signal);
}

export function diff(a, b, signal) {
  return getJson(`/api/diff?a=${enc(a)}&b=${enc(b)}`, signal);
}

/** The download link of a trace's export (`html`, `md`, `json`, `har`). */
export function exportHref(id, format) {
  return `/api/trace/${enc(id)}/export?format=${enc(format)}`;
}

/** True for an aborted fetch (a view changed before its answer came). */
export function isAbort(e) {
  return e && e.name === 'AbortError';
}
