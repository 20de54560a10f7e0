// Live updates: a long-poll loop on GET /v2/projects/{p}/events?since=N&timeout=30s that passes
// `nextSince` back, keeps the last kKeep events for the Overview, and tells the app something
// changed. When the events endpoint is not served, it falls back to a plain timer so pages
// still refresh. One loop per project; start() again after the project changes.
import * as api from './api.js';

const kKeep = 200;
const kFallbackMs = 2000;

let generation = 0;        // bumps on every start(): older loops see it and stop
let controller = null;     // aborts the pending long-poll
const listeners = new Set();
export const recent = [];  // newest last
export const status = {mode: 'starting', error: null};

export function onChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function notify(events) {
  for (const fn of listeners) {
    try {
      fn(events);
    } catch (e) {
      console.warn('live listener failed', e);
    }
  }
}

function setStatus(mode, error = null) {
  status.mode = mode;
  status.error = error;
  document.dispatchEvent(new CustomEvent('tpuemu:live-status', {detail: status}));
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

export function start() {
  const mine = ++generation;
  controller?.abort();
  recent.length = 0;
  run(mine);
}

async function run(mine) {
  let since = 0;
  let caughtUp = false;
  let failures = 0;
  while (mine === generation) {
    controller = new AbortController();
    // Catch up on history without waiting, then long-poll.
    const timeout = caughtUp ? '30s' : '0s';
    let reply;
    try {
      reply = await api.optional(
          'events',
          () => api.get(api.projectPath(`/events?since=${since}&timeout=${timeout}&pageSize=100`),
                        {signal: controller.signal}));
    } catch (e) {
      if (mine !== generation) return;
      if (e.name === 'AbortError') continue;
      if (e.httpStatus === 401) {  // wait for a token: the app restarts the loop with it
        setStatus('offline', e);
        return;
      }
      failures++;
      setStatus('offline', e);
      await pause(Math.min(1000 * failures, 5000));
      continue;
    }
    if (mine !== generation) return;
    failures = 0;
    if (reply === null) {  // no events endpoint: refresh on a timer
      setStatus('polling');
      notify([]);
      await pause(kFallbackMs);
      continue;
    }
    const events = reply.events || [];
    since = reply.nextSince ?? since;
    recent.push(...events);
    if (recent.length > kKeep) recent.splice(0, recent.length - kKeep);
    if (events.length < 100) caughtUp = true;
    setStatus('live');
    if (events.length || !caughtUp) notify(events);
  }
}
