// Times are shown in the browser's zone; the exact UTC instant is on hover (title) and in
// the <time datetime> attribute, so a support engineer and the user can compare clocks.

const localFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: '2-digit', day: '2-digit',
  hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false,
});
const shortFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false,
});

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Milliseconds since the epoch from an RFC 3339 string or a number; null when absent. */
export function toMillis(value) {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number') return value;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** A record's device time, or when the daemon received it if the device sent none. */
export function recordTime(record) {
  return toMillis(record.time) ?? toMillis(record.receivedAt) ?? 0;
}

export function utcText(ms) {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

export function localText(ms) {
  return localFormat.format(new Date(ms));
}

export function shortText(ms) {
  return shortFormat.format(new Date(ms));
}

/** <time> with local text, the UTC instant on hover and machine-readable datetime. */
export function timeElement(ms, short = false) {
  const el = document.createElement('time');
  el.dateTime = new Date(ms).toISOString();
  el.title = utcText(ms);
  el.textContent = short ? shortText(ms) : localText(ms);
  return el;
}

/** "3 h 12 min", "45 min", "12 s". */
export function durationText(ms) {
  const abs = Math.abs(ms);
  if (abs < MINUTE) return `${Math.round(abs / 1000)} s`;
  const minutes = Math.floor(abs / MINUTE);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** The windows the device and user pages offer, as the API's relative times. */
export const WINDOWS = [
  { key: '1h', label: 'Last hour', ms: HOUR },
  { key: '6h', label: 'Last 6 hours', ms: 6 * HOUR },
  { key: '24h', label: 'Last 24 hours', ms: DAY },
  { key: '3d', label: 'Last 3 days', ms: 3 * DAY },
  { key: '7d', label: 'Last 7 days', ms: 7 * DAY },
  { key: '30d', label: 'Last 30 days', ms: 30 * DAY },
];

export function windowByKey(key, fallback = '3d') {
  return WINDOWS.find((w) => w.key === key) ?? WINDOWS.find((w) => w.key === fallback);
}
