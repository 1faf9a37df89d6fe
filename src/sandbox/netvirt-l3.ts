/**
 * The part of NetVirt's pipeline a simulated node needs for its own pods, as OpenFlow rules on
 * its br-int: the sandbox has no ODL programming flows (the emulator holds config only), and
 * the pods and the node gateway hold their addresses alone (`/32`: src/agent/pod-attach.ts,
 * node-gateway.ts), so every packet goes to the subnet gateway, which NetVirt answers for.
 *
 * What NetVirt does, and so what these rules do, and no more:
 * - an ARP request for the subnet gateway is answered with the gateway's MAC (vpnmanager's
 *   ArpResponderHandler); no other ARP is answered (IPv6 has no NA responder in NetVirt: none
 *   here either);
 * - an IPv4 packet sent to the gateway MAC is routed to the pod or node gateway port that holds
 *   its destination on this node (source MAC the gateway's, destination the port's, TTL
 *   decremented), and dropped when none does (no route across nodes: the sandbox's nodes have
 *   no underlay);
 * - everything else (extra networks: one L2 domain each, on-link) is switched as before
 *   (NORMAL).
 *
 * The routes come from the ports as the agent left them on OVS (`attached-mac`, `ip-address`),
 * the gateway from the agent's conflist: a pod the agent wired wrongly is not reached. It is a
 * stand-in for the sandbox and the tests, never run against a node that ODL manages.
 */
import { isIPv4 } from 'node:net';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { podMac } from '../netvirt/names.js';
import { EXTERNAL_ID, isExtraInterfacePort, isPodPort } from '../ovs/external-ids.js';
import { NODE_GATEWAY_ID } from '../ovs/node-gateway.js';
import { Ovs, type OvsPort } from '../ovs/ovs.js';

/** The cookie of every rule this module writes. */
const COOKIE = '0x0dc0e13';

/** A port traffic is routed to: its OpenFlow number, MAC and IPv4 addresses. */
export interface RoutedPort {
  ofport: number;
  mac: string;
  ips: string[];
}

/** The ports routed to: pods' primary interfaces and the node gateway, attached and addressed. */
export function routedPorts(ports: readonly OvsPort[]): RoutedPort[] {
  const out: RoutedPort[] = [];
  for (const port of ports) {
    const primary = isPodPort(port) && !isExtraInterfacePort(port);
    if (!primary && port.externalIds[NODE_GATEWAY_ID] === undefined) continue;
    const mac = port.externalIds[EXTERNAL_ID.attachedMac];
    const ips = (port.externalIds[EXTERNAL_ID.ipAddress] ?? '').split(',').filter((ip) => isIPv4(ip));
    if (port.ofport <= 0 || !mac || ips.length === 0) continue;
    out.push({ ofport: port.ofport, mac, ips });
  }
  return out.sort((a, b) => a.ofport - b.ofport);
}

const hex = (bytes: number[]) => `0x${bytes.map((b) => b.toString(16).padStart(2, '0')).join('')}`;
const macBytes = (mac: string) => mac.split(':').map((b) => parseInt(b, 16));
const ipBytes = (ip: string) => ip.split('.').map(Number);

/** The rules, in `ovs-ofctl` flow syntax, one per line, for these gateways and ports. */
export function netvirtL3Flows(gateways: readonly string[], ports: readonly RoutedPort[]): string[] {
  const flows = [`cookie=${COOKIE},priority=0,actions=NORMAL`];
  for (const gw of [...new Set(gateways)].filter((ip) => isIPv4(ip)).sort()) {
    const mac = podMac(gw);
    flows.push(
      `cookie=${COOKIE},priority=200,arp,arp_op=1,arp_tpa=${gw},actions=` +
        [
          'move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[]',
          `mod_dl_src:${mac}`,
          'load:0x2->NXM_OF_ARP_OP[]',
          'move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[]',
          'move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[]',
          `load:${hex(macBytes(mac))}->NXM_NX_ARP_SHA[]`,
          `load:${hex(ipBytes(gw))}->NXM_OF_ARP_SPA[]`,
          'in_port',
        ].join(','),
      `cookie=${COOKIE},priority=100,ip,dl_dst=${mac},actions=drop`,
    );
    for (const port of ports)
      for (const ip of port.ips)
        flows.push(
          `cookie=${COOKIE},priority=150,ip,dl_dst=${mac},nw_dst=${ip},actions=` +
            `mod_dl_src:${mac},mod_dl_dst:${port.mac},dec_ttl,output:${port.ofport}`,
        );
  }
  return flows;
}

/** The subnet gateways of the agent's conflist (`ipam.ranges[][].gateway`); [] while it is absent. */
export async function conflistGateways(conflistPath: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(conflistPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const conf = JSON.parse(text) as { plugins?: { ipam?: { ranges?: { gateway?: string }[][] } }[] };
  return (conf.plugins ?? []).flatMap((p) =>
    (p.ipam?.ranges ?? []).flat().flatMap((r) => (r.gateway ? [r.gateway] : [])),
  );
}

export interface NetvirtL3Options {
  bridge: string;
  listPorts(bridge: string): Promise<OvsPort[]>;
  /** `ovs-ofctl` against the node's OVS; stdin for `-` file arguments. */
  ofctl(args: readonly string[], input?: string): Promise<string>;
  gateways(): Promise<string[]>;
  logger: Logger;
  /** How often the rules are brought up to date (default 500 ms). */
  intervalMs?: number;
}

/**
 * Keeps a bridge's rules equal to `netvirtL3Flows` of its current ports: `replace-flows`
 * changes only what differs, so it also restores the rules ovs-vswitchd lost in a restart.
 */
export class NetvirtL3 {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  private lastError = '';

  constructor(private readonly options: NetvirtL3Options) {}

  /** Brings the rules up to date once. */
  async sync(): Promise<void> {
    const { bridge, listPorts, ofctl, gateways } = this.options;
    const flows = netvirtL3Flows(await gateways(), routedPorts(await listPorts(bridge)));
    await ofctl(['-O', 'OpenFlow13', 'replace-flows', bridge, '-'], `${flows.join('\n')}\n`);
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.sync().then(
        () => {
          this.lastError = '';
        },
        (err: unknown) => {
          // ovs-vswitchd restarting, a port half-made: the next tick tries again.
          const message = errorMessage(err);
          if (message !== this.lastError) this.options.logger.warn('netvirt L3 stand-in', { error: message });
          this.lastError = message;
        },
      );
      this.timer = setTimeout(() => void this.running.then(tick), this.options.intervalMs ?? 500);
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

/**
 * Keeps `bridge`'s rules for the gateways of the agent's conflist at `conflistPath`, on the OVS
 * whose database is at `dbSocket` (a simulated node's, a test's); returns the stop.
 */
export function startNetvirtL3(
  ovs: { dbSocket: string; ofctl(args: string[], input?: string): Promise<string> },
  bridge: string,
  conflistPath: string,
  logger: Logger,
): () => Promise<void> {
  const ports = new Ovs({ dbSocket: ovs.dbSocket, timeoutSeconds: 10 });
  const l3 = new NetvirtL3({
    bridge,
    listPorts: (b) => ports.listPorts(b),
    ofctl: (args, input) => ovs.ofctl([...args], input),
    gateways: () => conflistGateways(conflistPath),
    logger,
  });
  l3.start();
  return async () => {
    await l3.stop();
    ports.close();
  };
}
