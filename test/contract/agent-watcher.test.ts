/**
 * Contract between the node agent and the watcher's translation, which never talk to each
 * other: each derives the same facts about a pod independently, and ODL only works when they
 * agree (architecture.md "The mapping").
 *
 * - The pod MAC: the agent gives the pod interface `podAddressing(lease, subnet).mac` and
 *   records it as the OVS port's `attached-mac`; the watcher writes `podMac(ip)` into the
 *   elan-interface static MAC entry and the primary adjacency. Different MACs = ODL drops the
 *   pod's traffic. (Both use the one rule, netvirt podMac; this holds the agent to it.)
 * - The gateway: the agent configures host-local (and the pod's default route) with
 *   `parsePodSubnet(cidr).gateway`; the watcher writes `gatewayIp(cidr)` as the adjacency's
 *   `subnet_gateway_ip`, the address ODL answers ARP for. (Again one rule, netvirt gatewayIp.)
 * - The subnet: the agent hands out addresses from `parsePodSubnet(cidr).cidr`; the watcher
 *   only builds a vpn-interface for an address inside the node subnet (`cidrContains`).
 * - The interface name: the agent's OVS `iface-id` is `<namespace>:<pod>`; Genius binds the port
 *   to the ietf-interface of exactly that name (`interfaceName`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { podAddressing } from '../../src/agent/pod-attach.js';
import { parsePodSubnet } from '../../src/agent/pod-subnet.js';
import { cidrContains, gatewayIp, interfaceName, parseCidr, podMac } from '../../src/netvirt/index.js';

const ADDRESSES = [
  '10.11.1.5',
  '10.11.1.255',
  '192.168.0.1',
  '0.0.0.1',
  'fd00:10:11:1::5',
  'FD00:10:11:1:0:0:0:A',
  '2001:db8::ffff:ffff',
  '::ffff:10.11.1.5',
];

// Pod subnets as they reach the agent from ODL's free-text pod-cidr leaf.
const SUBNETS = [
  '10.11.1.0/24',
  '10.11.0.0/16',
  '10.11.1.0/30',
  '100.64.0.0/10',
  'fd00:10:11:1::/64',
  'FD00:10:11:1::/64',
  'fd00:10:11:1:0:0:0:0/64',
  'fd00:10:11:100::/56',
  '2001:db8::/126',
];

/** The MAC the agent's ADD gives the pod interface when host-local leased it `ip`. */
function agentPodMac(ip: string): string {
  const subnet = parsePodSubnet(ip.includes(':') ? 'fd00::/64' : '10.0.0.0/8');
  return podAddressing({ ips: [{ address: ip }], routes: [] }, subnet).mac;
}

describe('agent ↔ watcher: facts both derive independently', () => {
  for (const ip of ADDRESSES) {
    it(`pod MAC of ${ip}`, () => {
      assert.equal(agentPodMac(ip), podMac(ip));
    });
  }

  for (const cidr of SUBNETS) {
    it(`gateway and range of pod subnet ${cidr}`, () => {
      const agent = parsePodSubnet(cidr);
      assert.equal(
        agent.gateway,
        gatewayIp(cidr),
        'the pod default gateway is the address ODL answers ARP for',
      );
      const watcher = parseCidr(cidr);
      assert.equal(agent.cidr, `${watcher.network}/${watcher.prefixLength}`, 'same normalised subnet');
      assert.ok(cidrContains(cidr, agent.gateway), 'the gateway is inside the subnet');
    });
  }

  it('both refuse subnets too small for a gateway and a pod', () => {
    for (const cidr of ['10.11.1.0/31', '10.11.1.1/32', 'fd00::/127', 'fd00::1/128']) {
      assert.throws(() => parsePodSubnet(cidr), `agent refuses ${cidr}`);
      assert.throws(() => gatewayIp(cidr), `watcher refuses ${cidr}`);
    }
  });

  it('iface-id of the OVS port equals the ietf-interface name', () => {
    // src/agent/pod-attach.ts writes `${podNamespace}:${podName}` as external_ids:iface-id.
    for (const [ns, pod] of [
      ['default', 'nginx-7c5ddbdf54-x8m2q'],
      ['team-payments-processing-production-eu-west-1', 'api-0'],
      ['kube-system', 'coredns-5d78c9869d-abcde'],
    ] as const) {
      assert.equal(`${ns}:${pod}`, interfaceName(ns, pod));
    }
  });
});
