/**
 * The node side of a node gateway, for `trace svc/<ns>/<name>` run on a node: the OVS internal
 * port the agent keeps on the integration bridge (src/agent/node-gateway.ts), compared with what
 * the gateway's ODL side says it must be: its name (`veth` + 8 hex digits, which Genius binds),
 * `iface-id` = the gateway interface, `attached-mac` and `ip-address` = the gateway's MAC and
 * address, an ofport. A route on every gateway in ODL is no use when the node's port is gone.
 *
 * Which node: the gateway ports found on this OVS name their node (`odlcoe-node-gateway`). A
 * bridge without one is a finding only on a host named like a node of the cluster; elsewhere
 * (a workstation, OVS unreachable, `--no-ovs`) the port is not checked, and the report says so.
 */
import { hostname } from 'node:os';
import { errorMessage } from '../../common/log.js';
import { podMac } from '../../netvirt/names.js';
import { EXTERNAL_ID } from '../../ovs/external-ids.js';
import { gatewayPortNameOf, NODE_GATEWAY_ID } from '../../ovs/node-gateway.js';
import type { OvsPort } from '../../ovs/ovs.js';
import type { GatewayCheck } from '../gateways.js';
import { traceOvs, type OvsCheckOptions } from './ovs.js';

export interface GatewayPortCheck {
  node: string;
  port: string;
  ofport: number;
  /** What differs from the gateway's ODL side; empty when the port is right. */
  problems: string[];
}

export interface LocalGatewayPorts {
  /** False: OVS was not looked at (`note` says why). */
  checked: boolean;
  note: string | null;
  ports: GatewayPortCheck[];
  /** Findings for the report's `missing` list. */
  findings: string[];
}

export async function checkLocalGatewayPorts(
  gateways: readonly GatewayCheck[],
  ovsOpts: OvsCheckOptions,
  timeoutMs: number,
): Promise<LocalGatewayPorts> {
  const notChecked = (note: string): LocalGatewayPorts => ({ checked: false, note, ports: [], findings: [] });
  if (ovsOpts.skip) return notChecked('skipped (--no-ovs)');
  const where = ovsOpts.dbSocket ?? 'the system OVSDB';
  const ovs = traceOvs(ovsOpts, timeoutMs);
  let ports: OvsPort[];
  try {
    await ovs.ping();
    ports = await ovs.listPorts(ovsOpts.bridge);
  } catch (err) {
    return notChecked(
      `the gateway port was not checked: ${where} or its bridge ${ovsOpts.bridge} cannot be read here (${errorMessage(err).split('\n')[0] ?? ''}); run trace on a node`,
    );
  } finally {
    ovs.close();
  }
  const byNode = new Map(gateways.map((g) => [g.node, g]));
  const found = ports.filter((p) => p.externalIds[NODE_GATEWAY_ID] !== undefined);
  const checks = found.map((p) => checkPort(p, byNode.get(p.externalIds[NODE_GATEWAY_ID] ?? '')));
  const findings = checks.flatMap((c) => c.problems.map((problem) => `node ${c.node}: ${problem}`));
  const here = hostname();
  if (found.length === 0 && byNode.has(here))
    findings.push(
      `node ${here}: no gateway port on ${ovsOpts.bridge} (the agent runs without services.cidrs, or has not made it yet: its /readyz check node-gateway says why)`,
    );
  return {
    checked: true,
    note: found.length === 0 && !byNode.has(here) ? `no gateway port on ${ovsOpts.bridge} here` : null,
    ports: checks,
    findings,
  };
}

function checkPort(port: OvsPort, gateway: GatewayCheck | undefined): GatewayPortCheck {
  const node = port.externalIds[NODE_GATEWAY_ID] ?? '';
  const problems: string[] = [];
  const ids = port.externalIds;
  if (!gateway)
    problems.push(`gateway port ${port.name} names node ${node}, which the cluster does not have`);
  else {
    const expectName = gatewayPortNameOf(gateway.gateway);
    if (port.name !== expectName) problems.push(`gateway port is ${port.name}, not ${expectName}`);
    if (port.type !== 'internal')
      problems.push(`gateway port ${port.name} is of type ${port.type || 'system'}, not internal`);
    if (port.ofport <= 0)
      problems.push(
        `gateway port ${port.name} has no OpenFlow port (ofport ${port.ofport}): ovs-vswitchd did not attach it`,
      );
    const expect: Record<string, string | undefined> = {
      [EXTERNAL_ID.ifaceId]: gateway.gateway,
      [EXTERNAL_ID.attachedMac]: gateway.address === null ? undefined : podMac(gateway.address),
      [EXTERNAL_ID.ipAddress]: gateway.address ?? undefined,
    };
    for (const [key, want] of Object.entries(expect))
      if (want !== undefined && ids[key] !== want)
        problems.push(
          `gateway port ${port.name} has external_ids:${key}=${ids[key] ?? '(none)'}, not ${want}`,
        );
  }
  return { node, port: port.name, ofport: port.ofport, problems };
}
