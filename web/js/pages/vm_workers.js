// The Workers panel of a TPU VM's page (GET .../nodes/{n}/workers, an emulator extension): per
// worker its id, hostname, address, state (with the error), the commands to SSH in (with copy
// buttons), an SSH button that opens a terminal into it in the page (../terminal.js; enabled while
// the worker is RUNNING; one terminal at a time, in a panel below the table) and its startup
// script's state, exit code and output (GET .../workers/{w}/startupScriptOutput?offset=K, fetched
// as it grows; every second while a script runs). Workers of a tpuemud without sandboxes show as
// NOT_SANDBOXED with the reason.
import * as api from '../api.js';
import {emptyRow, formatBytes, h, mount} from '../dom.js';
import {openTerminal} from '../terminal.js';

const kTone = {RUNNING: 'ok', BOOTING: 'pending', STOPPED: 'off', FAILED: 'bad', NOT_SANDBOXED: 'off',
               NONE: 'off', EXITED: 'ok', KILLED: 'bad'};

function stateBadge(state, tone = kTone[state]) {
  return h('span', {class: `badge badge-${tone || 'off'}`}, state || '—');
}

// Copies `text`; the clipboard API where the page may use it (https, localhost), else a selection.
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (_) {
    const area = h('textarea', {class: 'offscreen', readonly: true}, text);
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch (_) {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

function copyButton(text, label) {
  const button = h('button', {type: 'button', class: 'secondary small copy', title: text,
                              'aria-label': `Copy ${label}: ${text}`, dataset: {copy: text}}, 'Copy');
  button.addEventListener('click', async () => {
    const ok = await copyText(text);
    button.textContent = ok ? 'Copied' : 'Select and copy';
    setTimeout(() => { button.textContent = 'Copy'; }, 1500);
  });
  return button;
}

function command(text, label) {
  return h('div', {class: 'cmd'}, h('code', {}, text), copyButton(text, label));
}

function startupCell(w) {
  const s = w.startupScript;
  if (!s) return '—';
  if (s.state === 'EXITED') {
    return stateBadge(`EXITED ${s.exitCode ?? '?'}`, s.exitCode === 0 ? 'ok' : 'bad');
  }
  return stateBadge(s.state, s.state === 'RUNNING' ? 'busy' : kTone[s.state]);
}

// The panel below the workers table that holds the one open terminal: "SSH: <hostname>", its
// state, a Close button and the terminal itself. show(worker) opens one (closing any other).
function terminalPanel(zone, node) {
  const title = h('h3', {id: 'terminal-title'});
  const status = h('span', {class: 'badge badge-off', id: 'terminal-status', role: 'status', 'aria-live': 'polite'});
  const screen = h('div', {class: 'terminal-screen', id: 'terminal-screen'});
  const closeButton = h('button', {type: 'button', class: 'secondary small', 'aria-label': 'Close the terminal'},
                        'Close');
  const element = h('div', {class: 'terminal-panel', id: 'terminal', role: 'region', hidden: true,
                            'aria-labelledby': 'terminal-title'},
                    h('div', {class: 'terminal-bar'}, title, status, closeButton), screen);
  let session = null;
  let opener = null;  // the SSH button that opened it: focus goes back there on Close

  function close() {
    session?.close();
    session = null;
    element.hidden = true;
  }
  closeButton.addEventListener('click', () => {
    close();
    document.querySelector(`#workers tr[data-worker="${opener}"] button.ssh`)?.focus();
  });

  function show(w) {
    close();
    opener = w.workerId;
    mount(title, `SSH: ${w.hostname || `worker ${w.workerId}`}`);
    element.hidden = false;
    element.dataset.worker = w.workerId;
    session = openTerminal(screen, {
      zone, node, worker: w.workerId,
      onStatus: (text, tone) => {
        status.className = `badge badge-${tone}`;
        status.textContent = text;
      },
    });
  }

  return {element, show, close};
}

function sshButton(w, terminal) {
  const running = w.state === 'RUNNING';
  const name = w.hostname || `worker ${w.workerId}`;
  return h('button', {type: 'button', class: 'small ssh', disabled: !running,
                      title: running ? `Open a terminal on ${name} in this page` : `${name} is not running`,
                      'aria-label': `SSH into ${name} in the browser`,
                      onclick: () => terminal.show(w)}, 'SSH');
}

export function workersPanel(zone, node) {
  const body = h('tbody');
  const outputs = h('div', {class: 'startup-outputs'});
  const note = h('p', {class: 'muted small'});
  const terminal = terminalPanel(zone, node);
  const element = h('section', {class: 'card', id: 'workers', 'aria-labelledby': 'vm-workers-title'},
                    h('h2', {id: 'vm-workers-title'}, 'Workers'),
                    h('div', {class: 'scroll'},
                      h('table', {class: 'compact'},
                        h('thead', {}, h('tr', {}, ['Worker', 'Hostname', 'Address', 'State', 'SSH',
                                                     'Startup script'].map((t) => h('th', {}, t)))),
                        body)),
                    terminal.element, note, outputs);
  // worker id -> {bytes, text, details, pre}: output kept across refreshes (and <details> open).
  const logs = new Map();
  let timer = null;
  let disposed = false;

  async function refreshOutput(w) {
    const s = w.startupScript;
    if (!s || s.state === 'NONE') return;
    let log = logs.get(w.workerId);
    if (!log) {
      const pre = h('pre', {class: 'log', id: `startup-output-${w.workerId}`, tabindex: 0});
      const summary = h('summary');
      const details = h('details', {class: 'startup', dataset: {worker: w.workerId}}, summary, pre);
      log = {bytes: 0, text: '', details, summary, pre};
      logs.set(w.workerId, log);
      outputs.append(details);
    }
    const total = s.outputBytes ?? 0;
    if (total < log.bytes) Object.assign(log, {bytes: 0, text: ''});  // a new boot: a new log
    if (total > log.bytes) {
      const path = api.nodePath(zone, node, `/workers/${w.workerId}/startupScriptOutput?offset=${log.bytes}`);
      const chunk = await api.get(path, {text: true});
      log.text += chunk;
      log.bytes += new TextEncoder().encode(chunk).length;
    }
    const state = s.state === 'EXITED' ? `exited with code ${s.exitCode}` : s.state.toLowerCase();
    mount(log.summary, `Worker ${w.workerId} startup script output (${formatBytes(log.bytes)}, ${state})`);
    if (log.pre.textContent !== log.text) log.pre.textContent = log.text || '(no output yet)';
    if (!log.text) log.pre.textContent = '(no output yet)';
  }

  // `n` is the node as GET .../nodes/{n} gave it (for the ports and the state).
  async function refresh(n) {
    const reply = await api.optional('workers', () => api.get(api.nodePath(zone, node, '/workers')));
    if (disposed) return;
    if (reply === null) {
      mount(body, emptyRow(6, 'This tpuemud does not serve workers.'));
      return;
    }
    const workers = reply.workers || [];
    const gcloudZone = zone;
    mount(body, workers.length ? workers.map((w) => {
      const port = w.sshPort && w.sshPort !== 22 ? w.sshPort : (n?.networkEndpoints?.[w.workerId]?.port ?? 22);
      const sandboxed = w.state !== 'NOT_SANDBOXED';
      const ssh = sandboxed
        ? h('div', {class: 'cmds'},
            sshButton(w, terminal),
            command(`gcloud compute tpus tpu-vm ssh ${node} --zone ${gcloudZone} --worker=${w.workerId}`,
                    `the gcloud command for worker ${w.workerId}`),
            w.sshCommand ? command(w.sshCommand, `the ssh command for worker ${w.workerId}`) : null)
        : h('span', {class: 'muted'}, 'No SSH: not a sandbox');
      return h('tr', {dataset: {worker: w.workerId}},
               h('td', {class: 'num'}, w.workerId), h('td', {}, w.hostname || '—'),
               h('td', {}, sandboxed ? `${w.ipAddress}:${w.sshPort ?? port}` : w.ipAddress),
               h('td', {class: 'wrap'}, stateBadge(w.state),
                 w.error ? h('div', {class: 'muted small worker-error'}, w.error) : null),
               h('td', {}, ssh), h('td', {}, startupCell(w)));
    }) : emptyRow(6, 'No workers (the TPU VM is not running).'));
    const sandboxed = workers.filter((w) => w.state !== 'NOT_SANDBOXED');
    mount(note, sandboxed.length
      ? 'Your key must be in the node\'s ssh-keys metadata (tpuctl/gcloud tpu-vm ssh add it for you); ' +
        'replace USER with your user name.'
      : 'Workers are records only: run tpuemud as root with --worker-sandboxes auto to SSH into them.');
    await Promise.all(sandboxed.map((w) => refreshOutput(w).catch((e) => {
      const log = logs.get(w.workerId);
      if (log) log.pre.textContent = `(${e.message})`;
    })));
    // While a startup script runs, follow its output every second (the page refreshes every 5 s).
    clearTimeout(timer);
    if (!disposed && sandboxed.some((w) => w.startupScript?.state === 'RUNNING' || w.state === 'BOOTING')) {
      timer = setTimeout(() => refresh(n).catch(() => {}), 1000);
    }
  }

  function dispose() {
    disposed = true;
    clearTimeout(timer);
    terminal.close();  // leaving the page ends the login
  }

  return {element, refresh, dispose};
}
