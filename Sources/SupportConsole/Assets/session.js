// The token lives in sessionStorage only: it survives a reload of this tab and is gone
// when the tab closes; it is never written to localStorage, a cookie or a URL.

const KEY = 'mamtelemetry.console.token';

export function storedToken() {
  return sessionStorage.getItem(KEY);
}

export function storeToken(token) {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(KEY);
}

/** What the signed-in token may do, from `GET /v1/whoami`. */
export class Identity {
  constructor(whoami) {
    this.id = whoami.id;
    this.name = whoami.name;
    this.scopes = whoami.scopes ?? [];
    this.effective = new Set(whoami.effectiveScopes ?? whoami.scopes ?? []);
  }

  may(scope) {
    return this.effective.has(scope);
  }

  /** Without `pii` the API answers with pseudonyms (user-…), and so does the console. */
  get seesPersonalData() {
    return this.may('pii');
  }
}
