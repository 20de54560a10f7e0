// Overview: VMs by state, jobs by state, TensorCores used per zone against the zone capacity,
// recent events (from the live feed: state changes and faults) and recent jobs.
import * as data from '../data.js';
import * as live from '../live.js';
import {isMissing} from '../api.js';
import {barChart} from '../charts.js';
import {badge, durationBetween, emptyRow, errorBox, formatTime, h, kJobStates, kNodeStates,
        mount, parseName} from '../dom.js';

function countBy(items, key) {
  const counts = new Map();
  for (const item of items) counts.set(item[key], (counts.get(item[key]) || 0) + 1);
  return counts;
}

function stateCounts(counts, order, label, link) {
  const states = [...order.filter((s) => counts.has(s)),
                  ...[...counts.keys()].filter((s) => !order.includes(s))];
  if (!states.length) return h('p', {class: 'muted'}, `No ${label} yet.`);
  return h('ul', {class: 'state-counts'},
           states.map((s) => h('li', {}, h('a', {href: link(s)}, badge(s),
                                             h('span', {class: 'count'}, counts.get(s))))));
}

function shortName(resource) {
  const p = parseName(resource);
  return p.job ? `${p.node}/${p.job}` : p.node || p.queuedResource || resource;
}

function eventRows() {
  const events = live.recent.slice(-25).reverse();
  if (!events.length) {
    return emptyRow(5, isMissing('events') ? 'The events endpoint is not served by this tpuemud.'
                                           : 'No events yet.');
  }
  return events.map((e) => {
    const p = parseName(e.resource);
    const href = e.kind === 'job' && p.job ? `#/jobs/${p.zone}/${p.node}/${p.job}`
                 : p.node                  ? `#/vms/${p.zone || e.zone}/${p.node}`
                 : p.queuedResource        ? '#/queued-resources'
                                           : null;
    return h('tr', {}, h('td', {}, formatTime(e.time)), h('td', {}, e.kind),
             h('td', {}, href ? h('a', {href}, shortName(e.resource)) : shortName(e.resource)),
             h('td', {}, e.previousState ? [badge(e.previousState), ' → '] : null, badge(e.state)),
             h('td', {class: 'wrap'}, e.message || ''));
  });
}

export default {
  title: 'Overview',
  intervalMs: 5000,
  async render(root) {
    const vmCard = h('div', {class: 'card-body'});
    const jobCard = h('div', {class: 'card-body'});
    const capacityTable = h('tbody');
    const capacityCanvas = h('canvas', {id: 'capacity-chart', 'aria-label': 'TensorCores used per zone'});
    const events = h('tbody');
    const recentJobs = h('tbody');
    const errors = h('div');
    mount(root,
          h('h1', {}, 'Overview'), errors,
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'vm-states'},
              h('h2', {id: 'vm-states'}, 'TPU VMs by state'), vmCard),
            h('section', {class: 'card', 'aria-labelledby': 'job-states'},
              h('h2', {id: 'job-states'}, 'Jobs by state'), jobCard)),
          h('section', {class: 'card', 'aria-labelledby': 'capacity'},
            h('h2', {id: 'capacity'}, 'TensorCore capacity used per zone'),
            h('div', {class: 'grid cols-2'},
              h('div', {class: 'chart short'}, capacityCanvas),
              h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Zone'), h('th', {class: 'num'}, 'TPU VMs'),
                                              h('th', {class: 'num'}, 'TensorCores used'),
                                              h('th', {class: 'num'}, 'Capacity'), h('th', {}, 'Used'))),
                capacityTable))),
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'events-title'},
              h('h2', {id: 'events-title'}, 'Recent events'),
              h('div', {class: 'scroll'},
                h('table', {class: 'compact'},
                  h('thead', {}, h('tr', {}, h('th', {}, 'Time'), h('th', {}, 'Kind'), h('th', {}, 'Resource'),
                                   h('th', {}, 'State'), h('th', {}, 'Message'))),
                  events))),
            h('section', {class: 'card', 'aria-labelledby': 'recent-jobs'},
              h('h2', {id: 'recent-jobs'}, 'Recent jobs'),
              h('table', {class: 'compact'},
                h('thead', {}, h('tr', {}, h('th', {}, 'Job'), h('th', {}, 'TPU VM'), h('th', {}, 'State'),
                                 h('th', {}, 'Duration'))),
                recentJobs))));

    async function refresh() {
      let nodes, jobs, hw, capacities;
      try {
        [nodes, jobs, hw, capacities] = await Promise.all([
          data.nodes(), data.jobs(), data.hardware().catch(() => null),  // figures are optional here
          data.zoneCapacities().catch(() => null),
        ]);
      } catch (e) {
        mount(errors, errorBox(e));
        return;
      }
      mount(errors);
      mount(vmCard, h('p', {class: 'big'}, nodes.length, h('span', {class: 'muted'}, ' in total')),
            stateCounts(countBy(nodes, 'state'), kNodeStates, 'TPU VMs', () => '#/vms'));
      mount(jobCard, h('p', {class: 'big'}, jobs.length, h('span', {class: 'muted'}, ' in total')),
            stateCounts(countBy(jobs, 'state'), kJobStates, 'jobs', (s) => `#/jobs?state=${s}`));

      const perZone = new Map();
      for (const n of nodes) {
        const z = perZone.get(n._.zone) || {vms: 0, tensorcores: 0};
        z.vms++;
        z.tensorcores += data.tensorcoresOf(n, hw);
        perZone.set(n._.zone, z);
      }
      const capacity = hw?.zoneCapacityTensorcores;
      // A zone whose capacity was changed at run time (/_emulator/capacity) shows its own.
      const capacityOf = (zone) => capacities?.get(zone) ?? capacity;
      const zones = [...perZone.keys()].sort();
      mount(capacityTable, zones.length ? zones.map((zone) => {
        const z = perZone.get(zone);
        const fraction = capacityOf(zone) ? z.tensorcores / capacityOf(zone) : null;
        return h('tr', {}, h('td', {}, zone), h('td', {class: 'num'}, z.vms),
                 h('td', {class: 'num'}, z.tensorcores),
                 h('td', {class: 'num'}, capacityOf(zone) ?? '—'),
                 h('td', {}, fraction === null ? '—'
                   : [h('meter', {min: 0, max: 1, value: fraction, 'aria-label': `${zone} capacity used`}),
                      ` ${(fraction * 100).toFixed(fraction < 0.01 ? 3 : 1)}%`]));
      }) : emptyRow(5, 'No TPU VMs hold TensorCores.'));
      barChart(capacityCanvas, zones,
               [{label: 'TensorCores used', data: zones.map((z) => perZone.get(z).tensorcores)}],
               {horizontal: true,
                valueLabel: capacity ? `TensorCores used (of ${capacity.toLocaleString('en-US')} per zone)`
                                     : 'TensorCores used'});

      mount(events, eventRows());
      const latest = [...jobs].sort((a, b) => (b.createTime || '').localeCompare(a.createTime || ''))
                         .slice(0, 8);
      mount(recentJobs, latest.length ? latest.map((j) => h(
          'tr', {}, h('td', {}, h('a', {href: `#/jobs/${j._.zone}/${j._.node}/${j._.job}`}, j.jobId)),
          h('td', {}, j._.node), h('td', {}, badge(j.state)),
          h('td', {}, durationBetween(j.startTime, j.endTime)))) : emptyRow(4, 'No jobs yet.'));
    }
    await refresh();
    return {refresh};
  },
};
