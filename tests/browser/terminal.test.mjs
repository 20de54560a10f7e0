// The dashboard's SSH button (web/js/terminal.js, web/js/pages/vm_workers.js) in Debian's headless
// chromium against a real tpuemud that runs worker sandboxes, with --auth-tokens on: a v4-8 TPU
// VM is created through the API, its worker turns RUNNING, and on the VM's page the SSH button
// opens a terminal into it (xterm.js over the WebSocket .../workers/0/terminal, the token as a
// `bearer.` subprotocol). In it: `hostname` is the worker's, the login is the token's user with
// passwordless sudo (`sudo -n id -u` is 0), a paste of UTF-8 comes back as typed, Ctrl-C stops
// `sleep 100`, a smaller window reaches the login (`stty size`), `exit` closes the socket with the
// server's reason and Close ends the login (the worker's process count drops back). A socket
// without a token, or with a viewer's, is refused before the upgrade, and the panel says so.
// Skipped, saying why, where chromium is missing, or worker sandboxes cannot run (not root, no
// OpenSSH client, or tpuemud turned them down: the node's workerSandbox says why); CI runs as
// root, so there it runs. A screenshot of the terminal goes to $ARTIFACTS_DIR.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {after, before, test} from 'node:test';
import {fileURLToPath} from 'node:url';

import {PollUntil} from '../clients/tpuemud_harness.mjs';
import {kChromium, LaunchChromium, StartTpuemud} from './harness.mjs';

const kRepo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const kArtifacts = process.env.ARTIFACTS_DIR || path.join(kRepo, 'build', 'test-artifacts', 'browser');
const kProject = 'my-proj';
const kZone = 'us-central2-b';
const kVm = 'term-tpu';
const kEditor = 'term-editor';  // signed in as Alice.Smith@example.com: login "alice.smith"
const kViewer = 'term-viewer';
const kWaitMs = 90000;  // generous: sandboxes boot on a loaded machine (ctest -j2, sanitizers)

function whySkip() {
  if (!fs.existsSync(kChromium)) return `chromium not found at ${kChromium} (apt-get install chromium)`;
  if (process.getuid() !== 0) return `worker sandboxes need root (uid ${process.getuid()})`;
  if (!fs.existsSync('/usr/bin/ssh')) return 'the OpenSSH client is not installed (tpuemud logs in with it)';
  return false;
}
const skip = whySkip();
if (skip) console.log(`# skipping the terminal test: ${skip}`);

let daemon, browser, page, base, dir;
const pageErrors = [];

before(async () => {
  if (skip) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tpuemu-terminal-'));
  const tokens = path.join(dir, 'tokens.json');
  fs.writeFileSync(tokens, JSON.stringify({tokens: [
    {token: kEditor, projects: [kProject], role: 'editor', user: 'Alice.Smith@example.com'},
    {token: kViewer, projects: [kProject], role: 'viewer', user: 'viewer@example.com'},
  ]}));
  daemon = await StartTpuemud(process.env.TPUEMUD, [
    '--worker-sandboxes', 'auto', '--data-dir', path.join(dir, 'data'), '--worker-stop-grace-ms', '1500',
    '--provisioning-delay-ms', '0', '--transition-delay-ms', '0', '--auth-tokens', tokens,
    '--web-dir', path.join(kRepo, 'web'),
  ]);
  base = `http://127.0.0.1:${daemon.port}`;
  browser = await LaunchChromium();
  page = await browser.context.newPage();
  page.setDefaultTimeout(kWaitMs);
  page.on('pageerror', (e) => pageErrors.push(`page error: ${e.stack || e.message}`));
  fs.mkdirSync(kArtifacts, {recursive: true});
});

after(async () => {
  await browser?.Close();
  await daemon?.Stop();
  if (dir) fs.rmSync(dir, {recursive: true, force: true});
});

async function call(method, rest, body, token = kEditor) {
  const response = await fetch(`${base}/v2/projects/${kProject}/locations/${kZone}${rest}`, {
    method, headers: {'Authorization': `Bearer ${token}`, 'Content-Type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${rest}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

const workers = async () => (await call('GET', `/nodes/${kVm}/workers`)).workers || [];

// The terminal's screen as text, one line per row (xterm 3.x's DOM renderer: .xterm-rows > div).
function screen() {
  return page.evaluate(() => [...document.querySelectorAll('#terminal .xterm-rows > div')]
                                 .map((row) => row.textContent.replace(/\u00a0/g, ' ').trimEnd()).join('\n'));
}

// Waits until the screen shows `marker` on a line of its own, and returns the lines printed just
// before it (`lines` of them). Commands end with `echo =$((a*b))=`: the product appears only in
// the output, never in the echoed command line, so the wait is for the command's own output.
async function outputBefore(marker, lines = 1) {
  const text = await PollUntil(`"${marker}" on the terminal`, async () => {
    const rows = (await screen()).split('\n');
    return rows.includes(marker) ? rows : null;
  }, kWaitMs);
  const at = text.lastIndexOf(marker);
  return text.slice(at - lines, at);
}

let commands = 2;
// Types `command` (ASCII) and Enter; returns the `lines` it printed before its marker.
async function run(command, lines = 1) {
  const n = ++commands;
  await page.keyboard.type(`${command}; echo =$((${n}*${n}))=`);
  await page.keyboard.press('Enter');
  return outputBefore(`=${n * n}=`, lines);
}

// Pastes `text` into the terminal as a browser's paste does (a ClipboardEvent on its textarea).
async function paste(text) {
  await page.locator('#terminal textarea').evaluate((area, t) => {
    const data = new DataTransfer();
    data.setData('text/plain', t);
    area.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
  }, text);
}

// Waits until the terminal panel's status matches `expected`; fails at once, with the panel's
// words, when xterm.js could not be loaded.
async function waitStatus(expected) {
  await PollUntil(`the terminal's status ${expected}`, async () => {
    const text = await page.locator('#terminal-status').textContent();
    if (/could not be loaded/.test(text)) throw new Error(text);
    return expected.test(text);
  }, kWaitMs);
}

async function openTerminal(hostname) {
  await page.getByRole('button', {name: `SSH into ${hostname} in the browser`}).click();
  const panel = page.getByRole('region', {name: `SSH: ${hostname}`});
  await panel.waitFor();
  await waitStatus(/^Connected$/);
  // The login's prompt ("alice.smith@t1v-n-…-w-0:~$").
  await PollUntil('a shell prompt', async () => /\$\s*$/m.test(await screen()), kWaitMs);
  return panel;
}

// A WebSocket to the worker's terminal from the page, offering `protocols`: 'open' when the server
// took it, else the close code (1006: refused before the upgrade).
function probeSocket(protocols) {
  return page.evaluate(([path, offered]) => new Promise((resolve) => {
    const socket = new WebSocket(`ws://${location.host}${path}?cols=80&rows=24`, offered);
    socket.onopen = () => {
      resolve(`open ${socket.protocol}`);
      socket.close();
    };
    socket.onclose = (e) => resolve(String(e.code));
  }), [`/v2/projects/${kProject}/locations/${kZone}/nodes/${kVm}/workers/0/terminal`, protocols]);
}

const bearer = (token) => `bearer.${Buffer.from(token, 'utf8').toString('base64url')}`;

// Opens the VM's page signed in with `token` (as the dashboard keeps it: sessionStorage), from
// another document of the origin so that the page loads anew.
async function openVmPage(token) {
  await page.goto(`${base}/healthz`);
  await page.evaluate((t) => sessionStorage.setItem('tpuemu.token', t), token);
  await page.goto(`${base}/#/vms/${kZone}/${kVm}`);
}

test('SSH in the browser: a terminal into a TPU VM worker', {skip}, async (t) => {
  let hostname;
  // Each step builds on the one before: after a failure the rest are skipped, not timed out.
  let failed = false;
  const step = (name, fn) => t.test(name, {skip: failed && 'an earlier step failed'}, async (tt) => {
    try {
      await fn(tt);
    } catch (e) {
      failed = true;
      throw e;
    }
  });

  await t.test('a v4-8 TPU VM boots a sandboxed worker', async (tt) => {
    await call('POST', `/nodes?nodeId=${kVm}`, {acceleratorType: 'v4-8', runtimeVersion: 'tpu-ubuntu2204-base'});
    const node = await PollUntil('the TPU VM READY', async () => {
      const n = await call('GET', `/nodes/${kVm}`);
      return n.state === 'READY' ? n : null;
    }, kWaitMs);
    if (!node.workerSandbox?.enabled) {
      tt.skip(`tpuemud runs no worker sandboxes here: ${JSON.stringify(node.workerSandbox)}`);
      t.skip('no worker sandboxes');
      return;
    }
    const [worker] = await PollUntil('worker 0 RUNNING', async () => {
      const ws = await workers();
      return ws[0]?.state === 'RUNNING' ? ws : null;
    }, kWaitMs);
    hostname = worker.hostname;
    assert.match(hostname, /^t1v-n-[0-9a-f]+-w-0$/);
  });
  if (!hostname) return;

  await step('the socket needs an editor\'s token', async () => {
    await page.goto(`${base}/healthz`);
    assert.equal(await probeSocket(['tpuemu.terminal.v1']), '1006');
    assert.equal(await probeSocket(['tpuemu.terminal.v1', bearer('no-such-token')]), '1006');
    assert.equal(await probeSocket(['tpuemu.terminal.v1', bearer(kViewer)]), '1006');
    assert.equal(await probeSocket(['tpuemu.terminal.v1', bearer(kEditor)]), 'open tpuemu.terminal.v1');
  });

  await step('a viewer sees why the terminal does not open', async () => {
    await openVmPage(kViewer);
    await page.getByRole('button', {name: `SSH into ${hostname} in the browser`}).click();
    await waitStatus(/^Could not connect \(check the token and that the worker is running\)$/);
    await page.getByRole('button', {name: 'Close the terminal'}).click();
    assert.equal(await page.locator('#terminal').isHidden(), true);
  });

  await step('the SSH button opens a terminal: hostname, sudo, UTF-8, Ctrl-C', async () => {
    await openVmPage(kEditor);
    await openTerminal(hostname);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('xterm-helper-textarea')),
                 true, 'keyboard focus is in the terminal');
    assert.deepEqual(await run('hostname'), [hostname]);
    assert.deepEqual(await run('id -un'), ['alice.smith']);
    assert.deepEqual(await run('sudo -n id -u'), ['0']);
    // A paste of UTF-8: the login reads the bytes (10 of them) and prints them back.
    // (Enter after it: bash's readline takes a bracketed paste as text, not as a command.)
    await paste(`printf %s 'héllo ✓' | wc -c; echo héllo ✓; echo =$((99*99))=`);
    await page.keyboard.press('Enter');
    assert.deepEqual(await outputBefore(`=${99 * 99}=`, 2), ['10', 'héllo ✓']);
    // Ctrl-C ends a foreground `sleep 100`: the next command answers long before it would end.
    const started = Date.now();
    await page.keyboard.type(`echo =$((98*98))=; sleep 100`);
    await page.keyboard.press('Enter');
    await outputBefore(`=${98 * 98}=`, 0);
    await page.keyboard.press('Control+C');
    assert.deepEqual(await run('echo after'), ['after']);
    assert.ok(Date.now() - started < 60000, 'sleep 100 was interrupted');
  });

  await step('a resized window reaches the login', async () => {
    const size = () => page.locator('#terminal-screen').evaluate((e) => `${e.dataset.rows} ${e.dataset.cols}`);
    const before = await size();
    assert.deepEqual(await run('stty size'), [before]);
    await page.setViewportSize({width: 1000, height: 700});
    await PollUntil('the terminal fitted to the smaller window', async () => (await size()) !== before, kWaitMs);
    const after = await size();
    assert.deepEqual(await run('stty size'), [after]);
    await page.locator('#terminal').screenshot({path: path.join(kArtifacts, 'terminal.png')});
    await page.setViewportSize({width: 1440, height: 900});
  });

  await step('exit closes the socket with the server\'s reason', async () => {
    await page.keyboard.type('exit');
    await page.keyboard.press('Enter');
    await waitStatus(/^Connection closed: session ended/);
  });

  await step('Close ends the login', async () => {
    await page.getByRole('button', {name: 'Close the terminal'}).click();
    await page.getByRole('button', {name: `SSH into ${hostname} in the browser`}).click();
    await waitStatus(/^Connected$/);
    await PollUntil('a shell prompt', async () => /\$\s*$/m.test(await screen()), kWaitMs);
    // The login's processes (sshd's session, the shell, `sleep 1000`) count while it is open.
    await page.keyboard.type('sleep 1000 &');
    await page.keyboard.press('Enter');
    const open = await PollUntil('the login\'s processes counted', async () => {
      const [w] = await workers();
      return w.processes > 0 ? w.processes : null;
    }, kWaitMs);
    await page.getByRole('button', {name: 'Close the terminal'}).click();
    assert.equal(await page.locator('#terminal').isHidden(), true);
    await PollUntil(`fewer processes than the ${open} of the open login`,
                    async () => (await workers())[0].processes < open, kWaitMs);
  });

  await t.test('no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
