// Small DOM and formatting helpers shared by every page. No framework: h() builds elements,
// the format* functions turn API numbers into what a person reads.

// h('div', {class: 'card', onclick: fn}, child, 'text', [more children]) -> HTMLElement.
// Attributes starting with "on" become listeners; null/false children and attributes are skipped.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'class') {
      el.className = value;
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (key in el && typeof value !== 'string') {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : value);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

// Replaces every child of `el`.
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const kNodeStates = [
  'CREATING', 'READY', 'RESTARTING', 'REIMAGING', 'DELETING', 'REPAIRING', 'STOPPED', 'STOPPING',
  'STARTING', 'PREEMPTED', 'TERMINATED', 'HIDING', 'HIDDEN', 'UNHIDING',
];
export const kJobStates = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
export const kTerminalJobStates = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

// A coloured state badge; the class names the tone, the text is the API's own state.
export function badge(state) {
  const tone = {
    READY: 'ok', SUCCEEDED: 'ok', HEALTHY: 'ok',
    RUNNING: 'busy', CREATING: 'pending', STARTING: 'pending', STOPPING: 'pending',
    DELETING: 'pending', RESTARTING: 'pending', REPAIRING: 'pending', REIMAGING: 'pending',
    QUEUED: 'queued', STOPPED: 'off', CANCELLED: 'off', HIDDEN: 'off',
    FAILED: 'bad', TIMED_OUT: 'bad', PREEMPTED: 'bad', TERMINATED: 'bad', UNHEALTHY: 'bad',
    // queued resources and faults
    ACTIVE: 'ok', ACCEPTED: 'queued', WAITING_FOR_RESOURCES: 'queued', PROVISIONING: 'pending',
    SUSPENDING: 'pending', SUSPENDED: 'off', UNHEALTHY_MAINTENANCE: 'bad',
    MAINTENANCE_STARTED: 'bad', MAINTENANCE_ENDED: 'ok', MAINTENANCE_SCHEDULED: 'pending',
    CHAOS: 'bad', CAPACITY: 'pending',
  }[state] || 'off';
  return h('span', {class: `badge badge-${tone}`}, state || '—');
}

// "projects/p/locations/z/nodes/n" -> {project, zone, node, job?} (queuedResource for a queued
// resource's name)
export function parseName(name) {
  const parts = (name || '').split('/');
  const out = {};
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const key = {projects: 'project', locations: 'zone', nodes: 'node', jobs: 'job',
                 queuedResources: 'queuedResource'}[parts[i]];
    if (key) out[key] = parts[i + 1];
  }
  return out;
}

export function formatBytes(bytes) {
  if (bytes === undefined || bytes === null || Number.isNaN(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = Number(bytes);
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 100 || unit === 0 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}

export function formatPercent(fraction, digits = 1) {
  if (fraction === undefined || fraction === null || Number.isNaN(fraction)) return '—';
  return `${(fraction * 100).toFixed(digits)}%`;
}

// Seconds in the unit that reads best: 3.2 µs, 41.0 ms, 2.5 s.
export function formatSeconds(seconds) {
  if (seconds === undefined || seconds === null || Number.isNaN(seconds)) return '—';
  const s = Number(seconds);
  if (s === 0) return '0 s';
  if (Math.abs(s) < 1e-6) return `${(s * 1e9).toFixed(1)} ns`;
  if (Math.abs(s) < 1e-3) return `${(s * 1e6).toFixed(1)} µs`;
  if (Math.abs(s) < 1) return `${(s * 1e3).toFixed(1)} ms`;
  if (Math.abs(s) < 120) return `${s.toFixed(2)} s`;
  return `${(s / 60).toFixed(1)} min`;
}

export function formatNumber(n, digits = 3) {
  if (n === undefined || n === null || Number.isNaN(n)) return '—';
  if (typeof n !== 'number') return String(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  if (Math.abs(n) >= 1e6 || (Math.abs(n) < 1e-3 && n !== 0)) return n.toExponential(digits);
  return Number(n.toPrecision(digits + 2)).toString();
}

// US dollars: "$0", tiny amounts in exponent form, cents below $100, whole dollars above.
export function formatDollars(v) {
  if (v === undefined || v === null) return '—';
  if (v === 0) return '$0';
  if (v < 0.01) return `$${v.toExponential(2)}`;
  return `$${v.toLocaleString('en-US', {maximumFractionDigits: v < 100 ? 3 : 0})}`;
}

// A rate in thousands (k) or millions (M), one or two decimals.
export function formatRate(v) {
  if (v === undefined || v === null) return '—';
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)}M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return v.toFixed(1);
}

// RFC 3339 -> "16:45:06" today, else "2026-11-20 16:45".
export function formatTime(rfc3339) {
  if (!rfc3339) return '—';
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  const today = new Date();
  const time = d.toLocaleTimeString('en-GB', {hour12: false});
  if (d.toDateString() === today.toDateString()) return time;
  return `${d.toISOString().slice(0, 10)} ${time.slice(0, 5)}`;
}

export function durationBetween(start, end) {
  if (!start) return '—';
  const ms = (end ? new Date(end) : new Date()) - new Date(start);
  return formatSeconds(ms / 1000);
}

// A message box for an API error, stating the API's message and its status as the API gave them.
export function errorBox(error) {
  if (!error) return null;
  const status = error.status ? ` (${error.httpStatus || ''} ${error.status})` : '';
  return h('div', {class: 'error', role: 'alert'}, h('strong', {}, 'Error'),
           status ? h('span', {class: 'muted'}, status) : null, ': ', error.message);
}

export function emptyRow(columns, text) {
  return h('tr', {}, h('td', {colspan: columns, class: 'muted empty'}, text));
}

// Asks `question` in a modal <dialog>; resolves true when the person confirms.
export function confirmDialog(question, confirmLabel = 'Confirm') {
  return new Promise((resolve) => {
    const dialog = h(
        'dialog', {class: 'confirm', 'aria-label': 'Confirm'},
        h('form', {method: 'dialog'}, h('p', {}, question),
          h('div', {class: 'actions'},
            h('button', {value: 'cancel', type: 'submit', class: 'secondary'}, 'Cancel'),
            h('button', {value: 'ok', type: 'submit', class: 'danger', autofocus: true},
              confirmLabel))));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// A <label> wrapping its control, so every form field is named for keyboards and screen readers.
export function field(label, control, hint) {
  return h('label', {class: 'field'}, h('span', {class: 'label'}, label), control,
           hint ? h('span', {class: 'hint'}, hint) : null);
}

export function select(attrs, options, selected) {
  return h('select', attrs,
           options.map((o) => {
             const value = typeof o === 'string' ? o : o.value;
             const text = typeof o === 'string' ? o : o.label;
             return h('option', {value, selected: value === selected}, text);
           }));
}
