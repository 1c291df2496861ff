// The fleet page: enrollment health, launches by management type, actions and drops, from
// the stats API, for the whole fleet or one app.

import { h } from './dom.js';
import { lineChart, rankBars, stackedBars } from './charts.js';
import { DAY, HOUR, toMillis } from './time.js';
import { facts, loading } from './page-parts.js';

const WINDOWS = [
  { key: '24h', label: 'Last 24 hours', ms: DAY, interval: '1h' },
  { key: '3d', label: 'Last 3 days', ms: 3 * DAY, interval: '6h' },
  { key: '7d', label: 'Last 7 days', ms: 7 * DAY, interval: '1d' },
  { key: '30d', label: 'Last 30 days', ms: 30 * DAY, interval: '1d' },
];

const percent = (v) => `${Math.round(v * 1000) / 10}%`;

export async function fleetPage(ctx, query) {
  const { api, main } = ctx;
  const win = WINDOWS.find((w) => w.key === query.get('window')) ?? WINDOWS[2];
  const env = query.get('env') === 'ppe' ? 'ppe' : 'prod';
  const app = query.get('app') ?? '';
  const until = Date.now();
  // Buckets align to the interval, so start on a boundary: every bucket is a whole one.
  const step = win.interval === '1h' ? HOUR : win.interval === '6h' ? 6 * HOUR : DAY;
  const since = Math.floor((until - win.ms) / step) * step + step;
  const params = { env, app, since: new Date(since).toISOString(), until: new Date(until).toISOString(), interval: win.interval };

  const windowSelect = h('select', { id: 'fleet-window' }, WINDOWS.map((w) => h('option', { value: w.key, selected: w === win }, w.label)));
  const envSelect = h('select', { id: 'fleet-env' }, ['prod', 'ppe'].map((e) => h('option', { value: e, selected: e === env }, e === 'prod' ? 'production' : 'PPE (test)')));
  const appInput = h('input', { id: 'fleet-app', type: 'text', value: app, placeholder: 'all apps', autocomplete: 'off', spellcheck: 'false' });
  const form = h('form', { class: 'controls', role: 'search', 'aria-label': 'Fleet filters' },
    h('label', { for: 'fleet-window' }, 'Window'), windowSelect,
    h('label', { for: 'fleet-env' }, 'Environment'), envSelect,
    h('label', { for: 'fleet-app' }, 'App id'), appInput,
    h('button', { type: 'submit' }, 'Apply'));
  const apply = (e) => {
    e?.preventDefault();
    const q = new URLSearchParams({ window: windowSelect.value });
    if (envSelect.value !== 'prod') q.set('env', envSelect.value);
    if (appInput.value.trim()) q.set('app', appInput.value.trim());
    location.hash = `#/fleet?${q}`;
  };
  form.addEventListener('submit', apply);
  windowSelect.addEventListener('change', apply);
  envSelect.addEventListener('change', apply);

  main.replaceChildren(h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Fleet'), form), loading());
  ctx.bundle.set(app
    ? { label: `app ${app}`, path: 'v1/bundles', params: { app, env, since: params.since, until: params.until } }
    : { unavailable: 'Enter an app id to bundle the fleet\'s records for that app.' });

  const [enrollment, launches, actions, drops] = await Promise.all(
    ['enrollment', 'launches', 'actions', 'drops'].map((s) => api.json(`v1/stats/${s}`, params)));

  const buckets = enrollment.buckets.map((b) => ({ t: toMillis(b.start), total: b.total }));
  const codes = enrollment.total.topFailures.map((f) => f.statusCode);
  const codeLabel = Object.fromEntries(enrollment.total.topFailures.map((f) => [f.statusCode, f.name ? `${f.statusCode} ${f.name}` : `${f.statusCode}`]));
  const managementTypes = Object.keys(launches.counts).sort((a, b) => launches.counts[b] - launches.counts[a]);
  const ops = Object.entries(enrollment.byOperation).sort((a, b) => b[1].count - a[1].count);
  const t = enrollment.total;

  main.replaceChildren(
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Fleet'), form),
    h('section', { class: 'panel summary', 'aria-label': 'Fleet summary' }, facts([
      ['Window', `${win.label}, ${win.interval} buckets`],
      ['Scope', app ? `app ${app}` : 'all apps'],
      ['Enrollment calls', `${t.count} (${t.succeeded} succeeded, ${t.failed} failed)`],
      ['Success rate', t.successRate === null || t.successRate === undefined ? '—' : percent(t.successRate)],
      ['Duration', t.durationMs ? `p50 ${t.durationMs.p50} ms · p95 ${t.durationMs.p95} ms · p99 ${t.durationMs.p99} ms` : '—'],
      ['Launches', String(launches.total)],
      ['Intune actions', String(actions.total)],
    ])),
    h('div', { class: 'charts' },
      lineChart({ caption: 'Enrollment success rate', max: 1, format: percent,
        points: buckets.map((b) => ({ t: b.t, value: b.total.successRate ?? null, note: `${b.total.succeeded} of ${b.total.succeeded + b.total.failed}` })) }),
      stackedBars({ caption: 'Top enrollment failure codes over time', keys: codes.map(String), label: (k) => codeLabel[k],
        buckets: buckets.map((b) => ({ t: b.t, counts: Object.fromEntries(b.total.topFailures.map((f) => [String(f.statusCode), f.count])) })) }),
      stackedBars({ caption: 'App launches by management type', keys: managementTypes,
        buckets: launches.buckets.map((b) => ({ t: toMillis(b.start), counts: b.counts })) }),
      rankBars({ caption: 'Intune actions', items: Object.entries(actions.counts).sort((a, b) => b[1] - a[1]).map(([label, value]) => ({ label, value })) }),
      rankBars({ caption: `Records dropped or rejected, by reason (${drops.coverage})`,
        items: [...Object.entries(drops.dropped).map(([r, v]) => ({ label: `dropped: ${r}`, value: v })),
          ...Object.entries(drops.rejected).map(([r, v]) => ({ label: `rejected: ${r}`, value: v }))].filter((i) => i.value > 0).sort((a, b) => b.value - a.value) })),
    h('section', { class: 'panel', 'aria-labelledby': 'ops-heading' },
      h('h2', { id: 'ops-heading' }, 'Enrollment by operation'),
      ops.length ? h('table', { class: 'ops' },
        h('thead', {}, h('tr', {}, ['operation', 'calls', 'success rate', 'p50', 'p95', 'p99', 'top failures'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, ops.map(([op, s]) => h('tr', {},
          h('th', { scope: 'row' }, op), h('td', {}, String(s.count)),
          h('td', {}, s.successRate === null || s.successRate === undefined ? '—' : percent(s.successRate)),
          h('td', {}, s.durationMs ? `${s.durationMs.p50} ms` : '—'), h('td', {}, s.durationMs ? `${s.durationMs.p95} ms` : '—'),
          h('td', {}, s.durationMs ? `${s.durationMs.p99} ms` : '—'),
          h('td', {}, s.topFailures.map((f) => `${f.name ?? f.statusCode} (${f.statusCode}) ×${f.count}`).join(', ') || '—')))))
        : h('p', { class: 'muted' }, 'No enrollment calls in this window.'),
      h('p', { class: 'muted' }, drops.note)));
  return { title: 'Fleet' };
}
