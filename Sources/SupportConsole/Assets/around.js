// "Logs around this moment": a timeline entry opens the logs of the page's subject in the
// window TIME ± 2 min (`around=TIME&span=2m`), with the page's log level filter kept, in a
// panel of its own so the story around it stays where it was.

import { h } from './dom.js';
import { LogViewer } from './log-viewer.js';
import { errorBox, loading } from './page-parts.js';
import { timeElement } from './time.js';

export const AROUND_SPAN = '2m';
const AROUND_CAP = 5_000;

export class AroundPanel {
  /**
   * @param {object} options
   * @param {Api} options.api
   * @param {object} options.filter the page's record filter (env, device, identity, app…)
   * @param {() => string} options.level the page's log level filter (minimum level)
   */
  constructor({ api, filter, level }) {
    this.api = api;
    this.filter = filter;
    this.level = level;
    this.request = 0;
    this.viewer = null;
    this.heading = h('h2', { id: 'around-heading', tabindex: '-1' }, 'Logs around a moment');
    this.body = h('div');
    const close = h('button', { type: 'button', class: 'secondary', onclick: () => this.close() }, 'Close');
    this.element = h('section', { id: 'around', class: 'panel', 'aria-labelledby': 'around-heading', hidden: true },
      h('div', { class: 'panel-head' }, this.heading, close), this.body);
  }

  /** Loads the logs of `time` ± 2 min and brings the panel into view. */
  async open(time) {
    const mine = ++this.request;
    const level = this.level();
    const at = new Date(time).toISOString();
    this.viewer?.destroy();
    this.viewer = null;
    this.element.hidden = false;
    this.heading.replaceChildren('Logs around ', timeElement(time), ` (± ${AROUND_SPAN.replace('m', ' min')}${level === 'verbose' ? '' : `, ${level} and above`})`);
    this.body.replaceChildren(loading());
    this.element.scrollIntoView({ block: 'start' });
    this.heading.focus({ preventScroll: true });
    try {
      const params = { ...this.filter, around: at, span: AROUND_SPAN, level: level === 'verbose' ? undefined : level };
      const result = await this.api.records('logs', params, { cap: AROUND_CAP });
      if (mine !== this.request) return;
      const viewer = new LogViewer({ title: 'Records', idPrefix: 'around-logs', followNote: 'A moment in the past: use the logs below to follow.' });
      viewer.setLevel(level);
      viewer.add(result.records);
      this.viewer = viewer;
      this.body.replaceChildren(
        h('p', { class: 'muted', id: 'around-count' }, result.records.length
          ? `${result.records.length}${result.truncated ? '+' : ''} log records in this window.`
          : 'No log records in this window.'),
        viewer.element);
      viewer.element.dataset.around = at;
      requestAnimationFrame(() => viewer.render());
    } catch (e) {
      if (mine === this.request) this.body.replaceChildren(errorBox(e));
    }
  }

  close() {
    this.request++;
    this.viewer?.destroy();
    this.viewer = null;
    this.element.hidden = true;
    this.body.replaceChildren();
  }

  destroy() {
    this.close();
  }
}
