import { createHash } from 'node:crypto';
import { posix } from 'node:path';

/**
 * Validation of every name that reaches `ip`, `nsenter`, `ovs-vsctl` or a file path.
 *
 * Processes are spawned with argument arrays, so these checks are not about shell quoting:
 * they keep values inside what the kernel, OVSDB and the CNI spec accept, so that a bad
 * request fails here with a precise message instead of half-way through an ADD.
 */

/** What was invalid, so the CNI layer can map it (4 invalid environment, 7 invalid config). */
export type NameField =
  | 'containerId'
  | 'ifName'
  | 'netns'
  | 'bridge'
  | 'podNamespace'
  | 'podName'
  | 'mac'
  | 'mtu'
  | 'portName'
  | 'networkName';

export class NameError extends Error {
  override name = 'NameError';
  constructor(
    readonly field: NameField,
    readonly value: string,
    reason: string,
  ) {
    super(
      `invalid ${field} ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)}: ${reason}`,
    );
  }
}

/** containerd/CRI-O use 64 hex digits; this leaves room for other runtimes and stays bounded. */
export const MAX_CONTAINER_ID_LENGTH = 256;
/** Linux IFNAMSIZ is 16 including the terminating NUL. */
export const MAX_IFNAME_BYTES = 15;
const MAX_PATH_BYTES = 4095;

const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const BRIDGE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

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

/** CNI spec and the kernel's dev_valid_name(): 1..15 bytes, not "."/"..", no "/", ":" or whitespace. */
export function validateIfName(name: string): string {
  return validateNetdevName('ifName', name);
}

function validateNetdevName(field: NameField, name: string): string {
  if (typeof name !== 'string' || name.length === 0)
    throw new NameError(field, String(name), 'must not be empty');
  if (Buffer.byteLength(name, 'utf8') > MAX_IFNAME_BYTES) {
    throw new NameError(field, name, `longer than ${MAX_IFNAME_BYTES} bytes`);
  }
  if (name === '.' || name === '..') throw new NameError(field, name, 'must not be "." or ".."');
  if (/[/:\s]/u.test(name)) throw new NameError(field, name, 'must not contain "/", ":" or whitespace');
  if (CONTROL.test(name)) throw new NameError(field, name, 'must not contain control characters');
  // `ip` would read a leading "-" as an option in some positions.
  if (name.startsWith('-')) throw new NameError(field, name, 'must not start with "-"');
  return name;
}

/** An absolute, already-normalised path without NUL (the runtime's netns bind mount). */
export function validateNetnsPath(path: string): string {
  if (typeof path !== 'string' || path.length === 0)
    throw new NameError('netns', String(path), 'must not be empty');
  if (CONTROL.test(path)) throw new NameError('netns', path, 'must not contain control characters');
  if (!path.startsWith('/')) throw new NameError('netns', path, 'must be an absolute path');
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) throw new NameError('netns', path, 'path too long');
  if (path === '/' || posix.normalize(path) !== path || path.endsWith('/')) {
    throw new NameError('netns', path, 'must be a normalised path to a file (no "..", "//" or trailing "/")');
  }
  return path;
}

/**
 * An OVS bridge is also a network device (its internal port), so it obeys the interface
 * rules; it is further limited to a conservative character set because it appears in
 * OpenFlow management socket paths (`<rundir>/<bridge>.mgmt`).
 */
export function validateBridgeName(name: string): string {
  validateNetdevName('bridge', name);
  if (!BRIDGE.test(name)) {
    throw new NameError(
      'bridge',
      name,
      'must start with a letter or digit and contain only letters, digits, "_", "." and "-"',
    );
  }
  return name;
}

/** An OVS port we attach: a host network device name. */
export function validatePortName(name: string): string {
  return validateNetdevName('portName', name);
}

/** Kubernetes rules: namespace is a DNS-1123 label, pod name a DNS-1123 subdomain. */
export function validatePodRef(namespace: string, name: string): void {
  if (typeof namespace !== 'string' || namespace.length === 0) {
    throw new NameError('podNamespace', String(namespace), 'must not be empty');
  }
  if (namespace.length > 63) throw new NameError('podNamespace', namespace, 'longer than 63 characters');
  if (!DNS1123_LABEL.test(namespace)) {
    throw new NameError(
      'podNamespace',
      namespace,
      'must be a DNS-1123 label (lower-case letters, digits, "-")',
    );
  }
  if (typeof name !== 'string' || name.length === 0)
    throw new NameError('podName', String(name), 'must not be empty');
  if (name.length > 253) throw new NameError('podName', name, 'longer than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(name)) {
    throw new NameError(
      'podName',
      name,
      'must be a DNS-1123 subdomain (lower-case letters, digits, "-", ".")',
    );
  }
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
  const digest = createHash('sha256').update(`${containerId}/${ifName}`, 'utf8').digest('hex');
  return `veth${digest.slice(0, 8)}`;
}
