// The dashboard shell: hash routing (#/vms, #/jobs/{zone}/{node}/{job}, ...), the project box,
// the token form, and the refresh loop that live.js drives. Each page module exports
// render(root, params) -> {refresh(), dispose()}; the app calls refresh() (debounced) when
// events arrive and every page.intervalMs, and dispose() when the person leaves the page.
import * as api from './api.js';
import * as live from './live.js';
import {h, mount} from './dom.js';
import {destroyCharts} from './charts.js';
import overview from './pages/overview.js';
import vms from './pages/vms.js';
import vmDetail from './pages/vm_detail.js';
import jobs from './pages/jobs.js';
import jobDetail from './pages/job_detail.js';
import catalog from './pages/catalog.js';
import compare from './pages/compare.js';
import queuedResources from './pages/queued_resources.js';

const routes = [
  {pattern: /^\/?$/, page: overview, nav: 'overview'},
  {pattern: /^\/vms$/, page: vms, nav: 'vms'},
  {pattern: /^\/vms\/([^/]+)\/([^/]+)$/, page: vmDetail, nav: 'vms', keys: ['zone', 'node']},
  {pattern: /^\/jobs$/, page: jobs, nav: 'jobs'},
  {pattern: /^\/jobs\/([^/]+)\/([^/]+)\/([^/]+)$/, page: jobDetail, nav: 'jobs',
   keys: ['zone', 'node', 'job']},
  {pattern: /^\/catalog$/, page: catalog, nav: 'catalog'},
  {pattern: /^\/compare$/, page: compare, nav: 'compare'},
  {pattern: /^\/queued-resources$/, page: queuedResources, nav: 'queued-resources'},
];

const view = document.getElementById('view');
let current = null;  // {page, handle, timer, refreshing, pending}
let renderId = 0;

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, query = ''] = raw.split('?');
  const params = Object.fromEntries(new URLSearchParams(query));
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    (route.keys || []).forEach((key, i) => { params[key] = decodeURIComponent(m[i + 1]); });
    return {route, params};
  }
  return null;
}

function dispose() {
  if (!current) return;
  clearInterval(current.timer);
  try {
    current.handle?.dispose?.();
  } catch (e) {
    console.warn('dispose failed', e);
  }
  destroyCharts(view);
  current = null;
}

async function render() {
  const id = ++renderId;
  dispose();
  const found = parseHash();
  for (const link of document.querySelectorAll('nav a[data-nav]')) {
    if (found?.route.nav === link.dataset.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (!found) {
    mount(view, h('h1', {}, 'Not found'),
          h('p', {}, 'No page here. ', h('a', {href: '#/'}, 'Go to the overview.')));
    return;
  }
  const {route, params} = found;
  document.title = `${route.page.title} · tpuemu`;
  const root = h('div', {class: 'page'});
  mount(view, root);
  const entry = {page: route.page, handle: null, timer: null, refreshing: false, pending: false};
  current = entry;
  try {
    entry.handle = await route.page.render(root, params);
  } catch (e) {
    if (id !== renderId) return;
    console.warn('render failed', e);
    mount(root, h('div', {class: 'error', role: 'alert'}, String(e.message || e)));
    return;
  }
  if (id !== renderId || current !== entry) {
    entry.handle?.dispose?.();
    return;
  }
  if (route.page.intervalMs) {
    entry.timer = setInterval(() => refresh(), route.page.intervalMs);
  }
}

// Runs the page's refresh; a request that arrives while one runs is folded into one more run.
async function refresh() {
  const entry = current;
  if (!entry?.handle?.refresh) return;
  if (entry.refreshing) {
    entry.pending = true;
    return;
  }
  entry.refreshing = true;
  try {
    do {
      entry.pending = false;
      await entry.handle.refresh();
    } while (entry.pending && current === entry);
  } catch (e) {
    console.warn('refresh failed', e);
  } finally {
    entry.refreshing = false;
  }
}

let debounce = null;
live.onChange(() => {
  clearTimeout(debounce);
  debounce = setTimeout(refresh, 150);
});

// Project box.
const projectInput = document.getElementById('project');
projectInput.value = api.project();
document.getElementById('project-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = projectInput.value.trim();
  if (!value) return;
  api.setProject(value);
  live.start();
  render();
});

// Live indicator.
const liveBadge = document.getElementById('live');
document.addEventListener('tpuemu:live-status', (event) => {
  const {mode, error} = event.detail;
  liveBadge.dataset.mode = mode;
  liveBadge.textContent =
      {live: 'live', polling: 'polling', offline: 'offline', starting: '…'}[mode] || mode;
  liveBadge.title = mode === 'live'    ? 'Updates arrive from the events endpoint'
                    : mode === 'polling' ? 'No events endpoint: refreshing every 2 s'
                                         : (error?.message || '');
});

// Token form: shown on a 401 (unless the person dismissed it), keeps the token for this tab only.
const authDialog = document.getElementById('auth');
const authForm = document.getElementById('auth-form');
const authMessage = document.getElementById('auth-message');
const tokenButton = document.getElementById('token-button');
let authDismissed = false;
function showTokenState() {
  tokenButton.textContent = api.token() ? 'Sign out' : 'Sign in';
  tokenButton.title = api.token() ? 'Forget the bearer token of this tab' : 'Give a bearer token';
}
function askToken(message) {
  authMessage.textContent = message;
  document.getElementById('token').value = '';
  if (!authDialog.open) authDialog.showModal();
}
window.addEventListener('tpuemu:auth-required', (event) => {
  if (authDismissed) return;
  askToken(event.detail?.message || 'This tpuemud requires a bearer token.');
});
authForm.addEventListener('submit', (event) => {
  event.preventDefault();
  api.setToken(document.getElementById('token').value.trim());
  authDismissed = false;
  authDialog.close();
  showTokenState();
  live.start();
  render();
});
authDialog.addEventListener('cancel', () => { authDismissed = true; });  // Escape
document.getElementById('auth-cancel').addEventListener('click', () => {
  authDismissed = true;
  authDialog.close();
});
tokenButton.addEventListener('click', () => {
  if (!api.token()) {
    authDismissed = false;
    askToken('Calls to this tpuemud will carry this token.');
    return;
  }
  api.setToken('');
  showTokenState();
  live.start();
  render();
});
showTokenState();

window.addEventListener('hashchange', render);
live.start();
render();
