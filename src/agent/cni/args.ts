/**
 * CNI_ARGS, parsed strictly (a malformed or repeated key is the runtime's error, code 4): it
 * carries the pod's namespace, name and UID, which decide the OVS port's iface-id and which
 * pod a request may act for.
 */
import { CNI_ERROR, CniError } from './error.js';

/**
 * `CNI_ARGS` is `K=V;K=V` in any order. kubelet's runtimes send `IgnoreUnknown=1`,
 * `K8S_POD_NAMESPACE`, `K8S_POD_NAME`, `K8S_POD_INFRA_CONTAINER_ID` and (newer ones)
 * `K8S_POD_UID`; podman sends only `IgnoreUnknown=1;K8S_POD_NAME=<container>`.
 */
export interface CniArgs {
  podNamespace?: string;
  podName?: string;
  podUid?: string;
  infraContainerId?: string;
  /** Every pair, including the ones odlcoe does not use. */
  all: ReadonlyMap<string, string>;
}

export function parseCniArgs(text: string | undefined): CniArgs {
  const all = new Map<string, string>();
  for (const pair of (text ?? '').split(';')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      throw new CniError(CNI_ERROR.invalidEnvironment, `CNI_ARGS: "${pair}" is not KEY=VALUE`);
    }
    const key = pair.slice(0, eq).trim();
    if (all.has(key)) throw new CniError(CNI_ERROR.invalidEnvironment, `CNI_ARGS: ${key} given twice`);
    all.set(key, pair.slice(eq + 1).trim());
  }
  const value = (key: string) => {
    const v = all.get(key);
    return v === undefined || v === '' ? undefined : v;
  };
  const args: CniArgs = { all };
  const podNamespace = value('K8S_POD_NAMESPACE');
  const podName = value('K8S_POD_NAME');
  const podUid = value('K8S_POD_UID');
  const infraContainerId = value('K8S_POD_INFRA_CONTAINER_ID');
  if (podNamespace) args.podNamespace = podNamespace;
  if (podName) args.podName = podName;
  if (podUid) args.podUid = podUid;
  if (infraContainerId) args.infraContainerId = infraContainerId;
  return args;
}
