// Device and user pages: one subject over a chosen window — facts, the timeline and a log
// viewer that can follow new records live. A user's story takes in the logs of the devices
// the identity used in the window (the API's default `expand=devices`), and says which.

import { AroundPanel } from './around.js';
import { h } from './dom.js';
import { LogViewer } from './log-viewer.js';
import { statusCodes } from './status-codes.js';
import { windowByKey } from './time.js';
import { buildTimeline, levelRank, summarize } from './timeline.js';
import { timelineSection } from './timeline-view.js';
import {
  RECORD_CAP, deviceChoices, deviceLink, facts, joinNodes, loading, truncationNote, userLink, windowControls,
} from './page-parts.js';

/**
 * @param {'device'|'user'} kind
 * @param {string} subject device id, identity, or (without `pii`) a user pseudonym
 */
export async function subjectPage(ctx, kind, subject, query) {
  const { api, main } = ctx;
  const win = windowByKey(query.get('window'), '3d');
  const env = query.get('env') === 'ppe' ? 'ppe' : 'prod';
  const until = Date.now();
  const since = until - win.ms;
  const range = { env, since: new Date(since).toISOString(), until: new Date(until).toISOString() };
  const heading = kind === 'device' ? 'Device' : 'User';

  // A user is the identity (with `pii`) or its `user-…` pseudonym: the API filters by either,
  // and refuses an identity from a token that sees pseudonyms only.
  const filter = kind === 'device' ? { device: subject } : { identity: subject };

  const controls = windowControls({
    windowKey: win.key, env,
    onChange: ({ window, env: e }) => { location.hash = `#/${kind}/${encodeURIComponent(subject)}?window=${window}${e !== 'prod' ? `&env=${e}` : ''}`; },
  });
  main.replaceChildren(h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, `${heading} `, h('span', { class: 'mono' }, subject)), controls), loading());

  ctx.bundle.set({ label: `${kind} ${subject}`, path: 'v1/bundles', params: { ...filter, ...range } });

  const [events, logs, codes] = await Promise.all([
    api.records('events', { ...range, ...filter }, { cap: RECORD_CAP }),
    api.records('logs', { ...range, ...filter }, { cap: RECORD_CAP }),
    statusCodes(api).catch(() => null),
  ]);
  const ev = events.records;
  const lg = logs.records;
  const seen = summarize(ev, lg, env);
  const byLevel = {};
  for (const r of lg) byLevel[r.level ?? 'info'] = (byLevel[r.level ?? 'info'] ?? 0) + 1;
  const levels = Object.entries(byLevel).sort((a, b) => levelRank(b[0]) - levelRank(a[0])).map(([l, n]) => `${n} ${l}`).join(', ');

  const follow = (onRecords, signal) => api.follow('logs', { env, ...filter, limit: 1000 }, onRecords, signal);
  const viewer = new LogViewer({ title: 'Logs', idPrefix: 'subject-logs', follow });
  viewer.add(lg);
  const around = new AroundPanel({ api, filter: { env, ...filter }, level: () => viewer.minLevel });

  const notes = [truncationNote('events', events), truncationNote('log records', logs)].filter(Boolean);
  main.replaceChildren(
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, `${heading} `, h('span', { class: 'mono' }, subject)), controls),
    h('section', { class: 'panel summary', 'aria-label': `${heading} summary` },
      kind === 'user' ? storyNote(logs.search?.identity, seen.devices, env) : deviceNote(events.search?.device ?? logs.search?.device, env),
      facts([
      ['Window', win.label],
      ['Environment', env === 'ppe' ? 'PPE (test data)' : 'production'],
      ['Apps', seen.apps],
      kind === 'device' ? ['Users', seen.identities.map((u) => userLink(u, env))] : ['Devices', seen.devices.map((d) => deviceLink(d, env))],
      ['App versions', seen.appVersions],
      ['SDK versions', seen.sdkVersions],
      ['Flags seen', seen.flags.length ? seen.flags : ['none']],
      ['Records', `${ev.length} events, ${lg.length} log records${levels ? ` (${levels})` : ''}`],
    ])),
    timelineSection({
      since, until, note: notes.join(' ') || null,
      rebuild: (minLevel) => buildTimeline(ev, lg, { minLevel, until }),
      onAround: (time) => around.open(time),
      codes,
    }),
    around.element,
    viewer.element);
  requestAnimationFrame(() => viewer.render());
  return { title: `${heading} ${subject}`, cleanup: () => { viewer.destroy(); around.destroy(); } };
}

/**
 * How the daemon read the device id typed (`search.device`): matched ignoring case or as a
 * unique prefix ("Showing device X: matched ..."), or nothing matched, with the nearest ids
 * to pick from. Nothing when the id matched exactly.
 */
function deviceNote(device, env) {
  if (!device || device.match === 'exact') return null;
  if (device.match === 'none') {
    return h('div', { id: 'device-match', class: 'note' },
      h('p', {}, `No records of device ${device.asked} in ${env === 'ppe' ? 'PPE' : 'production'} in this window.`),
      device.suggestions?.length ? deviceChoices('Nearest device ids:', device.suggestions, env) : null);
  }
  const how = device.match === 'prefix' ? 'the one device id starting with' : 'the device id equal, ignoring case, to';
  return h('p', { id: 'device-match', class: 'note' }, 'Showing device ', deviceLink(device.searched, env), `: ${how} “${device.asked}”.`);
}

/**
 * "The user's own records, with the logs of devices X, Y", from the API's `search.identity`,
 * which a pseudonym query carries as a UPN query does (the API widens both alike). Without
 * it (an older daemon) the page links the devices its records came from.
 */
function storyNote(identity, seenDevices, env) {
  if (!identity) {
    return h('p', { id: 'story-devices' }, 'The records that name this user. Their devices\' own logs: open ',
      seenDevices.length ? joinNodes(seenDevices.map((d) => deviceLink(d, env)), ' or ') : 'a device', '.');
  }
  const devices = identity.devices ?? [];
  let told;
  if (!identity.expanded) told = ['Only the records that name this user.'];
  else if (!devices.length) told = ['The records that name this user; no device of theirs sent records in this window.'];
  else {
    told = ['The records that name this user, with the logs of ', devices.length === 1 ? 'device ' : 'devices ',
      joinNodes(devices.map((d) => deviceLink(d, env))),
      identity.devicesTruncated ? ' and more (the first 50 are listed)' : '',
      ' (the devices they used in this window).'];
  }
  return h('p', { id: 'story-devices' }, told);
}
