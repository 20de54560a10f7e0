// Harness for the dashboard test: the real tpuemud process and Debian's headless chromium.
// No test logic here.
//
// StartTpuemud(binary, extraArgs, env) spawns tpuemud on --port 0 with an in-memory store, resolves
// with {port, Stop} once stdout shows "tpuemud ready on port N", rejects with tpuemud's stderr if
// it exits first or is not ready in kReadyTimeoutMs. Stop() sends SIGTERM and waits for the exit.
// LaunchChromium() starts chromium through playwright-core with the flags this machine needs
// (no sandbox as root, no background networking) and a fresh profile; Close() removes the profile.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {chromium} from 'playwright-core';

const kReadyTimeoutMs = 20000;

export const kChromium = process.env.CHROMIUM || '/usr/bin/chromium';

export function StartTpuemud(binary, extraArgs = [], env = {}) {
  if (!binary) return Promise.reject(new Error('set TPUEMUD to the tpuemud binary'));
  const daemon = spawn(binary, ['--port', '0', '--db', ':memory:', '--log-level', 'warn', ...extraArgs],
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

export async function LaunchChromium() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tpuemu-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: kChromium,
    headless: true,
    viewport: {width: 1440, height: 900},
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const Close = async () => {
    await context.close();
    fs.rmSync(profile, {recursive: true, force: true});
  };
  return {context, Close};
}
