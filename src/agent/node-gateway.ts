/**
 * The node gateway, host side: with Services on (`services.cidrs`), the node's own way into the
 * pod network, so that kubelet probes reach pods and kube-proxy's Service traffic reaches
 * NetVirt (docs/agent.md, "The node gateway"; the ODL side is the watcher's, src/netvirt/gateway.ts).
 *
 * One OVS internal port on the integration bridge (src/ovs/node-gateway.ts: name, iface-id,
 * attached-mac), with the MAC and MTU in its Interface row so that ovs-vswitchd gives them to
 * the device whenever it (re)creates it; in the agent's network namespace (the node's, under
 * `hostNetwork`) the device is up, carries the node subnet's second address alone (`/32`,
 * `/128`), has the subnet's first address, the pods' gateway that NetVirt answers ARP for,
 * on-link, and routes the node subnet, the cluster ranges and the Service ranges via it. The
 * node's pods are routed, not on-link: the gateway port is in an ELAN of its own, and NetVirt
 * answers no ARP for a pod's address, so an on-link pod would never be reached (kubelet's
 * probes included); the pods hold their address alone for the same reason (pod-attach.ts). On a datapath that needs it the device's TX checksum offload is
 * turned off, as pod interfaces' is (src/ovs/datapath.ts).
 *
 * `sync()` makes all of that true and changes only what is missing, so it runs at start-up and
 * again with every OVS repair (a port deleted by hand, an OVS restart that re-created the
 * device without address or routes, a fresh OVS database). With Services off it removes a
 * gateway port of this node that an earlier configuration left. It never throws for what is
 * wrong on the node: `problem` says it, for the `node-gateway` readiness check.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandError, run } from '../common/exec.js';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { ModelValidationError } from '../netvirt/errors.js';
import { gatewayAddress, gatewayName } from '../netvirt/gateway.js';
import { canonicalIp, gatewayIp, parseCidr, podMac } from '../netvirt/names.js';
import {
  gatewayPortExternalIds,
  gatewayPortNameOf,
  NODE_GATEWAY_ID,
  SERVICE_GATEWAY_ID,
} from '../ovs/node-gateway.js';
import type { Ovs, OvsPort } from '../ovs/ovs.js';
import { podNetworkPrefixes } from './pod-subnet.js';
import { turnTxChecksumOffloadOff, txChecksumOffload } from '../ovs/pod-interface.js';
import { gatewayIfaceId, marksServiceGateway, type IfaceNaming } from './iface-id.js';
import type { AgentMetrics } from './metrics.js';

/** The OVS port of a node's gateway (src/ovs/node-gateway.ts has the rule). */
export const gatewayPortName = (nodeName: string): string => gatewayPortNameOf(gatewayName(nodeName));

/** What the gateway port of a node with this pod subnet is. */
export interface GatewayPort {
  nodeName: string;
  /** The OVS port and host device. */
  name: string;
  /** The subnet's second address (the watcher's gatewayAddress). */
  address: string;
  prefixLength: number;
  family: 4 | 6;
  /** The subnet's first address: the pods' default gateway, which NetVirt answers ARP for. */
  podGateway: string;
  /** Derived from the address as the watcher derives it (podMac). */
  mac: string;
  externalIds: Record<string, string>;
}

/**
 * Throws ModelValidationError when the subnet is too small to reserve a gateway address.
 * `naming`: the iface-id the watcher's backend makes ODL bind the port by (iface-id.ts).
 */
export function gatewayPort(
  nodeName: string,
  podCidr: string,
  naming: IfaceNaming = { backend: 'netvirt' },
): GatewayPort {
  const address = gatewayAddress(podCidr);
  const { family, prefixLength } = parseCidr(podCidr);
  const mac = podMac(address);
  return {
    nodeName,
    name: gatewayPortName(nodeName),
    address,
    prefixLength,
    family,
    podGateway: gatewayIp(podCidr),
    mac,
    externalIds: gatewayPortExternalIds({
      nodeName,
      ifaceId: gatewayIfaceId(naming, nodeName),
      mac,
      address,
      serviceGateway: marksServiceGateway(naming),
    }),
  };
}

/** What the host side of the gateway must be. */
export interface GatewayHostSpec {
  port: GatewayPort;
  mtu: number;
  /** Prefixes routed via the pods' gateway through the port. */
  routes: string[];
}

/** What the host side is, as `ip` reports it (no `link`: the device does not exist). */
export interface GatewayHostState {
  link?: { up: boolean; mtu: number; mac: string; addresses: string[] };
  /** `dst` → next hop of the routes through the device (`dst` as `network/prefix`). */
  routes: Map<string, string | undefined>;
}

/** A change `sync` makes, with the `what` label of the repairs counter. */
export interface GatewayRepair {
  what: 'link' | 'address' | 'route';
  /** One `ip -batch` line, as arguments. */
  command: string[];
  /** What was missing, for the log and the readiness message. */
  missing: string;
}

/** The prefixes the node routes through its gateway: the pod network (pod-subnet.ts). */
export const gatewayRoutes = podNetworkPrefixes;

/**
 * The gateway port's address: IPv4 alone (`/32`, its pods routed via the pods' gateway); IPv6
 * with the subnet's prefix, on-link, as the pods' (pod-attach.ts podAddressing: NetVirt has no
 * neighbour answer for the gateway).
 */
export const gatewayHostAddress = (port: GatewayPort): string =>
  `${port.address}/${port.family === 4 ? 32 : port.prefixLength}`;

/** What is missing of the host side, as `ip -batch` lines, in the order they must run. */
export function gatewayHostRepairs(spec: GatewayHostSpec, state: GatewayHostState): GatewayRepair[] {
  const { port } = spec;
  const dev = port.name;
  const out: GatewayRepair[] = [];
  const link = state.link;
  if (!link) return out;
  if (link.mac !== port.mac)
    out.push({
      what: 'link',
      command: ['link', 'set', 'dev', dev, 'address', port.mac],
      missing: `MAC ${port.mac} (has ${link.mac})`,
    });
  if (link.mtu !== spec.mtu)
    out.push({
      what: 'link',
      command: ['link', 'set', 'dev', dev, 'mtu', String(spec.mtu)],
      missing: `MTU ${spec.mtu} (has ${link.mtu})`,
    });
  if (!link.up) out.push({ what: 'link', command: ['link', 'set', 'dev', dev, 'up'], missing: 'link up' });
  const address = gatewayHostAddress(port);
  if (!link.addresses.includes(address))
    out.push({
      what: 'address',
      command: ['address', 'replace', address, 'dev', dev],
      missing: `address ${address}`,
    });
  // The address with the subnet's prefix, as agents before the routed gateway gave it, would
  // keep the node's pods on-link: it goes (its prefix route with it).
  for (const held of link.addresses)
    if (held !== address && held.split('/')[0] === port.address)
      out.push({
        what: 'address',
        command: ['address', 'del', held, 'dev', dev],
        missing: `no address ${held} (the pods are routed, not on-link)`,
      });
  const nextHop = `${port.podGateway}/32`;
  if (port.family === 4 && (!state.routes.has(nextHop) || state.routes.get(nextHop) !== undefined))
    out.push({
      what: 'route',
      command: ['route', 'replace', nextHop, 'dev', dev],
      missing: `route ${nextHop} on-link`,
    });
  for (const dst of spec.routes) {
    if (state.routes.get(dst) === port.podGateway) continue;
    out.push({
      what: 'route',
      command: [
        ...(port.family === 6 ? ['-6'] : []),
        'route',
        'replace',
        dst,
        'via',
        port.podGateway,
        'dev',
        dev,
      ],
      missing: `route ${dst} via ${port.podGateway}`,
    });
  }
  return out;
}

interface IpAddrJson {
  ifname?: string;
  flags?: string[];
  mtu?: number;
  address?: string;
  addr_info?: { family?: string; local?: string; prefixlen?: number }[];
}

interface IpRouteJson {
  dst?: string;
  gateway?: string;
}

/** The device as `ip -j addr show` and `ip -j route show` report it. */
export function parseHostState(
  addrJson: string | undefined,
  routeJson: string | undefined,
  family: 4 | 6,
): GatewayHostState {
  const [dev] = addrJson ? (JSON.parse(addrJson) as IpAddrJson[]) : [];
  const routes = new Map<string, string | undefined>();
  for (const r of routeJson ? (JSON.parse(routeJson) as IpRouteJson[]) : []) {
    if (!r.dst || r.dst === 'default') continue;
    const dst = r.dst.includes('/') ? r.dst : `${r.dst}/${family === 4 ? 32 : 128}`;
    routes.set(dst, r.gateway === undefined ? undefined : canonicalIp(r.gateway));
  }
  if (!dev) return { routes };
  return {
    link: {
      up: (dev.flags ?? []).includes('UP'),
      mtu: dev.mtu ?? 0,
      mac: (dev.address ?? '').toLowerCase(),
      addresses: (dev.addr_info ?? [])
        .filter((a) => a.family === (family === 4 ? 'inet' : 'inet6') && a.local !== undefined)
        .map((a) => `${canonicalIp(a.local ?? '')}/${a.prefixlen ?? ''}`),
    },
    routes,
  };
}

export interface NodeGatewayOptions {
  ovs: Pick<Ovs, 'addPort' | 'delPort' | 'getPort' | 'listPorts'>;
  bridge: string;
  nodeName: string;
  mtu: number;
  serviceCidrs: readonly string[];
  clusterCidrs: readonly string[];
  /** The iface-id scheme of the watcher's backend (iface-id.ts); default netvirt. */
  naming?: IfaceNaming;
  /** Whether interfaces on the bridge must lose TX checksum offload (the datapath's need). */
  offload: { turnsOff(): boolean };
  /** host-local's lease directory (`<dataDir>/<network>`): a pod holding the gateway's address is reported. */
  leaseDir: string;
  metrics: AgentMetrics;
  logger: Logger;
}

const IP_TIMEOUT_MS = 10_000;

export class NodeGateway {
  /** Why the gateway is not complete (undefined: it is, or Services are off). */
  private problem: string | undefined = 'the node gateway is not set up yet';
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: NodeGatewayOptions) {}

  /** Services are on: the node has a gateway. */
  get enabled(): boolean {
    return this.options.serviceCidrs.length > 0;
  }

  /** The `node-gateway` readiness check: true, or throws with what is missing. */
  ready(): boolean {
    if (!this.enabled) return true;
    if (this.problem) throw new Error(this.problem);
    return true;
  }

  /**
   * Makes the gateway right for the node subnet (undefined: not confirmed yet), or removes it
   * with Services off. Runs one at a time; never throws (see `ready`).
   */
  sync(subnet: string | undefined): Promise<void> {
    const next = this.running.then(() => this.syncOnce(subnet));
    this.running = next;
    return next;
  }

  private async syncOnce(subnet: string | undefined): Promise<void> {
    const { metrics, logger } = this.options;
    try {
      if (!this.enabled) {
        await this.removeLeftover();
        return;
      }
      this.problem = await this.apply(subnet);
    } catch (err) {
      this.problem = `the node gateway could not be checked: ${errorMessage(err)}`;
    }
    if (this.problem) logger.warn('node gateway incomplete', { problem: this.problem });
    metrics.gatewayUp.set(this.problem ? 0 : 1);
  }

  /** Undefined when the gateway is complete, else what is wrong. */
  private async apply(subnet: string | undefined): Promise<string | undefined> {
    const { nodeName, logger, metrics } = this.options;
    if (subnet === undefined)
      return `the pod subnet of node ${nodeName} is not known yet, so neither is its gateway address`;
    let port: GatewayPort;
    try {
      port = gatewayPort(nodeName, subnet, this.options.naming);
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
      return `node subnet ${subnet} is too small to reserve the node gateway's address (its second address) and keep addresses for pods: IPv4 at most /29, IPv6 at most /125. This node has no gateway: kubelet probes (host → pod) and Services do not work here`;
    }
    const holder = await this.leaseHolder(port.address);
    if (holder)
      return `the node gateway's address ${port.address} is leased to container ${holder} (a pod wired before the node gateway was turned on); delete that pod so the gateway can take it`;
    const portProblem = await this.ensurePort(port);
    if (portProblem) return portProblem;

    const spec: GatewayHostSpec = {
      port,
      mtu: this.options.mtu,
      routes: gatewayRoutes(subnet, this.options.clusterCidrs, this.options.serviceCidrs),
    };
    const before = await readHostState(port.name, port.family);
    if (!before.link)
      return `OVS port ${port.name} exists but the device is not in the agent's network namespace (is ovs-vswitchd running in another one?)`;
    const repairs = gatewayHostRepairs(spec, before);
    if (repairs.length > 0) {
      logger.info('node gateway: setting up the host side', {
        port: port.name,
        missing: repairs.map((r) => r.missing),
      });
      await run('ip', ['-batch', '-'], {
        input: `${repairs.map((r) => r.command.join(' ')).join('\n')}\n`,
        timeoutMs: IP_TIMEOUT_MS,
      }).catch((err: unknown) => logger.warn('node gateway: ip failed', { error: errorMessage(err) }));
      for (const r of repairs) metrics.gatewayRepairs.inc({ what: r.what });
    }
    const offloadProblem = await this.ensureOffload(port.name);
    const left = gatewayHostRepairs(spec, await readHostState(port.name, port.family));
    if (left.length > 0)
      return `node gateway ${port.name} (${port.address}) is missing ${left.map((r) => r.missing).join(', ')}`;
    return offloadProblem;
  }

  /** The gateway port on the bridge as it must be; undefined, or why it cannot be. */
  private async ensurePort(port: GatewayPort): Promise<string | undefined> {
    const { ovs, bridge, logger, metrics, mtu } = this.options;
    const existing = await ovs.getPort(port.name);
    if (existing && existing.externalIds[NODE_GATEWAY_ID] !== this.options.nodeName)
      return `OVS port ${port.name}, the node gateway's name, is taken by another port (external_ids ${JSON.stringify(existing.externalIds)}); remove it`;
    const onBridge = existing
      ? (await ovs.listPorts(bridge, { withExternalIds: { [NODE_GATEWAY_ID]: this.options.nodeName } })).some(
          (p) => p.name === port.name,
        )
      : false;
    if (existing && onBridge && sameGateway(existing, port) && existing.ofport > 0) return undefined;
    if (existing) {
      // This node's gateway port, but not as it must be (another subnet, bridge, or type).
      logger.warn('node gateway: replacing its OVS port', {
        port: port.name,
        externalIds: existing.externalIds,
      });
      await ovs.delPort(bridge, port.name, { ifExternalIds: { [NODE_GATEWAY_ID]: this.options.nodeName } });
    }
    try {
      await ovs.addPort(bridge, port.name, port.externalIds, {}, { type: 'internal', mac: port.mac, mtu });
    } catch (err) {
      return `the node gateway's OVS port ${port.name} could not be added to ${bridge}: ${errorMessage(err)}`;
    }
    metrics.gatewayRepairs.inc({ what: 'port' });
    logger.info('node gateway: OVS port added', { port: port.name, bridge, address: port.address });
    return undefined;
  }

  /** TX checksum offload off when the datapath needs it; undefined, or why it is still on. */
  private async ensureOffload(dev: string): Promise<string | undefined> {
    if (!this.options.offload.turnsOff()) return undefined;
    try {
      if ((await txChecksumOffload(undefined, dev)) === 'off') return undefined;
      await turnTxChecksumOffloadOff(undefined, dev);
      this.options.metrics.gatewayRepairs.inc({ what: 'offload' });
      return undefined;
    } catch (err) {
      return `TX checksum offload of the node gateway ${dev} could not be turned off, which the userspace datapath needs: ${errorMessage(err)}`;
    }
  }

  /** The container whose host-local lease holds `address`, if any. */
  private async leaseHolder(address: string): Promise<string | undefined> {
    try {
      const text = await readFile(join(this.options.leaseDir, address), 'utf8');
      return text.split(/\r?\n/)[0]?.trim() || 'unknown';
    } catch {
      return undefined;
    }
  }

  /** Services off: this node's gateway port, if an earlier configuration made one, goes. */
  private async removeLeftover(): Promise<void> {
    const { ovs, bridge, nodeName, logger, metrics } = this.options;
    const ids = { [NODE_GATEWAY_ID]: nodeName };
    for (const port of await ovs.listPorts(bridge, { withExternalIds: ids })) {
      if ((await ovs.delPort(bridge, port.name, { ifExternalIds: ids })) === 'removed') {
        metrics.gatewayRepairs.inc({ what: 'removed' });
        logger.info('node gateway removed (services.cidrs is empty)', { port: port.name });
      }
    }
  }
}

function sameGateway(existing: OvsPort, port: GatewayPort): boolean {
  const a = existing.externalIds;
  const b = port.externalIds;
  // is-service-gateway also when absent from `port`: a port marked under coe-northbound must
  // lose the mark when the backend changes, or Sodium's renderer would keep routing through it.
  return (
    existing.type === 'internal' &&
    Object.keys(b).every((k) => a[k] === b[k]) &&
    a[SERVICE_GATEWAY_ID] === b[SERVICE_GATEWAY_ID]
  );
}

/** The device and its routes; no `link` when it does not exist. */
async function readHostState(dev: string, family: 4 | 6): Promise<GatewayHostState> {
  const f = family === 4 ? '-4' : '-6';
  let addr: string | undefined;
  try {
    addr = (await run('ip', ['-j', 'addr', 'show', 'dev', dev], { timeoutMs: IP_TIMEOUT_MS })).stdout;
  } catch (err) {
    if (err instanceof CommandError && /does not exist|Cannot find device/.test(err.stderr))
      return { routes: new Map() };
    throw err;
  }
  const routes = (await run('ip', ['-j', f, 'route', 'show', 'dev', dev], { timeoutMs: IP_TIMEOUT_MS }))
    .stdout;
  return parseHostState(addr, routes, family);
}
