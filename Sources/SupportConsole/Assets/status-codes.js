// What an enrollment status code means and what support does next, from
// `GET /v1/status-codes` (the SDK's list; static, so read once per signed-in session).
// A code not in the list is unknown: pages show its number alone.

import { h } from './dom.js';

const cache = new WeakMap();

/** The explanations by code, fetched at most once per Api (one per sign-in). */
export function statusCodes(api) {
  if (!cache.has(api)) {
    const loaded = api.json('v1/status-codes').then(
      (answer) => new Map((answer.statusCodes ?? []).map((c) => [c.code, c])),
      (e) => { cache.delete(api); throw e; });
    cache.set(api, loaded);
  }
  return cache.get(api);
}

/** "200 AccountNotLicensed", or the number alone for a code outside the list. */
export function codeName(code, codes, fallbackName = null) {
  if (code === null || code === undefined) return 'no status code';
  const name = codes.get(code)?.name ?? fallbackName;
  return name ? `${code} ${name}` : `${code}`;
}

/** The meaning and next step of a code, as two short lines (nothing for an unknown code). */
export function explanation(code, codes) {
  const c = codes.get(code);
  if (!c) return h('span', { class: 'muted' }, 'Not in the SDK\'s list of status codes.');
  return h('span', { class: 'explanation' },
    h('span', { class: 'meaning' }, c.meaning), ' ',
    h('span', { class: 'next-step' }, h('strong', {}, 'Next: '), c.nextStep));
}
