/**
 * The Kubernetes side of a trace: the pod, its namespace and node, and whether the pod is on
 * the pod network with an address. Every later step depends on these facts.
 */
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { errorMessage } from '../../common/log.js';
import type { KubeClient } from '../../k8s/kube-client.js';
import { podAddress, podHasAnyAddress, podNetworkEligibility } from '../../netvirt/kube.js';
import { kubePaths, readObject } from '../kube-reader.js';
import type { Trace } from './steps.js';

export interface PodFacts {
  pod: V1Pod;
  namespace?: V1Namespace;
  node?: V1Node;
  address?: string;
}

export async function checkPod(
  trace: Trace,
  kube: KubeClient,
  ref: { namespace: string; name: string },
  timeoutMs: number,
): Promise<PodFacts | 'off-network' | undefined> {
  const opts = { timeoutMs };
  const podPath = kubePaths.pod(ref.namespace, ref.name);
  const label = `pod ${ref.namespace}/${ref.name}`;
  let pod: V1Pod | undefined;
  try {
    pod = await readObject<V1Pod>(kube, podPath, opts);
  } catch (err) {
    trace.add('pod', 'error', label, podPath, `cannot read ${label} from Kubernetes: ${errorMessage(err)}`);
    return undefined;
  }
  if (!pod) {
    trace.add('pod', 'missing', label, podPath, `${label} does not exist in Kubernetes`);
    return undefined;
  }
  const eligibility = podNetworkEligibility(pod);
  const nodeName = pod.spec?.nodeName;
  if (!eligibility.onNetwork) {
    if (!nodeName && pod.spec?.hostNetwork !== true) {
      trace.add(
        'pod',
        'missing',
        label,
        podPath,
        `${label} is not scheduled yet (no spec.nodeName): it has no node, hence no network yet`,
      );
      return undefined;
    }
    trace.add(
      'pod',
      'ok',
      label,
      podPath,
      `${label} ${eligibility.reason}: odlcoe gives it nothing in ODL or OVS by design`,
    );
    return 'off-network';
  }
  const facts: PodFacts = { pod };
  try {
    const [namespace, node] = await Promise.all([
      readObject<V1Namespace>(kube, kubePaths.namespace(ref.namespace), opts),
      readObject<V1Node>(kube, kubePaths.node(nodeName ?? ''), opts),
    ]);
    if (namespace) facts.namespace = namespace;
    if (node) facts.node = node;
  } catch (err) {
    trace.add(
      'pod',
      'error',
      label,
      podPath,
      `cannot read the pod's namespace or node: ${errorMessage(err)}`,
    );
    return undefined;
  }
  if (!facts.node) {
    trace.add(
      'pod',
      'missing',
      `node ${nodeName}`,
      kubePaths.node(nodeName ?? ''),
      `${label} is scheduled on node ${nodeName}, which does not exist`,
    );
    return facts;
  }
  if (!facts.namespace) {
    trace.add(
      'pod',
      'missing',
      `namespace ${ref.namespace}`,
      kubePaths.namespace(ref.namespace),
      `namespace ${ref.namespace} does not exist`,
    );
    return facts;
  }
  const address = podAddress(pod, ['ipv4']);
  if (address === undefined) {
    const why = podHasAnyAddress(pod)
      ? 'has no IPv4 address (odlcoe routes IPv4)'
      : 'has no IP address yet: the CNI ADD has not completed (see the node agent and kubelet events)';
    trace.add('pod', 'missing', label, podPath, `${label} on node ${nodeName} ${why}`);
    return facts;
  }
  facts.address = address;
  trace.add('pod', 'ok', label, podPath, `${label} runs on node ${nodeName} with IP ${address}`);
  return facts;
}
