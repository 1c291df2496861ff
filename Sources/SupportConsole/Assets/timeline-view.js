// Draws a timeline: a strip across the window showing the rhythm at a glance (calls, the
// expected marks, gaps), then the ordered list a support engineer reads line by line.

import { h, mainContentWidth, svg } from './dom.js';
import { durationText, localText, shortText, timeElement, utcText } from './time.js';
import { LEVELS } from './timeline.js';

/** Entries rendered in the list at most; the log viewer below holds every record. */
export const LIST_LIMIT = 1000;

const KIND_LABEL = { launch: 'Launch', enrollment: 'Enrollment', action: 'Action', log: 'Log', event: 'Event', expected: 'Expected', gap: 'Gap' };

function badge(entry) {
  if (entry.kind === 'log') return h('span', { class: `badge level-${entry.level}` }, entry.level);
  if (entry.kind === 'enrollment') return h('span', { class: `badge ${entry.failed ? 'bad' : 'good'}` }, KIND_LABEL.enrollment);
  if (entry.kind === 'expected') return h('span', { class: `badge expected ${entry.status}` }, entry.status === 'missed' ? 'Missed' : KIND_LABEL.expected);
  return h('span', { class: `badge kind-${entry.kind}` }, KIND_LABEL[entry.kind] ?? entry.kind);
}

/** For a failed call: what its code means and what to do, from `GET /v1/status-codes`. */
function explain(entry, codes) {
  if (entry.kind !== 'enrollment' || !entry.failed || entry.statusCode === null) return null;
  const c = codes?.get(entry.statusCode);
  if (!c) return null;
  return h('span', { class: 'entry-explain' }, c.meaning, ' ', h('strong', {}, 'Next: '), c.nextStep);
}

function listItem(entry, showPlace, onAround, codes) {
  if (entry.kind === 'gap') {
    return h('li', { class: 'entry gap', dataset: { kind: 'gap' } },
      h('span', { class: 'gap-text' }, `${durationText(entry.length)} with no records, from `, timeElement(entry.time), ' to ', timeElement(entry.end)));
  }
  const place = showPlace && [entry.app, entry.device].filter(Boolean).join(' on ');
  return h('li', {
    class: `entry kind-${entry.kind}${entry.failed ? ' failed' : ''}${entry.kind === 'expected' ? ` ${entry.status}` : ''}`,
    dataset: { kind: entry.kind, time: String(entry.time), ...(entry.statusName ? { status: entry.statusName } : {}) },
  },
  timeElement(entry.time),
  badge(entry),
  h('span', { class: 'entry-title' }, entry.title),
  entry.detail ? h('span', { class: 'entry-detail' }, entry.detail) : null,
  explain(entry, codes),
  entry.incident ? h('a', { class: 'entry-incident', href: `#/incident/${encodeURIComponent(entry.incident)}` }, entry.incident) : null,
  place ? h('span', { class: 'entry-place' }, place) : null,
  onAround
    ? h('button', { type: 'button', class: 'link around', title: 'Open the logs from 2 min before to 2 min after this entry', onclick: () => onAround(entry.time) }, 'logs ± 2 min')
    : null);
}

/** The rhythm strip: one lane per kind across [since, until], gaps shaded. */
export function rhythmStrip(entries, since, until, width = 1000) {
  const lanes = [['launch', 'Launches'], ['enrollment', 'Enrollment calls'], ['expected', 'Expected (24 h retry / 8 h check-in)'], ['action', 'Intune actions'], ['log', 'Warnings and errors']];
  const laneHeight = 18;
  const top = 6;
  const labelWidth = 0;
  const height = top + lanes.length * laneHeight + 22;
  const span = Math.max(1, until - since);
  const x = (t) => labelWidth + ((Math.min(Math.max(t, since), until) - since) / span) * (width - labelWidth);
  const laneY = (kind) => top + lanes.findIndex(([k]) => k === kind) * laneHeight + laneHeight / 2;
  const shapes = [];
  for (const [i] of lanes.entries()) {
    shapes.push(svg('line', { x1: 0, x2: width, y1: top + i * laneHeight + laneHeight / 2, y2: top + i * laneHeight + laneHeight / 2, class: 'lane' }));
  }
  const counts = { launch: 0, enrollment: 0, failed: 0, expected: 0, missed: 0, action: 0, log: 0, gap: 0 };
  // Gaps first, so the marks are drawn over them.
  const ordered = [...entries.filter((e) => e.kind === 'gap'), ...entries.filter((e) => e.kind !== 'gap')];
  for (const e of ordered) {
    if (e.kind === 'gap') {
      counts.gap++;
      shapes.push(svg('rect', { x: x(e.time), y: top - 4, width: Math.max(1, x(e.end) - x(e.time)), height: lanes.length * laneHeight + 4, class: 'gap-band' },
        svg('title', {}, `${durationText(e.length)} with no records`)));
      continue;
    }
    if (e.time < since || e.time > until) continue;
    const cx = x(e.time);
    const tip = svg('title', {}, `${localText(e.time)} · ${e.title}`);
    switch (e.kind) {
      case 'launch':
        counts.launch++;
        shapes.push(svg('circle', { cx, cy: laneY('launch'), r: 4, class: 'mark-launch' }, tip));
        break;
      case 'enrollment':
        counts.enrollment++;
        if (e.failed) counts.failed++;
        shapes.push(svg('rect', { x: cx - 4, y: laneY('enrollment') - 5, width: 8, height: 10, class: e.failed ? 'mark-bad' : 'mark-good' }, tip));
        break;
      case 'expected': {
        counts.expected++;
        if (e.status === 'missed') counts.missed++;
        const y = laneY('expected');
        shapes.push(svg('path', { d: `M${cx} ${y - 6} L${cx + 6} ${y} L${cx} ${y + 6} L${cx - 6} ${y} Z`, class: `mark-expected ${e.status}` }, tip));
        break;
      }
      case 'action':
        counts.action++;
        shapes.push(svg('rect', { x: cx - 4, y: laneY('action') - 4, width: 8, height: 8, transform: `rotate(45 ${cx} ${laneY('action')})`, class: 'mark-action' }, tip));
        break;
      case 'log':
        if (e.level !== 'warning' && e.level !== 'error') break;
        counts.log++;
        shapes.push(svg('line', { x1: cx, x2: cx, y1: laneY('log') - 6, y2: laneY('log') + 6, class: `mark-${e.level}` }, tip));
        break;
      default:
        break;
    }
  }
  const axisY = top + lanes.length * laneHeight + 14;
  const ticks = width < 600 ? 2 : 4;
  for (let i = 0; i <= ticks; i++) {
    const t = since + (span * i) / ticks;
    shapes.push(svg('text', { x: Math.min(Math.max(x(t), 2), width - 2), y: axisY, class: 'axis', 'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle' }, shortText(t)));
  }
  const summary = `Rhythm from ${utcText(since)} to ${utcText(until)}: ${counts.launch} launches, ${counts.enrollment} enrollment calls (${counts.failed} failed), ` +
    `${counts.expected} expected calls (${counts.missed} missed), ${counts.action} Intune actions, ${counts.log} warnings or errors, ${counts.gap} gaps.`;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'rhythm', role: 'img', 'aria-label': summary, preserveAspectRatio: 'none' }, shapes);
  const legend = h('ul', { class: 'legend', 'aria-hidden': 'true' }, lanes.map(([kind, label]) => h('li', { class: `legend-${kind}` }, label)),
    h('li', { class: 'legend-gap' }, 'Gap over 1 h'));
  return h('figure', { class: 'rhythm-figure' }, chart, legend);
}

/**
 * The strip is drawn in its own pixels (the panel's width inside <main>), so its labels keep
 * their size on a phone instead of being squeezed with the drawing.
 */
function stripWidth() {
  const content = mainContentWidth();
  if (content === null) return 1000;
  // Less the panel's padding and border.
  return Math.round(Math.max(300, Math.min(1600, content - 34)));
}

/**
 * The timeline section: level filter, the strip and the list. `rebuild(minLevel)` returns
 * entries for a level, so changing the filter redraws without fetching again; `onAround(time)`,
 * when given, is what an entry's "logs ± 2 min" button opens; `codes` (status code → its
 * explanation) says under a failed call what its code means and what to do.
 */
/**
 * At most `limit` entries, in order: the entries that are not log records (the story's
 * launches, calls, actions, gaps and expected check-ins; the newest `limit` of them if there
 * are more), then the newest log records in the room left. A burst of log lines must not push the failed call out of the list.
 */
export function newestKeepingEvents(entries, limit) {
  if (entries.length <= limit) return entries;
  const logs = entries.filter((e) => e.kind === 'log');
  const others = entries.length - logs.length;
  if (others >= limit) return entries.filter((e) => e.kind !== 'log').slice(others - limit);
  const room = limit - others;
  const kept = new Set(logs.slice(logs.length - room));
  return entries.filter((e) => e.kind !== 'log' || kept.has(e));
}

export function timelineSection({ rebuild, since, until, showPlace = true, note = null, onAround = null, codes = null }) {
  const list = h('ol', { class: 'timeline', 'aria-label': 'Timeline, oldest first', tabindex: '0' });
  const stripHolder = h('div');
  const info = h('p', { class: 'muted' });
  const select = h('select', { id: 'timeline-level', 'aria-describedby': 'timeline-help' },
    LEVELS.map((l) => h('option', { value: l, selected: l === 'warning' }, `${l} and above`)));
  const render = () => {
    const entries = rebuild(select.value);
    stripHolder.replaceChildren(rhythmStrip(entries, since, until, stripWidth()));
    const shown = newestKeepingEvents(entries, LIST_LIMIT);
    list.replaceChildren(...shown.map((e) => listItem(e, showPlace, onAround, codes)));
    // A long story opens at its newest entries, where the reported problem usually is.
    requestAnimationFrame(() => { list.scrollTop = list.scrollHeight; });
    info.textContent = entries.length > shown.length
      ? `Showing ${shown.length} of ${entries.length} entries: every launch, call and action, and the newest log records; raise the level or use the log viewer for the rest.`
      : `${entries.length} entries.`;
  };
  select.addEventListener('change', render);
  render();
  return h('section', { class: 'panel', 'aria-labelledby': 'timeline-heading' },
    h('div', { class: 'panel-head' },
      h('h2', { id: 'timeline-heading' }, 'Timeline'),
      h('label', { for: 'timeline-level' }, 'Log records in timeline '), select,
      h('span', { id: 'timeline-help', class: 'visually-hidden' }, 'Launches, enrollment calls and actions are always shown')),
    note ? h('p', { class: 'note' }, note) : null,
    stripHolder, info, list);
}
