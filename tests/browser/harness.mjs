// Harness for the dashboard test: the real tpuemud process and Debian's headless chromium.
// No test logic here.
//
// StartTpuemud: re-exported from tests/clients/tpuemud_harness.mjs.
// LaunchChromium() starts chromium through playwright-core with the flags this machine needs
// (no sandbox as root, no background networking) and a fresh profile; Close() removes the profile.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {chromium} from 'playwright-core';

// The tpuemud child process is started the same way as for the Google clients test.
export {StartTpuemud} from '../clients/tpuemud_harness.mjs';

export const kChromium = process.env.CHROMIUM || '/usr/bin/chromium';

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
