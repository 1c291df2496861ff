// The fleet page for a support lead: pick a known app, read each app's enrollment failures
// against the previous period with their volume, the failing status codes with the devices
// and users they reached and what to do, then the charts over time (the bucket still filling
// marked "so far"). `#/fleet?app=…&env=…&code=…` is what the enrollment alerts link.

import { h } from './dom.js';
import { lineChart, rankBars, stackedBars } from './charts.js';
import { appsTable, codesTable, percent, rateWithVolume } from './fleet-apps.js';
import { facts, loading } from './page-parts.js';
import { codeName, explanation, statusCodes } from './status-codes.js';
import { DAY, HOUR, toMillis } from './time.js';

const WINDOWS = [
  { key: '24h', label: 'Last 24 hours', ms: DAY, interval: '1h' },
  { key: '3d', label: 'Last 3 days', ms: 3 * DAY, interval: '6h' },
  { key: '7d', label: 'Last 7 days', ms: 7 * DAY, interval: '1d' },
  { key: '30d', label: 'Last 30 days', ms: 30 * DAY, interval: '1d' },
];
/** How far back the app picker looks, so an app quiet for a day is still offered. */
const KNOWN_APPS_SINCE = '-30d';

export async function fleetPage(ctx, query) {
  const { api, main } = ctx;
  const win = WINDOWS.find((w) => w.key === query.get('window')) ?? WINDOWS[0];
  const env = (query.get('env') ?? '').toLowerCase() === 'ppe' ? 'ppe' : 'prod';
  const app = query.get('app') ?? '';
  const codeText = query.get('code') ?? '';
  const code = /^\d+$/.test(codeText) ? Number(codeText) : null;
  const until = Date.now();
  // Buckets align to the interval, so start on a boundary: every bucket but the current
  // one is whole, and the API marks that one partial.
  const step = win.interval === '1h' ? HOUR : win.interval === '6h' ? 6 * HOUR : DAY;
  const since = Math.floor((until - win.ms) / step) * step + step;
  const params = { env, app, since: new Date(since).toISOString(), until: new Date(until).toISOString(), interval: win.interval };

  const windowSelect = h('select', { id: 'fleet-window' }, WINDOWS.map((w) => h('option', { value: w.key, selected: w === win }, w.label)));
  const envSelect = h('select', { id: 'fleet-env' }, ['prod', 'ppe'].map((e) => h('option', { value: e, selected: e === env }, e === 'prod' ? 'production' : 'PPE (test)')));
  const appSelect = h('select', { id: 'fleet-app' }, h('option', { value: '' }, 'All apps'), app ? h('option', { value: app, selected: true }, app) : null);
  const form = h('form', { class: 'controls', role: 'search', 'aria-label': 'Fleet filters' },
    h('label', { for: 'fleet-window' }, 'Window'), windowSelect,
    h('label', { for: 'fleet-env' }, 'Environment'), envSelect,
    h('label', { for: 'fleet-app' }, 'App'), appSelect);
  const go = (pick = appSelect.value) => {
    const q = new URLSearchParams({ window: windowSelect.value });
    if (envSelect.value !== 'prod') q.set('env', envSelect.value);
    if (pick) q.set('app', pick);
    location.hash = `#/fleet?${q}`;
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); go(); });
  for (const control of [windowSelect, envSelect, appSelect]) control.addEventListener('change', () => go());

  const head = h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Fleet'), form);
  main.replaceChildren(head, loading());
  ctx.bundle.set(app
    ? { label: `app ${app}`, path: 'v1/bundles', params: { app, env, since: params.since, until: params.until } }
    : { unavailable: 'Pick an app to bundle the fleet\'s records for that app.' });

  const { interval, ...span } = params;
  const [enrollment, launches, actions, drops, apps, known, codes] = await Promise.all([
    ...['enrollment', 'launches', 'actions', 'drops'].map((s) => api.json(`v1/stats/${s}`, params)),
    api.json('v1/stats/apps', span),
    api.json('v1/stats/apps', { env, since: KNOWN_APPS_SINCE }),
    statusCodes(api),
  ]);
  const knownApps = [...new Set([...known.apps.map((a) => a.appId), ...apps.apps.map((a) => a.appId), ...(app ? [app] : [])])].sort();
  appSelect.replaceChildren(h('option', { value: '' }, 'All apps'), ...knownApps.map((a) => h('option', { value: a, selected: a === app }, a)));

  const buckets = enrollment.buckets.map((b) => ({ t: toMillis(b.start), partial: b.partial, total: b.total }));
  const failing = enrollment.total.topFailures.map((f) => f.statusCode);
  const label = Object.fromEntries(enrollment.total.topFailures.map((f) => [f.statusCode, codeName(f.statusCode, codes, f.name)]));
  const managementTypes = Object.keys(launches.counts).sort((a, b) => launches.counts[b] - launches.counts[a]);
  const ops = Object.entries(enrollment.byOperation).sort((a, b) => b[1].count - a[1].count);
  const t = enrollment.total;
  const notKept = [...Object.entries(drops.dropped).map(([r, v]) => ({ label: `dropped: ${r}`, value: v })),
    ...Object.entries(drops.rejected).map(([r, v]) => ({ label: `rejected: ${r}`, value: v }))].filter((i) => i.value > 0).sort((a, b) => b.value - a.value);

  const codeNote = code === null ? [] : [h('section', { class: 'panel', id: 'code-note', 'aria-label': 'Status code' },
    h('h2', {}, `Status code ${codeName(code, codes)}`), h('p', {}, explanation(code, codes)),
    h('p', { class: 'muted' }, 'Its rows are marked in the table of failing status codes below.'))];
  main.replaceChildren(head, ...codeNote,
    h('section', { class: 'panel summary', 'aria-label': 'Fleet summary' }, facts([
      ['Window', `${win.label}, ${win.interval} buckets, against the ${win.label.toLowerCase().replace('last ', 'previous ')}`],
      ['Apps', app || 'all apps'],
      ['Enrollment calls', `${t.count.toLocaleString()} (${t.succeeded.toLocaleString()} succeeded, ${t.failed.toLocaleString()} failed)`],
      ['Failed', t.count ? rateWithVolume(t.succeeded + t.failed ? t.failed / (t.succeeded + t.failed) : null, t.succeeded, t.failed) : '—'],
      ['Call duration', t.durationMs ? `p50 ${t.durationMs.p50} ms · p95 ${t.durationMs.p95} ms · p99 ${t.durationMs.p99} ms` : '—'],
      ['Launches', launches.total.toLocaleString()],
      ['Intune actions', actions.total.toLocaleString()],
    ])),
    h('section', { class: 'panel', 'aria-labelledby': 'apps-heading' },
      h('h2', { id: 'apps-heading' }, 'Enrollment by app'),
      appsTable(apps, { onPick: (a) => go(a) }),
      apps.reachTruncated ? h('p', { class: 'muted' }, 'Devices and users are counted up to a limit: the numbers are at least these.') : null),
    h('section', { class: 'panel', 'aria-labelledby': 'codes-heading' },
      h('h2', { id: 'codes-heading' }, 'Failing status codes, the devices and users they reached'),
      codesTable(apps, codes, { code })),
    h('div', { class: 'charts' },
      lineChart({ caption: 'Share of enrollment calls that succeeded', max: 1, format: percent,
        points: buckets.map((b) => ({ t: b.t, partial: b.partial, value: b.total.successRate ?? null, note: `${b.total.succeeded} of ${b.total.succeeded + b.total.failed}` })) }),
      stackedBars({ caption: 'Failed enrollment calls by status code', keys: failing.map(String), label: (k) => label[k],
        buckets: buckets.map((b) => ({ t: b.t, partial: b.partial, counts: Object.fromEntries(b.total.topFailures.map((f) => [String(f.statusCode), f.count])) })) }),
      stackedBars({ caption: 'App launches by management type', keys: managementTypes,
        buckets: launches.buckets.map((b) => ({ t: toMillis(b.start), partial: b.partial, counts: b.counts })) }),
      rankBars({ caption: 'Intune actions users met', items: Object.entries(actions.counts).sort((a, b) => b[1] - a[1]).map(([l, value]) => ({ label: l, value })) }),
      rankBars({ caption: 'Records the daemon did not keep, by reason', items: notKept })),
    h('section', { class: 'panel', 'aria-labelledby': 'ops-heading' },
      h('h2', { id: 'ops-heading' }, 'Enrollment by operation'),
      ops.length ? h('div', { class: 'table-scroll' }, h('table', { class: 'ops' },
        h('thead', {}, h('tr', {}, ['operation', 'calls', 'succeeded', 'p50', 'p95', 'p99', 'top failures'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, ops.map(([op, s]) => h('tr', {},
          h('th', { scope: 'row' }, op), h('td', {}, s.count.toLocaleString()),
          h('td', {}, s.successRate === null || s.successRate === undefined ? '—' : `${percent(s.successRate)} of ${(s.succeeded + s.failed).toLocaleString()}`),
          h('td', {}, s.durationMs ? `${s.durationMs.p50} ms` : '—'), h('td', {}, s.durationMs ? `${s.durationMs.p95} ms` : '—'),
          h('td', {}, s.durationMs ? `${s.durationMs.p99} ms` : '—'),
          h('td', {}, s.topFailures.map((f) => `${codeName(f.statusCode, codes, f.name)} ×${f.count}`).join(', ') || '—'))))))
        : h('p', { class: 'muted' }, 'No enrollment calls in this window.')));
  if (code !== null) document.getElementById('code-note')?.scrollIntoView({ block: 'start' });
  return { title: 'Fleet' };
}
