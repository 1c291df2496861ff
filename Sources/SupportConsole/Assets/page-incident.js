// The incident page: what the user reported, where, and the story around it.

import { AroundPanel } from './around.js';
import { h } from './dom.js';
import { resolve } from './incident-id.js';
import { LogViewer } from './log-viewer.js';
import { statusCodes } from './status-codes.js';
import { DAY, HOUR, durationText, timeElement, toMillis } from './time.js';
import { buildTimeline, summarize } from './timeline.js';
import { timelineSection } from './timeline-view.js';
import {
  PII_SHOWS_WORDS, RECORD_CAP, deviceLink, facts, loading, truncationNote, userLink,
} from './page-parts.js';

/** How far before the upload the timeline reaches: two retry periods, so a failed
 * enrollment and the retry it scheduled are both on screen. */
const BEFORE = 2 * DAY;
const AFTER = HOUR;

export async function incidentPage(ctx, rawId) {
  const { api, main } = ctx;
  main.replaceChildren(h('h1', {}, `Incident ${rawId}`), loading());
  let incident;
  try {
    incident = await api.json(`v1/incidents/${encodeURIComponent(rawId)}`);
  } catch (e) {
    if (e.status !== 404) throw e;
    const { found } = await resolve(api, rawId);
    if (found.length !== 1) {
      main.replaceChildren(h('h1', {}, 'Incident not found'),
        h('p', { role: 'alert' }, `No incident matches ${rawId}. Check the id with the user: it looks like MAM-7K2Q-9XPF.`));
      return { title: 'Incident not found' };
    }
    incident = found[0];
  }
  const id = incident.id;
  if (decodeURIComponent(location.hash) !== `#/incident/${id}`) history.replaceState(null, '', `#/incident/${id}`);
  const env = incident.env;
  // The shared records' own device times say what the logs cover; the window around them
  // also takes in the upload's arrival, so the upload itself is on the timeline.
  const created = toMillis(incident.createdAt);
  const firstShared = toMillis(incident.firstTime);
  const lastShared = toMillis(incident.lastTime);
  const since = Math.min(firstShared ?? created, created) - BEFORE;
  const until = Math.max(lastShared ?? created, created) + AFTER;
  const range = { env, since: new Date(since).toISOString(), until: new Date(until).toISOString() };
  const subject = incident.deviceId ? { device: incident.deviceId } : { app: incident.appId };
  // The incident bundle is the device's story around the upload (2 days before to 1 hour
  // after, the window on screen) with every record the user shared and incident.json.
  ctx.bundle.set({ label: `Incident ${id}: the device's story and shared logs`, path: `v1/incidents/${encodeURIComponent(id)}/bundle`, params: {} });

  const [events, logs, shared, codes] = await Promise.all([
    api.records('events', { ...range, ...subject }, { cap: RECORD_CAP }),
    api.records('logs', { ...range, ...subject }, { cap: RECORD_CAP }),
    api.records('logs', { env, incident: id }, { cap: RECORD_CAP }),
    statusCodes(api).catch(() => null),
  ]);
  const seen = summarize(events.records, [...logs.records, ...shared.records], env);
  const levels = Object.entries(incident.levels ?? {}).map(([l, n]) => `${n} ${l}`).join(', ');

  const viewer = new LogViewer({ title: 'Logs the user shared', idPrefix: 'incident-logs', followNote: 'An upload is complete when it arrives: open the device to follow its new logs.' });
  viewer.add(shared.records);
  const around = new AroundPanel({ api, filter: { env, ...subject }, level: () => viewer.minLevel });

  main.replaceChildren(
    h('div', { class: 'page-head' },
      h('h1', { tabindex: '-1' }, 'Incident ', h('span', { class: 'mono', id: 'incident-id' }, id)),
      env === 'ppe' ? h('span', { class: 'badge env-ppe' }, 'PPE test data') : null),
    h('section', { class: 'panel summary', 'aria-label': 'Incident summary' },
      descriptionBlock(incident),
      facts([
        ['Reported', timeElement(toMillis(incident.createdAt))],
        ['App', incident.appId],
        ['Device', incident.deviceId ? deviceLink(incident.deviceId, env) : null],
        ['User', incident.identity ? userLink(incident.identity, env) : null],
        ['Session', incident.sessionId ?? null],
        ['App versions', seen.appVersions],
        ['SDK versions', seen.sdkVersions],
        ['Flags seen', seen.flags.length ? seen.flags : ['none']],
        ['Logs shared', `${incident.records} (${levels || 'none'})`],
        ['Logs cover', firstShared !== null && lastShared !== null
          ? h('span', { id: 'logs-cover' }, timeElement(firstShared), ' to ', timeElement(lastShared), ` (${durationText(lastShared - firstShared)})`) : null],
        ['GUID', h('span', { class: 'mono' }, incident.guid)],
      ])),
    timelineSection({
      since, until,
      note: [`From ${durationText(BEFORE)} before the shared logs to ${durationText(AFTER)} after the upload, for ${incident.deviceId ? 'the device' : 'the app'}.`,
        truncationNote('events', events), truncationNote('log records', logs)].filter(Boolean).join(' '),
      rebuild: (minLevel) => buildTimeline(events.records, logs.records, { minLevel, until }),
      onAround: (time) => around.open(time),
      codes,
    }),
    around.element,
    viewer.element);
  requestAnimationFrame(() => viewer.render());
  return { title: `Incident ${id}`, cleanup: () => { viewer.destroy(); around.destroy(); } };
}

/** What the user wrote, or one short line when it is withheld from this token. */
function descriptionBlock(incident) {
  if (incident.descriptionWithheld) {
    return h('p', { class: 'description-withheld' }, `The user wrote a description; ${PII_SHOWS_WORDS}.`);
  }
  return incident.description ? h('blockquote', { class: 'description' }, incident.description) : h('p', { class: 'muted' }, 'The user wrote no description.');
}
