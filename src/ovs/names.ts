/**
 * Names of network devices: the pod's interface (CNI_IFNAME), an OVS bridge and an OVS port
 * are all Linux network devices, so they obey the kernel's rules; and the path of the network
 * namespace a device lives in (CNI_NETNS, or a pod namespace odlcoectl trace found). Processes are spawned with
 * argument arrays, so these checks are not about shell quoting: they keep values inside what
 * the kernel and OVSDB accept, so that a bad name fails here with a precise message instead of
 * half-way through an ADD or a trace.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { CONTROL_CHARACTERS, NameError, type NameField } from '../common/name-error.js';

/** Linux IFNAMSIZ is 16 including the terminating NUL. */
export const MAX_IFNAME_BYTES = 15;
const MAX_PATH_BYTES = 4095;

const BRIDGE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

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
  if (CONTROL_CHARACTERS.test(name)) throw new NameError(field, name, 'must not contain control characters');
  // `ip` would read a leading "-" as an option in some positions.
  if (name.startsWith('-')) throw new NameError(field, name, 'must not start with "-"');
  return name;
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

/**
 * The name of an OVS port odlcoe makes: `veth` + 8 lower-case hex digits of sha256(seed),
 * which Genius treats as a unique tap name (any other name it prefixes with the switch id).
 * Derived, never stored, so it is found again from the seed alone.
 */
export function vethPortName(seed: string): string {
  if (seed.length === 0) throw new NameError('portName', seed, 'the seed of a port name must not be empty');
  return `veth${createHash('sha256').update(seed, 'utf8').digest('hex').slice(0, 8)}`;
}

/** An OVS port we attach: a host network device name. */
export function validatePortName(name: string): string {
  return validateNetdevName('portName', name);
}
/** An absolute, already-normalised path without NUL (the runtime's netns bind mount). */
export function validateNetnsPath(path: string): string {
  if (typeof path !== 'string' || path.length === 0)
    throw new NameError('netns', String(path), 'must not be empty');
  if (CONTROL_CHARACTERS.test(path))
    throw new NameError('netns', path, 'must not contain control characters');
  if (!path.startsWith('/')) throw new NameError('netns', path, 'must be an absolute path');
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) throw new NameError('netns', path, 'path too long');
  if (path === '/' || posix.normalize(path) !== path || path.endsWith('/')) {
    throw new NameError('netns', path, 'must be a normalised path to a file (no "..", "//" or trailing "/")');
  }
  return path;
}
