/**
 * Open vSwitch as NetVirt expects a node to look (integration bridge, OVSDB manager,
 * controllers, tunnel endpoint). Kept idempotent and separate from pod wiring, because it is
 * re-applied periodically to repair an OVS restarted with a fresh database.
 */
import type { Ovs } from '../ovs/ovs.js';

export interface NodeOvsSettings {
  bridge: string;
  datapathType?: 'system' | 'netdev';
  failMode?: 'secure' | 'standalone';
  /** Empty: left as they are (ODL may have set them). */
  managers: string[];
  controllers: string[];
  /** other_config:local_ip, the VXLAN endpoint NetVirt uses for this node. */
  tunnelIp: string;
}

/**
 * Prepares Open vSwitch for NetVirt: the integration bridge (OpenFlow 1.3, which ODL's
 * OpenFlow plugin speaks), the OVSDB manager through which ODL discovers the node, the
 * bridge's controllers when configured, and the tunnel endpoint. Every step is idempotent, so
 * the agent repeats the whole sequence periodically (an OVS restart with a fresh database
 * is repaired without an agent restart).
 */
export async function setupNodeOvs(ovs: Ovs, s: NodeOvsSettings): Promise<void> {
  await ovs.ensureBridge(s.bridge, {
    protocols: ['OpenFlow13'],
    ...(s.datapathType ? { datapathType: s.datapathType } : {}),
    ...(s.failMode ? { failMode: s.failMode } : {}),
  });
  if (s.controllers.length > 0) await ovs.setController(s.bridge, s.controllers);
  await ovs.setLocalIp(s.tunnelIp);
  // Last: once ODL is the manager it starts programming the node, which should by then be ready.
  if (s.managers.length > 0) await ovs.setManager(s.managers);
}
