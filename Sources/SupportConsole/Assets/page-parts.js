// Pieces the incident, device and user pages share: a facts list, links between pages,
// the window/environment controls and loading of a subject's records.

import { h } from './dom.js';
import { WINDOWS } from './time.js';

export const RECORD_CAP = 20_000;

/** What a token without `pii` is told where the user's own words are withheld from it. */
export const PII_SHOWS_WORDS = 'a token with the pii scope shows the user\'s words';

export function facts(rows) {
  return h('dl', { class: 'facts' }, rows.filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && !v.length))
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, Array.isArray(v) ? joinNodes(v) : v)]));
}

export function joinNodes(items, separator = ', ') {
  const out = [];
  items.forEach((item, i) => { if (i) out.push(separator); out.push(item); });
  return out;
}

export function deviceLink(id, env) {
  return h('a', { href: `#/device/${encodeURIComponent(id)}${env && env !== 'prod' ? `?env=${env}` : ''}` }, id);
}

export function userLink(identity, env) {
  return h('a', { href: `#/user/${encodeURIComponent(identity)}${env && env !== 'prod' ? `?env=${env}` : ''}` }, identity);
}

/** Window and environment selects that rewrite the page's hash query. */
export function windowControls({ windowKey, env, windows = WINDOWS, onChange }) {
  const windowSelect = h('select', { id: 'window-select' }, windows.map((w) => h('option', { value: w.key, selected: w.key === windowKey }, w.label)));
  const envSelect = h('select', { id: 'env-select' }, ['prod', 'ppe'].map((e) => h('option', { value: e, selected: e === env }, e === 'prod' ? 'production' : 'PPE (test)')));
  const changed = () => onChange({ window: windowSelect.value, env: envSelect.value });
  windowSelect.addEventListener('change', changed);
  envSelect.addEventListener('change', changed);
  return h('div', { class: 'controls' },
    h('label', { for: 'window-select' }, 'Window'), windowSelect,
    h('label', { for: 'env-select' }, 'Environment'), envSelect);
}

export function loading(text = 'Loading…') {
  return h('p', { class: 'loading', role: 'status' }, text);
}

export function errorBox(e) {
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'Could not load: '), e.message ?? String(e),
    e.candidates?.length ? deviceChoices('Did you mean one of these?', e.candidates) : null);
}

/** Devices to pick from (`DeviceSummary` items: id, apps, last seen), as links to their pages. */
export function deviceChoices(title, devices, env) {
  return h('div', { class: 'device-choices' }, h('p', {}, title),
    h('ul', {}, devices.map((d) => h('li', {}, deviceLink(d.deviceId, env),
      d.apps?.length ? ` (${d.apps.join(', ')}` : ' (', d.lastSeen ? `, last seen ${new Date(d.lastSeen).toLocaleString()})` : ')'))));
}

export function truncationNote(kind, result) {
  return result.truncated ? `Only the first ${RECORD_CAP.toLocaleString()} ${kind} of this window were loaded; narrow the window to see the rest.` : null;
}
