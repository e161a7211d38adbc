// Number, time, token and cost words, worded like the tracer CLI.

/** `39,616` */
export function thousands(n) {
  if (n === null || n === undefined || Number.isNaN(Number(n))) return '';
  const digits = String(Math.trunc(Number(n)));
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `0.4 ms`, `182 ms`, `4.88 s` (tracer's human_duration). */
export function duration(ns) {
  if (ns === null || ns === undefined) return '–';
  const ms = ns / 1e6;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** An offset from a start, `+12.3 ms`. */
export function offset(ns) {
  return ns === null || ns === undefined ? '' : `+${duration(ns)}`;
}

/** `512 B`, `2.6 KB`, `1.3 MB` (tracer's human_bytes). */
export function bytes(n) {
  if (n === null || n === undefined) return '';
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} KB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

function pad(n, width = 2) {
  return String(n).padStart(width, '0');
}

/** `2026-12-07 12:39:38` (UTC), from Unix nanoseconds. */
export function dateTime(unixNs) {
  if (!unixNs) return '';
  const d = new Date(unixNs / 1e6);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** `12:39:38.223` (UTC), tracer's clock_time. */
export function clock(unixNs) {
  if (!unixNs) return '';
  const d = new Date(unixNs / 1e6);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

/** `39,616 in · 133 out`, for a listing; '' when no count is known. */
export function tokensShort(t) {
  if (!t) return '';
  const sides = [];
  if (t.prompt !== undefined && t.prompt !== null) sides.push(`${thousands(t.prompt)} in`);
  if (t.output !== undefined && t.output !== null) sides.push(`${thousands(t.output)} out`);
  return sides.join(' · ');
}

/** `39,616 in (16,901 cache read, 17,758 cache write, 4,957 new) · 133 out (20 reasoning)`. */
export function tokensText(t) {
  if (!t) return '';
  const sides = [];
  if (t.prompt !== undefined && t.prompt !== null) {
    const read = t.cache_read || 0;
    const write = t.cache_write || 0;
    const parts = [];
    if (read > 0) parts.push(`${thousands(read)} cache read`);
    if (write > 0) {
      const five = t.cache_write_5m || 0;
      const hour = t.cache_write_1h || 0;
      if (five > 0 && hour > 0) parts.push(`${thousands(five)} cache write for 5 minutes, ${thousands(hour)} for 1 hour`);
      else if (five > 0 && five === write) parts.push(`${thousands(write)} cache write for 5 minutes`);
      else if (hour > 0 && hour === write) parts.push(`${thousands(write)} cache write for 1 hour`);
      else parts.push(`${thousands(write)} cache write`);
    }
    if (parts.length) parts.push(`${thousands(Math.max(0, t.prompt - read - write))} new`);
    sides.push(`${thousands(t.prompt)} in` + (parts.length ? ` (${parts.join(', ')})` : ''));
  }
  if (t.output !== undefined && t.output !== null) {
    sides.push(`${thousands(t.output)} out` + (t.reasoning > 0 ? ` (${thousands(t.reasoning)} reasoning)` : ''));
  }
  return sides.join(' · ');
}

/** The buckets of a token object as [label, count] rows, `new` computed as the CLI does. */
export function tokenBuckets(t) {
  if (!t) return [];
  const rows = [];
  const add = (label, v) => { if (v !== undefined && v !== null) rows.push([label, v]); };
  add('prompt (in)', t.prompt);
  add('cache read', t.cache_read);
  add('cache write', t.cache_write);
  add('cache write, 5 minutes', t.cache_write_5m);
  add('cache write, 1 hour', t.cache_write_1h);
  if (t.prompt !== undefined && t.prompt !== null && (t.cache_read || t.cache_write)) {
    add('new (uncached)', Math.max(0, t.prompt - (t.cache_read || 0) - (t.cache_write || 0)));
  }
  add('output (out)', t.output);
  add('reasoning', t.reasoning);
  for (const [k, v] of Object.entries(t)) {
    const known = ['prompt', 'cache_read', 'cache_write', 'cache_write_5m', 'cache_write_1h', 'output', 'reasoning'];
    if (!known.includes(k) && typeof v === 'number') rows.push([k.replace(/_/g, ' '), v]);
  }
  return rows;
}

/** `$0.0044` */
export function dollars(usd) {
  return `$${Number(usd).toFixed(4)}`;
}

/** For a listing: `≈ $0.1888`, `≥ $0.0225` (some call unpriced), `unknown`; '' without calls. */
export function costShort(c) {
  if (!c || !c.calls) return '';
  const unpriced = c.unpriced_calls || 0;
  if (unpriced >= c.calls || c.usd === undefined || c.usd === null) return 'unknown';
  return unpriced === 0 ? `≈ ${dollars(c.usd)}` : `≥ ${dollars(c.usd)}`;
}

function plural(n, one) {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** `≈ $0.1888 billed across 2 calls`, `unknown across 1 call (no usage reported)`, … */
export function costText(c) {
  if (!c || !c.calls) return '';
  const calls = plural(c.calls, 'call');
  const why = c.unknown || '';
  const unpriced = c.unpriced_calls || 0;
  if (unpriced >= c.calls || c.usd === undefined || c.usd === null) return `unknown across ${calls}${why ? ` (${why})` : ''}`;
  if (unpriced === 0) return `≈ ${dollars(c.usd)} billed across ${calls}`;
  return `at least ${dollars(c.usd)} billed across ${calls} (${unpriced} unpriced${why ? `: ${why}` : ''})`;
}

/** One call's cost: `≈ $0.0004 (gemini/x at list prices)` or `unknown (why)`. */
export function callCostText(c) {
  if (!c) return '';
  if (c.usd !== undefined && c.usd !== null) {
    return c.priced_as ? `≈ ${dollars(c.usd)} (${c.priced_as} at list prices)` : `≈ ${dollars(c.usd)}`;
  }
  return c.unknown ? `unknown (${c.unknown})` : 'unknown';
}

/** A diff step's cost ({usd} or {unknown: "no_usage" | {reason: value}}). */
export function looseCost(c) {
  if (!c) return '';
  if (typeof c.usd === 'number') return `≈ ${dollars(c.usd)}`;
  const u = c.unknown;
  if (u === undefined || u === null) return '';
  if (typeof u === 'string') return `unknown (${u.replace(/_/g, ' ')})`;
  const words = Object.entries(u).map(([k, v]) => `${k.replace(/_/g, ' ')}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `unknown (${words.join(', ')})`;
}

/** A CSS class for a status word: ok, error (error/failed), or busy. */
export function statusClass(status) {
  const s = String(status || '');
  if (s === 'ok' || s === 'complete') return 'st-ok';
  if (/error|fail|abort|refused|timeout|timed out/i.test(s)) return 'st-err';
  return 'st-busy';
}

/** One line, cut to max characters with an ellipsis. */
export function shorten(text, max) {
  const line = String(text ?? '').replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : line.slice(0, max - 1) + '…';
}
