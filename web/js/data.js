// Loaders the pages share: every node and job of the project, the hardware table (fetched
// once), the catalog of a zone, and node utilization history.
import * as api from './api.js';
import {parseName} from './dom.js';

export async function nodes() {
  const list = await api.listAll(api.zonePath('-', '/nodes'), 'nodes');
  for (const n of list) Object.assign(n, {_: parseName(n.name)});
  return list;
}

export async function jobs(query = '') {
  const list = await api.listAll(api.zonePath('-', `/jobs${query}`), 'jobs');
  for (const j of list) Object.assign(j, {_: parseName(j.name)});
  return list;
}

let hardwarePromise = null;
// {zoneCapacityTensorcores, byType: Map(type -> figures), types: [...]}, or null when the
// endpoint is not served.
export function hardware() {
  if (!hardwarePromise) {
    hardwarePromise =
        api.optional('hardware', () => api.get('/_emulator/hardware'))
            .then((reply) => reply && {
              zoneCapacityTensorcores: reply.zoneCapacityTensorcores,
              types: reply.acceleratorTypes,
              byType: new Map(reply.acceleratorTypes.map((t) => [t.acceleratorType, t])),
            })
            .catch((e) => {
              hardwarePromise = null;  // retry next time (e.g. after a token was given)
              throw e;
            });
  }
  return hardwarePromise;
}

export async function zones() {
  const list = await api.listAll(api.projectPath('/locations'), 'locations');
  return list.map((l) => l.locationId).sort();
}

export async function zoneCatalog(zone) {
  const [types, versions] = await Promise.all([
    api.listAll(api.zonePath(zone, '/acceleratorTypes'), 'acceleratorTypes'),
    api.listAll(api.zonePath(zone, '/runtimeVersions'), 'runtimeVersions'),
  ]);
  return {types: types.map((t) => t.type), versions: versions.map((v) => v.version)};
}

// Utilization samples of a node over `windowSeconds`, or null when the endpoint is not served.
export async function nodeMetrics(zone, node, windowSeconds = 3600) {
  return api.optional(
      'node-metrics', () => api.get(api.nodePath(zone, node, `/metrics?window=${windowSeconds}s`)));
}

export function tensorcoresOf(node, hw) {
  return hw?.byType.get(node.acceleratorType)?.tensorcores ?? 0;
}

// The spec's workload kind: "mlp", "matmul", "program", ...
export function workloadOf(job) {
  const spec = job.spec || {};
  if (spec.program) return 'program';
  if (spec.hlo) return spec.hlo.estimateOnly ? 'hlo (estimate only)' : 'hlo';
  return Object.keys(spec.workload || {})[0] || '—';
}
