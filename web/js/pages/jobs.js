// Jobs: the queue (QUEUED, RUNNING) and the history, filtered by state and TPU VM; a submit form
// with a preset per built-in workload, a JSON editor for the spec and, for the hlo preset, a box
// for a pasted or uploaded HLO module; cancel with confirmation.
import * as api from '../api.js';
import * as data from '../data.js';
import {hloInput} from '../hlo_input.js';
import {kPresets, presetText} from '../presets.js';
import {badge, confirmDialog, durationBetween, emptyRow, errorBox, field, formatTime, h,
        kJobStates, kTerminalJobStates, mount, select} from '../dom.js';

export async function cancelJob(job) {
  const {zone, node, job: id} = job._;
  if (!(await confirmDialog(`Cancel job ${id} on ${node}?`, 'Cancel job'))) return false;
  await api.post(`${api.jobPath(zone, node, id)}:cancel`, {});
  return true;
}

// `previous`: the form this one replaces (what was typed in it is kept).
function submitForm(nodes, previous) {
  const node = h('select', {id: 'job-node', name: 'node', required: true},
                 nodes.map((n) => h('option', {value: `${n._.zone}/${n._.node}`},
                                    `${n._.node} (${n._.zone}, ${n.acceleratorType}, ${n.state})`)));
  const ready = nodes.find((n) => n.state === 'READY');
  if (ready) node.value = `${ready._.zone}/${ready._.node}`;
  const preset = select({id: 'job-preset', name: 'preset'},
                        Object.entries(kPresets).map(([value, p]) => ({value, label: p.label})), 'mlp');
  const jobId = h('input', {id: 'job-id', name: 'jobId', autocomplete: 'off', spellcheck: 'false',
                            placeholder: 'generated', pattern: '[a-z]([a-z0-9\\-]*[a-z0-9])?'});
  // maxRetries: re-runs after host maintenance interrupts the job (empty: the spec's own).
  const retries = h('input', {id: 'job-retries', name: 'maxRetries', type: 'number', min: 0, max: 10,
                              placeholder: '0', size: 4});
  const editor = h('textarea', {id: 'job-spec', name: 'spec', rows: 12, spellcheck: 'false',
                                class: 'code', 'aria-describedby': 'job-spec-status'});
  editor.value = presetText('mlp');
  const status = h('span', {id: 'job-spec-status', class: 'hint', 'aria-live': 'polite'}, 'Valid JSON');
  const hlo = hloInput();
  hlo.show(false);
  const submit = h('button', {type: 'submit'}, 'Submit job');
  const message = h('div', {class: 'form-message'});

  function validate() {
    try {
      const value = JSON.parse(editor.value);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new Error('the spec must be a JSON object');
      }
      editor.removeAttribute('aria-invalid');
      status.textContent = 'Valid JSON';
      status.className = 'hint';
      return value;
    } catch (e) {
      editor.setAttribute('aria-invalid', 'true');
      status.textContent = `Not valid JSON: ${e.message}`;
      status.className = 'hint bad';
      return null;
    }
  }
  editor.addEventListener('input', validate);
  preset.addEventListener('change', () => {
    editor.value = presetText(preset.value);
    hlo.show(Boolean(kPresets[preset.value].hlo));
    validate();
  });
  if (previous) {
    editor.value = previous.querySelector('#job-spec').value;
    preset.value = previous.querySelector('#job-preset').value;
    jobId.value = previous.querySelector('#job-id').value;
    retries.value = previous.querySelector('#job-retries').value;
    hlo.copyFrom(previous);
    hlo.show(Boolean(kPresets[preset.value]?.hlo));
  }
  const format = h('button', {type: 'button', class: 'secondary small', onclick: () => {
    const value = validate();
    if (value) editor.value = JSON.stringify(value, null, 2);
  }}, 'Format JSON');

  return h('form', {id: 'submit-job', 'aria-labelledby': 'submit-title', onsubmit: async (event) => {
    event.preventDefault();
    mount(message);
    const edited = validate();
    if (!edited) return;
    const spec = hlo.apply(edited);
    if (retries.value !== '') spec.maxRetries = Number(retries.value);
    if (!node.value) {
      mount(message, errorBox({message: 'Create a TPU VM first: jobs run on one.'}));
      return;
    }
    const [zone, nodeId] = node.value.split('/');
    submit.disabled = true;
    try {
      const query = jobId.value ? `?jobId=${encodeURIComponent(jobId.value)}` : '';
      const job = await api.post(api.nodePath(zone, nodeId, `/jobs${query}`), spec);
      location.hash = `#/jobs/${zone}/${nodeId}/${job.jobId}`;
    } catch (e) {
      mount(message, errorBox(e));
    } finally {
      submit.disabled = false;
    }
  }},
  h('h2', {id: 'submit-title'}, 'Submit a job'),
  h('div', {class: 'fields'}, field('TPU VM', node), field('Preset', preset),
    field('Job ID (optional)', jobId), field('Max retries', retries, 'after host maintenance')),
  field('Job spec (JSON)', editor), hlo.element, h('div', {class: 'form-row'}, status, format, submit),
  message);
}

function jobRow(j, onCancel) {
  const active = !kTerminalJobStates.has(j.state);
  return h('tr', {dataset: {job: j.jobId, state: j.state}},
           h('th', {scope: 'row'}, h('a', {href: `#/jobs/${j._.zone}/${j._.node}/${j._.job}`}, j.jobId)),
           h('td', {}, h('a', {href: `#/vms/${j._.zone}/${j._.node}`}, j._.node)),
           h('td', {}, data.workloadOf(j)), h('td', {}, badge(j.state)),
           h('td', {class: 'num'}, j.priority ?? 0), h('td', {}, formatTime(j.createTime)),
           h('td', {}, durationBetween(j.startTime, j.endTime)), h('td', {class: 'num'}, j.attempt ?? '—'),
           h('td', {class: 'num'}, j.exitCode ?? '—'), h('td', {class: 'wrap'}, j.reason || ''),
           h('td', {}, active ? h('button', {type: 'button', class: 'danger small', 'aria-label': `Cancel ${j.jobId}`,
                                             onclick: () => onCancel(j)}, 'Cancel') : null));
}

const kColumns = ['Job', 'TPU VM', 'Workload', 'State', 'Priority', 'Created', 'Duration', 'Attempt',
                  'Exit code', 'Reason', ''];

function table(id, body) {
  return h('div', {class: 'scroll'},
           h('table', {id, class: 'compact'},
             h('thead', {}, h('tr', {}, kColumns.map((t) => h('th', {scope: 'col'}, t)))), body));
}

export default {
  title: 'Jobs',
  intervalMs: 3000,
  async render(root, params) {
    const errors = h('div');
    const formHolder = h('section', {class: 'card'});
    const queue = h('tbody');
    const historyBody = h('tbody');
    const stateFilter = select({id: 'filter-state', name: 'state'},
                               [{value: '', label: 'Any state'}, ...kJobStates], params.state || '');
    const nodeFilter = h('select', {id: 'filter-node', name: 'node'});
    const applyFilters = () => {
      const q = new URLSearchParams();
      if (stateFilter.value) q.set('state', stateFilter.value);
      if (nodeFilter.value) q.set('node', nodeFilter.value);
      const hash = `#/jobs${q.toString() ? `?${q}` : ''}`;
      if (location.hash !== hash) window.history.replaceState(null, '', hash);
      refresh();
    };
    stateFilter.addEventListener('change', applyFilters);
    nodeFilter.addEventListener('change', applyFilters);
    mount(root, h('h1', {}, 'Jobs'), errors, formHolder,
          h('section', {class: 'card', 'aria-labelledby': 'queue-title'},
            h('div', {class: 'title-row'}, h('h2', {id: 'queue-title'}, 'Queue'),
              h('div', {class: 'filters'},
                field('State', stateFilter), field('TPU VM', nodeFilter))),
            table('job-queue', queue)),
          h('section', {class: 'card', 'aria-labelledby': 'history-title'},
            h('h2', {id: 'history-title'}, 'History'), table('job-history', historyBody)));

    async function onCancel(job) {
      try {
        if (await cancelJob(job)) refresh();
      } catch (e) {
        mount(errors, errorBox(e));
      }
    }

    let formNodes = '';
    async function refresh() {
      let nodes, jobs;
      try {
        [nodes, jobs] = await Promise.all([
          data.nodes(),
          data.jobs(stateFilter.value ? `?state=${encodeURIComponent(stateFilter.value)}` : ''),
        ]);
      } catch (e) {
        mount(errors, errorBox(e));
        return;
      }
      mount(errors);
      // Rebuild the submit form only when the set of TPU VMs changed (keeps what was typed).
      const key = nodes.map((n) => `${n.name}:${n.state === 'READY'}`).join(',');
      if (key !== formNodes) {
        formNodes = key;
        mount(formHolder, submitForm(nodes, formHolder.querySelector('#submit-job')));
      }
      const chosen = nodeFilter.value || params.node || '';
      mount(nodeFilter, h('option', {value: ''}, 'Any TPU VM'),
            nodes.map((n) => h('option', {value: `${n._.zone}/${n._.node}`, selected: `${n._.zone}/${n._.node}` === chosen},
                               n._.node)));
      if (chosen && !nodeFilter.value) {
        nodeFilter.append(h('option', {value: chosen, selected: true}, chosen.split('/')[1] || chosen));
      }
      const shown = jobs.filter((j) => !nodeFilter.value || `${j._.zone}/${j._.node}` === nodeFilter.value);
      shown.sort((a, b) => (b.createTime || '').localeCompare(a.createTime || ''));
      const active = shown.filter((j) => !kTerminalJobStates.has(j.state));
      const done = shown.filter((j) => kTerminalJobStates.has(j.state));
      mount(queue, active.length ? active.map((j) => jobRow(j, onCancel))
                                 : emptyRow(kColumns.length, 'No queued or running jobs.'));
      mount(historyBody, done.length ? done.map((j) => jobRow(j, onCancel))
                                 : emptyRow(kColumns.length, 'No finished jobs.'));
    }
    await refresh();
    return {refresh};
  },
};
