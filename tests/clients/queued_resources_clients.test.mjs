// Queued resources and the v2alpha1 surface through the official @google-cloud/tpu clients
// (GAPIC, REST "fallback" mode), unchanged, against a loopback tpuemud: the v2 TpuClient creates
// queued resources (one node, and a multislice node count), waits for ACTIVE, lists, gets, resets a
// SUSPENDED one and deletes with force; the v2alpha1 TpuClient creates a node, simulates a
// maintenance event, reads guest attributes, performs maintenance and queues a best-effort
// request. Every call that returns an Operation is awaited with the client's own op.promise().
//
// Contract: TPUEMUD names the tpuemud binary (ctest passes $<TARGET_FILE:tpuemud>). The test spawns
// it (tpuemud_harness.mjs) with --port 0 --db :memory:, zero delays and a short maintenance, and
// stops it in after(). Each client works in its own project.

import assert from 'node:assert/strict';
import {createRequire} from 'node:module';
import {after, before, describe, test} from 'node:test';

import {PollUntil, StartTpuemud} from './tpuemud_harness.mjs';

const require = createRequire(import.meta.url);
const tpu = require('@google-cloud/tpu');
const {PassThroughClient} = require('google-auth-library');

const kZone = 'us-central2-b';
const kWaitMs = 20000;
const kRuntime = 'tpu-ubuntu2204-base';

let daemon;  // {port, Stop} of the tpuemud child process

function Client(version) {
  return new tpu[version].TpuClient({
    fallback: true,
    apiEndpoint: '127.0.0.1',
    port: daemon.port,
    protocol: 'http',
    authClient: new PassThroughClient()
  });
}

// Unary calls decode enums to their names; the queued resource's state is one.
async function WaitQrState(client, name, state) {
  return PollUntil(`${name} ${state}`, async () => {
    const [qr] = await client.getQueuedResource({name});
    return qr.state.state === state ? qr : null;
  }, kWaitMs);
}

// A FAILED_PRECONDITION answer as the REST fallback decodes it: HTTP 400 becomes code 3, the status
// travels as the ErrorInfo reason (the real service answers the same way).
function FailedPrecondition(message) {
  return (e) => e.code === 3 && e.reason === 'FAILED_PRECONDITION' && message.test(e.message);
}

// The emulator's own feed (plain HTTP): the fault events of `project`.
async function FaultKinds(project) {
  const r = await fetch(`http://127.0.0.1:${daemon.port}/v2/projects/${project}/events?since=0`);
  const {events} = await r.json();
  return events.filter((e) => e.kind === 'fault').map((e) => e.state);
}

before(async () => {
  daemon = await StartTpuemud(process.env.TPUEMUD, [
    '--provisioning-delay-ms', '0', '--transition-delay-ms', '0',
    '--maintenance-duration-ms', '200',
  ]);
});

after(async () => {
  if (daemon) await daemon.Stop();
});

describe('@google-cloud/tpu v2 TpuClient: queued resources', () => {
  const project = 'qr-v2';
  const parent = `projects/${project}/locations/${kZone}`;
  let client;
  before(() => {
    client = Client('v2');
  });
  after(async () => {
    await client.close();
  });

  test('createQueuedResource with one node: op.promise(), then ACTIVE with its node', async () => {
    const [op] = await client.createQueuedResource({
      parent,
      queuedResourceId: 'one',
      queuedResource: {
        tpu: {nodeSpec: [{parent, nodeId: 'one-node',
                          node: {acceleratorType: 'v4-8', runtimeVersion: kRuntime}}]},
        spot: {},
      },
    });
    assert.equal(op.metadata.verb, 'create');
    assert.equal(op.metadata.target, `${parent}/queuedResources/one`);
    const [created] = await op.promise();
    assert.equal(created.name, `${parent}/queuedResources/one`);
    const qr = await WaitQrState(client, created.name, 'ACTIVE');
    assert.ok(qr.spot, 'the spot tier is kept');
    assert.equal(qr.tpu.nodeSpec[0].nodeId, 'one-node');
    const [node] = await client.getNode({name: `${parent}/nodes/one-node`});
    assert.equal(node.state, 'READY');
    assert.equal(node.queuedResource, created.name);
    assert.equal(node.schedulingConfig.spot, true);
  });

  test('createQueuedResource with a multislice node count makes <prefix>-i nodes', async () => {
    const [op] = await client.createQueuedResource({
      parent,
      queuedResourceId: 'multi',
      queuedResource: {
        tpu: {nodeSpec: [{parent, multisliceParams: {nodeCount: 2, nodeIdPrefix: 'slice'},
                          node: {acceleratorType: 'v4-8', runtimeVersion: kRuntime}}]},
        guaranteed: {},
      },
    });
    const [created] = await op.promise();
    const qr = await WaitQrState(client, created.name, 'ACTIVE');
    assert.equal(qr.tpu.nodeSpec[0].multisliceParams.nodeCount, 2);
    assert.ok(qr.guaranteed, 'the guaranteed tier is kept');
    for (const id of ['slice-0', 'slice-1']) {
      const [node] = await client.getNode({name: `${parent}/nodes/${id}`});
      assert.equal(node.state, 'READY', id);
      assert.equal(node.multisliceNode, true, id);
      assert.equal(node.queuedResource, created.name, id);
    }
  });

  test('listQueuedResources and getQueuedResource', async () => {
    const [list] = await client.listQueuedResources({parent});
    assert.deepEqual(list.map((q) => q.name).sort(),
                     [`${parent}/queuedResources/multi`, `${parent}/queuedResources/one`]);
    const [qr] = await client.getQueuedResource({name: `${parent}/queuedResources/multi`});
    assert.equal(qr.state.state, 'ACTIVE');
    assert.equal(qr.state.stateInitiator, 'USER');
    await assert.rejects(client.getQueuedResource({name: `${parent}/queuedResources/none`}),
                         (e) => e.code === 5);  // NOT_FOUND
  });

  test('resetQueuedResource re-queues a SUSPENDED one until it is ACTIVE again', async () => {
    const name = `${parent}/queuedResources/one`;
    // Not SUSPENDED or FAILED yet: FAILED_PRECONDITION.
    await assert.rejects(client.resetQueuedResource({name}), FailedPrecondition(/SUSPENDED or FAILED/));
    const [del] = await client.deleteNode({name: `${parent}/nodes/one-node`});
    await del.promise();
    await WaitQrState(client, name, 'SUSPENDED');
    const [op] = await client.resetQueuedResource({name});
    assert.equal(op.metadata.verb, 'reset');
    const [reset] = await op.promise();
    assert.equal(reset.name, name);
    await WaitQrState(client, name, 'ACTIVE');
    const [node] = await client.getNode({name: `${parent}/nodes/one-node`});
    assert.equal(node.state, 'READY');
  });

  test('deleteQueuedResource with force deletes its nodes too', async () => {
    const name = `${parent}/queuedResources/multi`;
    // Without force, an ACTIVE one with nodes stays.
    await assert.rejects(client.deleteQueuedResource({name}), FailedPrecondition(/force=true/));
    const [op] = await client.deleteQueuedResource({name, force: true});
    assert.equal(op.metadata.verb, 'delete');
    const [empty] = await op.promise();
    assert.equal(empty.constructor.name, 'Empty');
    await assert.rejects(client.getQueuedResource({name}), (e) => e.code === 5);
    await assert.rejects(client.getNode({name: `${parent}/nodes/slice-0`}), (e) => e.code === 5);
    const [one] = await client.deleteQueuedResource({name: `${parent}/queuedResources/one`,
                                                     force: true});
    await one.promise();
    const [list] = await client.listQueuedResources({parent});
    assert.deepEqual(list, []);
  });
});

describe('@google-cloud/tpu v2alpha1 TpuClient: maintenance, guest attributes, queued resources',
         () => {
  const project = 'qr-alpha';
  const parent = `projects/${project}/locations/${kZone}`;
  const nodeName = `${parent}/nodes/alpha-node`;
  let client;
  before(() => {
    client = Client('v2alpha1');
  });
  after(async () => {
    await client.close();
  });

  test('createNode through /v2alpha1', async () => {
    const [op] = await client.createNode({
      parent,
      nodeId: 'alpha-node',
      node: {acceleratorType: 'v4-16', runtimeVersion: kRuntime},
    });
    const [node] = await op.promise();
    assert.equal(node.name, nodeName);
    assert.equal(node.acceleratorType, 'v4-16');
    const [read] = await client.getNode({name: nodeName});
    assert.equal(read.state, 'READY');
    assert.equal(read.health, 'HEALTHY');
  });

  test('simulateMaintenanceEvent: the Operation completes once the node is HEALTHY again',
       async () => {
         await assert.rejects(client.simulateMaintenanceEvent({name: nodeName, workerIds: ['7']}),
                              (e) => e.code === 3 && /workerIds/.test(e.message));
         const [op] = await client.simulateMaintenanceEvent({name: nodeName, workerIds: ['1']});
         assert.equal(op.metadata.verb, 'simulateMaintenanceEvent');
         const [node] = await op.promise();
         assert.equal(node.name, nodeName);
         const [read] = await client.getNode({name: nodeName});
         assert.equal(read.health, 'HEALTHY');
         const kinds = await FaultKinds(project);
         assert.ok(kinds.includes('MAINTENANCE_STARTED'), kinds.join(','));
         assert.ok(kinds.includes('MAINTENANCE_ENDED'), kinds.join(','));
       });

  test('getGuestAttributes answers one entry per worker', async () => {
    const [resp] = await client.getGuestAttributes({name: nodeName, queryPath: ''});
    assert.equal(resp.guestAttributes.length, 2);  // v4-16: two workers
    const [one] = await client.getGuestAttributes({name: nodeName, queryPath: '',
                                                  workerIds: ['1']});
    assert.equal(one.guestAttributes.length, 1);
  });

  test('performMaintenance: every worker, then HEALTHY', async () => {
    const [op] = await client.performMaintenance({name: nodeName});
    assert.equal(op.metadata.verb, 'performMaintenance');
    await op.promise();
    const [read] = await client.getNode({name: nodeName});
    assert.equal(read.health, 'HEALTHY');
    const started = (await FaultKinds(project)).filter((k) => k === 'MAINTENANCE_STARTED');
    assert.equal(started.length, 2);
  });

  test('createQueuedResource (bestEffort, multiNodeParams) and listQueuedResources', async () => {
    const [op] = await client.createQueuedResource({
      parent,
      queuedResourceId: 'alpha-qr',
      queuedResource: {
        tpu: {nodeSpec: [{parent, multiNodeParams: {nodeCount: 2, nodeIdPrefix: 'be'},
                          node: {acceleratorType: 'v4-8', runtimeVersion: kRuntime}}]},
        bestEffort: {},
      },
    });
    const [created] = await op.promise();
    const qr = await WaitQrState(client, created.name, 'ACTIVE');
    assert.ok(qr.bestEffort, 'the bestEffort tier is kept');
    assert.equal(qr.tpu.nodeSpec[0].multiNodeParams.nodeCount, 2);
    const [list] = await client.listQueuedResources({parent});
    assert.deepEqual(list.map((q) => q.name), [created.name]);
    const [del] = await client.deleteQueuedResource({name: created.name, force: true});
    await del.promise();
    await assert.rejects(client.getNode({name: `${parent}/nodes/be-0`}), (e) => e.code === 5);
  });

  test('deleteNode through /v2alpha1', async () => {
    const [op] = await client.deleteNode({name: nodeName});
    await op.promise();
    await assert.rejects(client.getNode({name: nodeName}), (e) => e.code === 5);
  });
});
