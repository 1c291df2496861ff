// The story of a device or user as one list: launches, enrollment calls, Intune actions and
// log records in device-time order, the SDK's rhythm as expected marks (a failed enrollment
// is retried every 24 h, an enrolled app checks in for policy every 8 h), and the gaps where
// nothing arrived. Pure functions of the API's records, so they are easy to check.

import { HOUR, MINUTE, durationText, recordTime } from './time.js';

export const LEVELS = ['verbose', 'info', 'warning', 'error'];
export const levelRank = (level) => Math.max(0, LEVELS.indexOf(level ?? 'info'));

export const RETRY_AFTER_FAILURE = 24 * HOUR;
export const POLICY_CHECK_IN = 8 * HOUR;
/** A call within this fraction of the period around the expected time counts as on rhythm. */
export const RHYTHM_TOLERANCE = 0.25;
/** Silence longer than this between any two records is shown as a gap. */
export const GAP = HOUR;

/** Whether an enrollment call failed: its own didSucceed, else the 2xx range of its code. */
export function enrollmentFailed(data) {
  if (typeof data.didSucceed === 'boolean') return !data.didSucceed;
  if (typeof data.statusCode === 'number') return data.statusCode >= 200;
  return false;
}

function place(record) {
  return { app: record.appId ?? '', device: record.deviceId ?? '' };
}

/** One timeline entry for an event. */
export function eventEntry(record) {
  const data = record.data ?? {};
  const base = { time: recordTime(record), id: record.id, record, ...place(record) };
  switch (record.name) {
    case 'AppLaunch':
      return { ...base, kind: 'launch', title: `App launch · ${data.managementType ?? 'unknown management'}`,
        detail: [record.appVersion && `app ${record.appVersion}`, record.sdkVersion && `SDK ${record.sdkVersion}`].filter(Boolean).join(' · ') };
    case 'EnrollmentCall': {
      const failed = enrollmentFailed(data);
      const code = typeof data.statusCode === 'number' ? data.statusCode : null;
      const status = code === null ? 'no status' : record.statusName ? `${record.statusName} (${code})` : `status ${code}`;
      const detail = [
        data.api && `via ${data.api}`,
        typeof data.durationMs === 'number' && `${Math.round(data.durationMs)} ms`,
        data.errorString && `error: ${data.errorString}`,
      ].filter(Boolean).join(' · ');
      return { ...base, kind: 'enrollment', failed, operation: data.operation ?? 'unknown', statusCode: code,
        statusName: record.statusName ?? null, durationMs: data.durationMs ?? null,
        title: `${data.operation ?? 'enrollment'} → ${status}${failed ? ' · failed' : ''}`, detail };
    }
    case 'IntuneAction':
      return { ...base, kind: 'action', title: `Intune action · ${data.action ?? 'unknown'}`,
        detail: [data.result && `result ${data.result}`, data.details && String(data.details)].filter(Boolean).join(' · ') };
    default:
      return { ...base, kind: 'event', title: record.name ?? 'event', detail: '' };
  }
}

export function logEntry(record) {
  return { time: recordTime(record), id: record.id, record, ...place(record), kind: 'log',
    level: record.level ?? 'info', incident: record.incident ?? null,
    title: record.message ?? '', detail: record.component ?? record.category ?? '' };
}

/**
 * The SDK's expected next calls after each enrollment call, with what happened:
 * `seen` (a call came within the tolerance), `missed` (the time passed without one),
 * `upcoming` (still ahead). An expectation overtaken by an earlier call is left out: that
 * call sets its own rhythm.
 */
export function expectedMarks(enrollments, now) {
  const marks = [];
  const byPlace = new Map();
  for (const e of enrollments) {
    const key = `${e.app}\u0000${e.device}`;
    if (!byPlace.has(key)) byPlace.set(key, []);
    byPlace.get(key).push(e);
  }
  for (const calls of byPlace.values()) {
    calls.sort((a, b) => a.time - b.time);
    calls.forEach((call, i) => {
      let period;
      let what;
      if (call.failed && call.operation !== 'policyCheckIn') {
        period = RETRY_AFTER_FAILURE; what = 'enrollment retry';
      } else if (call.operation === 'enroll' || call.operation === 'policyCheckIn') {
        period = POLICY_CHECK_IN; what = 'policy check-in';
      } else {
        return;
      }
      const due = call.time + period;
      const tolerance = period * RHYTHM_TOLERANCE;
      const next = calls[i + 1];
      if (next && next.time < due - tolerance) return;
      let status;
      if (next && next.time <= due + tolerance) status = 'seen';
      else if (now > due + tolerance) status = 'missed';
      else status = 'upcoming';
      const hours = period / HOUR;
      let outcome = ' · upcoming';
      if (status === 'seen') {
        const off = next.time - due;
        outcome = Math.abs(off) < MINUTE ? ' · came on time' : ` · came ${durationText(off)} ${off < 0 ? 'early' : 'late'}`;
      }
      const title = status === 'missed'
        ? `Expected ${what} did not come (${hours} h after ${call.operation})`
        : `Expected ${what} (${hours} h after ${call.operation})${outcome}`;
      marks.push({ time: due, kind: 'expected', status, period, after: call, app: call.app, device: call.device, title, detail: '' });
    });
  }
  return marks;
}

/** Gaps longer than `gap` between consecutive records (all kinds and levels). */
export function gaps(times, gap = GAP) {
  const sorted = [...times].sort((a, b) => a - b);
  const out = [];
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] - sorted[i - 1] > gap) out.push({ kind: 'gap', time: sorted[i - 1], end: sorted[i], length: sorted[i] - sorted[i - 1] });
  }
  return out;
}

/**
 * The whole timeline. Logs below `minLevel` are left out of the list (they stay in the log
 * viewer) but still count when finding gaps, so a gap always means nothing arrived.
 */
export function buildTimeline(events, logs, { minLevel = 'warning', now = Date.now(), until = now } = {}) {
  const eventEntries = events.map(eventEntry);
  const logEntries = logs.map(logEntry);
  const rank = levelRank(minLevel);
  const shownLogs = logEntries.filter((e) => levelRank(e.level) >= rank);
  const marks = expectedMarks(eventEntries.filter((e) => e.kind === 'enrollment'), now)
    .filter((m) => m.status !== 'upcoming' || m.time <= until + RETRY_AFTER_FAILURE);
  const gapEntries = gaps([...eventEntries, ...logEntries].map((e) => e.time));
  // A gap starts at the record before the silence, so at the same instant it comes after
  // that record (and an expected mark before the records it was due with).
  const order = { expected: 0, gap: 3 };
  return [...eventEntries, ...shownLogs, ...marks, ...gapEntries].sort((a, b) =>
    a.time - b.time || (order[a.kind] ?? 1) - (order[b.kind] ?? 1) || (a.id ?? 0) - (b.id ?? 0));
}

/** Versions and flags seen in the records, for the facts beside a timeline. */
export function summarize(events, logs, env) {
  const appVersions = new Set();
  const sdkVersions = new Set();
  const apps = new Set();
  const identities = new Set();
  const devices = new Set();
  const flags = new Set();
  if (env === 'ppe') flags.add('PPE (MAMTelemetryUsePPE)');
  for (const r of [...events, ...logs]) {
    if (r.appVersion) appVersions.add(r.appVersion);
    if (r.sdkVersion) sdkVersions.add(r.sdkVersion);
    if (r.appId) apps.add(r.appId);
    if (r.identity) identities.add(r.identity);
    if (r.deviceId) devices.add(r.deviceId);
    const settings = r.settings ?? {};
    const on = (name) => [true, 'YES', 'yes', 'true', '1', 1].includes(settings[name]);
    if (on('MAMTelemetryUsePPE') || on('UsePPE')) flags.add('PPE (MAMTelemetryUsePPE)');
    if (on('VerboseLoggingEnabled')) flags.add('VerboseLoggingEnabled');
    if (on('MAMTelemetryDisabled')) flags.add('MAMTelemetryDisabled');
  }
  if (logs.some((r) => r.level === 'verbose')) flags.add('verbose log records present');
  return { appVersions: [...appVersions], sdkVersions: [...sdkVersions], apps: [...apps], identities: [...identities], devices: [...devices], flags: [...flags] };
}
