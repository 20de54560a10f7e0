// The official Google Node.js clients against tpuemud, unchanged: @google-cloud/tpu (GAPIC, REST
// "fallback" mode) and googleapis (discovery client), pointed at a loopback tpuemud the way
// the README ("Google client libraries (Node.js)") describes. No credentials: PassThroughClient for GAPIC, no
// auth for googleapis.
//
// Contract: TPUEMUD names the tpuemud binary (ctest passes $<TARGET_FILE:tpuemud>). The test spawns
// it (tpuemud_harness.mjs) with --port 0 --db :memory: and zero delays and stops it in after().
// Each client works in its own project so list results do not depend on the other's nodes. A small
// recording proxy sits in front of tpuemud for a few short-lived clients only, to assert what goes
// on the wire (numeric enums, $alt=json;enum-encoding=int, /v1 locations, ?key=) and what the
// server answered; the main clients talk to tpuemud directly.

import assert from 'node:assert/strict';
import {createRequire} from 'node:module';
import {after, before, describe, test} from 'node:test';

import {PollUntil, StartRecorder, StartTpuemud} from './tpuemud_harness.mjs';

const require = createRequire(import.meta.url);
const {TpuClient} = require('@google-cloud/tpu').v2;
const {protos} = require('@google-cloud/tpu');
const {PassThroughClient} = require('google-auth-library');
// The entry point users write; it loads every API's index (about 1.5 s once), which is fine here.
const {google} = require('googleapis');

// GAPIC hands out two shapes: unary calls (getNode, list*) return plain objects with enum *names*
// (gax decodes with enums: String), while op.promise() returns the LRO response decoded from the
// Any's bytes as a protobuf message, whose enum fields are *numbers*. Both come from the same
// server JSON.
const {State, Health} = protos.google.cloud.tpu.v2.Node;
const {ApiVersion} = protos.google.cloud.tpu.v2.Node;
const AcceleratorTypeEnum = protos.google.cloud.tpu.v2.AcceleratorConfig.Type;

const kZone = 'us-central1-a';
const kLroTimeoutMs = 20000;
const kV5eRuntime = 'v2-alpha-tpuv5-lite';
const kV5pRuntime = 'v2-alpha-tpuv5';

let daemon;    // {port, Stop} of the tpuemud child process
let recorder;  // {port, recorded, Stop} of the recording proxy in front of it
let port;      // tpuemud's HTTP port
let recorderPort;
let recorded;  // the recorder's log: {method, url, body, status, response}

function Gapic(toPort) {
  return new TpuClient({
    fallback: true,
    apiEndpoint: '127.0.0.1',
    port: toPort,
    protocol: 'http',
    authClient: new PassThroughClient()
  });
}

before(async () => {
  daemon = await StartTpuemud(process.env.TPUEMUD,
                              ['--provisioning-delay-ms', '0', '--transition-delay-ms', '0']);
  port = daemon.port;
  recorder = await StartRecorder(port);
  ({port: recorderPort, recorded} = recorder);
});

after(async () => {
  if (recorder) await recorder.Stop();
  if (daemon) await daemon.Stop();
});

describe('@google-cloud/tpu (GAPIC, REST fallback)', () => {
  const project = 'gapic-project';
  const parent = `projects/${project}/locations/${kZone}`;
  let client;
  before(() => {
    client = Gapic(port);
  });
  after(async () => {
    await client.close();
  });

  test('createNode v5litepod-8, op.promise() resolves to a READY node', async () => {
    const [op] = await client.createNode({
      parent,
      nodeId: 'v5e',
      node: {
        acceleratorType: 'v5litepod-8',
        runtimeVersion: kV5eRuntime,
        description: 'from gapic',
        labels: {team: 'emu'}
      },
    });
    assert.equal(op.name.startsWith(`${parent}/operations/operation-`), true, op.name);
    assert.equal(op.metadata.verb, 'create');
    assert.equal(op.metadata.target, `${parent}/nodes/v5e`);
    const [node, metadata] = await op.promise();
    assert.equal(metadata.verb, 'create');
    assert.ok(metadata.endTime, 'a finished operation has an endTime');
    assert.equal(node.name, `${parent}/nodes/v5e`);
    assert.equal(node.state, State.READY);  // 2: numeric in the LRO result message
    assert.equal(node.acceleratorType, 'v5litepod-8');
    assert.equal(node.acceleratorConfig.type, AcceleratorTypeEnum.V5LITE_POD);  // 9
    assert.equal(node.acceleratorConfig.topology, '2x4');
    assert.equal(node.apiVersion, ApiVersion.V2);  // 4
    assert.equal(node.runtimeVersion, kV5eRuntime);
    assert.equal(node.networkEndpoints.length, 1);
    assert.equal(node.networkEndpoints[0].port, 8470);
    assert.deepEqual(node.labels, {team: 'emu'});
    // The operation itself, as GAPIC re-reads it.
    const done = await client.checkCreateNodeProgress(op.name);
    assert.equal(done.done, true);
    assert.equal(done.result.name, node.name);
  });

  test('createNode with acceleratorConfig (V5P 2x2x2) derives v5p-16 with 2 workers', async () => {
    const [op] = await client.createNode({
      parent,
      nodeId: 'v5p',
      node: {acceleratorConfig: {type: 'V5P', topology: '2x2x2'}, runtimeVersion: kV5pRuntime},
    });
    const [node] = await op.promise();
    assert.equal(node.state, State.READY);
    assert.equal(node.acceleratorType, 'v5p-16');
    assert.equal(node.acceleratorConfig.type, AcceleratorTypeEnum.V5P);  // 10
    assert.equal(node.acceleratorConfig.topology, '2x2x2');
    assert.equal(node.networkEndpoints.length, 2);
    assert.notEqual(node.networkEndpoints[0].ipAddress, node.networkEndpoints[1].ipAddress);
  });

  test(
      'GAPIC sends numeric enums with $alt=json;enum-encoding=int and decodes them to names',
      async () => {
        const wired = Gapic(recorderPort);
        try {
          recorded.length = 0;
          const [op] = await wired.createNode({
            parent,
            nodeId: 'v5e4',
            node: {
              acceleratorConfig: {type: 'V5LITE_POD', topology: '2x2'},
              runtimeVersion: kV5eRuntime
            },
          });
          const create = recorded.find((r) => r.method === 'POST' && r.url.includes('/nodes?'));
          assert.ok(create, JSON.stringify(recorded));
          assert.match(create.url, /nodeId=v5e4/);
          assert.match(decodeURIComponent(create.url), /\$alt=json;enum-encoding=int/);
          assert.equal(JSON.parse(create.body).acceleratorConfig.type, 9);  // V5LITE_POD
          const [node] = await op.promise();
          assert.equal(node.acceleratorType, 'v5litepod-4');
          const [got] = await wired.getNode({name: node.name});
          assert.equal(got.state, 'READY');                        // the server answered 2
          assert.equal(got.acceleratorConfig.type, 'V5LITE_POD');  // the server answered 9
          assert.equal(got.apiVersion, 'V2');                      // the server answered 4
          assert.equal(got.health, 'HEALTHY');                     // the server answered 1
          assert.equal(Health.HEALTHY, 1);
          const get =
              recorded.find((r) => r.method === 'GET' && r.url.startsWith(`/v2/${node.name}?`));
          assert.ok(get, JSON.stringify(recorded.map((r) => r.url)));
          const [del] = await wired.deleteNode({name: node.name});
          await del.promise();
        } finally {
          await wired.close();
        }
      });

  test('getNode returns the stored node', async () => {
    const [node] = await client.getNode({name: client.nodePath(project, kZone, 'v5e')});
    assert.equal(node.name, `${parent}/nodes/v5e`);
    assert.equal(node.state, 'READY');
    assert.equal(node.health, 'HEALTHY');
    assert.equal(node.description, 'from gapic');
    assert.match(node.id, /^\d+$/);  // int64 as a string
    assert.ok(node.createTime.seconds > 0);
  });

  test('listNodesAsync with pageSize 1 walks every page', async () => {
    recorded.length = 0;
    const names = [];
    for await (const node of client.listNodesAsync({parent, pageSize: 1})) names.push(node.name);
    assert.deepEqual(names.sort(), [`${parent}/nodes/v5e`, `${parent}/nodes/v5p`]);
    const [page, nextRequest] =
        await client.listNodes({parent, pageSize: 1}, {autoPaginate: false});
    assert.equal(page.length, 1);
    assert.ok(nextRequest && nextRequest.pageToken, 'a next page token on the first page');
  });

  test('stopNode then startNode', async () => {
    const name = `${parent}/nodes/v5e`;
    const [stop] = await client.stopNode({name});
    assert.equal(stop.metadata.verb, 'stop');
    const [stopped] = await stop.promise();
    assert.equal(stopped.state, State.STOPPED);  // 8
    assert.equal((await client.getNode({name}))[0].state, 'STOPPED');
    const [start] = await client.startNode({name});
    const [started] = await start.promise();
    assert.equal(started.state, State.READY);
    assert.equal((await client.getNode({name}))[0].state, 'READY');
  });

  test('updateNode with an updateMask changes only the masked fields', async () => {
    const name = `${parent}/nodes/v5e`;
    const [op] = await client.updateNode({
      node: {
        name,
        description: 'updated by gapic',
        labels: {team: 'tpu', env: 'ci'},
        tags: ['ignored']
      },
      updateMask: {paths: ['description', 'labels']},
    });
    const [node] = await op.promise();
    assert.equal(node.description, 'updated by gapic');
    assert.deepEqual(node.labels, {team: 'tpu', env: 'ci'});
    assert.deepEqual(node.tags, []);
    const [got] = await client.getNode({name});
    assert.equal(got.description, 'updated by gapic');
  });

  test('getGuestAttributes answers one entry per worker', async () => {
    const [resp] = await client.getGuestAttributes({name: `${parent}/nodes/v5p`, queryPath: ''});
    assert.equal(resp.guestAttributes.length, 2);
    const keys = resp.guestAttributes[0].queryValue.items.map((i) => i.key);
    assert.ok(keys.includes('ssh-ed25519'), keys.join(','));
  });

  test('acceleratorTypes and runtimeVersions lists', async () => {
    const types = [];
    for await (const t of client.listAcceleratorTypesAsync({parent, pageSize: 3})) types.push(t);
    const v5e8 = types.find((t) => t.type === 'v5litepod-8');
    assert.ok(v5e8, types.map((t) => t.type).join(','));
    assert.equal(v5e8.name, `${parent}/acceleratorTypes/v5litepod-8`);
    assert.equal(v5e8.acceleratorConfigs[0].type, 'V5LITE_POD');
    assert.equal(v5e8.acceleratorConfigs[0].topology, '2x4');
    assert.ok(types.length > 3, 'more than one page');
    const [one] = await client.getAcceleratorType({name: `${parent}/acceleratorTypes/v5p-8`});
    assert.equal(one.acceleratorConfigs[0].type, 'V5P');

    const versions = [];
    for await (const v of client.listRuntimeVersionsAsync({parent, pageSize: 2}))
      versions.push(v.version);
    assert.ok(versions.includes(kV5eRuntime), versions.join(','));
    const [rv] = await client.getRuntimeVersion({name: `${parent}/runtimeVersions/${kV5pRuntime}`});
    assert.equal(rv.version, kV5pRuntime);
  });

  test('getLocation and listLocationsAsync (gax LocationsClient uses /v1)', async () => {
    recorded.length = 0;
    const wired = Gapic(recorderPort);
    try {
      const [loc] = await wired.getLocation({name: parent});
      assert.equal(loc.name, parent);
      assert.equal(loc.locationId, kZone);
      assert.equal(loc.labels.region, 'us-central1');
    } finally {
      await wired.close();
    }
    assert.deepEqual(
        recorded.map((r) => `${r.method} ${r.url.split('?')[0]} ${r.status}`),
        [`GET /v1/${parent} 200`]);
    const ids = [];
    for await (const l of client.listLocationsAsync({name: `projects/${project}`, pageSize: 2})) {
      ids.push(l.locationId);
    }
    assert.ok(ids.includes(kZone), ids.join(','));
    assert.ok(ids.length > 2, 'more than one page');
  });

  test(
      'errors: missing node is NOT_FOUND (5); duplicate create is HTTP 409 ALREADY_EXISTS',
      async () => {
        await assert.rejects(client.getNode({name: `${parent}/nodes/missing`}), (e) => {
          assert.equal(e.code, 5, e.message);
          assert.equal(e.message, `Resource '${parent}/nodes/missing' was not found`);
          assert.equal(e.reason, 'NOT_FOUND');  // from the envelope's google.rpc.ErrorInfo
          assert.equal(e.domain, 'tpu.googleapis.com');
          return true;
        });
        recorded.length = 0;
        const wired = Gapic(recorderPort);
        try {
          await assert.rejects(
              wired.createNode({
                parent,
                nodeId: 'v5e',
                node: {acceleratorType: 'v5litepod-8', runtimeVersion: kV5eRuntime}
              }),
              (e) => {
                // gax 4.x's REST transport takes e.code from the HTTP status alone (409 -> ABORTED
                // = 10) and ignores error.status (googleapis/gax-nodejs#1634; gax with PR #1633
                // reads status -> 6), so the same happens against tpu.googleapis.com. The server's
                // answer is checked below.
                assert.ok(e.code === 6 || e.code === 10, `code ${e.code}: ${e.message}`);
                assert.equal(e.message, `Resource '${parent}/nodes/v5e' already exists`);
                assert.equal(e.reason, 'ALREADY_EXISTS');
                return true;
              });
        } finally {
          await wired.close();
        }
        const create = recorded.find((r) => r.method === 'POST' && r.url.includes('nodeId=v5e'));
        assert.ok(create, JSON.stringify(recorded.map((r) => r.url)));
        assert.equal(create.status, 409);
        assert.equal(JSON.parse(create.response).error.status, 'ALREADY_EXISTS');
      });

  test('deleteNode, op.promise(), then the node is gone', async () => {
    for (const id of ['v5e', 'v5p']) {
      const name = `${parent}/nodes/${id}`;
      const [op] = await client.deleteNode({name});
      assert.equal(op.metadata.verb, 'delete');
      const [empty, metadata] = await op.promise();
      assert.equal(empty.constructor.name, 'Empty');  // google.protobuf.Empty response
      assert.equal(metadata.target, name);
      await assert.rejects(client.getNode({name}), (e) => e.code === 5);
    }
    const [nodes] = await client.listNodes({parent});
    assert.deepEqual(nodes, []);
  });
});

describe('googleapis (discovery client)', () => {
  const project = 'rest-project';
  const parent = `projects/${project}/locations/${kZone}`;
  let api;
  before(() => {
    api = google.tpu({version: 'v2', rootUrl: `http://127.0.0.1:${port}/`});
  });

  async function WaitOperation(op) {
    return PollUntil(`operation ${op.name}`, async () => {
      const {data} = await api.projects.locations.operations.get({name: op.name});
      return data.done ? data : null;
    }, kLroTimeoutMs);
  }

  test('nodes.create v5litepod-8, operations.get until done', async () => {
    const {data: op, status} = await api.projects.locations.nodes.create({
      parent,
      nodeId: 'v5e',
      requestBody:
          {acceleratorType: 'v5litepod-8', runtimeVersion: kV5eRuntime, labels: {team: 'emu'}},
    });
    assert.equal(status, 200);
    assert.equal(op.metadata.verb, 'create');
    const done = await WaitOperation(op);
    assert.equal(done.error, undefined);
    assert.equal(done.response['@type'], 'type.googleapis.com/google.cloud.tpu.v2.Node');
    assert.equal(done.response.name, `${parent}/nodes/v5e`);
    assert.equal(done.response.state, 'READY');
    assert.deepEqual(done.response.acceleratorConfig, {type: 'V5LITE_POD', topology: '2x4'});
    assert.equal(done.response.networkEndpoints.length, 1);
  });

  test('nodes.create with acceleratorConfig V5P 2x2x2', async () => {
    const {data: op} = await api.projects.locations.nodes.create({
      parent,
      nodeId: 'v5p',
      requestBody:
          {acceleratorConfig: {type: 'V5P', topology: '2x2x2'}, runtimeVersion: kV5pRuntime},
    });
    const done = await WaitOperation(op);
    assert.equal(done.response.acceleratorType, 'v5p-16');
    assert.equal(done.response.networkEndpoints.length, 2);
  });

  test('nodes.get and nodes.list with pageSize', async () => {
    const {data: node} = await api.projects.locations.nodes.get({name: `${parent}/nodes/v5e`});
    assert.equal(node.state, 'READY');
    assert.equal(node.apiVersion, 'V2');
    assert.equal(node.acceleratorConfig.type, 'V5LITE_POD');
    assert.deepEqual(node.labels, {team: 'emu'});

    const names = [];
    let pageToken;
    let pages = 0;
    do {
      const {data} = await api.projects.locations.nodes.list({parent, pageSize: 1, pageToken});
      assert.equal(data.nodes.length, 1);
      names.push(data.nodes[0].name);
      pageToken = data.nextPageToken;
      pages += 1;
    } while (pageToken);
    assert.equal(pages, 2);
    assert.deepEqual(names.sort(), [`${parent}/nodes/v5e`, `${parent}/nodes/v5p`]);
  });

  test('auth as a string is sent as ?key= and accepted', async () => {
    recorded.length = 0;
    const keyed =
        google.tpu({version: 'v2', rootUrl: `http://127.0.0.1:${recorderPort}/`, auth: 'dummy'});
    const {data} = await keyed.projects.locations.nodes.get({name: `${parent}/nodes/v5e`});
    assert.equal(data.name, `${parent}/nodes/v5e`);
    assert.equal(recorded.length, 1);
    assert.match(recorded[0].url, /[?&]key=dummy(&|$)/);
    assert.equal(recorded[0].status, 200);
  });

  test('nodes.stop / nodes.start', async () => {
    const name = `${parent}/nodes/v5e`;
    const stopped = await WaitOperation(
        (await api.projects.locations.nodes.stop({name, requestBody: {}})).data);
    assert.equal(stopped.response.state, 'STOPPED');
    const started = await WaitOperation(
        (await api.projects.locations.nodes.start({name, requestBody: {}})).data);
    assert.equal(started.response.state, 'READY');
  });

  test('nodes.patch with updateMask (camelCase and snake_case paths)', async () => {
    const name = `${parent}/nodes/v5e`;
    let done = await WaitOperation(
        (await api.projects.locations.nodes.patch({
          name,
          updateMask: 'description,labels',
          requestBody: {description: 'updated by googleapis', labels: {env: 'ci'}},
        })).data);
    assert.equal(done.response.description, 'updated by googleapis');
    assert.deepEqual(done.response.labels, {env: 'ci'});
    done = await WaitOperation((await api.projects.locations.nodes.patch({
                                 name,
                                 updateMask: 'network_config.enable_external_ips',
                                 requestBody: {networkConfig: {enableExternalIps: true}},
                               })).data);
    assert.equal(done.response.networkConfig.enableExternalIps, true);
    assert.ok(
        done.response.networkEndpoints[0].accessConfig.externalIp, 'an external IP once enabled');
  });

  test('nodes.getGuestAttributes', async () => {
    const {data} = await api.projects.locations.nodes.getGuestAttributes({
      name: `${parent}/nodes/v5p`,
      requestBody: {queryPath: ''},
    });
    assert.deepEqual(data.guestAttributes.map((g) => g.workerId), ['0', '1']);
  });

  test('acceleratorTypes / runtimeVersions / locations', async () => {
    const {data: types} = await api.projects.locations.acceleratorTypes.list({parent, pageSize: 2});
    assert.equal(types.acceleratorTypes.length, 2);
    assert.ok(types.nextPageToken);
    const {data: type} = await api.projects.locations.acceleratorTypes.get({
      name: `${parent}/acceleratorTypes/v5litepod-8`,
    });
    assert.deepEqual(type.acceleratorConfigs, [{type: 'V5LITE_POD', topology: '2x4'}]);
    const {data: versions} = await api.projects.locations.runtimeVersions.list({parent});
    assert.ok(versions.runtimeVersions.some((v) => v.version === kV5eRuntime));
    const {data: loc} = await api.projects.locations.get({name: parent});
    assert.equal(loc.locationId, kZone);
    const {data: locs} = await api.projects.locations.list({name: `projects/${project}`});
    assert.ok(locs.locations.some((l) => l.locationId === kZone));
  });

  test('errors: HTTP 404 and 409 with the Google error envelope', async () => {
    await assert.rejects(
        api.projects.locations.nodes.get({name: `${parent}/nodes/missing`}), (e) => {
          assert.equal(e.status, 404);
          assert.equal(e.response.data.error.code, 404);
          assert.equal(e.response.data.error.status, 'NOT_FOUND');
          assert.equal(
              e.response.data.error.message, `Resource '${parent}/nodes/missing' was not found`);
          return true;
        });
    await assert.rejects(
        api.projects.locations.nodes.create({
          parent,
          nodeId: 'v5e',
          requestBody: {acceleratorType: 'v5litepod-8', runtimeVersion: kV5eRuntime},
        }),
        (e) => {
          assert.equal(e.status, 409);
          assert.equal(e.response.data.error.status, 'ALREADY_EXISTS');
          return true;
        });
  });

  test('nodes.delete, wait, then 404', async () => {
    for (const id of ['v5e', 'v5p']) {
      const name = `${parent}/nodes/${id}`;
      const done = await WaitOperation((await api.projects.locations.nodes.delete({name})).data);
      assert.equal(done.response['@type'], 'type.googleapis.com/google.protobuf.Empty');
      await assert.rejects(api.projects.locations.nodes.get({name}), (e) => e.status === 404);
    }
    const {data} = await api.projects.locations.nodes.list({parent});
    assert.deepEqual(data.nodes ?? [], []);
  });
});
