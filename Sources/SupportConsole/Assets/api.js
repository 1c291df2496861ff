// The console's only way to the daemon: its public HTTP API, with the token as a bearer
// header (never in a URL, where it would land in logs and history).

export class ApiError extends Error {
  /**
   * `candidates` are the devices an ambiguous device id could mean (`ambiguous_device`), so
   * a page can offer them as links instead of only saying the id was ambiguous.
   */
  constructor(status, code, message, candidates = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.candidates = candidates;
  }
}

/** The API root relative to the console (`/console/` -> `/`), so a proxy prefix still works. */
export function apiURL(path, params = {}) {
  const url = new URL(`../${path}`, document.baseURI);
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  return url;
}

export class Api {
  constructor(token, onUnauthorized = () => {}) {
    this.token = token;
    this.onUnauthorized = onUnauthorized;
  }

  async fetch(path, params = {}, init = {}) {
    const headers = new Headers(init.headers ?? {});
    headers.set('Authorization', `Bearer ${this.token}`);
    let response;
    try {
      response = await fetch(apiURL(path, params), { ...init, headers, cache: 'no-store', credentials: 'omit' });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new ApiError(0, 'network', `the daemon did not answer (${e.message})`);
    }
    if (!response.ok) {
      let code = `http_${response.status}`;
      let message = `HTTP ${response.status}`;
      let candidates = null;
      try {
        const body = await response.json();
        code = body?.error?.code ?? code;
        message = body?.error?.message ?? message;
        candidates = Array.isArray(body?.candidates) ? body.candidates : null;
      } catch { /* not JSON: keep the status line */ }
      if (response.status === 401) this.onUnauthorized(message);
      throw new ApiError(response.status, code, message, candidates);
    }
    return response;
  }

  async json(path, params = {}, init = {}) {
    const response = await this.fetch(path, params, init);
    return response.json();
  }

  /**
   * Every record of a query, page by page (oldest first), up to `cap`; `truncated` says
   * whether more matched than were read, `search` is what the daemon searched (first page:
   * the resolved device, a user's devices, the computed window).
   */
  async records(kind, params, { cap = 20_000, signal } = {}) {
    const out = [];
    let cursor;
    let search = null;
    for (;;) {
      const limit = Math.min(5_000, cap - out.length);
      const page = await this.json(`v1/${kind}`, { ...params, order: 'asc', limit, cursor }, { signal });
      search ??= page.search ?? null;
      out.push(...page[kind]);
      cursor = page.nextCursor;
      if (!cursor) return { records: out, truncated: false, search };
      if (out.length >= cap) return { records: out, truncated: true, search };
    }
  }

  /**
   * Streams NDJSON records from a `follow=true` query with fetch (EventSource cannot send an
   * Authorization header). Calls `onRecords` with each chunk's complete records; blank
   * lines are the server's heartbeats. Resolves when the stream ends or `signal` aborts.
   */
  async follow(kind, params, onRecords, signal) {
    const response = await this.fetch(`v1/${kind}`, { ...params, follow: 'true' }, {
      headers: { Accept: 'application/x-ndjson' }, signal,
    });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += decoder.decode(value, { stream: true });
        const lines = pending.split('\n');
        pending = lines.pop();
        const records = [];
        for (const line of lines) {
          if (line.trim() === '') continue;
          try { records.push(JSON.parse(line)); } catch { /* a torn line cannot happen; skip rather than stop */ }
        }
        if (records.length) onRecords(records);
      }
    } catch (e) {
      if (e.name !== 'AbortError') throw e;
    } finally {
      reader.releaseLock?.();
    }
  }

  /**
   * Downloads a bundle, reporting bytes as they arrive (bundles stream while they are
   * built, so the total is unknown until the end). Returns the file name and the blob.
   */
  async download(path, params, onProgress, signal) {
    const response = await this.fetch(path, params, { signal });
    const disposition = response.headers.get('Content-Disposition') ?? '';
    const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'mam-bundle.zip';
    const total = Number(response.headers.get('Content-Length')) || null;
    const reader = response.body.getReader();
    const chunks = [];
    let received = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.length;
      onProgress(received, total);
    }
    return { name, blob: new Blob(chunks, { type: response.headers.get('Content-Type') ?? 'application/octet-stream' }) };
  }
}
