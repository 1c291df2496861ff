// The incident list (#/incidents?env=&since=&app=&device=): which incidents came in, newest
// first, a page at a time, from `GET /v1/incidents`. The alert on surging uploads links here
// (`#/incidents?env=prod&since=-1h`).

import { h } from './dom.js';
import { PII_SHOWS_WORDS, deviceLink, errorBox, loading } from './page-parts.js';
import { timeElement, toMillis } from './time.js';

const SINCE = [
  { value: '-1h', label: 'Last hour' },
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-30d', label: 'Last 30 days' },
];
const PAGE = 50;

/** The description cell: the first line the API returns, or a short word on why it is withheld. */
export function descriptionCell(incident) {
  if (incident.descriptionWithheld) {
    const chars = /\[withheld: (\d+) chars/.exec(incident.description ?? '')?.[1];
    return h('td', { class: 'withheld' }, `Withheld${chars ? ` (${chars} characters)` : ''}: ${PII_SHOWS_WORDS}`);
  }
  return incident.description ? h('td', { class: 'description-line' }, incident.description) : h('td', { class: 'muted' }, 'no description');
}

function row(incident) {
  const env = incident.env;
  return h('tr', { dataset: { id: incident.id } },
    h('td', {}, timeElement(toMillis(incident.createdAt))),
    h('th', { scope: 'row' }, h('a', { class: 'mono', href: `#/incident/${encodeURIComponent(incident.id)}` }, incident.id)),
    h('td', {}, incident.appId),
    h('td', {}, incident.deviceId ? deviceLink(incident.deviceId, env) : '—'),
    descriptionCell(incident),
    h('td', { class: 'number' }, String(incident.records)));
}

export async function incidentsPage(ctx, query) {
  const { api, main } = ctx;
  const env = (query.get('env') ?? '').toLowerCase() === 'ppe' ? 'ppe' : 'prod';
  const since = query.get('since') || '-7d';
  const app = query.get('app') ?? '';
  const device = query.get('device') ?? '';
  const limit = Math.min(1000, Math.max(1, Number.parseInt(query.get('limit') ?? '', 10) || PAGE));
  ctx.bundle.set({ unavailable: 'Open an incident to bundle it.' });

  const choices = SINCE.some((s) => s.value === since) ? SINCE : [...SINCE, { value: since, label: `Since ${since}` }];
  const sinceSelect = h('select', { id: 'incidents-since' }, choices.map((s) => h('option', { value: s.value, selected: s.value === since }, s.label)));
  const envSelect = h('select', { id: 'incidents-env' }, ['prod', 'ppe'].map((e) => h('option', { value: e, selected: e === env }, e === 'prod' ? 'production' : 'PPE (test)')));
  const appInput = h('input', { id: 'incidents-app', type: 'text', value: app, placeholder: 'all apps', autocomplete: 'off', spellcheck: 'false' });
  const deviceInput = h('input', { id: 'incidents-device', type: 'text', value: device, placeholder: 'all devices', autocomplete: 'off', spellcheck: 'false' });
  const form = h('form', { class: 'controls', role: 'search', 'aria-label': 'Incident filters' },
    h('label', { for: 'incidents-since' }, 'Arrived'), sinceSelect,
    h('label', { for: 'incidents-env' }, 'Environment'), envSelect,
    h('label', { for: 'incidents-app' }, 'App id'), appInput,
    h('label', { for: 'incidents-device' }, 'Device'), deviceInput,
    h('button', { type: 'submit' }, 'Apply'));
  const apply = (e) => {
    e?.preventDefault();
    const q = new URLSearchParams({ env: envSelect.value, since: sinceSelect.value });
    if (appInput.value.trim()) q.set('app', appInput.value.trim());
    if (deviceInput.value.trim()) q.set('device', deviceInput.value.trim());
    location.hash = `#/incidents?${q}`;
  };
  form.addEventListener('submit', apply);
  sinceSelect.addEventListener('change', apply);
  envSelect.addEventListener('change', apply);
  const head = h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Incidents'), form);
  main.replaceChildren(head, loading());

  const params = { env, since, app, device, limit };
  let first;
  try {
    first = await api.json('v1/incidents', params);
  } catch (e) {
    if (e.status !== 400) throw e;
    main.replaceChildren(head, errorBox(e));
    return { title: 'Incidents' };
  }
  const body = h('tbody', {}, first.incidents.map(row));
  const count = h('p', { class: 'muted', id: 'incidents-count', role: 'status' });
  const more = h('button', { type: 'button', id: 'incidents-more', class: 'secondary' }, 'Show older incidents');
  let cursor = first.nextCursor;
  const shown = () => {
    const n = body.children.length;
    count.textContent = `${n} incident${n === 1 ? '' : 's'}${cursor ? ' shown; older ones follow' : ''}, newest first.`;
    more.hidden = !cursor;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api.json('v1/incidents', { ...params, cursor });
      body.append(...page.incidents.map(row));
      cursor = page.nextCursor;
    } catch (e) {
      count.textContent = `Could not load more: ${e.message}`;
      return;
    } finally {
      more.disabled = false;
    }
    shown();
  });
  shown();
  const envText = env === 'ppe' ? 'PPE (test data)' : 'production';
  main.replaceChildren(head,
    h('section', { class: 'panel', 'aria-labelledby': 'incidents-heading' },
      h('h2', { id: 'incidents-heading' }, `Uploads from users in ${envText}`),
      first.incidents.length
        ? h('div', { class: 'table-scroll' }, h('table', { class: 'incidents' },
          h('thead', {}, h('tr', {}, ['Arrived', 'Incident', 'App', 'Device', 'What the user wrote (first line)', 'Logs shared']
            .map((c) => h('th', { scope: 'col' }, c)))),
          body))
        : h('p', { class: 'muted' }, `No incidents in ${envText} for this filter.`),
      count, more));
  return { title: 'Incidents' };
}
