// Late arrivals in a live follow: devices upload in batches, so a followed record may have
// been written on the device well before it reached the daemon. The stream says by how much
// (`arrivalDelayMs`); a minute or more is marked, as `mamtelemetryctl logs -f` does. A
// record of a diagnostic upload (`incident`) is old on purpose and is not marked.

import { MINUTE } from './time.js';

export const LATE_AFTER = MINUTE;

/** `20 min`, `3 h 5 min`, `2 d 4 h` (whole units, rounded down, as the CLI says it). */
export function spokenDelay(ms) {
  const minutes = Math.floor(ms / MINUTE);
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${Math.floor(minutes / 1440)} d ${Math.floor((minutes % 1440) / 60)} h`;
}

/** "arrived 20 min late" for a streamed record that came late, else null. */
export function lateText(record) {
  const delay = record.arrivalDelayMs;
  if (record.incident || typeof delay !== 'number' || !(delay >= LATE_AFTER)) return null;
  return `arrived ${spokenDelay(delay)} late`;
}
