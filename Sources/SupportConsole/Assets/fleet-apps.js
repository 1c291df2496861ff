// The fleet's per-app tables from `GET /v1/stats/apps`: each app's enrollment calls, its
// failure rate with the volume beside it (a "100%" of one call reads as what it is), the
// change against the previous period of the same length, and for each failing status code
// the devices and users it reached, what it means and what to do.

import { h } from './dom.js';
import { codeName, explanation } from './status-codes.js';

export const percent = (v) => `${Math.round(v * 1000) / 10}%`;
const present = (v) => v !== null && v !== undefined;

/** "39.1% of 138" — the rate over the calls with an outcome. */
export function rateWithVolume(failureRate, succeeded, failed) {
  const volume = succeeded + failed;
  return present(failureRate) ? `${percent(failureRate)} of ${volume.toLocaleString()}` : `— (no outcome in ${volume.toLocaleString()})`;
}

/** "+5.0 points" / "−2.1 points" / "same": a failure-rate difference in percentage points. */
export function pointsText(diff) {
  if (!present(diff)) return null;
  const points = Math.round(diff * 1000) / 10;
  if (points === 0) return 'same';
  return `${points > 0 ? '+' : '−'}${Math.abs(points).toFixed(1)} points`;
}

/** "+25%" / "−40%": a relative change. */
export function relativeText(change) {
  if (!present(change)) return null;
  const p = Math.round(change * 100);
  return p === 0 ? 'same' : `${p > 0 ? '+' : '−'}${Math.abs(p)}%`;
}

function changeCell(e) {
  const prev = e.previous ?? {};
  const before = prev.calls ? `before: ${present(prev.failureRate) ? `${percent(prev.failureRate)} failed of ${prev.calls.toLocaleString()} calls` : `${prev.calls.toLocaleString()} calls`}` : 'no calls in the previous period';
  const rate = pointsText(e.change?.failureRate);
  const calls = relativeText(e.change?.calls);
  const worse = (e.change?.failureRate ?? 0) > 0.005;
  return h('td', { class: worse ? 'worse' : null },
    rate ? h('span', { class: 'change-rate' }, `failure rate ${rate}`) : null,
    rate && calls ? h('br') : null,
    calls ? h('span', {}, `calls ${calls}`) : null,
    h('div', { class: 'muted small' }, before));
}

/** One row per app, the most failed calls first (the API's order). */
export function appsTable(stats, { onPick }) {
  if (!stats.apps.length) return h('p', { class: 'muted' }, 'No enrollment calls or launches in this window.');
  const rows = stats.apps.map((a) => {
    const e = a.enrollment;
    return h('tr', { dataset: { app: a.appId } },
      h('th', { scope: 'row' }, h('a', { href: '#', onclick: (ev) => { ev.preventDefault(); onPick(a.appId); } }, a.appId),
        a.registered ? null : h('div', { class: 'muted small' }, 'not registered')),
      h('td', { class: 'number' }, e.calls.toLocaleString()),
      h('td', { class: 'number failure-rate' }, rateWithVolume(e.failureRate, e.succeeded, e.failed)),
      changeCell(e),
      h('td', { class: 'number' }, e.devicesFailing.toLocaleString()),
      h('td', { class: 'number' }, e.usersFailing.toLocaleString()),
      h('td', { class: 'number' }, `${a.launches.count.toLocaleString()}${present(a.launches.change) ? ` (${relativeText(a.launches.change)})` : ''}`));
  });
  return h('div', { class: 'table-scroll' }, h('table', { class: 'apps', id: 'apps-table' },
    h('thead', {}, h('tr', {}, ['App', 'Enrollment calls', 'Failed (of calls with an outcome)', 'Against the previous period', 'Devices failing', 'Users failing', 'Launches']
      .map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)));
}

/**
 * Failing status codes per app: calls, the devices and users each reached, the previous
 * period's calls, and the code's meaning and next step. `code` (from the page's query, as the
 * "new status code" alert links it) is marked.
 */
export function codesTable(stats, codes, { code = null } = {}) {
  const rows = [];
  for (const a of stats.apps) {
    for (const c of a.enrollment.statusCodes) {
      const failing = c.success === false || (present(c.statusCode) && c.success === undefined && c.statusCode >= 200);
      if (!failing) continue;
      const marked = code !== null && c.statusCode === code;
      rows.push(h('tr', { class: marked ? 'marked' : null, dataset: { app: a.appId, code: String(c.statusCode ?? '') }, 'aria-current': marked ? 'true' : null },
        h('td', {}, a.appId),
        h('th', { scope: 'row' }, codeName(c.statusCode, codes, c.name)),
        h('td', { class: 'number' }, `${c.calls.toLocaleString()} (${percent(c.share)} of calls)`),
        h('td', { class: 'number' }, c.previousCalls ? c.previousCalls.toLocaleString() : 'none'),
        h('td', { class: 'number' }, c.devices.toLocaleString()),
        h('td', { class: 'number' }, c.users.toLocaleString()),
        h('td', { class: 'explain' }, present(c.statusCode) ? explanation(c.statusCode, codes) : '')));
    }
  }
  if (!rows.length) return h('p', { class: 'muted' }, 'No failed enrollment calls in this window.');
  return h('div', { class: 'table-scroll' }, h('table', { class: 'apps', id: 'codes-table' },
    h('thead', {}, h('tr', {}, ['App', 'Status code', 'Calls', 'Previous period', 'Devices', 'Users', 'What it means, what to do']
      .map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)));
}
