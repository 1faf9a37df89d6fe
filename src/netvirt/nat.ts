/**
 * `odl-nat:floating-ip-info/router-ports`: floating IPs (1:1 NAT), IPv4 only. In NetVirt this
 * subtree is normally written by neutronvpn; odlcoe writes it only for routers it owns.
 */
import { assign, parseList, withPreserved, type EntryReader, type JsonObject } from './json.js';
import { netvirtPaths } from './paths.js';
import type { Profile } from './profile.js';
import { check, checkNonEmpty, checkUuid } from './validate.js';
import { putOp, type WriteOp } from './write.js';
import { isIPv4 } from 'node:net';

export interface FloatingIpMapping {
  /** Fixed IPv4 address, no prefix length. The list key. */
  internalIp: string;
  externalIp?: string;
  /** Floating IP UUID. */
  externalId?: string;
}

export interface RouterPort {
  portName: string;
  internalToExternalPortMap: FloatingIpMapping[];
}

export interface RouterPorts {
  routerId: string;
  externalNetworkId?: string;
  ports: RouterPort[];
  preserved?: JsonObject;
}

export function routerPortsEntry(rp: RouterPorts): JsonObject {
  const where = `router-ports[${rp.routerId}]`;
  checkNonEmpty(rp.routerId, `${where}/router-id`);
  const j: JsonObject = { 'router-id': rp.routerId };
  if (rp.externalNetworkId !== undefined) {
    checkUuid(rp.externalNetworkId, `${where}/external-network-id`);
    j['external-network-id'] = rp.externalNetworkId;
  }
  const ports = new Set<string>();
  if (rp.ports.length > 0) {
    j['ports'] = rp.ports.map((p, i) => {
      const at = `${where}/ports[${i}]`;
      checkNonEmpty(p.portName, `${at}/port-name`);
      check(!ports.has(p.portName), at, `duplicate list key ${p.portName}`);
      ports.add(p.portName);
      const pj: JsonObject = { 'port-name': p.portName };
      const ips = new Set<string>();
      if (p.internalToExternalPortMap.length > 0) {
        pj['internal-to-external-port-map'] = p.internalToExternalPortMap.map((m, k) => {
          const mat = `${at}/internal-to-external-port-map[${k}]`;
          // NetVirt's NAT service parses these as bare IPv4 addresses.
          check(
            isIPv4(m.internalIp),
            `${mat}/internal-ip`,
            `${JSON.stringify(m.internalIp)} is not an IPv4 address`,
          );
          check(!ips.has(m.internalIp), mat, `duplicate list key ${m.internalIp}`);
          ips.add(m.internalIp);
          const mj: JsonObject = { 'internal-ip': m.internalIp };
          if (m.externalIp !== undefined) {
            check(
              isIPv4(m.externalIp),
              `${mat}/external-ip`,
              `${JSON.stringify(m.externalIp)} is not an IPv4 address`,
            );
            mj['external-ip'] = m.externalIp;
          }
          if (m.externalId !== undefined) {
            checkUuid(m.externalId, `${mat}/external-id`);
            mj['external-id'] = m.externalId;
          }
          return mj;
        });
      }
      return pj;
    });
  }
  return withPreserved(j, rp.preserved);
}

export function putRouterPorts(profile: Profile, rp: RouterPorts): WriteOp {
  return putOp(netvirtPaths(profile).routerPorts(rp.routerId), routerPortsEntry(rp));
}

export function readRouterPorts(r: EntryReader): RouterPorts {
  const rp: RouterPorts = {
    routerId: r.requiredString('router-id'),
    ports: r.list('ports', (p) => ({
      portName: p.requiredString('port-name'),
      internalToExternalPortMap: p.list('internal-to-external-port-map', (m) => {
        const e: FloatingIpMapping = { internalIp: m.requiredString('internal-ip') };
        assign(e, 'externalIp', m.string('external-ip'));
        assign(e, 'externalId', m.string('external-id'));
        m.drop('label'); // config false
        return e;
      }),
    })),
  };
  assign(rp, 'externalNetworkId', r.string('external-network-id'));
  assign(rp, 'preserved', r.rest());
  return rp;
}

export function parseRouterPorts(body: unknown): RouterPorts[] {
  return parseList(body, 'floating-ip-info', 'router-ports', readRouterPorts);
}
