import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { ATTACHMENTS_ANNOTATION } from '../netvirt/attachments.js';
import { NETWORKS_ANNOTATION } from '../netvirt/network-selection.js';
import { podAddress, podNetworkEligibility } from '../netvirt/kube.js';
import { nodeProjection, podProjection } from './projections.js';
import { LAST_APPLIED_ANNOTATION, slimNode, slimObject, slimPod } from './slim-objects.js';

const managedFields = [{ manager: 'kubelet', operation: 'Update', fieldsV1: { 'f:status': {} } }];

/** What a pod's metadata keeps whole (timestamps are strings on the wire, whatever the model type says). */
const keptMetadata = {
  name: 'web-0',
  namespace: 'shop',
  uid: 'u-1',
  resourceVersion: '42',
  creationTimestamp: '2026-01-01T00:00:00Z' as unknown as Date,
  deletionTimestamp: '2026-01-02T00:00:00Z' as unknown as Date,
  labels: { app: 'web' },
  ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'o-1' }],
};
const keptAnnotations = { [NETWORKS_ANNOTATION]: 'blue', [ATTACHMENTS_ANNOTATION]: '[]' };

/** A pod as a kube-apiserver sends it, with everything a reconcile never reads. */
function fullPod(): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...keptMetadata,
      annotations: { ...keptAnnotations, [LAST_APPLIED_ANNOTATION]: '{"a huge":"copy"}' },
      managedFields,
    },
    spec: {
      nodeName: 'node-1',
      hostNetwork: false,
      volumes: [{ name: 'data', emptyDir: {} }],
      initContainers: [{ name: 'init', image: 'busybox' }],
      containers: [
        {
          name: 'app',
          image: 'nginx',
          env: [{ name: 'A', value: 'b' }],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          resources: { limits: { cpu: '1' } },
        },
        { name: 'sidecar', image: 'envoy' },
      ],
    },
    status: {
      phase: 'Running',
      podIP: '10.1.0.5',
      podIPs: [{ ip: '10.1.0.5' }, { ip: 'fd00::5' }],
      hostIP: '172.16.0.1',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'app', image: 'nginx', imageID: 'x', ready: true, restartCount: 0 }],
    },
  };
}

describe('slim objects', () => {
  it('keep of a pod what reconciles read, and drop managedFields, container specs, volumes and statuses', () => {
    const full = fullPod();
    const before = JSON.stringify(full);
    const slim = slimPod(full);
    assert.equal(JSON.stringify(full), before, 'the object the API server sent is left as it was');
    assert.deepEqual(slim, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...keptMetadata, annotations: keptAnnotations },
      spec: {
        nodeName: 'node-1',
        hostNetwork: false,
        containers: [
          { name: 'app', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] },
          { name: 'sidecar' },
        ],
      },
      status: {
        phase: 'Running',
        podIP: '10.1.0.5',
        podIPs: [{ ip: '10.1.0.5' }, { ip: 'fd00::5' }],
        hostIP: '172.16.0.1',
      },
    });
    // What the watcher decides from a pod is the same on the slim copy.
    assert.equal(podProjection(slim), podProjection(full));
    assert.deepEqual(podNetworkEligibility(slim), podNetworkEligibility(full));
    assert.equal(podAddress(slim, ['ipv6']), podAddress(full, ['ipv6']));
  });

  it('keep a pod without spec or status as it is', () => {
    const bare: V1Pod = { metadata: { name: 'p', namespace: 'n', resourceVersion: '1' } };
    assert.deepEqual(slimPod(bare), bare);
  });

  it('keep of a node its metadata, spec and addresses, not its images or conditions', () => {
    const full: V1Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', uid: 'n-1', resourceVersion: '7', labels: { zone: 'a' }, managedFields },
      spec: { podCIDR: '10.1.0.0/24', podCIDRs: ['10.1.0.0/24'] },
      status: {
        addresses: [
          { type: 'InternalIP', address: '172.16.0.1' },
          { type: 'Hostname', address: 'node-1' },
        ],
        conditions: [{ type: 'Ready', status: 'True' }],
        images: [{ names: ['nginx:latest'], sizeBytes: 1 }],
        capacity: { cpu: '8' },
      },
    };
    const slim = slimNode(full);
    assert.deepEqual(slim, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', uid: 'n-1', resourceVersion: '7', labels: { zone: 'a' } },
      spec: { podCIDR: '10.1.0.0/24', podCIDRs: ['10.1.0.0/24'] },
      status: { addresses: full.status?.addresses },
    });
    assert.equal(nodeProjection(slim), nodeProjection(full));
    assert.equal(full.status?.images?.length, 1, 'the input is left as it was');
  });

  it('keep every other object whole but for managedFields and the last-applied copy', () => {
    const ns: V1Namespace = {
      kind: 'Namespace',
      metadata: {
        name: 'shop',
        labels: { team: 'a' },
        annotations: { [LAST_APPLIED_ANNOTATION]: '{}', note: 'kept' },
        managedFields,
      },
      status: { phase: 'Active' },
    };
    assert.deepEqual(slimObject(ns), {
      kind: 'Namespace',
      metadata: { name: 'shop', labels: { team: 'a' }, annotations: { note: 'kept' } },
      status: { phase: 'Active' },
    });
    assert.equal(ns.metadata?.managedFields, managedFields, 'the input is left as it was');
  });
});
