// The bundle button in the header: each page says what is on screen (an incident, a device
// over a window, ...), and the button downloads that bundle with the token as a header,
// showing the bytes received while the daemon streams the archive.

import { h } from './dom.js';

export class BundleButton {
  constructor(api) {
    this.api = api;
    this.target = null;
    this.busy = null;
    this.button = h('button', { type: 'button', id: 'bundle-button', disabled: true }, 'Download bundle');
    this.progress = h('progress', { id: 'bundle-progress', hidden: true, 'aria-label': 'Bundle download progress' });
    this.state = h('span', { id: 'bundle-state', class: 'bundle-state', role: 'status' });
    this.choice = h('select', { id: 'bundle-choice', 'aria-label': 'What to bundle', hidden: true });
    this.choice.addEventListener('change', () => this.set(this.choices[Number(this.choice.value)], false, this.choices));
    this.choices = [];
    this.button.addEventListener('click', () => (this.busy ? this.busy.abort() : this.download()));
    this.element = h('div', { class: 'bundle' }, this.choice, this.button, this.progress, this.state);
  }

  /**
   * What the current page would bundle: `{label, path, params}`, `{unavailable: why}`, or
   * an array of such targets when the page shows more than one thing (the first is the default).
   */
  set(target, keepState = false, choices = null) {
    if (Array.isArray(target)) { this.set(target[0], keepState, target); return; }
    if (!choices) this.choices = target ? [target] : [];
    else this.choices = choices;
    this.choice.hidden = this.choices.length < 2;
    if (!choices || this.choice.options.length !== this.choices.length) {
      this.choice.replaceChildren(...this.choices.map((c, i) => h('option', { value: String(i) }, c.label)));
    }
    this.choice.value = String(Math.max(0, this.choices.indexOf(target)));
    this.target = target;
    if (this.busy) return;
    this.button.disabled = !target || !!target.unavailable;
    this.button.title = target?.unavailable ?? (target ? `Download the diagnostic bundle for ${target.label}` : 'Open an incident, device or user to bundle it');
    if (!keepState) this.state.textContent = target?.unavailable ?? '';
  }

  async download() {
    const target = this.target;
    if (!target || target.unavailable) return;
    this.busy = new AbortController();
    this.button.textContent = 'Cancel download';
    this.progress.hidden = false;
    this.progress.removeAttribute('value');
    this.state.textContent = `Preparing the bundle for ${target.label}…`;
    try {
      const { name, blob } = await this.api.download(target.path, target.params, (received, total) => {
        if (total) { this.progress.max = total; this.progress.value = received; }
        this.state.textContent = `${formatBytes(received)}${total ? ` of ${formatBytes(total)}` : ''} received`;
      }, this.busy.signal);
      const url = URL.createObjectURL(blob);
      const link = h('a', { href: url, download: name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      this.progress.max = 1; this.progress.value = 1;
      this.state.textContent = `Saved ${name} (${formatBytes(blob.size)}).`;
    } catch (e) {
      this.state.textContent = e.name === 'AbortError' ? 'Download cancelled.' : `Bundle failed: ${e.message}`;
    } finally {
      this.busy = null;
      this.button.textContent = 'Download bundle';
      setTimeout(() => { this.progress.hidden = true; }, 1500);
      this.set(this.target, true, this.choices);
    }
  }
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
