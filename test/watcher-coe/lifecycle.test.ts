/**
 * The coe-northbound backend end to end: real kubesim, real ODL emulator, the watcher core.
 * Pods, nodes, Services and EndpointSlices are created, updated and deleted; after each step
 * ODL's four COE lists must equal a hand-written expected set, entry for entry and leaf for
 * leaf (nothing missing, nothing extra, no leaf the model lacks). On both RESTCONF dialects and
 * both model releases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  TARGETS,
  createNamespace,
  createNode,
  createPod,
  createService,
  createSlice,
  deletePod,
  readCoe,
  replaceSlice,
  setPodIp,
  settle,
  slice,
  startCoeWatcher,
  startEnv,
  type CoeLists,
  type CoeWatcher,
  type Env,
} from './testing.js';

/** clusterUuid('test'): the name-based UUID of "odlcoe:test", written out to pin it down. */
const CLUSTER_ID = 'd5b7c83d-b362-3bde-86d5-f509e6ca8560';

for (const target of TARGETS) {
  describe(`coe-northbound lifecycle (${target.profile}, ${target.dialect})`, () => {
    let env: Env;
    let w: CoeWatcher;
    const uid: Record<string, string> = {};

    before(async () => {
      env = await startEnv(target);
    });
    after(async () => {
      await w?.close();
      await env?.close();
    });

    const pod = (name: string, ip: string, hostIp: string) => ({
      uid: uid[name],
      name,
      'cluster-id': CLUSTER_ID,
      'host-ip-address': hostIp,
      'network-NS': 'alpha',
      'port-mac-address': `0a:58:${ip
        .split('.')
        .map((o) => Number(o).toString(16).padStart(2, '0'))
        .join(':')}`,
      interface: [{ uid: uid[name], 'ip-address': ip, 'network-id': CLUSTER_ID, 'network-type': 'VXLAN' }],
    });

    it('writes pods, nodes, services and all slices’ endpoints on start', async () => {
      uid['node-a'] = await createNode(env, 'node-a', '192.168.10.11', {
        podCIDR: '10.244.1.0/24',
        externalIp: '203.0.113.11',
      });
      uid['node-b'] = await createNode(env, 'node-b', '192.168.10.12', { podCIDR: '10.244.2.0/24' });
      await createNamespace(env, 'alpha');
      uid.a0 = await createPod(env, 'alpha', 'a0', 'node-a', { ip: '10.244.1.10' });
      uid.a1 = await createPod(env, 'alpha', 'a1', 'node-b'); // no IP yet: nothing to write
      await createPod(env, 'alpha', 'h0', 'node-a', { hostNetwork: true, ip: '192.168.10.11' }); // host network
      uid.web = await createService(env, 'alpha', {
        metadata: { name: 'web' },
        spec: {
          type: 'LoadBalancer',
          clusterIP: '10.96.0.10',
          externalIPs: ['203.0.113.50'],
          loadBalancerIP: '198.51.100.7',
          ports: [
            { name: 'http', port: 80, targetPort: 8080, nodePort: 30080 },
            { name: 'metrics', port: 9090, targetPort: 'metrics', nodePort: 30090 },
          ],
        },
        status: { loadBalancer: { ingress: [{ ip: '198.51.100.7' }] } },
      });
      uid.db = await createService(env, 'alpha', {
        metadata: { name: 'db' },
        spec: { clusterIP: 'None', ports: [{ port: 5432, targetPort: 5432 }] },
      });
      const ports = [
        { name: 'http', port: 8080 },
        { name: 'metrics', port: 9090 },
      ];
      await createSlice(env, slice('alpha', 'web-1', 'web', [{ ip: '10.244.1.10', node: 'node-a' }], ports));
      await createSlice(
        env,
        slice(
          'alpha',
          'web-2',
          'web',
          [
            { ip: '10.244.2.10', node: 'node-b', hostname: 'web-2-0' },
            { ip: '10.244.2.11', node: 'node-b', ready: false },
          ],
          ports,
        ),
      );
      await createSlice(
        env,
        slice('alpha', 'db-1', 'db', [{ ip: '10.244.1.20', node: 'node-a' }], [{ port: 5432 }]),
      );

      w = await startCoeWatcher(env);
      await w.watcher.ready();
      await settle(w);

      const expected: CoeLists = {
        pods: [pod('a0', '10.244.1.10', '192.168.10.11')],
        services: [
          {
            uid: uid.web,
            name: 'web',
            'cluster-id': CLUSTER_ID,
            'cluster-ip-address': '10.96.0.10',
            'network-NS': 'alpha',
            'external-ip-address': ['203.0.113.50'],
            'load-balancer-IP': '198.51.100.7',
            'ingress-ip-address': ['198.51.100.7'],
            'service-ports': [
              { name: 'http', port: 80, 'target-port': '8080', 'node-port': 30080 },
              { name: 'metrics', port: 9090, 'target-port': 'metrics', 'node-port': 30090 },
            ],
          },
          // Headless: no cluster-ip-address at all ("None" is not an IP).
          {
            uid: uid.db,
            name: 'db',
            'cluster-id': CLUSTER_ID,
            'network-NS': 'alpha',
            'service-ports': [{ port: 5432, 'target-port': '5432' }],
          },
        ],
        endpoints: [
          {
            uid: uid.web,
            name: 'web',
            'network-NS': 'alpha',
            // Both slices; the not-ready endpoint is left out.
            'endpoint-addresses': [
              { 'ip-address': '10.244.1.10', 'node-name': 'node-a' },
              { 'ip-address': '10.244.2.10', 'host-name': 'web-2-0', 'node-name': 'node-b' },
            ],
            'endpoint-ports': [
              { name: 'http', port: 8080 },
              { name: 'metrics', port: 9090 },
            ],
          },
          {
            uid: uid.db,
            name: 'db',
            'network-NS': 'alpha',
            'endpoint-addresses': [{ 'ip-address': '10.244.1.20', 'node-name': 'node-a' }],
            'endpoint-ports': [{ port: 5432 }],
          },
        ],
        'k8s-nodes': [
          {
            uid: uid['node-a'],
            'cluster-id': CLUSTER_ID,
            'host-name': 'node-a',
            'internal-ip-address': '192.168.10.11',
            'external-ip-address': '203.0.113.11',
            'pod-cidr': '10.244.1.0/24',
          },
          {
            uid: uid['node-b'],
            'cluster-id': CLUSTER_ID,
            'host-name': 'node-b',
            'internal-ip-address': '192.168.10.12',
            'pod-cidr': '10.244.2.0/24',
          },
        ],
      };
      assert.deepEqual(await readCoe(env), sortLists(expected));
    });

    it('follows updates: a pod IP, a node address, service ports, endpoint readiness', async () => {
      await setPodIp(env, 'alpha', 'a1', '10.244.2.10');
      await env.core.patchNodeStatus(
        {
          name: 'node-a',
          body: {
            status: {
              addresses: [
                { type: 'InternalIP', address: '192.168.10.21' },
                { type: 'Hostname', address: 'node-a' },
                { type: 'ExternalIP', address: '203.0.113.11' },
              ],
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await env.core.patchNamespacedService(
        {
          name: 'web',
          namespace: 'alpha',
          body: { spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }] } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await replaceSlice(
        env,
        slice(
          'alpha',
          'web-2',
          'web',
          [
            { ip: '10.244.2.10', node: 'node-b', hostname: 'web-2-0' },
            { ip: '10.244.2.11', node: 'node-b' },
          ],
          [{ name: 'http', port: 8080 }],
        ),
      );
      await settle(
        w,
        () =>
          w.watcher.view.pod('alpha', 'a1')?.status?.podIP === '10.244.2.10' &&
          w.watcher.view.node('node-a')?.status?.addresses?.[0]?.address === '192.168.10.21' &&
          w.watcher.view.service('alpha', 'web')?.spec?.ports?.length === 1 &&
          w.backend.slices
            .slicesOf('alpha', 'web')
            .some((s) => s.endpoints.some((e) => e.addresses[0] === '10.244.2.11' && e.conditions?.ready)),
      );

      const odl = await readCoe(env);
      assert.deepEqual(
        odl.pods,
        sortLists({
          pods: [pod('a0', '10.244.1.10', '192.168.10.21'), pod('a1', '10.244.2.10', '192.168.10.12')],
        }).pods,
      );
      const web = odl.services.find((s) => s.uid === uid.web);
      assert.deepEqual(web?.['service-ports'], [
        { name: 'http', port: 80, 'target-port': '8080', 'node-port': 30080 },
      ]);
      const webEndpoints = odl.endpoints.find((e) => e.uid === uid.web);
      assert.deepEqual(webEndpoints, {
        uid: uid.web,
        name: 'web',
        'network-NS': 'alpha',
        'endpoint-addresses': [
          { 'ip-address': '10.244.1.10', 'node-name': 'node-a' },
          { 'ip-address': '10.244.2.10', 'host-name': 'web-2-0', 'node-name': 'node-b' },
          { 'ip-address': '10.244.2.11', 'node-name': 'node-b' },
        ],
        // Union of both slices' ports: web-1 still lists metrics.
        'endpoint-ports': [
          { name: 'http', port: 8080 },
          { name: 'metrics', port: 9090 },
        ],
      });
      const nodeA = odl['k8s-nodes'].find((n) => n.uid === uid['node-a']);
      assert.equal(nodeA?.['internal-ip-address'], '192.168.10.21');
    });

    it('removes what goes: a pod, a slice, a Service with its endpoints, a node', async () => {
      await deletePod(env, 'alpha', 'a0');
      await env.discovery.deleteNamespacedEndpointSlice({ name: 'web-1', namespace: 'alpha' });
      await env.core.deleteNamespacedService({ name: 'db', namespace: 'alpha' });
      await env.core.deleteNode({ name: 'node-b' });
      await settle(
        w,
        () =>
          !w.watcher.view.pod('alpha', 'a0') &&
          !w.watcher.view.service('alpha', 'db') &&
          w.backend.slices.slicesOf('alpha', 'web').length === 1 &&
          !w.watcher.view.node('node-b'),
      );
      const expected: CoeLists = {
        // a1's node is gone: its entry cannot be rebuilt and stays until the pod goes.
        pods: [pod('a1', '10.244.2.10', '192.168.10.12')],
        services: [
          {
            uid: uid.web,
            name: 'web',
            'cluster-id': CLUSTER_ID,
            'cluster-ip-address': '10.96.0.10',
            'network-NS': 'alpha',
            'external-ip-address': ['203.0.113.50'],
            'load-balancer-IP': '198.51.100.7',
            'ingress-ip-address': ['198.51.100.7'],
            'service-ports': [{ name: 'http', port: 80, 'target-port': '8080', 'node-port': 30080 }],
          },
        ],
        endpoints: [
          {
            uid: uid.web,
            name: 'web',
            'network-NS': 'alpha',
            'endpoint-addresses': [
              { 'ip-address': '10.244.2.10', 'host-name': 'web-2-0', 'node-name': 'node-b' },
              { 'ip-address': '10.244.2.11', 'node-name': 'node-b' },
            ],
            'endpoint-ports': [{ name: 'http', port: 8080 }],
          },
        ],
        'k8s-nodes': [
          {
            uid: uid['node-a'],
            'cluster-id': CLUSTER_ID,
            'host-name': 'node-a',
            'internal-ip-address': '192.168.10.21',
            'external-ip-address': '203.0.113.11',
            'pod-cidr': '10.244.1.0/24',
          },
        ],
      };
      assert.deepEqual(await readCoe(env), sortLists(expected));
    });
  });
}

function sortLists(lists: Partial<CoeLists>): CoeLists {
  const sort = (entries: Record<string, unknown>[] = []) =>
    [...entries].sort((a, b) => String(a.uid).localeCompare(String(b.uid)));
  return {
    pods: sort(lists.pods),
    services: sort(lists.services),
    endpoints: sort(lists.endpoints),
    'k8s-nodes': sort(lists['k8s-nodes']),
  };
}
