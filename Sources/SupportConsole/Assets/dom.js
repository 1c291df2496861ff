// Tiny DOM helpers. Every piece of data reaches the page as text (textContent or an
// attribute), never as HTML: record fields come from devices and must not become markup.

/** h('a', {href: '#/x', class: 'k'}, 'text', child) — strings become text nodes. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** SVG elements need their namespace. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null) continue;
    el.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

/** Announces a short message to screen readers and shows it in the status line. */
export function announce(text) {
  const status = document.getElementById('status');
  if (status) status.textContent = text;
}

/**
 * The width <main> gives its content, in CSS pixels (null before the page is laid out):
 * drawings are built before they are placed, and size themselves from it.
 */
export function mainContentWidth() {
  const main = document.getElementById('main');
  if (!main?.clientWidth) return null;
  const style = getComputedStyle(main);
  return main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}
