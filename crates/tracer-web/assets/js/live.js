// The live connection (/api/events, Server-Sent Events): its state in #live, its events on a bus.

/** Views listen here: 'trace', 'hop', 'stream', 'reset', 'agent' (detail = the parsed data). */
export const bus = new EventTarget();

let source = null;
let liveEl = null;
let retryTimer = null;
let failures = 0;

const WORDS = { live: 'live', connecting: 'connecting…', offline: 'offline' };

function setState(state) {
  if (!liveEl) return;
  liveEl.dataset.state = state;
  liveEl.textContent = WORDS[state];
  liveEl.title = state === 'live'
    ? 'connected: new traces and streamed answers appear as they happen'
    : state === 'connecting' ? 'connecting to the live event stream' : 'not connected; retrying every few seconds';
}

function emit(type, raw) {
  let data;
  try {
    data = JSON.parse(raw);
  } catch {
    return;
  }
  bus.dispatchEvent(new CustomEvent(type, { detail: data }));
}

function connect() {
  clearTimeout(retryTimer);
  setState('connecting');
  source = new EventSource('/api/events');
  source.addEventListener('open', () => {
    failures = 0;
    setState('live');
  });
  source.addEventListener('error', () => {
    failures += 1;
    if (source.readyState === EventSource.CLOSED) {
      // The browser gave up (an HTTP error or a wrong type): try again ourselves.
      setState('offline');
      source = null;
      retryTimer = setTimeout(connect, 5000);
    } else {
      // The browser retries by itself (resuming with Last-Event-ID); a second failure in a row
      // without a connection in between means the server is away.
      setState(failures >= 2 ? 'offline' : 'connecting');
    }
  });
  for (const type of ['trace', 'hop', 'stream', 'reset', 'agent']) {
    source.addEventListener(type, (e) => emit(type, e.data));
  }
}

/** Connects once, showing the state in el (#live). */
export function startLive(el) {
  liveEl = el;
  connect();
  window.addEventListener('offline', () => setState('offline'));
  window.addEventListener('online', () => { if (!source) connect(); });
}
