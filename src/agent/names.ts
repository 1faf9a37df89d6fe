/**
 * Validation of the CNI request's own names that reach `ip`, `nsenter`, host-local or a file
 * path (container id, network name, MAC, MTU), and the host veth name derived from them.
 * Network device names and network namespace paths are checked in src/ovs/names.ts,
 * Kubernetes names in src/k8s/names.ts; all throw the one NameError.
 *
 * Processes are spawned with argument arrays, so these checks are not about shell quoting:
 * they keep values inside what the kernel and the CNI spec accept, so that a bad request fails
 * here with a precise message instead of half-way through an ADD.
 */
import { NameError } from '../common/name-error.js';
import { validateIfName, vethPortName } from '../ovs/names.js';

/** containerd/CRI-O use 64 hex digits; this leaves room for other runtimes and stays bounded. */
export const MAX_CONTAINER_ID_LENGTH = 256;

const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

/** CNI spec: alphanumeric first, then alphanumerics, `_`, `.`, `-`. */
export function validateContainerId(id: string): string {
  if (typeof id !== 'string' || id.length === 0)
    throw new NameError('containerId', String(id), 'must not be empty');
  if (id.length > MAX_CONTAINER_ID_LENGTH) {
    throw new NameError('containerId', id, `longer than ${MAX_CONTAINER_ID_LENGTH} characters`);
  }
  if (!CONTAINER_ID.test(id)) {
    throw new NameError(
      'containerId',
      id,
      'must start with a letter or digit and contain only letters, digits, "_", "." and "-"',
    );
  }
  return id;
}

/** A unicast, lower-case colon-separated MAC such as 0a:58:0a:0b:01:05. */
export function validateMac(mac: string): string {
  if (typeof mac !== 'string' || !MAC.test(mac)) {
    throw new NameError('mac', String(mac), 'must be six lower-case hex octets separated by ":"');
  }
  if ((parseInt(mac.slice(0, 2), 16) & 1) === 1) throw new NameError('mac', mac, 'must be a unicast address');
  if (mac === '00:00:00:00:00:00') throw new NameError('mac', mac, 'must not be all zeros');
  return mac;
}

/** IPv4 needs at least 68; 65535 is the largest a veth accepts. */
export function validateMtu(mtu: number): number {
  if (!Number.isInteger(mtu) || mtu < 68 || mtu > 65535) {
    throw new NameError('mtu', String(mtu), 'must be an integer between 68 and 65535');
  }
  return mtu;
}

/** CNI network names end up as host-local's lease directory name. */
export function validateNetworkName(name: string): string {
  if (typeof name !== 'string' || name.length === 0)
    throw new NameError('networkName', String(name), 'must not be empty');
  if (name.length > 128) throw new NameError('networkName', name, 'longer than 128 characters');
  if (!CONTAINER_ID.test(name)) {
    throw new NameError(
      'networkName',
      name,
      'must start with a letter or digit and contain only letters, digits, "_", "." and "-"',
    );
  }
  return name;
}

/**
 * The host end of a pod's veth, also its OVS port name: `veth` + 8 lower-case hex digits of
 * sha256(containerId + "/" + ifName). Derived, not stored, so a DEL that carries only the
 * container id (containerd's second DEL) still finds it. Genius treats `veth[0-9a-f]{8}` as
 * a unique tap name. 32 bits can collide across pods on one node (about 1 in 4 million for
 * 100 pods); createPodInterface and Ovs.addPort refuse an existing device or port instead of
 * taking it over, so a collision fails one ADD loudly rather than breaking another pod.
 */
export function hostVethName(containerId: string, ifName: string): string {
  validateContainerId(containerId);
  validateIfName(ifName);
  return vethPortName(`${containerId}/${ifName}`);
}
