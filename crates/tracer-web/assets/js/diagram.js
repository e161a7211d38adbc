// The sequence-diagram tab: lanes as lifelines, one labelled arrow per message, in SVG (text as text nodes).

import { h, s } from './dom.js';
import { tone, hopOf, isSideCall } from './trace_model.js';

const MIN_LANE = 150;
const PAD = 20;

/** The lane spacing and width for a pane `available` px wide (lanes spread out, at least MIN_LANE). */
export function diagramGeometry(model, available) {
  const n = Math.max(1, model.lanes.length);
  const lane = Math.max(MIN_LANE, Math.floor((available - PAD * 2) / n));
  return { lane, width: PAD * 2 + n * lane };
}

function laneX(geo, i) {
  return PAD + i * geo.lane + geo.lane / 2;
}

/** The lane names over their lifelines (sticky above the rows). */
export function diagramHeader(model, geo) {
  const { width, lane } = geo;
  const svg = s('svg', { class: 'diagram-head', width, height: 30, viewBox: `0 0 ${width} 30` });
  model.lanes.forEach((name, i) => {
    const x = laneX(geo, i);
    const box = Math.min(lane - 16, 180);
    svg.appendChild(s('rect', { class: `lane-box lane-f${i % 8}`, x: x - box / 2, y: 3, width: box, height: 24, rx: 5 }));
    const chars = Math.floor(box / 7.5);
    const label = name.length > chars ? `${name.slice(0, chars - 1)}…` : name;
    svg.appendChild(s('text', { class: 'lane-label', x, y: 19, 'text-anchor': 'middle' }, label, s('title', null, name)));
  });
  return svg;
}

function lifelines(svg, model, geo, height) {
  model.lanes.forEach((_, i) => {
    const x = laneX(geo, i);
    svg.appendChild(s('line', { class: 'lifeline', x1: x, x2: x, y1: 0, y2: height }));
  });
}

/** One diagram row: the arrow of a message with its number and summary, or a fold of side calls. */
export function diagramRow(model, geo, row, height, { selected, cursor, hits }) {
  const { width } = geo;
  const svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, 'aria-hidden': 'true' });
  if (selected || cursor) svg.appendChild(s('rect', { class: selected ? 'sel-band' : 'cursor-band', x: 0, y: 0, width, height }));
  lifelines(svg, model, geo, height);
  if (row.kind === 'agent') {
    svg.appendChild(s('text', { class: 'agent-label', x: PAD + 4, y: height / 2 + 4 },
      `⋯ ${row.e.sentence.length > 140 ? `${row.e.sentence.slice(0, 139)}…` : row.e.sentence}`));
    return h('div', { class: `drow agent${cursor ? ' cursor' : ''}`, 'data-testid': 'agent-row' }, svg);
  }
  if (row.kind === 'fold') {
    svg.appendChild(s('rect', { class: 'fold-band', x: PAD, y: 4, width: width - PAD * 2, height: height - 8, rx: 4 }));
    svg.appendChild(s('text', { class: 'fold-label', x: width / 2, y: height / 2 + 4, 'text-anchor': 'middle' },
      `⋯ ${row.members.length} side call message${row.members.length === 1 ? '' : 's'} folded (s shows them)`));
    return h('div', { class: `drow fold${cursor ? ' cursor' : ''}` }, svg);
  }
  const m = row.m;
  const from = model.laneIndex.get(m.from) ?? 0;
  const to = model.laneIndex.get(m.to) ?? 0;
  const xf = laneX(geo, from);
  const xt = laneX(geo, to);
  const y = height - 9;
  const cls = `${m.direction === '→' ? 'req' : 'resp'} tone-${tone(m, hopOf(model, m))}`;
  if (from === to) {
    svg.appendChild(s('path', { class: `arrow-line ${cls}`, d: `M${xf},${y - 10} h24 v10 h-20`, fill: 'none' }));
  } else {
    const dir = xt > xf ? 1 : -1;
    svg.appendChild(s('line', { class: `arrow-line ${cls}`, x1: xf, x2: xt - dir * 7, y1: y, y2: y }));
    svg.appendChild(s('polygon', { class: `arrow-head ${cls}`, points: `${xt},${y} ${xt - dir * 8},${y - 4.5} ${xt - dir * 8},${y + 4.5}` }));
  }
  const left = Math.min(xf, xt) + 6;
  const room = width - left - 8;
  const maxChars = Math.max(12, Math.floor(room / 6.6));
  const words = `${m.number}  ${m.summary}`;
  const label = words.length > maxChars ? `${words.slice(0, maxChars - 1)}…` : words;
  svg.appendChild(s('text', { class: `arrow-label${isSideCall(m) ? ' side' : ''}${hits ? ' hit' : ''}`, x: left, y: y - 5 }, label,
    s('title', null, `${m.number} ${m.from} ${m.direction} ${m.to}: ${m.summary}`)));
  return h('div', {
    class: `drow${selected ? ' selected' : ''}${cursor ? ' cursor' : ''}`,
    dataset: { number: m.number }, role: 'option', 'aria-selected': selected ? 'true' : 'false',
  }, svg);
}
