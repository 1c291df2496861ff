// A log viewer that keeps up with a live stream of 1,000+ records a second: records are kept
// in arrays, only the rows in view exist in the DOM (a fixed pool reused while scrolling),
// and arriving records are drawn at most once per animation frame.

import { h } from './dom.js';
import { lateText } from './late.js';
import { localText, recordTime, utcText } from './time.js';
import { LEVELS, levelRank } from './timeline.js';

const ROW_HEIGHT = 24;
/** On a phone a row is two lines (time, level / message), so the message gets the full width. */
const TWO_LINE_ROW_HEIGHT = 42;
const NARROW = '(max-width: 600px)';
const OVERSCAN = 8;
const VIEWPORT_HEIGHT = 420;
/** Records kept in the browser; the oldest go first past this (the API keeps them all). */
export const MAX_RECORDS = 200_000;

export class LogViewer {
  /**
   * @param {object} options
   * @param {string} options.title heading of the section
   * @param {(onRecords, signal) => Promise} [options.follow] starts the live stream
   * @param {string} [options.followNote] why follow is unavailable, when it is
   */
  constructor({ title = 'Logs', follow = null, followNote = null, idPrefix = 'logs' }) {
    this.records = [];
    this.matches = [];
    this.maxId = -Infinity;
    this.minLevel = 'verbose';
    this.search = '';
    this.selected = -1;
    this.followFn = follow;
    this.abort = null;
    this.stickToBottom = true;
    this.frame = 0;
    this.idPrefix = idPrefix;
    this.twoLine = window.matchMedia(NARROW).matches;
    this.rowHeight = this.twoLine ? TWO_LINE_ROW_HEIGHT : ROW_HEIGHT;

    this.count = h('span', { class: 'log-count', 'aria-live': 'off' }, '0 records');
    this.levelSelect = h('select', { id: `${idPrefix}-level` },
      LEVELS.map((l) => h('option', { value: l }, l === 'verbose' ? 'all levels' : `${l} and above`)));
    this.searchInput = h('input', { id: `${idPrefix}-search`, type: 'search', placeholder: 'text in message, component, app', autocomplete: 'off', spellcheck: 'false' });
    this.followButton = h('button', { type: 'button', class: 'follow', 'aria-pressed': 'false', disabled: !follow, title: followNote ?? 'Stream new records as they arrive' }, 'Follow');
    this.newestButton = h('button', { type: 'button', class: 'secondary' }, 'Jump to newest');
    this.followState = h('span', { class: 'follow-state', role: 'status' }, followNote ?? '');
    this.spacer = h('div', { class: 'log-spacer' });
    this.rowsHost = h('div', { class: 'log-rows' });
    this.viewport = h('div', {
      class: `log-viewport${this.twoLine ? ' two-line' : ''}`, tabindex: '0', role: 'listbox', 'aria-label': `${title}: use arrow keys to move, Enter for details`,
    }, this.spacer, this.rowsHost);
    this.detail = h('pre', { class: 'log-detail', 'aria-live': 'polite', 'aria-label': 'Selected record' });
    this.pool = [];

    let searchTimer = 0;
    this.searchInput.addEventListener('input', () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => { this.search = this.searchInput.value.trim().toLowerCase(); this.refilter(); }, 120);
    });
    this.levelSelect.addEventListener('change', () => { this.minLevel = this.levelSelect.value; this.refilter(); });
    this.followButton.addEventListener('click', () => (this.abort ? this.stopFollow() : this.startFollow()));
    this.newestButton.addEventListener('click', () => { this.stickToBottom = true; this.scrollToEnd(); });
    this.viewport.addEventListener('scroll', () => {
      const v = this.viewport;
      this.stickToBottom = v.scrollTop + v.clientHeight >= v.scrollHeight - this.rowHeight;
      this.schedule();
    });
    this.viewport.addEventListener('keydown', (e) => this.onKey(e));
    this.rowsHost.addEventListener('click', (e) => {
      const row = e.target.closest('.log-row');
      if (row) this.select(Number(row.dataset.index));
    });

    this.element = h('section', { id: idPrefix, class: 'panel log-panel', 'aria-labelledby': `${idPrefix}-heading` },
      h('div', { class: 'panel-head' },
        h('h2', { id: `${idPrefix}-heading` }, title),
        h('label', { for: `${idPrefix}-level` }, 'Level'), this.levelSelect,
        h('label', { for: `${idPrefix}-search` }, 'Search'), this.searchInput,
        this.followButton, this.newestButton, this.count),
      this.followState, this.viewport, this.detail);
  }

  /** Adds records (any order within a chunk); ones already held (same id) are skipped. */
  add(records) {
    let appended = false;
    for (const r of records) {
      if (typeof r.id === 'number') {
        if (r.id <= this.maxId) continue;
        this.maxId = r.id;
      }
      r._text = `${r.message ?? ''}\u0000${r.component ?? r.category ?? ''}\u0000${r.appId ?? ''}`.toLowerCase();
      this.records.push(r);
      if (this.matchesFilter(r)) this.matches.push(this.records.length - 1);
      appended = true;
    }
    if (this.records.length > MAX_RECORDS) {
      this.records.splice(0, this.records.length - MAX_RECORDS + MAX_RECORDS / 10);
      this.refilter();
      return;
    }
    if (appended) this.schedule();
  }

  /** Sets the minimum level shown, as if chosen in the level select. */
  setLevel(level) {
    this.levelSelect.value = level;
    this.minLevel = this.levelSelect.value;
    this.refilter();
  }

  matchesFilter(r) {
    if (levelRank(r.level) < levelRank(this.minLevel)) return false;
    return !this.search || r._text.includes(this.search);
  }

  refilter() {
    this.matches = [];
    for (let i = 0; i < this.records.length; i++) if (this.matchesFilter(this.records[i])) this.matches.push(i);
    this.selected = -1;
    this.detail.textContent = '';
    this.schedule();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  scrollToEnd() {
    this.viewport.scrollTop = this.viewport.scrollHeight;
    this.schedule();
  }

  render() {
    const total = this.matches.length;
    this.spacer.style.height = `${total * this.rowHeight}px`;
    // Short lists take only the room they need; long ones scroll in a fixed-height box.
    this.viewport.style.height = `${Math.min(VIEWPORT_HEIGHT, Math.max(3, total) * this.rowHeight + 4)}px`;
    if (this.stickToBottom) this.viewport.scrollTop = this.viewport.scrollHeight;
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / this.rowHeight) - OVERSCAN);
    const visible = Math.ceil((this.viewport.clientHeight || 480) / this.rowHeight) + 2 * OVERSCAN;
    const last = Math.min(total, first + visible);
    while (this.pool.length < last - first) {
      const row = h('div', { class: 'log-row', role: 'option' },
        h('time'), h('span', { class: 'badge' }), h('span', { class: 'log-app' }), h('span', { class: 'log-component' }), h('span', { class: 'log-late' }), h('span', { class: 'log-message' }));
      this.pool.push(row);
      this.rowsHost.append(row);
    }
    this.pool.forEach((row, k) => {
      const i = first + k;
      if (i >= last) { row.hidden = true; return; }
      const r = this.records[this.matches[i]];
      row.hidden = false;
      row.style.transform = `translateY(${i * this.rowHeight}px)`;
      row.dataset.index = String(i);
      row.id = `${this.idPrefix}-row-${i}`;
      row.setAttribute('aria-setsize', String(total));
      row.setAttribute('aria-posinset', String(i + 1));
      row.setAttribute('aria-selected', String(i === this.selected));
      const late = lateText(r);
      row.className = `log-row level-${r.level ?? 'info'}${late ? ' late' : ''}${i === this.selected ? ' selected' : ''}`;
      const [time, level, app, component, lateMark, message] = row.children;
      const t = recordTime(r);
      time.textContent = localText(t);
      time.title = utcText(t);
      time.dateTime = new Date(t).toISOString();
      level.textContent = r.level ?? 'info';
      level.className = `badge level-${r.level ?? 'info'}`;
      app.textContent = r.appId ?? '';
      component.textContent = r.component ?? r.category ?? '';
      lateMark.textContent = late ?? '';
      lateMark.title = late ? 'The device wrote it this long before the daemon received it (uploaded late); it is shown as it arrives' : '';
      message.textContent = r.message ?? '';
    });
    const held = this.records.length;
    this.count.textContent = total === held ? `${held.toLocaleString()} records` : `${total.toLocaleString()} of ${held.toLocaleString()} records`;
    this.count.dataset.total = String(held);
    this.count.dataset.shown = String(total);
  }

  select(i) {
    if (i < 0 || i >= this.matches.length) return;
    this.selected = i;
    const r = this.records[this.matches[i]];
    const { _text, ...shown } = r;
    this.detail.textContent = JSON.stringify(shown, null, 2);
    this.viewport.setAttribute('aria-activedescendant', `${this.idPrefix}-row-${i}`);
    const top = i * this.rowHeight;
    if (top < this.viewport.scrollTop) this.viewport.scrollTop = top;
    else if (top + this.rowHeight > this.viewport.scrollTop + this.viewport.clientHeight) this.viewport.scrollTop = top + this.rowHeight - this.viewport.clientHeight;
    this.stickToBottom = false;
    this.schedule();
  }

  onKey(e) {
    const page = Math.max(1, Math.floor(this.viewport.clientHeight / this.rowHeight) - 1);
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    if (e.key in moves) {
      e.preventDefault();
      this.select(Math.min(this.matches.length - 1, Math.max(0, (this.selected < 0 ? Math.floor(this.viewport.scrollTop / this.rowHeight) : this.selected) + moves[e.key])));
    } else if (e.key === 'Home') {
      e.preventDefault(); this.select(0);
    } else if (e.key === 'End') {
      e.preventDefault(); this.select(this.matches.length - 1);
    }
  }

  async startFollow() {
    if (!this.followFn || this.abort) return;
    this.abort = new AbortController();
    this.followButton.setAttribute('aria-pressed', 'true');
    this.followButton.textContent = 'Stop following';
    this.followState.textContent = 'Following: new records appear as they are stored.';
    this.stickToBottom = true;
    const controller = this.abort;
    try {
      await this.followFn((records) => this.add(records), controller.signal);
      if (!controller.signal.aborted) this.followState.textContent = 'The stream ended (the daemon stopped or restarted).';
    } catch (e) {
      this.followState.textContent = `Follow stopped: ${e.message}`;
    } finally {
      if (this.abort === controller) this.stopFollow(false);
    }
  }

  stopFollow(user = true) {
    this.abort?.abort();
    this.abort = null;
    this.followButton.setAttribute('aria-pressed', 'false');
    this.followButton.textContent = 'Follow';
    if (user) this.followState.textContent = 'Not following.';
  }

  destroy() {
    this.stopFollow(false);
    if (this.frame) cancelAnimationFrame(this.frame);
  }
}
