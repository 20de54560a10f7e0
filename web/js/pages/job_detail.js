// One job: state with exit code and reason, a live log tail (GET .../logs?offset=N), loss and
// step-time charts, the summary metrics, an op table sortable by time with MXU utilization per op,
// and the torch_xla-style metrics report. Refreshes every second until the job is terminal.
import * as api from '../api.js';
import * as data from '../data.js';
import {lineChart} from '../charts.js';
import {cancelJob} from './jobs.js';
import {badge, durationBetween, emptyRow, errorBox, formatBytes, formatNumber, formatPercent,
        formatSeconds, formatTime, h, kTerminalJobStates, mount, parseName} from '../dom.js';

const kMetricsEveryMs = 2500;  // a running job's metrics (steps) are re-read this often

const kOpColumns = [
  {key: 'id', label: 'Op', text: true},
  {key: 'op', label: 'Kind', text: true},
  {key: 'opName', label: 'op_name', text: true, optional: true},
  {key: 'unit', label: 'Unit', text: true},
  {key: 'cycles', label: 'Cycles'},
  {key: 'emulatedSeconds', label: 'Time', format: formatSeconds},
  {key: 'share', label: '% of time', format: (v) => formatPercent(v)},
  {key: 'flops', label: 'FLOPs', format: (v) => formatNumber(v)},
  {key: 'mxuUtilization', label: 'MXU utilization', format: (v) => formatPercent(v)},
  {key: 'hbmBytes', label: 'HBM traffic', format: formatBytes},
];

function card(label, value) {
  return h('div', {class: 'stat'}, h('div', {class: 'stat-value'}, value), h('div', {class: 'stat-label'}, label));
}

export default {
  title: 'Job',
  intervalMs: 1000,
  async render(root, {zone, node, job}) {
    const header = h('div', {class: 'title-row'});
    const errors = h('div');
    const info = h('div');
    const stats = h('div', {class: 'stats'});
    const lossCanvas = h('canvas', {id: 'loss-chart', 'aria-label': 'Loss per step'});
    const stepCanvas = h('canvas', {id: 'step-time-chart', 'aria-label': 'Emulated step time per step'});
    const lossNote = h('p', {class: 'muted small'});
    const summary = h('tbody');
    const opsHead = h('tr');
    const opsBody = h('tbody');
    const opsTable = h('table', {id: 'op-table', class: 'compact'}, h('thead', {}, opsHead), opsBody);
    const log = h('pre', {class: 'log', id: 'job-log', tabindex: 0, 'aria-live': 'off'});
    const report = h('pre', {class: 'report', id: 'job-report', tabindex: 0});
    mount(root, h('p', {class: 'crumbs'}, h('a', {href: '#/jobs'}, 'Jobs'), ' / ',
                  h('a', {href: `#/vms/${zone}/${node}`}, node)),
          header, errors,
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'job-facts'}, h('h2', {id: 'job-facts'}, 'Status'), info),
            h('section', {class: 'card', 'aria-labelledby': 'job-perf'},
              h('h2', {id: 'job-perf'}, 'Performance summary'), stats)),
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'loss-title'}, h('h2', {id: 'loss-title'}, 'Loss'),
              h('div', {class: 'chart'}, lossCanvas), lossNote),
            h('section', {class: 'card', 'aria-labelledby': 'step-title'},
              h('h2', {id: 'step-title'}, 'Step time (emulated)'), h('div', {class: 'chart'}, stepCanvas))),
          h('section', {class: 'card', 'aria-labelledby': 'log-title'}, h('h2', {id: 'log-title'}, 'Log'), log),
          h('section', {class: 'card', 'aria-labelledby': 'ops-title'},
            h('h2', {id: 'ops-title'}, 'Op profile'),
            h('div', {class: 'scroll'}, opsTable)),
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'metrics-title'},
              h('h2', {id: 'metrics-title'}, 'Metrics'),
              h('table', {id: 'metrics-table', class: 'compact'}, summary)),
            h('section', {class: 'card', 'aria-labelledby': 'report-title'},
              h('h2', {id: 'report-title'}, 'Metrics report'), report)));

    let logOffset = 0;
    let finished = false;     // terminal and everything read once more after it
    let terminalSeen = false;
    let metricsAt = 0;
    let ops = [];
    let sort = {key: 'emulatedSeconds', descending: true};

    function renderOps() {
      // Optional columns (an HLO job's op_name) only when some op has a value for them.
      const columns = kOpColumns.filter((c) => !c.optional || ops.some((op) => op[c.key]));
      mount(opsHead, columns.map((c) => {
        const active = sort.key === c.key;
        return h('th', {scope: 'col', 'aria-sort': active ? (sort.descending ? 'descending' : 'ascending') : 'none',
                        class: c.text ? '' : 'num'},
                 h('button', {type: 'button', class: 'sort', dataset: {key: c.key}, onclick: () => {
                   sort = {key: c.key, descending: active ? !sort.descending : !c.text};
                   renderOps();
                 }}, c.label, active ? (sort.descending ? ' ▼' : ' ▲') : ''));
      }));
      const column = columns.find((c) => c.key === sort.key) || columns[0];
      const rows = [...ops].sort((a, b) => {
        const x = a[sort.key], y = b[sort.key];
        const order = column.text ? String(x ?? '').localeCompare(String(y ?? '')) : (x ?? 0) - (y ?? 0);
        return sort.descending ? -order : order;
      });
      mount(opsBody, rows.length ? rows.map((op) => h('tr', {dataset: {seconds: op.emulatedSeconds ?? 0}}, columns.map((c) => h(
          c.key === 'id' ? 'th' : 'td', {class: c.text ? '' : 'num', scope: c.key === 'id' ? 'row' : null},
          c.format ? c.format(op[c.key]) : (op[c.key] ?? '—')))))
        : emptyRow(columns.length, terminalSeen ? 'No per-op profile for this job.' : 'The op profile appears when the job has run.'));
    }
    renderOps();

    async function readLogs() {
      for (let i = 0; i < 20; i++) {  // a long backlog comes in a few pages
        const reply = await api.get(api.jobPath(zone, node, job, `/logs?offset=${logOffset}`));
        const lines = reply.lines || [];
        if (!lines.length) return;
        const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
        log.append(lines.map((l) => `${l}\n`).join(''));
        logOffset = reply.nextOffset ?? logOffset + lines.length;
        if (atBottom) log.scrollTop = log.scrollHeight;
      }
    }

    async function readMetrics(j) {
      const [metrics, text] = await Promise.all([
        api.get(api.jobPath(zone, node, job, '/metrics')),
        api.optional('job-report', () => api.get(api.jobPath(zone, node, job, '/metricsReport'), {text: true}))
            .catch((e) => `(${e.message})`),
      ]);
      const steps = metrics.steps || [];
      const withLoss = steps.filter((s) => s.loss !== undefined && s.loss !== null);
      lineChart(lossCanvas, withLoss.map((s) => s.step), [{label: 'Loss', data: withLoss.map((s) => s.loss)}],
                {xLabel: 'step'});
      mount(lossNote, withLoss.length ? `${withLoss.length} steps, last loss ${formatNumber(withLoss[withLoss.length - 1].loss, 4)}`
                                      : steps.length ? 'This workload reports no loss.' : 'No steps yet.');
      lineChart(stepCanvas, steps.map((s) => s.step),
                [{label: 'Emulated step time (µs)', data: steps.map((s) => (s.emulatedSeconds ?? 0) * 1e6)}],
                {xLabel: 'step', yLabel: 'µs'});
      const sum = metrics.summary || {};
      const avgStep = steps.length ? steps.reduce((a, s) => a + (s.emulatedSeconds || 0), 0) / steps.length
                                   : (sum.steps ? sum.emulatedSecondsTotal / sum.steps : undefined);
      const hw = await data.hardware().catch(() => null);
      const peak = hw?.byType.get(sum.acceleratorType)?.peakBf16Tflops;
      const cores = sum.tensorcores || j.spec?.cores || 1;  // an hlo job's cores count devices
      const tcs = hw?.byType.get(sum.acceleratorType)?.tensorcores;
      const flopsUtil = peak && tcs && sum.emulatedTflops !== undefined ? sum.emulatedTflops / (peak * cores / tcs) : undefined;
      mount(stats, card('Average step time', formatSeconds(avgStep)),
            card('Emulated TFLOP/s', formatNumber(sum.emulatedTflops)),
            card('FLOPS utilization', formatPercent(flopsUtil)),
            card('MXU utilization', formatPercent(sum.mxuUtilization)),
            card('Cycles per step', formatNumber(sum.cyclesPerStep)),
            card('Compile cache', sum.compileCacheHit === undefined ? '—' : sum.compileCacheHit ? 'hit' : 'miss'),
            card('Peak HBM per TensorCore', formatBytes(sum.hbmPeakBytesPerTensorCore)),
            card('Steps', formatNumber(sum.steps ?? steps.length)));
      const entries = Object.entries(sum);
      mount(summary, entries.length ? entries.map(([k, v]) => h('tr', {}, h('th', {scope: 'row'}, k),
                                                                    h('td', {class: 'num'}, typeof v === 'number' ? formatNumber(v, 4) : String(v))))
                                    : emptyRow(2, 'Metrics appear when the job finishes.'));
      const total = (metrics.ops || []).reduce((a, op) => a + (op.emulatedSeconds || 0), 0);
      ops = (metrics.ops || []).map((op) => ({...op, share: total ? (op.emulatedSeconds || 0) / total : 0}));
      renderOps();
      report.textContent = text ?? 'The metrics report is not served by this tpuemud.';
      // The state these figures were read in: a test (or a user's script) waits for the terminal
      // state's read instead of racing the last read of a running job.
      opsTable.dataset.state = j.state;
    }

    async function refresh() {
      if (finished) return;
      let j;
      try {
        j = await api.get(api.jobPath(zone, node, job));
      } catch (e) {
        mount(errors, errorBox(e));
        if (e.httpStatus === 404) {
          finished = true;
          mount(header, h('h1', {}, job));
        }
        return;
      }
      j._ = parseName(j.name);
      mount(errors);
      const terminal = kTerminalJobStates.has(j.state);
      terminalSeen = terminal;
      mount(header, h('h1', {}, job, ' ', badge(j.state)),
            terminal ? null : h('button', {type: 'button', class: 'danger', id: 'cancel-job', onclick: async () => {
              try {
                if (await cancelJob(j)) refresh();
              } catch (e) {
                mount(errors, errorBox(e));
              }
            }}, 'Cancel job'));
      mount(info, h('dl', {class: 'facts'}, [
        ['State', badge(j.state)], ['Exit code', j.exitCode ?? '—'], ['Reason', j.reason || '—'],
        ['TPU VM', h('a', {href: `#/vms/${zone}/${node}`}, node)], ['Workload', data.workloadOf(j)],
        ['Priority', j.priority ?? 0], ['Attempt', j.attempt ?? '—'], ['Max retries', j.maxRetries ?? 0], ['Created', formatTime(j.createTime)],
        ['Started', formatTime(j.startTime)], ['Ended', formatTime(j.endTime)],
        ['Duration', durationBetween(j.startTime, j.endTime)],
      ].map(([k, v]) => [h('dt', {}, k), h('dd', {id: `job-${k.toLowerCase().replace(/\s+/g, '-')}`}, v)])));
      try {
        await readLogs();
        if (terminal || Date.now() - metricsAt > kMetricsEveryMs) {
          metricsAt = Date.now();
          await readMetrics(j);
        }
      } catch (e) {
        mount(errors, errorBox(e));
        return;
      }
      if (terminal) finished = true;
    }
    await refresh();
    return {refresh};
  },
};
