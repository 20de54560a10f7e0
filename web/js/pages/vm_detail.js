// One TPU VM: its facts and worker endpoints, its workers (SSH commands, startup script output:
// ./vm_workers.js), HBM used/total, duty cycle / TensorCore and MXU
// utilization over time (GET .../nodes/{n}/metrics?window=3600s), its jobs, and the node's
// torch_xla-style metrics report.
import * as api from '../api.js';
import * as data from '../data.js';
import {lineChart} from '../charts.js';
import {badge, durationBetween, emptyRow, errorBox, formatBytes, formatPercent, formatTime, h,
        mount, parseName} from '../dom.js';
import {nodeActions} from './vms.js';
import {workersPanel} from './vm_workers.js';

function facts(rows) {
  return h('dl', {class: 'facts'}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]));
}

export default {
  title: 'TPU VM',
  intervalMs: 5000,
  async render(root, {zone, node}) {
    const header = h('div', {class: 'title-row'});
    const notices = h('div', {class: 'notices'});
    const errors = h('div');
    const info = h('div');
    const endpoints = h('tbody');
    const hbm = h('div', {class: 'hbm'});
    const dutyCanvas = h('canvas', {id: 'duty-chart', 'aria-label': 'Duty cycle and TensorCore utilization over time'});
    const mxuCanvas = h('canvas', {id: 'mxu-chart', 'aria-label': 'MXU utilization over time'});
    const chartNote = h('p', {class: 'muted small'});
    const jobsBody = h('tbody');
    const report = h('pre', {class: 'report', id: 'node-report', tabindex: 0});
    const workers = workersPanel(zone, node);
    mount(root, h('p', {class: 'crumbs'}, h('a', {href: '#/vms'}, 'TPU VMs'), ' / ', zone),
          header, notices, errors,
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'vm-facts'}, h('h2', {id: 'vm-facts'}, 'Details'), info),
            h('section', {class: 'card', 'aria-labelledby': 'vm-workers'},
              h('h2', {id: 'vm-workers'}, 'Worker endpoints'),
              h('table', {class: 'compact'},
                h('thead', {}, h('tr', {}, ['Worker', 'IP address', 'Port', 'External IP'].map((t) => h('th', {}, t)))),
                endpoints),
              h('h3', {}, 'HBM used / total'), hbm)),
          workers.element,
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'duty-title'},
              h('h2', {id: 'duty-title'}, 'Duty cycle and TensorCore utilization'),
              h('div', {class: 'chart'}, dutyCanvas)),
            h('section', {class: 'card', 'aria-labelledby': 'mxu-title'},
              h('h2', {id: 'mxu-title'}, 'MXU utilization'), h('div', {class: 'chart'}, mxuCanvas))),
          chartNote,
          h('section', {class: 'card', 'aria-labelledby': 'vm-jobs'},
            h('h2', {id: 'vm-jobs'}, 'Jobs on this TPU VM'),
            h('table', {class: 'compact'},
              h('thead', {}, h('tr', {}, ['Job', 'Workload', 'State', 'Created', 'Duration', 'Exit code', 'Reason']
                                               .map((t) => h('th', {}, t)))),
              jobsBody)),
          h('section', {class: 'card', 'aria-labelledby': 'node-report-title'},
            h('h2', {id: 'node-report-title'}, 'Metrics report'), report));

    async function refresh() {
      let n;
      try {
        n = await api.get(api.nodePath(zone, node));
      } catch (e) {
        mount(errors, errorBox(e));
        if (e.httpStatus === 404) mount(header, h('h1', {}, node));
        return;
      }
      n._ = parseName(n.name);
      mount(errors);
      mount(header, h('h1', {}, node, ' ', badge(n.state)), nodeActions(n, notices, refresh));
      const [, hw, metrics, jobs, text] = await Promise.all([
        workers.refresh(n).catch((e) => console.warn('workers refresh failed', e)).then(() => null),
        data.hardware().catch(() => null),
        data.nodeMetrics(zone, node).catch(() => null),
        api.listAll(api.nodePath(zone, node, '/jobs'), 'jobs').catch(() => []),
        api.optional('node-report', () => api.get(api.nodePath(zone, node, '/metricsReport'), {text: true}))
            .catch((e) => `(${e.message})`),
      ]);
      const figures = hw?.byType.get(n.acceleratorType);
      mount(info, facts([
        ['Zone', zone], ['Accelerator type', n.acceleratorType],
        ['Topology', n.acceleratorConfig?.topology], ['Runtime version', n.runtimeVersion],
        ['Health', n.health ? badge(n.health) : null], ['Health description', n.healthDescription],
        ['Chips / TensorCores', figures ? `${figures.chips} / ${figures.tensorcores}` : null],
        ['Peak bf16', figures ? `${figures.peakBf16Tflops.toFixed(1)} TFLOPS` : null],
        ['Created', formatTime(n.createTime)], ['Description', n.description],
        ['Labels', Object.entries(n.labels || {}).map(([k, v]) => `${k}=${v}`).join(', ') || null],
      ]));
      mount(endpoints, (n.networkEndpoints || []).length
                         ? n.networkEndpoints.map((e, i) => h('tr', {}, h('td', {}, i), h('td', {}, e.ipAddress),
                                                               h('td', {}, e.port),
                                                               h('td', {}, e.accessConfig?.externalIp || '—')))
                         : emptyRow(4, 'No endpoints (the TPU VM is not running).'));
      const samples = metrics?.samples || [];
      const last = samples[samples.length - 1];
      const total = last?.hbmTotalBytes ?? figures?.hbmBytes;
      const used = last?.hbmUsedBytes;
      mount(hbm, h('meter', {id: 'hbm-meter', min: 0, max: total || 1, value: used || 0,
                             'aria-label': 'HBM used'}),
            h('span', {}, ` ${used === undefined ? '—' : formatBytes(used)} of ${formatBytes(total)}`,
              used !== undefined && total ? ` (${formatPercent(used / total)})` : ''));
      const labels = samples.map((s) => formatTime(s.time));
      lineChart(dutyCanvas, labels, [
        {label: 'Duty cycle', data: samples.map((s) => s.dutyCycle ?? 0)},
        {label: 'TensorCore utilization', data: samples.map((s) => s.tensorcoreUtilization ?? 0)},
      ], {percent: true, yMax: 1});
      lineChart(mxuCanvas, labels, [{label: 'MXU utilization', data: samples.map((s) => s.mxuUtilization ?? 0)}],
                {percent: true, yMax: 1});
      mount(chartNote, metrics === null ? 'Utilization history is not served by this tpuemud.'
                       : `Last hour, one sample every ${metrics.intervalSeconds ?? '?'} s.`);
      jobs.sort((a, b) => (b.createTime || '').localeCompare(a.createTime || ''));
      mount(jobsBody, jobs.length ? jobs.map((j) => h(
          'tr', {}, h('td', {}, h('a', {href: `#/jobs/${zone}/${node}/${j.jobId}`}, j.jobId)),
          h('td', {}, data.workloadOf(j)), h('td', {}, badge(j.state)), h('td', {}, formatTime(j.createTime)),
          h('td', {}, durationBetween(j.startTime, j.endTime)), h('td', {class: 'num'}, j.exitCode ?? '—'),
          h('td', {class: 'wrap'}, j.reason || ''))) : emptyRow(7, 'No jobs on this TPU VM yet.'));
      report.textContent = text ?? 'The metrics report is not served by this tpuemud.';
    }
    await refresh();
    return {refresh, dispose: workers.dispose};
  },
};
