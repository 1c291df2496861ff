// The console's shell: sign-in, the header (search, bundle button, who is signed in) and the
// hash router (#/incident/ID, #/device/ID, #/user/ID, #/incidents, #/fleet), each route taking
// a query after it (#/incidents?env=prod&since=-1h, #/fleet?app=…&env=…&code=…) as the
// alerts' runbook links do.

import { Api } from './api.js';
import { BundleButton } from './bundle.js';
import { h } from './dom.js';
import { resolve } from './incident-id.js';
import { fleetPage } from './page-fleet.js';
import { incidentPage } from './page-incident.js';
import { incidentsPage } from './page-incidents.js';
import { errorBox } from './page-parts.js';
import { subjectPage } from './page-subject.js';
import { Identity, forgetToken, storeToken, storedToken } from './session.js';

const main = document.getElementById('main');
const header = document.getElementById('session');
let ctx = null;
let current = null;
let generation = 0;

function signInPage(message = '') {
  document.title = 'Sign in · mamtelemetryd support console';
  header.hidden = true;
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'token-help' });
  const error = h('p', { class: 'error', role: 'alert', hidden: !message }, message);
  const form = h('form', { class: 'panel signin', 'aria-labelledby': 'signin-heading' },
    h('h1', { id: 'signin-heading' }, 'Sign in'),
    h('label', { for: 'token' }, 'Access token'), input,
    h('p', { id: 'token-help', class: 'muted' },
      'Paste a token from ', h('code', {}, 'mamtelemetryctl tokens create --name you --scope read --scope bundle'),
      '. It is kept in this tab only (session storage) and sent as an Authorization header.'),
    error,
    h('button', { type: 'submit' }, 'Sign in'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.hidden = true;
    const token = input.value.trim();
    try {
      await start(token);
      storeToken(token);
      route();
    } catch (err) {
      error.textContent = err.status === 403
        ? `This token cannot read: the console needs the read scope. (${err.message})`
        : err.status === 401 ? 'The daemon does not know this token (unknown or revoked).' : err.message;
      error.hidden = false;
      input.focus();
    }
  });
  main.replaceChildren(form);
  input.focus();
}

/** Checks the token with `GET /v1/whoami` and builds the header for its scopes. */
async function start(token) {
  const api = new Api(token, () => signOut('Your token is no longer accepted; sign in again.'));
  const identity = new Identity(await api.json('v1/whoami'));
  const bundle = new BundleButton(api);
  ctx = { api, identity, bundle, main };
  const scopes = [...identity.effective].join(', ');
  document.getElementById('who').replaceChildren(
    h('span', { class: 'who-name', title: `May: ${scopes}` }, identity.name),
    h('span', { class: 'who-scopes', title: 'What this token may do' }, scopes),
    identity.seesPersonalData ? h('span', { class: 'badge pii' }, 'personal data visible')
      : h('span', { class: 'badge redacted', title: 'Without the pii scope, users appear as pseudonyms (user-…) and personal data in messages is replaced' }, 'pseudonyms'));
  const slot = document.getElementById('bundle-slot');
  slot.replaceChildren(identity.may('bundle') ? bundle.element : '');
  header.hidden = false;
}

function signOut(message = '') {
  current?.cleanup?.();
  current = null;
  ctx = null;
  forgetToken();
  document.getElementById('who').replaceChildren();
  document.getElementById('bundle-slot').replaceChildren();
  signInPage(message);
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?');
  const parts = path.split('/').map((p) => decodeURIComponent(p));
  return { parts, query: new URLSearchParams(query) };
}

function homePage(view) {
  ctx.bundle.set(null);
  view.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Find a user\'s story'),
    h('section', { class: 'panel' },
      h('p', {}, 'Type the incident id the user reads out (like MAM-7K2Q-9XPF) in the search box above: case, dashes and 0/O or 1/I mix-ups do not matter.'),
      h('p', {}, 'Or look up a device id or a user, see the ', h('a', { href: '#/incidents' }, 'incidents that came in'),
        ', or open the ', h('a', { href: '#/fleet' }, 'fleet overview'), '.'),
      ctx.identity.seesPersonalData ? null
        : h('p', { class: 'note' }, 'This token has no pii scope: users appear as pseudonyms (user-…) and personal data in messages is replaced. Ask for a pii token only when the case needs it.')));
  return { title: 'Home' };
}

async function route() {
  if (!ctx) return;
  const mine = ++generation;
  current?.cleanup?.();
  current = null;
  const { parts, query } = parseHash();
  document.querySelectorAll('nav a').forEach((a) => {
    if (a.getAttribute('href') === `#/${parts[0]}`) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  });
  // Each navigation draws into a view of its own: a page still loading when the user moves
  // on (a slow prod list, then PPE chosen) keeps drawing, but into a detached element, so it
  // can never overwrite the page that replaced it.
  const view = h('div', { class: 'view' });
  main.replaceChildren(view);
  const pageCtx = { ...ctx, main: view };
  try {
    let page;
    switch (parts[0]) {
      case 'incident': page = await incidentPage(pageCtx, parts[1] ?? '', query); break;
      case 'device': page = await subjectPage(pageCtx, 'device', parts[1] ?? '', query); break;
      case 'user': page = await subjectPage(pageCtx, 'user', parts[1] ?? '', query); break;
      case 'incidents': page = await incidentsPage(pageCtx, query); break;
      case 'fleet': page = await fleetPage(pageCtx, query); break;
      default: page = homePage(view);
    }
    if (mine !== generation) { page?.cleanup?.(); return; }
    current = page;
    document.title = `${page.title} · mamtelemetryd support console`;
    view.querySelector('h1')?.focus({ preventScroll: true });
  } catch (e) {
    if (mine !== generation || !ctx) return;
    view.replaceChildren(h('h1', { tabindex: '-1' }, 'Something went wrong'), errorBox(e));
  }
}

async function search(event) {
  event.preventDefault();
  const kind = document.getElementById('search-kind').value;
  const text = document.getElementById('search-text').value.trim();
  const result = document.getElementById('search-result');
  result.replaceChildren();
  if (!text || !ctx) return;
  if (kind === 'device') { location.hash = `#/device/${encodeURIComponent(text)}`; return; }
  if (kind === 'user') { location.hash = `#/user/${encodeURIComponent(text)}`; return; }
  result.textContent = 'Looking up…';
  try {
    const { found, tried, error } = await resolve(ctx.api, text);
    if (error) { result.textContent = error; return; }
    if (found.length === 1) {
      result.replaceChildren();
      document.getElementById('search-text').value = '';
      if (location.hash === `#/incident/${found[0].id}`) route(); else location.hash = `#/incident/${found[0].id}`;
    } else if (found.length > 1) {
      result.replaceChildren('Several incidents match: ', ...found.flatMap((f, i) => [i ? ', ' : '', h('a', { href: `#/incident/${f.id}` }, f.id)]));
    } else {
      result.textContent = `No incident ${tried.length > 1 ? `matches any of ${tried.length} readings of` : 'is called'} ${tried[0] && tried.length === 1 ? tried[0] : text}.`;
    }
  } catch (e) {
    result.textContent = e.message;
  }
}

document.getElementById('search-form').addEventListener('submit', search);
document.getElementById('signout').addEventListener('click', () => signOut('Signed out.'));
window.addEventListener('hashchange', route);
document.addEventListener('keydown', (e) => {
  if (e.key === '/' && !['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement?.tagName)) {
    e.preventDefault();
    document.getElementById('search-text').focus();
  }
});

const token = storedToken();
if (token) {
  start(token).then(route, (e) => signOut(e.status === 401 ? 'Your token is no longer accepted; sign in again.' : e.message));
} else {
  signInPage();
}
