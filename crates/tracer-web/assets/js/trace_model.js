// A fetched trace made ready to draw: shown messages, lanes, side-call folding, tones, lookups.

/** A side call: the host asking the model for itself (a title, routing), not a conversation turn. */
export function isSideCall(m) {
  return m.case === 'model_side_answer' || /^side call\b/i.test(m.summary || '');
}

/** The side call's purpose from its summary, `side call (title generation): …` → `title generation`. */
export function sidePurpose(m) {
  const found = /^side call \(([^)]*)\)/i.exec(m.summary || '');
  return found ? found[1] : '';
}

const OPEN_STATES = new Set(['in_flight', 'open', 'streaming']);

/** How a message went: 'failed', 'open' (still in flight) or 'ok'. */
export function tone(m, hop) {
  if (hop && OPEN_STATES.has(hop.state)) return 'open';
  if ((m.status !== null && m.status !== undefined && m.status >= 400) || /error|failed|refused/.test(m.case || '')) return 'failed';
  if (hop && hop.state && hop.state !== 'complete' && m.direction === '←') return 'failed';
  return 'ok';
}

/** The model of one hop log (as /api/trace/ID gives it). */
export function buildModel(log) {
  const trace = log.trace || {};
  const ui = log.ui || {};
  const messages = (log.messages || []).filter((m) => !m.unsent);
  const lanes = Array.isArray(ui.lanes) ? ui.lanes.map(String) : [];
  for (const m of messages) {
    for (const name of [m.from, m.to]) if (!lanes.includes(name)) lanes.push(name);
  }
  const laneIndex = new Map(lanes.map((name, i) => [name, i]));
  const hopsById = new Map((log.hops || []).map((hop) => [hop.id, hop]));
  const byNumber = new Map();
  for (const m of messages) if (!byNumber.has(m.number)) byNumber.set(m.number, m);
  const requestOf = new Map();
  for (const m of messages) if (m.direction === '→' && !requestOf.has(m.hop_id)) requestOf.set(m.hop_id, m);
  let end = trace.ended_unix_ns || 0;
  for (const m of messages) {
    const t = m.timings || {};
    end = Math.max(end, t.ended_unix_ns || 0, t.head_unix_ns || 0, m.at_unix_ns || 0);
  }
  const start = trace.started_unix_ns || (messages[0] && messages[0].at_unix_ns) || 0;
  // The agent's own account (its log events; spans and metric points stay in the log), by the
  // message each follows (null: before the first).
  const agentAfter = new Map();
  for (const e of log.agent_events || []) {
    if (e.signal !== 'log') continue;
    const key = e.after_message ?? null;
    if (!agentAfter.has(key)) agentAfter.set(key, []);
    agentAfter.get(key).push(e);
  }
  return {
    log, trace, ui, messages, lanes, laneIndex, hopsById, byNumber, requestOf, agentAfter,
    start, end: Math.max(end, start + 1),
    cache: ui.cache || {},
    sideCount: messages.filter(isSideCall).length,
  };
}

/** The rows to draw: each message, or a run of side calls folded into one row. */
export function displayRows(model, showSide) {
  const rows = [];
  let run = [];
  let held = [];
  const agentRows = (key) => (model.agentAfter.get(key) || []).map((e) => ({ kind: 'agent', e }));
  const flush = () => {
    if (run.length) rows.push({ kind: 'fold', members: run });
    run = [];
    rows.push(...held);
    held = [];
  };
  rows.push(...agentRows(null));
  for (const m of model.messages) {
    if (!showSide && isSideCall(m)) {
      run.push(m);
      held.push(...agentRows(m.number));
    } else {
      flush();
      rows.push({ kind: 'msg', m }, ...agentRows(m.number));
    }
  }
  flush();
  return rows;
}

/** An agent event's second line: its name, what placed it, its cost beside tracer's. */
export function agentDetail(e) {
  return `${e.agent} · ${e.name} · placed by ${e.rule}${e.cost_check ? ` · ${e.cost_check}` : ''}`;
}

/** The hop of a message (from the log's hops), if listed. */
export function hopOf(model, m) {
  return model.hopsById.get(m.hop_id) || null;
}

/** When a message's hop started (its request's start), for bars and offsets. */
export function hopStart(model, m) {
  const request = model.requestOf.get(m.hop_id);
  const t = (request && request.timings) || {};
  if (t.started_unix_ns) return t.started_unix_ns;
  const mt = m.timings || {};
  if (mt.ended_unix_ns && mt.duration_ns) return mt.ended_unix_ns - mt.duration_ns;
  return mt.started_unix_ns || m.at_unix_ns;
}

/** A subagent's message, as `show` words it (`subagent 1 (Add the note, asked in message 2): …`):
 *  its thread's name, why it ran, and the summary after; null for the main thread's. */
export function subagentOf(m) {
  const found = /^(subagent \d+) \(([^)]*)\): (.*)$/s.exec(m.summary || '');
  return found ? { name: found[1], why: found[2], rest: found[3] } : null;
}
