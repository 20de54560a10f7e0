// The dashboard's only door to tpuemud: fetch() against the same REST endpoints curl and tpuctl
// use, with the bearer token (when the person gave one) on every call.
//
// Failures reject with ApiError carrying the Google envelope as the API stated it
// ({error: {code, message, status}}): pages show `message` verbatim. A 401 also fires the
// 'tpuemu:auth-required' window event so the app can ask for a token. The token lives in
// sessionStorage (this tab only); the project in localStorage.

export class ApiError extends Error {
  constructor(httpStatus, status, message) {
    super(message);
    this.httpStatus = httpStatus;
    this.status = status;  // "NOT_FOUND", "INVALID_ARGUMENT", ... or "NETWORK"
  }
}

const kTokenKey = 'tpuemu.token';
const kProjectKey = 'tpuemu.project';

export function token() { return sessionStorage.getItem(kTokenKey) || ''; }
export function setToken(value) {
  if (value) sessionStorage.setItem(kTokenKey, value);
  else sessionStorage.removeItem(kTokenKey);
}

export function project() { return localStorage.getItem(kProjectKey) || 'my-proj'; }
export function setProject(value) { localStorage.setItem(kProjectKey, value || 'my-proj'); }

// "/v2/projects/{project}" + rest
export function projectPath(rest = '') {
  return `/v2/projects/${encodeURIComponent(project())}${rest}`;
}
export function zonePath(zone, rest = '') {
  return projectPath(`/locations/${encodeURIComponent(zone)}${rest}`);
}
export function nodePath(zone, node, rest = '') {
  return zonePath(zone, `/nodes/${encodeURIComponent(node)}${rest}`);
}
export function jobPath(zone, node, job, rest = '') {
  return nodePath(zone, node, `/jobs/${encodeURIComponent(job)}${rest}`);
}

// request('GET', path) -> parsed JSON (or text when `text` is set). `signal` aborts.
export async function request(method, path, {body, signal, text = false} = {}) {
  const headers = {};
  if (token()) headers['Authorization'] = `Bearer ${token()}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      signal,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'NETWORK', `tpuemud is not reachable (${e.message})`);
  }
  const raw = await response.text();
  if (!response.ok) {
    let envelope = null;
    try {
      envelope = JSON.parse(raw).error;
    } catch (_) {
      // not JSON: fall through to the HTTP status line
    }
    const error = new ApiError(response.status, envelope?.status || `HTTP ${response.status}`,
                               envelope?.message || raw || response.statusText);
    if (response.status === 401) {
      window.dispatchEvent(new CustomEvent('tpuemu:auth-required', {detail: error}));
    }
    throw error;
  }
  if (text) return raw;
  return raw ? JSON.parse(raw) : {};
}

export const get = (path, options) => request('GET', path, options);
export const post = (path, body, options) => request('POST', path, {...options, body});
export const del = (path, options) => request('DELETE', path, options);

// Every page of a list: list(path, 'nodes') follows nextPageToken.
export async function listAll(path, key, {signal} = {}) {
  const items = [];
  let pageToken = '';
  for (let page = 0; page < 50; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const reply = await get(
        `${path}${sep}pageSize=500${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`,
        {signal});
    items.push(...(reply[key] || []));
    pageToken = reply.nextPageToken;
    if (!pageToken) break;
  }
  return items;
}

// Endpoints another part of tpuemu may not serve yet: after one 404/501 for a route family the
// dashboard stops asking and the panel says so, instead of failing again on every refresh.
const missing = new Set();
export function isMissing(feature) { return missing.has(feature); }
export async function optional(feature, call) {
  if (missing.has(feature)) return null;
  try {
    return await call();
  } catch (e) {
    if (e instanceof ApiError && (e.httpStatus === 404 || e.httpStatus === 501) &&
        /was not found on this server|not implemented/i.test(e.message)) {
      missing.add(feature);
      return null;
    }
    throw e;
  }
}

// Polls a long-running Operation until done; resolves with it (its `error` when it failed).
export async function waitOperation(name, {timeoutMs = 600000} = {}) {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 100; Date.now() < deadline; pause = Math.min(pause * 2, 1000)) {
    const op = await get(`/v2/${name}`);
    if (op.done) return op;
    await new Promise((r) => setTimeout(r, pause));
  }
  throw new ApiError(0, 'DEADLINE_EXCEEDED', `operation ${name} did not finish in time`);
}
