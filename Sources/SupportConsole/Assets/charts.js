// Charts drawn as SVG by hand: a handful of shapes each, no library to vendor. Every chart
// carries a text summary (aria-label) and its numbers as a table for screen readers and
// for copying into a ticket.

import { h, mainContentWidth, svg } from './dom.js';
import { shortText, utcText } from './time.js';

/** Distinct, colour-blind-friendly fills (Okabe-Ito), readable on white. */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#8C6D00'];

/** Widest drawing; a narrower screen gets a drawing as wide as its figure (see `measure`). */
const MAX_W = 640;
const MIN_COLUMN = 520;
let W = MAX_W;
const H = 220;
const PAD = { left: 44, right: 12, top: 12, bottom: 28 };

/**
 * Draws each chart in the figure's own pixels where the figure is narrower than MAX_W (a
 * phone), so an 11 px label stays 11 px rather than shrinking with the scaled drawing. The
 * figure's width is worked out from <main>, as the chart is built before it is placed.
 */
function measure() {
  const content = mainContentWidth();
  if (content === null) { W = MAX_W; return; }
  const column = content >= 2 * MIN_COLUMN + 16 ? (content - 16) / 2 : content;
  W = Math.round(Math.max(280, Math.min(MAX_W, column - 30)));
}

function frame(caption, summary, body, table) {
  return h('figure', { class: 'chart' },
    h('figcaption', {}, caption),
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': summary }, body),
    h('details', {}, h('summary', {}, 'Numbers'), table));
}

function table(headers, rows) {
  return h('table', {}, h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => (i === 0 ? h('th', { scope: 'row' }, c) : h('td', {}, c)))))));
}

function empty(caption) {
  return h('figure', { class: 'chart empty' }, h('figcaption', {}, caption), h('p', { class: 'muted' }, 'No data in this window.'));
}

function xAxis(times, x) {
  const out = [];
  const fit = Math.max(2, Math.floor((W - PAD.left - PAD.right) / 100));
  const step = Math.max(1, Math.ceil(times.length / Math.min(6, fit)));
  times.forEach((t, i) => {
    if (i % step) return;
    const anchor = x(i) < PAD.left + 40 ? 'start' : x(i) > W - PAD.right - 40 ? 'end' : 'middle';
    out.push(svg('text', { x: x(i), y: H - 8, class: 'axis', 'text-anchor': anchor }, shortText(t)));
  });
  return out;
}

/**
 * The bucket the window covers only in part (the current hour, typically) is drawn hollow
 * and labelled "so far", so a half-counted hour does not read as a drop.
 */
function soFar(x, y) {
  const anchor = x > W - PAD.right - 24 ? 'end' : 'middle';
  return svg('text', { x: anchor === 'end' ? x + 6 : x, y: Math.max(10, y), class: 'axis so-far', 'text-anchor': anchor }, 'so far');
}

function bucketText(b) {
  return `${utcText(b.t)}${b.partial ? ' (so far)' : ''}`;
}

/** A round axis maximum (1, 2, 5 × 10^n, a multiple of 4) so the four grid lines get whole numbers. */
export function niceMax(value) {
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 4, 5, 8, 10]) {
    const candidate = m * magnitude;
    if (candidate >= value && (candidate / 4) % 1 === 0) return candidate;
  }
  return Math.ceil(value / 4) * 4;
}

function yAxis(max, format) {
  const out = [];
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4;
    const y = PAD.top + (H - PAD.top - PAD.bottom) * (1 - k / 4);
    out.push(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y, y2: y, class: 'grid' }));
    out.push(svg('text', { x: PAD.left - 6, y: y + 4, class: 'axis', 'text-anchor': 'end' }, format(v)));
  }
  return out;
}

/** A line over time buckets, e.g. the enrollment success rate. */
export function lineChart({ caption, points, max = null, format = (v) => String(Math.round(v)) }) {
  measure();
  const present = points.filter((p) => p.value !== null && p.value !== undefined);
  if (!present.length) return empty(caption);
  const top = max ?? niceMax(Math.max(...present.map((p) => p.value), 1));
  const n = points.length;
  const x = (i) => PAD.left + ((W - PAD.left - PAD.right) * (n === 1 ? 0.5 : i / (n - 1)));
  const y = (v) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / top);
  const path = points.map((p, i) => (p.value === null || p.value === undefined ? null : `${x(i)},${y(p.value)}`)).filter(Boolean);
  const body = [...yAxis(top, format), ...xAxis(points.map((p) => p.t), x),
    svg('polyline', { points: path.join(' '), class: 'line', fill: 'none', stroke: PALETTE[0] }),
    ...points.map((p, i) => (p.value === null || p.value === undefined ? null
      : svg('circle', { cx: x(i), cy: y(p.value), r: 3.5, fill: p.partial ? '#fff' : PALETTE[0], stroke: PALETTE[0], 'stroke-width': 2, class: p.partial ? 'partial' : null },
        svg('title', {}, `${shortText(p.t)}${p.partial ? ' (so far)' : ''}: ${format(p.value)}${p.note ? ` (${p.note})` : ''}`)))),
    ...points.map((p, i) => (p.partial && p.value !== null && p.value !== undefined ? soFar(x(i), y(p.value) - 8) : null))];
  const lowest = present.reduce((a, b) => (b.value < a.value ? b : a));
  const summary = `${caption}: ${present.length} buckets, lowest ${format(lowest.value)} at ${utcText(lowest.t)}, latest ${format(present[present.length - 1].value)}${present[present.length - 1].partial ? ' so far' : ''}.`;
  return frame(caption, summary, body, table(['bucket (UTC)', 'value'], points.map((p) => [bucketText(p), p.value === null || p.value === undefined ? '—' : format(p.value)])));
}

/** Stacked columns per time bucket, one colour per key, with a legend. */
export function stackedBars({ caption, buckets, keys, label = (k) => k }) {
  measure();
  if (!buckets.length || !keys.length) return empty(caption);
  const totals = buckets.map((b) => keys.reduce((s, k) => s + (b.counts[k] ?? 0), 0));
  const top = niceMax(Math.max(...totals, 1));
  const n = buckets.length;
  const slot = (W - PAD.left - PAD.right) / n;
  const bar = Math.max(2, Math.min(36, slot * 0.7));
  const x = (i) => PAD.left + slot * (i + 0.5);
  const y = (v) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / top);
  const body = [...yAxis(top, (v) => String(Math.round(v))), ...xAxis(buckets.map((b) => b.t), x)];
  buckets.forEach((b, i) => {
    let acc = 0;
    keys.forEach((k, ki) => {
      const v = b.counts[k] ?? 0;
      if (!v) return;
      body.push(svg('rect', { x: x(i) - bar / 2, y: y(acc + v), width: bar, height: y(acc) - y(acc + v), fill: PALETTE[ki % PALETTE.length], class: b.partial ? 'partial' : null },
        svg('title', {}, `${shortText(b.t)}${b.partial ? ' (so far)' : ''} · ${label(k)}: ${v}`)));
      acc += v;
    });
    if (b.partial) body.push(soFar(x(i), y(acc) - 4));
  });
  const sums = keys.map((k) => [k, buckets.reduce((s, b) => s + (b.counts[k] ?? 0), 0)]);
  const summary = `${caption}: ${sums.map(([k, v]) => `${label(k)} ${v}`).join(', ')}.`;
  const figure = frame(caption, summary, body,
    table(['bucket (UTC)', ...keys.map(label)], buckets.map((b) => [bucketText(b), ...keys.map((k) => String(b.counts[k] ?? 0))])));
  figure.insertBefore(h('ul', { class: 'chart-legend' }, keys.map((k, ki) =>
    h('li', {}, h('span', { class: 'swatch', 'data-color': String(ki % PALETTE.length) }), `${label(k)} (${sums[ki][1]})`))), figure.querySelector('details'));
  return figure;
}

/** A label cut to what fits in `width` drawing units at the axis font (~6.2 units a character). */
function fitLabel(label, width) {
  const chars = Math.max(4, Math.floor(width / 6.2));
  return label.length <= chars ? label : `${label.slice(0, chars - 1)}…`;
}

/** Horizontal bars for a ranking (failure codes, drop reasons, actions). */
export function rankBars({ caption, items }) {
  measure();
  if (!items.length) return empty(caption);
  const rows = items.length;
  const height = Math.max(60, rows * 26 + 16);
  const top = Math.max(...items.map((i) => i.value), 1);
  const labelW = Math.round(Math.min(230, W * 0.42));
  const body = items.map((item, i) => {
    const y = 8 + i * 26;
    const w = ((W - labelW - 60) * item.value) / top;
    return svg('g', {},
      svg('text', { x: labelW - 8, y: y + 14, class: 'axis', 'text-anchor': 'end' }, fitLabel(item.label, labelW - 8), svg('title', {}, item.label)),
      svg('rect', { x: labelW, y, width: Math.max(1, w), height: 18, fill: PALETTE[i % PALETTE.length] }),
      svg('text', { x: labelW + w + 6, y: y + 14, class: 'axis' }, String(item.value)));
  });
  const summary = `${caption}: ${items.map((i) => `${i.label} ${i.value}`).join(', ')}.`;
  const chartSvg = svg('svg', { viewBox: `0 0 ${W} ${height}`, role: 'img', 'aria-label': summary }, body);
  return h('figure', { class: 'chart' }, h('figcaption', {}, caption), chartSvg,
    h('details', {}, h('summary', {}, 'Numbers'), table(['', 'count'], items.map((i) => [i.label, String(i.value)]))));
}
