/**
 * NetVirt's L3 hop for a test's own OVS (src/sandbox/netvirt-l3.ts): pods the agent wires hold
 * /32 addresses and reach each other through the subnet gateway, which no ODL answers here.
 */
import { silentLogger } from '../../src/common/log.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { conflistGateways, NetvirtL3 } from '../../src/sandbox/netvirt-l3.js';
import type { OvsSandbox } from './ovs-sandbox.js';

/** Starts keeping `bridge`'s rules for the gateways of the agent's conflist; returns the stop. */
export function startNetvirtL3(
  ovs: Pick<OvsSandbox, 'dbSocket' | 'ofctl'>,
  bridge: string,
  conflistPath: string,
): () => Promise<void> {
  const ports = new Ovs({ dbSocket: ovs.dbSocket, timeoutSeconds: 5 });
  const l3 = new NetvirtL3({
    bridge,
    listPorts: (b) => ports.listPorts(b),
    ofctl: (args, input) => ovs.ofctl([...args], input),
    gateways: () => conflistGateways(conflistPath),
    logger: silentLogger(),
  });
  l3.start();
  return async () => {
    await l3.stop();
    ports.close();
  };
}
