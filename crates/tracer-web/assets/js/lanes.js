// The lanes of a trace drawn small: a header of lane names and one SVG strip per message row.

import { h, s } from './dom.js';
import { tone, hopOf } from './trace_model.js';

export const LANE_W = 22;

/** The lane names written upright above their columns. */
export function lanesHeader(model) {
  const head = h('div', { class: 'lanes-head', 'aria-label': 'lanes, left to right' });
  head.style.width = `${model.lanes.length * LANE_W}px`;
  model.lanes.forEach((name, i) => {
    const label = h('span', { class: `lane-name lane-c${i % 8}`, title: name }, name);
    label.style.width = `${LANE_W}px`;
    head.appendChild(label);
  });
  return head;
}

/** One row's lane strip: every lane's line, a dot on from and an arrowhead on to. */
export function laneStrip(model, m, height) {
  const n = model.lanes.length;
  const width = n * LANE_W;
  const svg = s('svg', { class: 'lane-strip', width, height, viewBox: `0 0 ${width} ${height}`, 'aria-hidden': 'true' });
  for (let i = 0; i < n; i++) {
    const x = i * LANE_W + LANE_W / 2;
    svg.appendChild(s('line', { class: 'lifeline', x1: x, x2: x, y1: 0, y2: height }));
  }
  if (!m) return svg;
  const from = model.laneIndex.get(m.from) ?? 0;
  const to = model.laneIndex.get(m.to) ?? 0;
  const xf = from * LANE_W + LANE_W / 2;
  const xt = to * LANE_W + LANE_W / 2;
  const y = height / 2;
  const cls = `${m.direction === '→' ? 'req' : 'resp'} tone-${tone(m, hopOf(model, m))}`;
  if (from === to) {
    svg.appendChild(s('circle', { class: `arrow-dot ${cls}`, cx: xt, cy: y, r: 4.5 }));
    return svg;
  }
  const dir = xt > xf ? 1 : -1;
  svg.appendChild(s('line', { class: `arrow-line ${cls}`, x1: xf, x2: xt - dir * 4, y1: y, y2: y }));
  svg.appendChild(s('circle', { class: `arrow-dot lane-c${from % 8}`, cx: xf, cy: y, r: 3 }));
  svg.appendChild(s('polygon', { class: `arrow-head ${cls}`, points: `${xt},${y} ${xt - dir * 6},${y - 4} ${xt - dir * 6},${y + 4}` }));
  return svg;
}
