import { randomBytes } from 'node:crypto';
import { hostVethName } from '../../src/agent/names.js';
import { createPodInterface } from '../../src/agent/netns.js';

/** A container id as a runtime makes one: 64 hex digits. */
export function newContainerId(): string {
  return randomBytes(32).toString('hex');
}

/**
 * A veth pair as the agent makes one for a container, without addresses: the pod end `eth0`
 * in the namespace at `netnsPath`, the host end named as the agent names it, ready to be added
 * to OVS. `track` gets the host end's name before it exists, so that the caller's after hook
 * removes it even when the test fails half-way.
 */
export async function createBareVeth(
  netnsPath: string,
  opts: { mac: string; mtu?: number; containerId?: string; track(hostVeth: string): void },
): Promise<{ hostVeth: string; containerId: string }> {
  const containerId = opts.containerId ?? newContainerId();
  const hostVeth = hostVethName(containerId, 'eth0');
  opts.track(hostVeth);
  await createPodInterface({
    netns: netnsPath,
    ifName: 'eth0',
    hostVeth,
    mac: opts.mac,
    mtu: opts.mtu ?? 1450,
    addresses: [],
    routes: [],
  });
  return { hostVeth, containerId };
}
