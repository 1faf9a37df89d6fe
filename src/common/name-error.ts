/**
 * The error every name validator throws (CNI request fields in src/agent/names.ts, network
 * device names in src/ovs/names.ts, Kubernetes names in src/k8s/names.ts). One type, so that
 * each caller maps all of them at once: the CNI layer to its codes (4 invalid environment, 7
 * invalid config), odlcoectl to its usage exit code.
 */

/** What was invalid. */
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

/** ASCII control characters, which no name that reaches a command line or a path may hold. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
