// The dashboard (web/) in Debian's headless chromium, driven by playwright-core, against a real
// tpuemud on an ephemeral port with small non-zero delays (so CREATING is seen): create a TPU VM
// through the form and see it turn READY, see a duplicate create fail with the API's own message,
// submit an mlp job and see it SUCCEEDED with its loss chart drawn by Chart.js, log, op table and
// metrics report, upload an HLO module (a broken one first: the API's line and column) and see its
// profile name the HLO instructions, cancel a long job, filter the job lists, see the events on the Overview, compare
// a model's cost on every TPU generation (charts, table, a URL that reproduces it) and delete the VM;
// see queued resources (state, tier, nodes) and their maintenance and preempt actions; then, with
// --auth-tokens, ask for a token and show a viewer's 403. A screenshot
// of every page goes to $ARTIFACTS_DIR (build/test-artifacts/browser). Any console error or page
// error fails the test, except the 409 the duplicate create asks for, the broken HLO module's 400
// and the auth case's 401s and 403. Skipped, saying so, only when chromium is not installed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import {after, before, test} from 'node:test';
import {fileURLToPath} from 'node:url';

import {kChromium, LaunchChromium, StartTpuemud} from './harness.mjs';

const kRepo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const kArtifacts = process.env.ARTIFACTS_DIR || path.join(kRepo, 'build', 'test-artifacts', 'browser');
const kZone = 'us-central2-b';
const kVm = 'web-tpu';
const kWait = {timeout: 60000};  // generous: the machine may be loaded (sanitizers, ctest -j2)

const skip = fs.existsSync(kChromium) ? false : `chromium not found at ${kChromium} (apt-get install chromium)`;

let daemon, browser, page, base;
const consoleErrors = [];
const allowedFailures = [];  // URLs a step expects to fail, with the HTTP status

before(async () => {
  if (skip) return;
  daemon = await StartTpuemud(process.env.TPUEMUD, [
    '--provisioning-delay-ms', '1500', '--transition-delay-ms', '300',
    '--web-dir', path.join(kRepo, 'web'),
  ], {TPUEMU_UTILIZATION_INTERVAL_MS: '200'});  // utilization samples for the VM charts
  base = `http://127.0.0.1:${daemon.port}`;
  browser = await LaunchChromium();
  page = await browser.context.newPage();
  page.setDefaultTimeout(kWait.timeout);
  const failedResponses = [];
  page.on('response', (r) => { if (r.status() >= 400) failedResponses.push(`${r.status()} ${r.url()}`); });
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const url = msg.location()?.url || '';
    const expected = allowedFailures.some((a) => text.includes(`status of ${a.status}`) && url.startsWith(a.url));
    if (!expected) consoleErrors.push(`${text} at ${url} (failed responses: ${failedResponses.join(', ')})`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.stack || e.message}`));
  fs.mkdirSync(kArtifacts, {recursive: true});
});

after(async () => {
  await browser?.Close();
  await daemon?.Stop();
});

async function shot(name) {
  await page.evaluate(() => window.scrollTo(0, 0));  // the sticky header stays on top
  await page.screenshot({path: path.join(kArtifacts, `${name}.png`), fullPage: true});
}

async function go(hash) {
  await page.goto(`${base}/${hash}`);
}

// Data points of the Chart.js chart on `selector`'s canvas (0 when no chart was drawn there).
// Chart.getChart comes from the module instance the page itself imported.
async function chartPoints(selector) {
  await page.evaluate(async () => {
    window.__testChart = (await import('/vendor/chart.js/chart.mjs')).Chart;
  });
  return page.evaluate((sel) => {
    const chart = window.__testChart.getChart(document.querySelector(sel));
    return chart ? chart.data.datasets.reduce((n, d) => n + d.data.length, 0) : 0;
  }, selector);
}

async function waitChartPoints(selector, atLeast) {
  await page.evaluate(async () => {
    window.__testChart = (await import('/vendor/chart.js/chart.mjs')).Chart;
  });
  await page.waitForFunction(([sel, n]) => {
    const chart = window.__testChart.getChart(document.querySelector(sel));
    return Boolean(chart) && chart.data.datasets[0].data.length >= n;
  }, [selector, atLeast], kWait);
}

async function confirm(label) {
  const dialog = page.locator('dialog.confirm[open]');
  await dialog.waitFor();
  await dialog.getByRole('button', {name: label}).click();
}

async function submitJob(preset, jobId, specText) {
  await go('#/jobs');
  const form = page.locator('#submit-job');
  await form.locator('#job-node option[value="' + `${kZone}/${kVm}` + '"]').waitFor({state: 'attached'});
  await form.getByLabel('TPU VM').selectOption(`${kZone}/${kVm}`);
  await form.getByLabel('Preset').selectOption(preset);
  await form.getByLabel('Job ID (optional)').fill(jobId);
  if (specText) await form.getByLabel('Job spec (JSON)').fill(specText);
  await form.getByRole('button', {name: 'Submit job'}).click();
  await page.waitForURL(`**/#/jobs/${kZone}/${kVm}/${jobId}`);
}

test('dashboard in headless chromium', {skip}, async (t) => {
  await t.test('serves the page shell and Chart.js', async () => {
    await go('');
    await page.getByRole('heading', {name: 'Overview'}).waitFor();
    await page.getByRole('heading', {name: 'TPU VMs by state'}).waitFor();
    assert.equal(await page.evaluate(async () => (await import('/vendor/chart.js/chart.mjs')).Chart.version), '3.9.1');
  });

  await t.test('catalog lists accelerator types with their hardware', async () => {
    await go('#/catalog');
    const v4 = page.locator('#catalog-table tr[data-type="v4-8"]');
    await v4.waitFor();
    await page.getByLabel('Zone').selectOption(kZone);
    await page.locator('#catalog-table tr[data-type="v5litepod-8"]').waitFor({state: 'detached'});
    const cells = await v4.locator('td').allTextContents();
    // v4-8: 4 chips, 1 host, 8 TensorCores, 32 MXUs of 128x128, 128 GiB HBM, 1101 TFLOPS.
    assert.deepEqual(cells.slice(0, 8), ['v4', '2x2x1', '4', '1', '8', '32 (4/TC)', '128×128', '128 GiB']);
    assert.equal(cells[9], '1,101');
    assert.equal(await page.locator('#catalog-table tbody tr').count(), 10);  // every v4 size
    await shot('catalog');
  });

  await t.test('compare prices a model on every TPU generation and its URL reproduces it', async () => {
    const query = 'preset=llama2-7b&seqLen=2048&globalBatch=256';
    await go(`#/compare?${query}`);
    const v5p = page.locator('#compare-table tr[data-type="v5p-128"]');
    await v5p.waitFor();
    const reply = await (await fetch(`${base}/_emulator/compare?${query}`)).json();
    assert.equal(await page.locator('#compare-table tbody tr').count(), reply.rows.length);
    assert.equal(await v5p.getAttribute('data-fits'), 'true');
    // The page shows the endpoint's numbers: v5p-128's plan, remat and MFU.
    const row = reply.rows.find((r) => r.acceleratorType === 'v5p-128');
    const cells = await v5p.locator('td').allTextContents();
    assert.deepEqual(cells.slice(1, 3), [row.plan, row.remat]);
    assert.equal(cells[6], `${(row.mfu * 100).toFixed(1)}%`);
    // Serving beside training, by default: the page asked with serving.engine=jetstream (the link
    // and the form say so) and the row shows the endpoint's serving figures.
    const served = await (await fetch(`${base}/_emulator/compare?${query}&serving.engine=jetstream`)).json();
    const sv = served.rows.find((r) => r.acceleratorType === 'v5p-128').serving;
    const servingCells = await v5p.locator('td.serving').allTextContents();
    assert.equal(servingCells.length, 5);
    assert.equal(servingCells[0], Math.round(sv.outputTokensPerSecondPerChip).toLocaleString('en-US'));
    assert.equal(servingCells[1], Math.round(sv.outputTokensPerSecondPerChip * sv.chips).toLocaleString('en-US'));
    assert.match(servingCells[2], / ms$/);  // latency per output token
    assert.match(servingCells[4], /^\$/);
    assert.match(await page.locator('#compare-link').getAttribute('href'), /serving\.engine=jetstream/);
    assert.equal(await page.getByLabel('Serving engine').inputValue(), 'jetstream');
    assert.equal(await page.locator('#compare-serving').isHidden(), false);
    // H100 and H200 for context: their own table, every row and the title and footnote marked as
    // outside the TPU model, the figures the endpoint's gpuReference gives.
    const gpus = page.locator('#compare-gpu-table tbody tr');
    assert.equal(await gpus.count(), 2);
    assert.deepEqual(await gpus.evaluateAll((trs) => trs.map((tr) => [tr.dataset.gpu, tr.dataset.outsideTpuModel])),
                     [['H100 SXM', 'true'], ['H200 SXM', 'true']]);
    assert.match(await page.locator('#compare-gpu-title').textContent(), /outside the TPU model/);
    assert.match(await page.locator('#compare-gpu-sources').textContent(), /Outside the TPU model.*arXiv:2407\.21783/s);
    const h100 = served.gpuReference[0];
    assert.equal(h100.outsideTpuModel, true);
    const h100Cells = await gpus.first().locator('td').allTextContents();
    assert.equal(h100Cells[1], 'a3-highgpu-8g');
    assert.equal(h100Cells[5], `${(h100.training.mfu * 100).toFixed(1)}%`);
    assert.equal(h100Cells[10], Math.round(h100.serving.outputTokensPerSecondPerGpu).toLocaleString('en-US'));
    // 6.7B parameters with Adam do not fit one 16 GiB v5e chip: the table says so.
    const one = page.locator('#compare-table tr[data-type="v5litepod-1"]');
    assert.equal(await one.getAttribute('data-fits'), 'false');
    assert.match(await one.locator('td').last().textContent(), /does not fit/);
    // Both charts are drawn by Chart.js, one bar per accelerator type that fits.
    const fitting = reply.rows.filter((r) => r.fits).length;
    await waitChartPoints('#compare-cost-chart', fitting);
    assert.ok(await chartPoints('#compare-step-chart') >= fitting);
    await page.locator('#compare-summary strong').first().waitFor();
    await shot('compare');
    // The form narrows the comparison; the new URL reproduces it on a fresh load.
    await page.getByLabel('Accelerator types').fill('v6e');
    await page.getByRole('button', {name: 'Compare'}).click();
    await page.waitForURL(/acceleratorTypes=v6e/);
    await page.locator('#compare-table tr[data-type="v5p-128"]').waitFor({state: 'detached'});
    assert.equal(await page.locator('#compare-table tbody tr').count(), 8);  // every v6e size
    const url = page.url();
    await page.goto(`${base}/`);
    await page.goto(url);
    await page.locator('#compare-table tr[data-type="v6e-256"]').waitFor();
    assert.equal(await page.locator('#compare-table tbody tr').count(), 8);
    assert.equal(await page.getByLabel('Accelerator types').inputValue(), 'v6e');
    assert.match(url, /serving\.engine=jetstream/);
    assert.notEqual(await page.locator('#compare-table tr[data-type="v6e-256"] td.serving').first().textContent(), '');
    assert.equal(await page.locator('#compare-gpu-table tbody tr').count(), 2);
  });

  await t.test('compare prices serving, shows offloaded memory and takes an HLO module', async () => {
    // Llama-3.1-8B as the v6e-8 recipe trains it fits only with its activations on the host.
    const train = 'preset=llama3-8b&globalBatch=24&acceleratorTypes=v6e-8';
    await go(`#/compare?${train}`);
    const v6e = page.locator('#compare-table tr[data-type="v6e-8"]');
    await v6e.waitFor();
    assert.equal(await v6e.getAttribute('data-fits'), 'true');
    const trained = (await (await fetch(`${base}/_emulator/compare?${train}`)).json()).rows[0];
    assert.ok(trained.hbmPerChip.host > 0);
    assert.notEqual((await v6e.locator('td').nth(8).textContent()).trim(), '—');
    // Serving is priced by default; engine "none" in the URL asks for training only.
    assert.equal(await page.locator('#compare-serving').isHidden(), false);
    await go(`#/compare?${train}&serving.engine=none`);
    await page.waitForFunction(() => document.querySelector('#compare-table tr[data-type="v6e-8"] td.serving')?.textContent === '—',
                               null, kWait);
    assert.equal(await page.locator('#compare-serving').isHidden(), true);
    assert.equal(await page.locator('#compare-gpu-table tbody tr').count(), 2);  // training context stays
    assert.deepEqual(await page.locator('#compare-table tr[data-type="v6e-8"] td.serving').allTextContents(),
                     ['—', '—', '—', '—', '—']);
    assert.equal(await page.getByLabel('Serving engine').inputValue(), 'none');
    // Serving: the form's fields go into the URL and the serving table shows the endpoint's rows.
    const query = 'preset=llama2-7b&acceleratorTypes=v5litepod-8%2Cv6e-8&serving.batch=96&serving.weights=int8&serving.kvCache=int8';
    await go(`#/compare?${query}`);
    const served = page.locator('#compare-serving-table tr[data-type="v5litepod-8"]');
    await served.waitFor();
    const reply = await (await fetch(`${base}/_emulator/compare?${query}`)).json();
    assert.equal(await page.locator('#compare-serving-table tbody tr').count(), reply.rows.length);
    const s = reply.rows[0].serving;
    const cells = await served.locator('td').allTextContents();
    assert.equal(cells[0], `${s.tp} × ${s.replicas}`);
    assert.equal(cells[1], '96');
    assert.equal(cells[5], Math.round(s.outputTokensPerSecondPerChip).toLocaleString('en-US'));
    assert.equal(await page.getByLabel('Weights').inputValue(), 'int8');
    await shot('compare-serving');
    // The engine is a field too, and in the URL: vLLM's figures for the same types.
    await page.getByLabel('Serving engine').selectOption('vllm');
    await page.getByRole('button', {name: 'Compare'}).click();
    await page.waitForURL(/serving\.engine=vllm/);
    const vllm = await (await fetch(`${base}/_emulator/compare?${query}&serving.engine=vllm`)).json();
    const v = vllm.rows[0].serving;
    assert.equal(v.engine, 'vllm');
    await page.waitForFunction(() => /vllm/.test(document.querySelector('#compare-serving-caption')?.textContent || ''),
                               null, kWait);
    assert.equal(await page.locator('#compare-table tr[data-type="v5litepod-8"] td.serving').first().textContent(),
                 Math.round(v.outputTokensPerSecondPerChip).toLocaleString('en-US'));
    assert.equal(await page.getByLabel('Weights').inputValue(), 'int8');
    // An HLO module instead of the model: POSTed, priced like a program.
    await page.getByLabel('Accelerator types').fill('v6e');
    await page.locator('#compare-hlo').setInputFiles(path.join(kRepo, 'tests/engine/hlo/testdata/mlp_train_step.hlo'));
    await page.getByRole('button', {name: 'Compare'}).click();
    await page.waitForURL(/source=hlo/);
    await page.locator('#compare-table tr[data-type="v6e-256"]').waitFor();
    assert.equal(await page.locator('#compare-table tbody tr').count(), 8);
    assert.match(await page.locator('#compare-summary').textContent(), / per step/);
  });

  await t.test('creates a TPU VM through the form and sees it turn READY', async () => {
    await go('#/vms');
    const form = page.locator('#create-vm');
    await page.waitForSelector(`#create-vm[data-catalog-zone="${kZone}"]`);
    await form.getByLabel('Name').fill(kVm);
    await form.getByLabel('Accelerator type').selectOption('v4-8');
    await form.getByLabel('Runtime version').selectOption('tpu-ubuntu2204-base');
    await form.getByRole('button', {name: 'Create'}).click();
    const row = page.locator(`#vm-table tr[data-node="${kVm}"]`);
    await page.locator(`#vm-table tr[data-node="${kVm}"][data-state="CREATING"]`).waitFor();
    await page.locator(`#vm-table tr[data-node="${kVm}"][data-state="READY"]`).waitFor();
    const cells = await row.locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 6), [kZone, 'v4-8', 'tpu-ubuntu2204-base', 'READY', 'HEALTHY', '1']);
  });

  await t.test('shows an API error as the API states it', async () => {
    const url = `${base}/v2/projects/my-proj/locations/${kZone}/nodes?nodeId=${kVm}`;
    allowedFailures.push({url, status: 409});
    const form = page.locator('#create-vm');
    await form.getByLabel('Name').fill(kVm);
    await form.getByRole('button', {name: 'Create'}).click();
    const error = form.locator('.error');
    await error.waitFor();
    assert.match(await error.textContent(),
                 new RegExp(`ALREADY_EXISTS\\)?: Resource 'projects/my-proj/locations/${kZone}/nodes/${kVm}' already exists`));
    await form.getByLabel('Name').fill('');
    await shot('vms');
  });

  await t.test('VM detail shows workers, HBM and utilization charts', async () => {
    await page.locator(`#vm-table tr[data-node="${kVm}"] a`).first().click();
    await page.waitForURL(`**/#/vms/${kZone}/${kVm}`);
    await page.getByRole('heading', {name: 'Worker endpoints'}).waitFor();
    await page.locator('section:has(h2:text("Worker endpoints")) tbody tr td:text("10.")').first().waitFor();
    // The harness runs tpuemud with --worker-sandboxes off: every worker is a record only.
    const workers = page.locator('#workers');
    await workers.getByRole('heading', {name: 'Workers'}).waitFor();
    await workers.locator('tbody tr[data-worker="0"] .badge:text-is("NOT_SANDBOXED")').waitFor();
    const rows = await workers.locator('tbody tr[data-worker]').count();
    assert.equal(rows, 1);  // v4-8: one worker
    assert.match(await workers.locator('tbody tr[data-worker="0"]').textContent(),
                 /this node was made without worker sandboxes/);
    assert.match(await workers.locator('tbody tr[data-worker="0"]').textContent(), /No SSH: not a sandbox/);
    assert.match(await workers.locator('p.muted').textContent(), /--worker-sandboxes auto/);
    assert.equal(await workers.locator('details.startup').count(), 0);
    await waitChartPoints('#duty-chart', 1);
    await waitChartPoints('#mxu-chart', 1);
    assert.match(await page.locator('.hbm').textContent(), /of 128 GiB/);
    await shot('vm-detail');
  });

  await t.test('runs an mlp job to SUCCEEDED with its loss chart drawn', async () => {
    await submitJob('mlp', 'mlp-1');
    await page.locator('#job-state .badge:text-is("SUCCEEDED")').waitFor();
    // The page's last read of the metrics is the finished job's, not a running step's.
    await page.locator('#op-table[data-state="SUCCEEDED"]').waitFor();
    await waitChartPoints('#loss-chart', 50);
    assert.equal(await chartPoints('#loss-chart'), 50);
    assert.equal(await chartPoints('#step-time-chart'), 50);
    assert.equal(await page.locator('#job-exit-code').textContent(), '0');
    await page.locator('#job-log:has-text("SUCCEEDED (exit code 0)")').waitFor();
    // The metrics report (torch_xla format) and the per-op profile.
    await page.locator('#job-report:has-text("Metric:")').waitFor();
    const ops = page.locator('#op-table tbody tr');
    await page.waitForFunction(() => document.querySelectorAll('#op-table tbody tr:not(:has(td.empty))').length > 1, null, kWait);
    // Default order: by emulated time, longest first; the header toggles it.
    const seconds = () => page.$$eval('#op-table tbody tr', (rows) => rows.map((r) => Number(r.dataset.seconds)));
    const descending = await seconds();
    assert.deepEqual(descending, [...descending].sort((a, b) => b - a));
    await page.locator('#op-table button.sort[data-key="emulatedSeconds"]').click();
    assert.deepEqual(await seconds(), [...descending].reverse());
    assert.equal(await page.locator('#op-table th[aria-sort="ascending"]').count(), 1);
    assert.ok(await ops.count() > 1);
    await shot('job-detail');
  });

  await t.test('runs an uploaded HLO module and profiles its instructions', async () => {
    // A syntax error first: the API's 400 names the line and column, shown under the form.
    await go('#/jobs');
    const form = page.locator('#submit-job');
    await form.locator('#job-node option[value="' + `${kZone}/${kVm}` + '"]').waitFor({state: 'attached'});
    await form.getByLabel('TPU VM').selectOption(`${kZone}/${kVm}`);
    await form.getByLabel('Preset').selectOption('hlo');
    allowedFailures.push({url: `${base}/v2/projects/my-proj/locations/${kZone}/nodes/${kVm}/jobs`, status: 400});
    await form.locator('#job-hlo-file').setInputFiles({
      name: 'broken.txt', mimeType: 'text/plain',
      buffer: Buffer.from('HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}\n')});
    await form.locator('#job-hlo-status:has-text("Read broken.txt")').waitFor();
    await form.getByRole('button', {name: 'Submit job'}).click();
    const error = form.locator('.error');
    await error.waitFor();
    assert.match(await error.textContent(), /hlo\.text: HLO text line 4, column 1: expected '\)'/);
    // Then a module file that runs: uploaded, submitted, its profile names the HLO instructions.
    const dense = `HloModule jit_dense
ENTRY main {
  x = f32[8,16]{1,0} parameter(0)
  w = f32[16,4]{1,0} parameter(1)
  ROOT y = f32[8,4]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(dense)/dot_general"}
}
`;
    await form.locator('#job-hlo-file').setInputFiles({name: 'dense.hlo', mimeType: 'text/plain', buffer: Buffer.from(dense)});
    await form.locator('#job-hlo-status:has-text("Read dense.hlo")').waitFor();
    assert.equal(await form.getByLabel('HLO module (paste it, or choose a file)').inputValue(), dense);
    await form.getByLabel('Job ID (optional)').fill('hlo-1');
    await form.getByRole('button', {name: 'Submit job'}).click();
    await page.waitForURL(`**/#/jobs/${kZone}/${kVm}/hlo-1`);
    await page.locator('#job-state .badge:text-is("SUCCEEDED")').waitFor();
    await page.locator('#job-log:has-text("hlo: module jit_dense")').waitFor();
    const row = page.locator('#op-table tbody tr:has(th:text-is("%y"))');
    await row.waitFor();
    assert.match(await row.textContent(), /jit\(dense\)\/dot_general/);
    assert.equal(await page.locator('#op-table th:has-text("op_name")').count(), 1);
    await shot('job-detail-hlo');
  });

  await t.test('cancels a long job', async () => {
    await submitJob('matmul', 'long-1',
                    JSON.stringify({workload: {matmul: {m: 1024, n: 1024, k: 1024}}, steps: 10000}));
    await page.locator('#job-state .badge:text-is("RUNNING")').waitFor();
    await page.locator('#cancel-job').click();
    await confirm('Cancel job');
    await page.locator('#job-state .badge:text-is("CANCELLED")').waitFor();
    assert.notEqual(await page.locator('#job-exit-code').textContent(), '0');
  });

  await t.test('jobs page lists the queue and history and filters them', async () => {
    await go('#/jobs');
    await page.locator('#job-history tr[data-job="mlp-1"]').waitFor();
    await page.locator('#job-history tr[data-job="long-1"]').waitFor();
    await shot('jobs');
    await page.getByLabel('State').selectOption('SUCCEEDED');
    await page.locator('#job-history tr[data-job="long-1"]').waitFor({state: 'detached'});
    assert.equal(await page.locator('#job-history tr[data-job="mlp-1"]').count(), 1);
  });

  await t.test('overview counts states and shows the events', async () => {
    await go('');
    await page.locator('section:has(#events-title) tbody tr a:text-is("web-tpu")').first().waitFor();
    await page.locator('section:has(#events-title) tbody tr a:text-is("web-tpu/mlp-1")').first().waitFor();
    await waitChartPoints('#capacity-chart', 1);
    const capacity = await page.locator('section:has(#capacity) tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(capacity.slice(0, 3), [kZone, '1', '8']);
    await shot('overview');
  });

  await t.test('stops and starts the TPU VM with confirmation', async () => {
    await go('#/vms');
    const row = page.locator(`#vm-table tr[data-node="${kVm}"]`);
    await row.getByRole('button', {name: `Stop ${kVm}`}).click();
    await confirm('Stop');
    await page.locator(`#vm-table tr[data-node="${kVm}"][data-state="STOPPED"]`).waitFor();
    await row.getByRole('button', {name: `Start ${kVm}`}).click();
    await confirm('Start');
    await page.locator(`#vm-table tr[data-node="${kVm}"][data-state="READY"]`).waitFor();
  });

  await t.test('deletes the TPU VM with confirmation', async () => {
    await go('#/vms');
    const row = page.locator(`#vm-table tr[data-node="${kVm}"]`);
    await row.waitFor();
    await row.getByRole('button', {name: `Delete ${kVm}`}).click();
    await confirm('Delete');
    await row.waitFor({state: 'detached'});
    await page.locator('#vm-table td.empty').waitFor();
  });

  await t.test('queued resources page shows state, tier and nodes; maintenance and preempt act', async () => {
    // Two queued resources over HTTP: a guaranteed one-node request and a spot multislice one.
    const parent = `projects/my-proj/locations/${kZone}`;
    const queue = async (id, tier, nodeSpec) => {
      const r = await fetch(`${base}/v2/${parent}/queuedResources?queuedResourceId=${id}`, {
        method: 'POST', headers: {'content-type': 'application/json'},
        body: JSON.stringify({tpu: {nodeSpec: [{parent, ...nodeSpec,
                                                node: {acceleratorType: 'v4-8',
                                                       runtimeVersion: 'tpu-ubuntu2204-base'}}]},
                              [tier]: {}}),
      });
      assert.equal(r.status, 200, await r.text());
    };
    await queue('web-qr', 'guaranteed', {nodeId: 'web-qr-node'});
    await queue('web-spot', 'spot', {multisliceParams: {nodeCount: 2, nodeIdPrefix: 'web-spot'}});
    await go('#/queued-resources');
    const row = (id) => page.locator(`#qr-table tr[data-queued-resource="${id}"]`);
    await page.locator('#qr-table tr[data-queued-resource="web-qr"][data-state="ACTIVE"]').waitFor();
    await page.locator('#qr-table tr[data-queued-resource="web-spot"][data-state="ACTIVE"]').waitFor();
    const cells = await row('web-spot').locator('td').allTextContents();
    assert.equal(cells[0], kZone);
    assert.equal(cells[2], 'spot');
    assert.equal(cells[3], 'v4-8');
    assert.equal(await row('web-qr').locator('td').nth(2).textContent(), 'guaranteed');
    for (const id of ['web-spot-0', 'web-spot-1']) {
      await row('web-spot').locator(`.qr-node[data-node="${id}"][data-state="READY"]`).waitFor();
    }
    await row('web-qr').locator('.qr-node[data-node="web-qr-node"][data-state="READY"]').waitFor();
    // Only the spot tier can be preempted.
    assert.equal(await row('web-qr').getByRole('button', {name: 'Preempt web-qr'}).isDisabled(), true);
    await shot('queued-resources');

    // Maintenance: every node of the queued resource turns UNHEALTHY_MAINTENANCE on the page.
    await row('web-qr').getByRole('button', {name: 'Maintenance web-qr'}).click();
    await confirm('Maintenance');
    await row('web-qr').locator('.qr-node[data-node="web-qr-node"][data-health="UNHEALTHY_MAINTENANCE"]').waitFor();
    assert.match(await row('web-qr').locator('td.nodes').textContent(), /UNHEALTHY_MAINTENANCE/);

    // Preempt: the spot queued resource is suspended by the service.
    await row('web-spot').getByRole('button', {name: 'Preempt web-spot'}).click();
    await confirm('Preempt');
    await page.locator('#qr-table tr[data-queued-resource="web-spot"][data-state="SUSPENDED"]').waitFor();
    assert.match(await row('web-spot').locator('td.state').textContent(), /SUSPENDED\s*by service/);
    await shot('queued-resources-faults');
  });

  await t.test('no console errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});

// With --auth-tokens the dashboard asks for a token on the first 401, keeps it for the tab, and
// shows a 403 as the API states it.
test('dashboard asks for a bearer token when auth is on', {skip}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tpuemu-auth-'));
  const tokens = path.join(dir, 'tokens.json');
  fs.writeFileSync(tokens, JSON.stringify({tokens: [
    {token: 'dash-viewer', projects: ['*'], role: 'viewer'},
  ]}));
  const secured = await StartTpuemud(process.env.TPUEMUD, [
    '--auth-tokens', tokens, '--provisioning-delay-ms', '0', '--web-dir', path.join(kRepo, 'web'),
  ]);
  const securedBase = `http://127.0.0.1:${secured.port}`;
  // The 401s that make the dashboard ask, and the viewer's refused create.
  allowedFailures.push({url: securedBase, status: 401}, {url: securedBase, status: 403});
  const tab = await browser.context.newPage();
  const errors = [];
  tab.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const ok = allowedFailures.some((a) => msg.text().includes(`status of ${a.status}`) &&
                                           (msg.location()?.url || '').startsWith(a.url));
    if (!ok) errors.push(msg.text());
  });
  tab.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  try {
    await tab.goto(`${securedBase}/`);
    const dialog = tab.locator('dialog#auth[open]');
    await dialog.waitFor(kWait);
    await dialog.getByLabel('Token').fill('dash-viewer');
    await dialog.getByRole('button', {name: 'Use token'}).click();
    await tab.locator('#live[data-mode="live"]').waitFor(kWait);
    assert.equal(await tab.evaluate(() => sessionStorage.getItem('tpuemu.token')), 'dash-viewer');
    await tab.goto(`${securedBase}/#/vms`);
    await tab.waitForSelector('#create-vm[data-catalog-zone="us-central2-b"]', kWait);
    await tab.locator('#create-vm').getByLabel('Name').fill('denied-tpu');
    await tab.locator('#create-vm').getByRole('button', {name: 'Create'}).click();
    const error = tab.locator('#create-vm .error');
    await error.waitFor(kWait);
    assert.match(await error.textContent(), /PERMISSION_DENIED\)?: Permission 'tpu\.nodes\.create' denied/);
    await tab.screenshot({path: path.join(kArtifacts, 'auth-403.png'), fullPage: true});
    assert.deepEqual(errors, []);
  } finally {
    await tab.close();
    await secured.Stop();
    fs.rmSync(dir, {recursive: true, force: true});
  }
});
