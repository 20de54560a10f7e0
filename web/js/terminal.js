// A terminal into one TPU VM worker, in the page (the Cloud console's "SSH-in-browser"): xterm.js
// over a WebSocket to tpuemud's GET .../nodes/{n}/workers/{w}/terminal?cols=C&rows=R.
//
// Protocol (subprotocol 'tpuemu.terminal.v1'; the token, when the person gave one, rides as a
// second subprotocol 'bearer.<base64url of its UTF-8, unpadded>': a browser cannot set an
// Authorization header on a WebSocket):
//   client -> server: keystrokes and pastes as BINARY frames of UTF-8; a resize as a TEXT frame
//                     {"resize": {"cols": C, "rows": R}} (after each fit).
//   server -> client: BINARY frames of the terminal's output (UTF-8, split anywhere); when the
//                     login ends it closes with 1000 and a reason ("session ended").
// An error before the upgrade (401, 403, 404, 409) reaches a browser only as close code 1006.
// Closing the panel, leaving the page or closing the tab closes the socket; tpuemud then ends
// the login.
//
// xterm.js is Debian's 3.8.1, loaded on first use only. Bookworm's libjs-xterm ships xterm.js as
// a stub that require()s the CommonJS modules of node-xterm (/usr/share/nodejs/xterm/lib), so
// tpuemud serves those at /vendor/xterm/lib/ beside libjs-xterm's folder at /vendor/xterm/, and
// loadXterm() runs them through the small CommonJS loader below; a self-contained build at
// /vendor/xterm/xterm.js (xterm's own UMD bundle) is used where that is what is served.
import * as api from './api.js';
import {h, mount} from './dom.js';

const kVendor = '/vendor/xterm/';
const kEntries = [`${kVendor}lib/public/Terminal.js`, `${kVendor}xterm.js`];
const kFitAddon = `${kVendor}addons/fit/fit.js`;
const kStyles = `${kVendor}xterm.css`;
export const kSubprotocol = 'tpuemu.terminal.v1';

class LoadError extends Error {}

// `spec` ("../Terminal", "./public/Terminal.js") from the module at `base` -> absolute URL.
function resolveModule(spec, base) {
  if (!spec.startsWith('.')) throw new LoadError(`${spec} (required by ${new URL(base).pathname}) is not a file`);
  return new URL(spec.endsWith('.js') ? spec : `${spec}.js`, base).href;
}

// Fetches the module at `url` and every module it requires (string literals only, as tsc writes
// them), then runs it as CommonJS; resolves with its exports. `define` is shadowed so that a UMD
// build takes its CommonJS branch.
async function requireTree(url) {
  const sources = new Map();  // url -> source text (null while it is being fetched)
  async function fetchTree(moduleUrl) {
    if (sources.has(moduleUrl)) return;
    sources.set(moduleUrl, null);
    let response;
    try {
      response = await fetch(moduleUrl);
    } catch (e) {
      throw new LoadError(`${new URL(moduleUrl).pathname}: ${e.message}`);
    }
    if (!response.ok) throw new LoadError(`${new URL(moduleUrl).pathname}: HTTP ${response.status}`);
    const text = await response.text();
    sources.set(moduleUrl, text);
    const deps = [...text.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)]
                     .map((m) => resolveModule(m[1], moduleUrl));
    await Promise.all(deps.map(fetchTree));
  }
  await fetchTree(url);
  const modules = new Map();
  function run(moduleUrl) {
    if (modules.has(moduleUrl)) return modules.get(moduleUrl).exports;  // a cycle: as far as it got
    const module = {exports: {}};
    modules.set(moduleUrl, module);
    // eslint-disable-next-line no-new-func -- this is the module loader
    const body = new Function('exports', 'require', 'module', 'define',
                              `${sources.get(moduleUrl)}\n//# sourceURL=${moduleUrl}`);
    body.call(module.exports, module.exports, (spec) => run(resolveModule(spec, moduleUrl)), module, undefined);
    return module.exports;
  }
  return run(url);
}

function loadStyles() {
  if (document.querySelector(`link[href="${kStyles}"]`)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const link = h('link', {rel: 'stylesheet', href: kStyles});
    link.addEventListener('load', () => resolve());
    link.addEventListener('error', () => {
      link.remove();
      reject(new LoadError(`${kStyles} did not load`));
    });
    document.head.append(link);
  });
}

let xterm = null;  // Promise<{Terminal, fit(term)}> once asked for; null again after a failure

// -> {Terminal, fit}; rejects with a message that says what is missing.
export function loadXterm() {
  xterm ??= (async () => {
    await loadStyles();
    let Terminal = null;
    const problems = [];
    for (const entry of kEntries) {
      try {
        const exports = await requireTree(new URL(entry, location.href).href);
        Terminal = typeof exports === 'function' ? exports : exports.Terminal || window.Terminal;
        if (typeof Terminal === 'function') break;
        problems.push(`${entry} defines no Terminal`);
      } catch (e) {
        problems.push(e.message);
      }
    }
    if (typeof Terminal !== 'function') throw new LoadError(problems.join('; '));
    // xterm 3.x's fit addon; without it the terminal keeps its first size.
    const addon = await requireTree(new URL(kFitAddon, location.href).href).catch(() => null);
    return {Terminal, fit: addon?.fit || (() => {})};
  })().catch((e) => {
    xterm = null;  // let a later click try again (the package may have been installed meanwhile)
    throw e;
  });
  return xterm;
}

// base64url (RFC 4648 §5) of `text`'s UTF-8 bytes, without '=' padding.
export function base64url(text) {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// Opens a terminal for worker `worker` of node `node` in `host` (an empty element with a height:
// the terminal fills it). `onStatus(text, tone)` reports progress and the end ('ok', 'bad' or
// 'off'). Returns {close()}: closes the socket and removes the terminal; safe to call twice.
export function openTerminal(host, {zone, node, worker, onStatus = () => {}}) {
  let socket = null;
  let term = null;
  let closed = false;
  let observer = null;
  let sent = '';  // the last size sent, "CxR"
  const cleanups = [];

  function sendSize() {
    if (!term || socket?.readyState !== WebSocket.OPEN) return;
    const size = `${term.cols}x${term.rows}`;
    host.dataset.cols = term.cols;
    host.dataset.rows = term.rows;
    if (size === sent) return;
    sent = size;
    socket.send(JSON.stringify({resize: {cols: term.cols, rows: term.rows}}));
  }

  async function start() {
    onStatus('Loading the terminal…', 'pending');
    let lib;
    try {
      lib = await loadXterm();
    } catch (e) {
      onStatus(`The terminal could not be loaded (${e.message}). tpuemud serves xterm.js at /vendor/xterm/ ` +
               'from Debian\'s libjs-xterm and node-xterm packages: are they installed?', 'bad');
      return;
    }
    if (closed) return;
    term = new lib.Terminal({
      cols: 100, rows: 30, rendererType: 'dom', cursorBlink: true, scrollback: 5000,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace', fontSize: 13,
      theme: {background: '#202124', foreground: '#e8eaed'},
    });
    term.open(host);
    const fit = () => {
      if (!term) return;
      try {
        lib.fit(term);
      } catch (_) {
        // not laid out yet (hidden panel): keep the size it has
      }
      host.dataset.cols = term.cols;
      host.dataset.rows = term.rows;
    };
    fit();
    term.focus();

    const path = api.nodePath(zone, node, `/workers/${encodeURIComponent(worker)}/terminal`);
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}` +
                `?cols=${term.cols}&rows=${term.rows}`;
    const protocols = [kSubprotocol];
    if (api.token()) protocols.push(`bearer.${base64url(api.token())}`);
    onStatus('Connecting…', 'pending');
    socket = new WebSocket(url, protocols);
    socket.binaryType = 'arraybuffer';
    const decoder = new TextDecoder('utf-8');
    const encoder = new TextEncoder();
    let opened = false;
    socket.addEventListener('open', () => {
      opened = true;
      onStatus('Connected', 'ok');
      host.dataset.state = 'open';
      fit();
      sendSize();
    });
    socket.addEventListener('message', (event) => {
      if (typeof event.data === 'string' || !term) return;  // the server sends output as binary only
      term.write(decoder.decode(new Uint8Array(event.data), {stream: true}));
    });
    socket.addEventListener('close', (event) => {
      host.dataset.state = 'closed';
      if (closed) return;
      const rest = decoder.decode();
      if (rest && term) term.write(rest);
      if (!opened) {
        onStatus('Could not connect (check the token and that the worker is running)', 'bad');
      } else {
        onStatus(`Connection closed: ${event.reason || `code ${event.code}`}`,
                 event.code === 1000 ? 'off' : 'bad');
      }
    });
    const onData = (data) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
    };
    if (typeof term.onData === 'function') term.onData(onData);
    else term.on('data', onData);
    if (typeof term.onResize === 'function') term.onResize(sendSize);
    else term.on('resize', sendSize);
    // The panel follows the window's width (and height): fit, then tell the server.
    const onWindowResize = () => fit();
    window.addEventListener('resize', onWindowResize);
    cleanups.push(() => window.removeEventListener('resize', onWindowResize));
    if (window.ResizeObserver) {
      observer = new ResizeObserver(() => fit());
      observer.observe(host);
    }
  }

  function close() {
    if (closed) return;
    closed = true;
    observer?.disconnect();
    cleanups.forEach((f) => f());
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, 'closed by the user');
    term?.dispose();
    term = null;
    mount(host);
  }

  start().catch((e) => onStatus(`The terminal failed: ${e.message}`, 'bad'));
  return {close};
}
