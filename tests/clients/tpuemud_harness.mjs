// Test harness for the client tests: the tpuemud child process, a recording HTTP proxy, and a
// deadline-bounded poll. No test logic here.
//
// StartTpuemud(binary, extraArgs, env) spawns tpuemud with --port 0 --db :memory: plus extraArgs,
// resolves with {port, Stop, stderr} once stdout shows "tpuemud ready on port N", and rejects (with
// tpuemud's stderr) if it exits first or is not ready within kReadyTimeoutMs. Stop() sends SIGTERM
// and resolves on exit. Worker sandboxes are off unless extraArgs ask for them
// (--worker-sandboxes auto). (The dashboard test's harness re-exports it.)
// StartRecorder(upstream_port) forwards every request to 127.0.0.1:upstream_port unchanged (host
// header rewritten) and appends {method, url, body, status, response} to `recorded`, which the
// caller owns and may clear between tests; requests are recorded in arrival order.

import {spawn} from 'node:child_process';
import http from 'node:http';

const kReadyTimeoutMs = 20000;

export function StartTpuemud(binary, extraArgs = [], env = {}) {
  if (!binary) return Promise.reject(new Error('set TPUEMUD to the tpuemud binary'));
  const sandboxes = extraArgs.includes('--worker-sandboxes') ? [] : ['--worker-sandboxes', 'off'];
  const daemon = spawn(binary, ['--port', '0', '--db', ':memory:', '--log-level', 'warn',
    ...sandboxes, ...extraArgs],
                       {stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, ...env}});
  let stderr = '';
  daemon.stderr.on('data', (d) => { stderr += d; });
  const Stop = async () => {
    if (daemon.exitCode !== null || daemon.signalCode !== null) return;
    daemon.removeAllListeners('exit');
    const exited = new Promise((r) => daemon.once('exit', r));
    daemon.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      Stop();
      reject(new Error(`tpuemud not ready after ${kReadyTimeoutMs} ms: ${stderr}`));
    }, kReadyTimeoutMs);
    daemon.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${binary}: ${e.message}`));
    });
    daemon.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`tpuemud exited early (code ${code}, signal ${signal}): ${stderr}`));
    });
    daemon.stdout.on('data', (d) => {
      stdout += d;
      const m = /tpuemud ready on port (\d+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({port: Number(m[1]), Stop, stderr: () => stderr});
      }
    });
  });
}

export function StartRecorder(upstream_port) {
  const recorded = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const entry = {method: req.method, url: req.url, body: body.toString('utf8')};
      recorded.push(entry);
      const headers = {...req.headers, host: `127.0.0.1:${upstream_port}`};
      const upstream = http.request(
          {host: '127.0.0.1', port: upstream_port, method: req.method, path: req.url, headers},
          (up) => {
            const out = [];
            up.on('data', (c) => out.push(c));
            up.on('end', () => {
              entry.status = up.statusCode;
              entry.response = Buffer.concat(out).toString('utf8');
              res.writeHead(up.statusCode, up.headers);
              res.end(Buffer.concat(out));
            });
          });
      upstream.on('error', (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      upstream.end(body);
    });
  });
  const Stop = () => new Promise((r) => server.close(r));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({port: server.address().port, recorded, Stop});
  }));
}

// Waits for fn() to return a truthy value, up to timeout_ms; the pause between polls only paces
// the loop. Rejects naming `what` on timeout.
export async function PollUntil(what, fn, timeout_ms) {
  const deadline = Date.now() + timeout_ms;
  for (let pause_ms = 5;; pause_ms = Math.min(pause_ms * 2, 200)) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeout_ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pause_ms));
  }
}
