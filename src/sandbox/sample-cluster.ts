/**
 * The cluster the sandbox loads: a few nodes with InternalIPs and pod CIDRs, a few namespaces,
 * and pods bound to nodes (as if the scheduler had run) but without IPs: the kubelet stand-ins
 * give them their addresses through the pod status, as kubelet does; one extra network that two
 * pods of a node attach to (as Multus would). Pure data.
 */
import { NAD_API_VERSION, NAD_KIND } from '../netvirt/network-config.js';
import { NETWORKS_ANNOTATION } from '../netvirt/network-selection.js';

export interface SampleNode {
  name: string;
  internalIp: string;
  podCidr: string;
}

export interface SamplePod {
  namespace: string;
  name: string;
  node: string;
  app: string;
  hostNetwork?: boolean;
  /** Its `k8s.v1.cni.cncf.io/networks` selection (extra interfaces through Multus). */
  networks?: string;
}

/** An odlcoe NetworkAttachmentDefinition (extra network). */
export interface SampleNetwork {
  namespace: string;
  name: string;
  /** Its `spec.config` (docs/networks.md). */
  config: Record<string, unknown>;
}

/** A Service as kube-apiserver holds it once its ClusterIP is allocated. */
export interface SampleService {
  namespace: string;
  name: string;
  /** The pods it selects (`app` label). */
  app: string;
  /** `None`: headless (no route). */
  clusterIp: string;
  externalIps?: string[];
}

/** Services on: the watcher's and the agents' Service ranges, and the Services to load. */
export interface SampleServices {
  /** `services.cidrs` of the watcher and the agents (kube-apiserver's service range). */
  cidrs: string[];
  /** The agents' `services.clusterCidrs`: every node subnet lies in them. */
  clusterCidrs: string[];
  services: SampleService[];
}

export interface SampleCluster {
  nodes: SampleNode[];
  /** Namespaces to create (beyond default, kube-system, kube-public, kube-node-lease). */
  namespaces: string[];
  pods: SamplePod[];
  /** Absent: Services off (no node gateways, no Service routes). */
  services?: SampleServices;
  /** Extra networks (NetworkAttachmentDefinitions) the pods' `networks` name. */
  networks?: SampleNetwork[];
}

/** Where the watcher's leader Lease lives (odlcoectl status looks there by default). */
export const WATCHER_NAMESPACE = 'odlcoe-system';
export const WATCHER_LEASE = 'odlcoe-watcher';

export const SAMPLE_CLUSTER: SampleCluster = {
  nodes: [
    { name: 'node-a', internalIp: '192.168.56.11', podCidr: '10.244.1.0/24' },
    { name: 'node-b', internalIp: '192.168.56.12', podCidr: '10.244.2.0/24' },
    { name: 'node-c', internalIp: '192.168.56.13', podCidr: '10.244.3.0/24' },
  ],
  namespaces: ['frontend', 'backend', 'monitoring', WATCHER_NAMESPACE],
  pods: [
    { namespace: 'frontend', name: 'web-0', node: 'node-a', app: 'web' },
    { namespace: 'frontend', name: 'web-1', node: 'node-b', app: 'web' },
    { namespace: 'frontend', name: 'web-2', node: 'node-c', app: 'web' },
    // An extra interface (net1) on the L2 network backend/storage, as Multus gives it.
    { namespace: 'backend', name: 'api-0', node: 'node-a', app: 'api', networks: 'backend/storage' },
    { namespace: 'backend', name: 'api-1', node: 'node-b', app: 'api' },
    { namespace: 'backend', name: 'db-0', node: 'node-c', app: 'db' },
    {
      namespace: 'monitoring',
      name: 'prometheus-0',
      node: 'node-a',
      app: 'prometheus',
      networks: 'backend/storage',
    },
    // hostNetwork pods share their node's address and get nothing in ODL.
    {
      namespace: 'kube-system',
      name: 'node-exporter-a',
      node: 'node-a',
      app: 'node-exporter',
      hostNetwork: true,
    },
    {
      namespace: 'kube-system',
      name: 'node-exporter-b',
      node: 'node-b',
      app: 'node-exporter',
      hostNetwork: true,
    },
    {
      namespace: 'kube-system',
      name: 'node-exporter-c',
      node: 'node-c',
      app: 'node-exporter',
      hostNetwork: true,
    },
  ],
  services: {
    cidrs: ['10.96.0.0/16'],
    clusterCidrs: ['10.244.0.0/16'],
    services: [
      { namespace: 'frontend', name: 'web', app: 'web', clusterIp: '10.96.0.10' },
      { namespace: 'backend', name: 'api', app: 'api', clusterIp: '10.96.0.20', externalIps: ['192.0.2.20'] },
      // Headless: DNS names the pods; kube-proxy serves no address, so no route.
      { namespace: 'monitoring', name: 'prometheus', app: 'prometheus', clusterIp: 'None' },
    ],
  },
  networks: [
    {
      namespace: 'backend',
      name: 'storage',
      config: { cniVersion: '1.0.0', name: 'storage', type: 'odlcoe', subnets: [{ cidr: '10.50.0.0/24' }] },
    },
  ],
};

export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

export function nodeObject(node: SampleNode): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.name,
      labels: { 'kubernetes.io/hostname': node.name, 'kubernetes.io/os': 'linux' },
    },
    spec: { podCIDR: node.podCidr, podCIDRs: [node.podCidr] },
    status: {
      addresses: [
        { type: 'InternalIP', address: node.internalIp },
        { type: 'Hostname', address: node.name },
      ],
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      ],
    },
  };
}

export function namespaceObject(name: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

/** A pod as the API server holds it after scheduling: bound to its node, Pending, no IP. */
export function podObject(pod: SamplePod): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pod.name,
      namespace: pod.namespace,
      labels: { app: pod.app },
      ...(pod.networks ? { annotations: { [NETWORKS_ANNOTATION]: pod.networks } } : {}),
    },
    spec: {
      nodeName: pod.node,
      ...(pod.hostNetwork ? { hostNetwork: true } : {}),
      containers: [{ name: pod.app, image: PAUSE_IMAGE }],
    },
  };
}

/** A Service with its ClusterIP allocated (port 80 to the pods' 8080). */
export function serviceObject(service: SampleService): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: service.name, namespace: service.namespace },
    spec: {
      type: 'ClusterIP',
      selector: { app: service.app },
      clusterIP: service.clusterIp,
      clusterIPs: [service.clusterIp],
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
      ...(service.externalIps ? { externalIPs: service.externalIps } : {}),
    },
  };
}

/** The host routes (`ip/32`) a Service gets on every gateway: none when headless. */
export function serviceRoutePrefixes(service: SampleService): string[] {
  if (service.clusterIp === 'None') return [];
  return [service.clusterIp, ...(service.externalIps ?? [])].map((ip) => `${ip}/32`).sort();
}

/** Every object of the cluster, in an order the API accepts (namespaces before their pods). */
export function networkObject(network: SampleNetwork): Record<string, unknown> {
  return {
    apiVersion: NAD_API_VERSION,
    kind: NAD_KIND,
    metadata: { name: network.name, namespace: network.namespace },
    spec: { config: JSON.stringify(network.config) },
  };
}

export function clusterObjects(cluster: SampleCluster): Record<string, unknown>[] {
  return [
    ...cluster.nodes.map(nodeObject),
    ...cluster.namespaces.map(namespaceObject),
    ...(cluster.networks ?? []).map(networkObject),
    ...cluster.pods.map(podObject),
    ...(cluster.services?.services ?? []).map(serviceObject),
  ];
}
