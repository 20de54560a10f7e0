// Queued resources: every queued resource of the project with its state (and who caused it),
// tier, accelerator type and the nodes it made (linked to their VM page, with their state and
// health); delete (with force) and reset; the faults: maintenance on every node
// (v2alpha1 performMaintenanceQueuedResource) and, for the spot and best-effort tiers, preemption
// of a node (the emulator's :preempt), which suspends it; a create form with gcloud's main choices (one node or a
// multislice node count, the tier, a validUntil duration).
import * as api from '../api.js';
import * as data from '../data.js';
import {badge, confirmDialog, emptyRow, errorBox, field, formatTime, h, mount, parseName,
        select} from '../dom.js';
import {runOperation} from './vms.js';

function tierOf(qr) {
  if (qr.spot) return 'spot';
  if (qr.guaranteed) return 'guaranteed';
  if (qr.bestEffort) return 'best-effort';
  return 'on-demand';
}

// The node ids a queued resource asks for, as the service names them.
function nodeIdsOf(qr, id) {
  const ids = [];
  for (const spec of qr.tpu?.nodeSpec || []) {
    const params = spec.multisliceParams || spec.multiNodeParams;
    if (!params) {
      ids.push(spec.nodeId);
      continue;
    }
    for (let i = 0; i < params.nodeCount; i++) ids.push(`${params.nodeIdPrefix || id}-${i}`);
  }
  return ids;
}

// One node of a queued resource: its link, and its state and health once it exists.
function nodeCell(zone, id, node) {
  const health = node?.health && node.health !== 'HEALTHY' ? node.health : null;
  return h('div', {class: 'qr-node', dataset: {node: id, state: node?.state || '', health: node?.health || ''}},
           h('a', {href: `#/vms/${zone}/${id}`}, id), ' ',
           node ? badge(node.state) : null, health ? [' ', badge(health)] : null);
}

function createForm(notices, onCreated) {
  const name = h('input', {id: 'qr-name', name: 'name', required: true, autocomplete: 'off',
                           spellcheck: 'false', pattern: '[a-z]([a-z0-9\\-]*[a-z0-9])?',
                           placeholder: 'my-qr', maxlength: 50});
  const zone = h('select', {id: 'qr-zone', name: 'zone', required: true});
  const type = h('select', {id: 'qr-type', name: 'acceleratorType', required: true});
  const version = h('select', {id: 'qr-version', name: 'runtimeVersion', required: true});
  const count = h('input', {id: 'qr-count', name: 'nodeCount', type: 'number', min: 1, max: 64,
                            value: 1, required: true});
  const tier = select({id: 'qr-tier', name: 'tier'},
                      [{value: 'on-demand', label: 'on-demand'}, {value: 'spot', label: 'spot'},
                       {value: 'guaranteed', label: 'guaranteed'}], 'on-demand');
  const until = h('input', {id: 'qr-until', name: 'validUntil', placeholder: '3600s', size: 8,
                            pattern: '[0-9]+s'});
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
      form.dataset.catalogZone = zone.value;
    } catch (e) {
      mount(message, errorBox(e));
    }
  }
  zone.addEventListener('change', loadZone);

  async function create(event) {
    event.preventDefault();
    mount(message);
    submit.disabled = true;
    const parent = `projects/${api.project()}/locations/${zone.value}`;
    const spec = {parent, node: {acceleratorType: type.value, runtimeVersion: version.value}};
    const n = Number(count.value);
    if (n > 1) spec.multisliceParams = {nodeCount: n};
    else spec.nodeId = name.value;
    const body = {tpu: {nodeSpec: [spec]}};
    if (tier.value === 'spot') body.spot = {};
    if (tier.value === 'guaranteed') body.guaranteed = {};
    if (until.value) body.queueingPolicy = {validUntilDuration: until.value};
    try {
      const created = api.post(
          api.zonePath(zone.value, `/queuedResources?queuedResourceId=${encodeURIComponent(name.value)}`),
          body);
      await created;
      onCreated();
      runOperation(created, notices, `Queuing ${name.value}`).then(onCreated);
      name.value = '';
    } catch (e) {
      mount(message, errorBox(e));
    } finally {
      submit.disabled = false;
    }
  }

  const form = h('form', {class: 'inline-form', id: 'create-qr', 'aria-labelledby': 'create-qr-title',
                          onsubmit: create},
                 h('h2', {id: 'create-qr-title'}, 'Queue a TPU request'),
                 h('div', {class: 'fields'},
                   field('Name', name), field('Zone', zone), field('Accelerator type', type),
                   field('Runtime version', version), field('Nodes', count, '2 or more: multislice'),
                   field('Tier', tier), field('Valid for', until, 'e.g. 3600s'),
                   h('div', {class: 'field'}, submit)),
                 message);
  data.zones().then((zones) => {
    mount(zone, zones.map((z) => h('option', {value: z}, z)));
    zone.value = zones.includes('us-central2-b') ? 'us-central2-b' : zones[0];
    return loadZone();
  }).catch((e) => mount(message, errorBox(e)));
  return form;
}

// `nodes`: the queued resource's nodes as the API lists them (those that exist now).
function actions(qr, nodes, notices, refresh) {
  const {zone, queuedResource: id} = parseName(qr.name);
  const state = qr.state?.state;
  const path = api.zonePath(zone, `/queuedResources/${encodeURIComponent(id)}`);
  const ready = nodes.filter((n) => n.state === 'READY');
  const preemptible = qr.spot || qr.bestEffort;
  const act = (label, question, call, enabled, danger = false, operation = true) => h('button', {
    type: 'button', class: danger ? 'danger small' : 'secondary small',
    'aria-label': `${label} ${id}`, disabled: !enabled,
    onclick: async () => {
      if (!(await confirmDialog(question, label))) return;
      try {
        const p = call();
        await p;
        refresh();
        if (operation) runOperation(p, notices, `${label} ${id}`).then(refresh);
      } catch (e) {
        notices.append(errorBox(e));
      }
    },
  }, label);
  return h('div', {class: 'row-actions'},
           act('Reset', `Reset queued resource ${id}? It queues again for capacity.`,
               () => api.post(`${path}:reset`, {}), state === 'SUSPENDED' || state === 'FAILED'),
           act('Maintenance', `Start maintenance on every node of ${id}? Their running jobs are interrupted.`,
               () => api.post(`${path.replace(/^\/v2\//, '/v2alpha1/')}:performMaintenanceQueuedResource`, {}),
               state === 'ACTIVE' && ready.length > 0 && ready.every((n) => n.health !== 'UNHEALTHY_MAINTENANCE')),
           // One preempted node suspends the whole queued resource (the service deletes the rest of
           // its slice). The emulator's preemption answers the Node, not an Operation.
           act('Preempt', `Preempt ${id}? Its node ${ready[0]?._.node} is taken back and the queued resource is suspended; it can then only be reset or deleted.`,
               () => api.post(`/_emulator/${ready[0].name}:preempt`, {reason: 'preempted from the dashboard'}),
               state === 'ACTIVE' && preemptible && ready.length > 0, true, false),
           act('Delete', `Delete queued resource ${id} and its nodes (force)?`,
               () => api.del(`${path}?force=true`), state !== 'DELETING' && state !== 'CREATING',
               true));
}

export default {
  title: 'Queued resources',
  intervalMs: 3000,
  async render(root) {
    const notices = h('div', {class: 'notices'});
    const errors = h('div');
    const body = h('tbody');
    mount(root, h('h1', {}, 'Queued resources'), notices,
          h('section', {class: 'card'}, createForm(notices, () => refresh())), errors,
          h('section', {class: 'card', 'aria-labelledby': 'qr-list'},
            h('h2', {id: 'qr-list'}, 'Queued resources'),
            h('div', {class: 'scroll'},
              h('table', {id: 'qr-table'},
                h('thead', {}, h('tr', {}, ['Name', 'Zone', 'State', 'Tier', 'Accelerator type', 'Nodes',
                                            'Created', 'Actions']
                                               .map((t) => h('th', {scope: 'col'}, t)))),
                body))));

    async function refresh() {
      let list, nodes;
      try {
        [list, nodes] = await Promise.all([
          api.listAll(api.zonePath('-', '/queuedResources'), 'queuedResources'), data.nodes()]);
      } catch (e) {
        mount(errors, errorBox(e));
        return;
      }
      mount(errors);
      mount(body, list.length ? list.map((qr) => {
        const {zone, queuedResource: id} = parseName(qr.name);
        const state = qr.state || {};
        const failed = state.failedData?.error?.message;
        const spec = qr.tpu?.nodeSpec?.[0]?.node || {};
        const mine = nodes.filter((n) => n.queuedResource === qr.name);
        const byId = new Map(mine.map((n) => [n._.node, n]));
        return h('tr', {dataset: {queuedResource: id, state: state.state}},
                 h('th', {scope: 'row'}, id), h('td', {}, zone),
                 h('td', {class: 'state'}, badge(state.state),
                   state.stateInitiator ? h('div', {class: 'hint'}, `by ${state.stateInitiator.toLowerCase()}`) : null,
                   failed ? h('div', {class: 'hint wrap'}, failed) : null),
                 h('td', {}, tierOf(qr)),
                 h('td', {}, spec.acceleratorType || `${spec.acceleratorConfig?.type} ${spec.acceleratorConfig?.topology}`),
                 h('td', {class: 'nodes'}, nodeIdsOf(qr, id).map((n) => nodeCell(zone, n, byId.get(n)))),
                 h('td', {}, formatTime(qr.createTime)),
                 h('td', {}, actions(qr, mine, notices, refresh)));
      }) : emptyRow(8, 'No queued resources in this project: queue one above.'));
    }
    await refresh();
    return {refresh};
  },
};
