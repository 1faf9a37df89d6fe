import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { SimClient } from './testing.js';
import { collectWatch, rejects, startSimClient, waitFor } from './testing.js';

const GROUP = 'k8s.cni.cncf.io';
const PLURAL = 'network-attachment-definitions';

interface Nad {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: { config?: string };
}

describe('kubesim serves NetworkAttachmentDefinitions (k8s.cni.cncf.io/v1)', () => {
  let c: SimClient;
  let custom: CustomObjectsApi;
  before(async () => {
    c = await startSimClient({ bookmarkIntervalMs: 100 });
    custom = c.kc.makeApiClient(CustomObjectsApi);
  });
  after(async () => {
    await c.sim.close();
  });

  it('is discoverable as a namespaced resource with its short name', async () => {
    const res = await fetch(`${c.sim.url}/apis/${GROUP}/v1`);
    const list = (await res.json()) as {
      resources: { name: string; namespaced: boolean; shortNames?: string[] }[];
    };
    const nad = list.resources.find((r) => r.name === PLURAL);
    assert.ok(nad, 'discovery lists network-attachment-definitions');
    assert.equal(nad.namespaced, true);
    assert.deepEqual(nad.shortNames, ['net-attach-def']);
    const groups = (await (await fetch(`${c.sim.url}/apis`)).json()) as { groups: { name: string }[] };
    assert.ok(
      groups.groups.some((g) => g.name === GROUP),
      '/apis lists the k8s.cni.cncf.io group',
    );
  });

  it('creates, lists, watches, replaces and deletes with spec.config a JSON string', async () => {
    const ns = 'default';
    const w = await collectWatch(c.kc, `/apis/${GROUP}/v1/namespaces/${ns}/${PLURAL}`, {});
    const config = JSON.stringify({
      cniVersion: '1.0.0',
      type: 'odlcoe',
      subnets: [{ cidr: '10.50.0.0/24' }],
    });
    const created = (await custom.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: PLURAL,
      body: {
        apiVersion: `${GROUP}/v1`,
        kind: 'NetworkAttachmentDefinition',
        metadata: { name: 'blue' },
        spec: { config },
      },
    })) as Nad;
    assert.equal(created.spec?.config, config);
    const listed = (await custom.listNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: PLURAL,
    })) as {
      items: Nad[];
    };
    assert.deepEqual(
      listed.items.map((i) => i.metadata?.name),
      ['blue'],
    );
    const changed = JSON.stringify({ ...JSON.parse(config), routes: [{ dst: '10.60.0.0/16' }] });
    const replaced = (await custom.replaceNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: PLURAL,
      name: 'blue',
      body: { ...created, spec: { config: changed } },
    })) as Nad;
    assert.equal(replaced.spec?.config, changed);
    await custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: PLURAL,
      name: 'blue',
    });
    await waitFor('the watch to see ADDED, MODIFIED and DELETED', () => w.of('DELETED').length === 1);
    assert.deepEqual(
      w.of('ADDED', 'MODIFIED', 'DELETED').map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    w.abort();
    await rejects(
      () =>
        custom.getNamespacedCustomObject({
          group: GROUP,
          version: 'v1',
          namespace: ns,
          plural: PLURAL,
          name: 'blue',
        }),
      404,
      'NotFound',
    );
  });
});

describe('kubesim without the k8s.cni.cncf.io CRD', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient({ withoutGroups: ['k8s.cni.cncf.io'] });
  });
  after(async () => {
    await c.sim.close();
  });

  it('answers 404 under the group and leaves it out of discovery, as a cluster without Multus does', async () => {
    assert.equal((await fetch(`${c.sim.url}/apis/${GROUP}/v1`)).status, 404);
    assert.equal((await fetch(`${c.sim.url}/apis/${GROUP}/v1/${PLURAL}`)).status, 404);
    const groups = (await (await fetch(`${c.sim.url}/apis`)).json()) as { groups: { name: string }[] };
    assert.ok(!groups.groups.some((g) => g.name === GROUP), '/apis does not list the group');
    assert.equal((await fetch(`${c.sim.url}/apis/coordination.k8s.io/v1`)).status, 200);
  });
});
