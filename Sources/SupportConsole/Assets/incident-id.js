// Reading an incident id over the phone. The daemon's alphabet (IncidentID.swift) leaves out
// 0, O, 1, I, L, U and V, so a typed one of those is a misreading of a letter that is in it:
// O/0 of Q or D, 1/I/L of J, T or 7, U/V of W. The console tries each spelling the id could
// have been and keeps those the daemon knows.

export const ALPHABET = '23456789ABCDEFGHJKMNPQRSTWXYZ';

const LOOKALIKES = {
  0: ['Q', 'D'], O: ['Q', 'D'],
  1: ['J', 'T', '7'], I: ['J', 'T', '7'], L: ['J', 'T', '7'],
  U: ['W'], V: ['W'],
};

/** At most this many spellings are tried, so a garbled id does not become a scan. */
export const MAX_CANDIDATES = 27;

/** The 8 symbols a person typed, upper-cased, without prefix and separators; null if not 8. */
export function symbolsOf(text) {
  let s = String(text).toUpperCase().replace(/[\s\-_.:/]/g, '');
  // Strip the prefix only when it is one: the id's own symbols may start with MAM.
  if (s.length === 11 && s.startsWith('MAM')) s = s.slice(3);
  return s.length === 8 ? s : null;
}

function format(symbols) {
  return `MAM-${symbols.slice(0, 4)}-${symbols.slice(4)}`;
}

/**
 * Every well-formed id the text could stand for: one when it is already valid; for each
 * look-alike, its substitutes. `tooMany` is set (and the list empty) past MAX_CANDIDATES.
 */
export function candidates(text) {
  const symbols = symbolsOf(text);
  if (!symbols) return { ids: [], tooMany: false, wellFormed: false };
  let spellings = [''];
  for (const ch of symbols) {
    const options = ALPHABET.includes(ch) ? [ch] : LOOKALIKES[ch];
    if (!options) return { ids: [], tooMany: false, wellFormed: false };
    spellings = spellings.flatMap((prefix) => options.map((o) => prefix + o));
    if (spellings.length > MAX_CANDIDATES) return { ids: [], tooMany: true, wellFormed: true };
  }
  return { ids: spellings.map(format), tooMany: false, wellFormed: true };
}

/**
 * Resolves typed text against the daemon: `{found: [incident...], tried: [ids]}`. Each
 * candidate is one `GET /v1/incidents/{id}`; 404 means that spelling does not exist.
 */
export async function resolve(api, text) {
  const { ids, tooMany, wellFormed } = candidates(text);
  if (!wellFormed) return { found: [], tried: [], error: 'An incident id has 8 letters and digits, like MAM-7K2Q-9XPF.' };
  if (tooMany) return { found: [], tried: [], error: 'Too many unclear characters to guess: please read the id again.' };
  const found = [];
  for (const id of ids) {
    try {
      found.push(await api.json(`v1/incidents/${encodeURIComponent(id)}`));
    } catch (e) {
      if (e.status !== 404) throw e;
    }
  }
  return { found, tried: ids };
}
