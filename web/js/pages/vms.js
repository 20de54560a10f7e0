// TPU VMs: the node table (state badge, health, workers, utilization sparkline; start, stop and
// delete with confirmation) and the create form, whose accelerator type and runtime version
// choices come from the catalog of the chosen zone.
import * as api from '../api.js';
import * as data from '../data.js';
import {sparkline} from '../charts.js';
import {badge, confirmDialog, emptyRow, errorBox, field, h, mount, select} from '../dom.js';

const kSparkNodes = 50;  // utilization history is fetched for this many rows at most

// Mutations answer with an Operation: wait for it and report its error as the API states it.
export async function runOperation(promise, notices, what) {
  const op = await promise;
  const note = h('div', {class: 'notice', role: 'status'}, `${what}…`);
  notices.append(note);
  try {
    const done = await api.waitOperation(op.name);
    if (done.error) {
      note.replaceWith(errorBox({message: done.error.message, status: `operation error ${done.error.code}`}));
    } else {
      note.remove();
    }
  } catch (e) {
    note.replaceWith(errorBox(e));
  }
}

function createForm(notices, onCreated) {
  const name = h('input', {id: 'vm-name', name: 'name', required: true, autocomplete: 'off',
                           spellcheck: 'false', pattern: '[a-z]([a-z0-9\\-]*[a-z0-9])?',
                           placeholder: 'my-tpu', maxlength: 63});
  const zone = h('select', {id: 'vm-zone', name: 'zone', required: true});
  const type = h('select', {id: 'vm-type', name: 'acceleratorType', required: true});
  const version = h('select', {id: 'vm-version', name: 'runtimeVersion', required: true});
  const submit = h('button', {type: 'submit'}, 'Create');
  const message = h('div', {class: 'form-message'});

  async function loadZone() {
    type.disabled = version.disabled = true;
    try {
      const catalog = await data.zoneCatalog(zone.value);
      mount(type, catalog.types.map((t) => h('option', {value: t}, t)));
      mount(version, catalog.versions.map((v) => h('option', {value: v}, v)));
      const base = catalog.versions.find((v) => v === 'tpu-ubuntu2204-base');
      if (base) version.value = base;
      type.disabled = version.disabled = false;
      form.dataset.catalogZone = zone.value;  // lets tests wait for the choices
    } catch (e) {
      mount(message, errorBox(e));
    }
  }
  zone.addEventListener('change', loadZone);

  const form = h('form', {class: 'inline-form', id: 'create-vm', 'aria-labelledby': 'create-title',
                          onsubmit: async (event) => {
                            event.preventDefault();
                            mount(message);
                            submit.disabled = true;
                            try {
                              const created = api.post(
                                  api.zonePath(zone.value, `/nodes?nodeId=${encodeURIComponent(name.value)}`),
                                  {acceleratorType: type.value, runtimeVersion: version.value});
                              await created;
                              onCreated();
                              runOperation(created, notices, `Creating ${name.value}`).then(onCreated);
                              name.value = '';
                            } catch (e) {
                              mount(message, errorBox(e));
                            } finally {
                              submit.disabled = false;
                            }
                          }},
                 h('h2', {id: 'create-title'}, 'Create a TPU VM'),
                 h('div', {class: 'fields'},
                   field('Name', name), field('Zone', zone), field('Accelerator type', type),
                   field('Runtime version', version), h('div', {class: 'field'}, submit)),
                 message);

  data.zones().then((zones) => {
    mount(zone, zones.map((z) => h('option', {value: z}, z)));
    zone.value = zones.includes('us-central2-b') ? 'us-central2-b' : zones[0];
    return loadZone();
  }).catch((e) => mount(message, errorBox(e)));
  return form;
}

export function nodeActions(node, notices, refresh) {
  const {zone, node: id} = node._;
  const path = api.nodePath(zone, id);
  const call = {
    start: () => api.post(`${path}:start`, {}),
    stop: () => api.post(`${path}:stop`, {}),
    delete: () => api.del(path),
    // Faults: v2alpha1's maintenance event, and the emulator's preemption (answers the Node).
    maintenance: () => api.post(`${path.replace(/^\/v2\//, '/v2alpha1/')}:simulateMaintenanceEvent`,
                                {workerIds: []}),
    preempt: () => api.post(`/_emulator${path.replace(/^\/v2/, '')}:preempt`,
                            {reason: 'preempted from the dashboard'}),
  };
  const act = (verb, label, question) => h('button', {
    type: 'button', class: verb === 'delete' || verb === 'preempt' ? 'danger small' : 'secondary small',
    'aria-label': `${label} ${id}`,
    disabled: !allowed(node, verb),
    onclick: async () => {
      if (!(await confirmDialog(question, label))) return;
      try {
        const p = call[verb]();
        await p;
        refresh();
        if (verb !== 'preempt') runOperation(p, notices, `${label} ${id}`).then(refresh);
      } catch (e) {
        notices.append(errorBox(e));
      }
    },
  }, label);
  return h('div', {class: 'row-actions'},
           act('start', 'Start', `Start TPU VM ${id} in ${zone}?`),
           act('stop', 'Stop', `Stop TPU VM ${id}? Running jobs are cancelled.`),
           act('delete', 'Delete', `Delete TPU VM ${id} in ${zone}? This cannot be undone.`),
           act('maintenance', 'Maintenance',
               `Simulate a maintenance event on worker 0 of ${id}? Its running job is interrupted.`),
           act('preempt', 'Preempt', `Preempt spot TPU VM ${id}? It can then only be deleted.`));
}

function allowed(node, verb) {
  const state = node.state;
  if (verb === 'start') return state === 'STOPPED';
  if (verb === 'stop') return state === 'READY';
  if (verb === 'maintenance') return state === 'READY' && node.health === 'HEALTHY';
  if (verb === 'preempt') {
    const s = node.schedulingConfig || {};
    return state === 'READY' && Boolean(s.spot || s.preemptible);
  }
  return state !== 'DELETING';  // the API answers the rest (FAILED_PRECONDITION mid-transition)
}

export default {
  title: 'TPU VMs',
  intervalMs: 5000,
  async render(root) {
    const notices = h('div', {class: 'notices'});
    const errors = h('div');
    const body = h('tbody');
    mount(root, h('h1', {}, 'TPU VMs'), notices, h('section', {class: 'card'}, createForm(notices, () => refresh())),
          errors,
          h('section', {class: 'card', 'aria-labelledby': 'vm-list'},
            h('h2', {id: 'vm-list'}, 'TPU VMs'),
            h('div', {class: 'scroll'},
              h('table', {id: 'vm-table'},
                h('thead', {}, h('tr', {}, ['Name', 'Zone', 'Accelerator type', 'Runtime version', 'State',
                                            'Health', 'Workers', 'Utilization (1 h)', 'Actions']
                                               .map((t) => h('th', {scope: 'col'}, t)))),
                body))));

    async function refresh() {
      let nodes;
      try {
        nodes = await data.nodes();
      } catch (e) {
        mount(errors, errorBox(e));
        return;
      }
      mount(errors);
      const history = await Promise.all(nodes.slice(0, kSparkNodes).map(
          (n) => data.nodeMetrics(n._.zone, n._.node).catch(() => null)));
      mount(body, nodes.length ? nodes.map((n, i) => {
        const samples = history[i]?.samples || [];
        const duty = samples.map((s) => s.dutyCycle ?? 0);
        const last = samples.length ? samples[samples.length - 1] : null;
        return h('tr', {dataset: {node: n._.node, state: n.state}},
                 h('th', {scope: 'row'}, h('a', {href: `#/vms/${n._.zone}/${n._.node}`}, n._.node)),
                 h('td', {}, n._.zone), h('td', {}, n.acceleratorType), h('td', {}, n.runtimeVersion),
                 h('td', {class: 'state'}, badge(n.state)),
                 h('td', {}, n.health ? badge(n.health) : h('span', {class: 'muted'}, '—'),
                   n.healthDescription ? h('div', {class: 'hint'}, n.healthDescription) : null),
                 h('td', {class: 'num'}, (n.networkEndpoints || []).length),
                 h('td', {class: 'spark'},
                   sparkline(duty, `duty cycle of ${n._.node} over the last hour`),
                   h('span', {class: 'muted small'},
                     last ? ` ${Math.round((last.dutyCycle ?? 0) * 100)}%` : ' —')),
                 h('td', {}, nodeActions(n, notices, refresh)));
      }) : emptyRow(9, 'No TPU VMs in this project yet: create one above.'));
    }
    await refresh();
    return {refresh};
  },
};
