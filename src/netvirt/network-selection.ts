/**
 * A pod's network selection (`k8s.v1.cni.cncf.io/networks`, the Network Plumbing Working
 * Group's annotation that Multus reads), parsed as Multus parses it: either the short form, a
 * comma-separated list of `[<namespace>/]<name>[@<interface>]`, or a JSON list of selection
 * elements (`name`, `namespace`, `interface`, `ips`, `mac`, `default-route`). A network without a
 * namespace is in the pod's; an element without an interface gets Multus' default name,
 * `net<i+1>` for the element at index `i` (counting every element, whichever plugin it names).
 */
import { isIP } from 'node:net';
import { ModelValidationError } from './errors.js';

export const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';

export interface NetworkSelection {
  /** The NetworkAttachmentDefinition's namespace and name. */
  namespace: string;
  name: string;
  /** The interface name inside the pod (`CNI_IFNAME`). */
  interface: string;
  /** Static addresses, as given (`10.50.0.7/24` or `10.50.0.7`). */
  ips?: string[];
  /** A static MAC, as given. */
  mac?: string;
  /** Gateways of the default routes this interface carries. */
  defaultRoute?: string[];
}

/** Linux interface names (IFNAMSIZ - 1), as the attachments contract allows them. */
const IFNAME = /^[A-Za-z0-9_.-]{1,15}$/;
/** NAD names are DNS-1123 subdomains, namespaces DNS-1123 labels. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The selection of a pod. Throws ModelValidationError naming the offending element. */
export function parseNetworkSelection(value: string, podNamespace: string): NetworkSelection[] {
  const trimmed = value.trim();
  if (trimmed === '') return [];
  const elements = trimmed.startsWith('[') ? parseJsonForm(trimmed) : parseShortForm(trimmed);
  const out = elements.map((e, i) => resolve(e, i, podNamespace));
  const seen = new Set<string>();
  for (const s of out) {
    if (seen.has(s.interface))
      throw new ModelValidationError(NETWORKS_ANNOTATION, `interface ${s.interface} is asked for twice`);
    seen.add(s.interface);
  }
  return out;
}

interface RawElement {
  name: string;
  namespace?: string;
  interface?: string;
  ips?: string[];
  mac?: string;
  defaultRoute?: string[];
}

function parseShortForm(value: string): RawElement[] {
  return value.split(',').map((part, i) => {
    const where = `${NETWORKS_ANNOTATION}[${i}]`;
    const item = part.trim();
    const at = item.lastIndexOf('@');
    const ref = at >= 0 ? item.slice(0, at) : item;
    const ifname = at >= 0 ? item.slice(at + 1) : undefined;
    const parts = ref.split('/');
    if (parts.length > 2 || parts.some((p) => p === ''))
      throw new ModelValidationError(
        where,
        `${JSON.stringify(item)} is not [<namespace>/]<name>[@<interface>]`,
      );
    const e: RawElement =
      parts.length === 2 ? { namespace: parts[0] ?? '', name: parts[1] ?? '' } : { name: parts[0] ?? '' };
    if (ifname !== undefined) e.interface = ifname;
    return e;
  });
}

function parseJsonForm(value: string): RawElement[] {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch (err) {
    throw new ModelValidationError(NETWORKS_ANNOTATION, `not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(raw)) throw new ModelValidationError(NETWORKS_ANNOTATION, 'not a JSON list');
  return raw.map((r, i) => {
    const where = `${NETWORKS_ANNOTATION}[${i}]`;
    if (typeof r !== 'object' || r === null || Array.isArray(r))
      throw new ModelValidationError(where, 'not a JSON object');
    const o = r as Record<string, unknown>;
    const e: RawElement = { name: str(o.name, `${where}/name`) };
    if (o.namespace !== undefined) e.namespace = str(o.namespace, `${where}/namespace`);
    if (o.interface !== undefined) e.interface = str(o.interface, `${where}/interface`);
    if (o.ips !== undefined) e.ips = strings(o.ips, `${where}/ips`);
    if (o.mac !== undefined) e.mac = str(o.mac, `${where}/mac`);
    if (o['default-route'] !== undefined)
      e.defaultRoute = strings(o['default-route'], `${where}/default-route`);
    return e;
  });
}

function resolve(e: RawElement, index: number, podNamespace: string): NetworkSelection {
  const where = `${NETWORKS_ANNOTATION}[${index}]`;
  const namespace = e.namespace ?? podNamespace;
  if (!LABEL.test(namespace))
    throw new ModelValidationError(
      `${where}/namespace`,
      `${JSON.stringify(namespace)} is not a namespace name`,
    );
  if (!SUBDOMAIN.test(e.name) || e.name.length > 253)
    throw new ModelValidationError(
      `${where}/name`,
      `${JSON.stringify(e.name)} is not a NetworkAttachmentDefinition name`,
    );
  const ifname = e.interface ?? `net${index + 1}`;
  if (!IFNAME.test(ifname))
    throw new ModelValidationError(
      `${where}/interface`,
      `${JSON.stringify(ifname)} is not an interface name`,
    );
  for (const [j, gw] of (e.defaultRoute ?? []).entries())
    if (isIP(gw) === 0)
      throw new ModelValidationError(
        `${where}/default-route[${j}]`,
        `${JSON.stringify(gw)} is not an IP address`,
      );
  const out: NetworkSelection = { namespace, name: e.name, interface: ifname };
  if (e.ips !== undefined) out.ips = e.ips;
  if (e.mac !== undefined) out.mac = e.mac;
  if (e.defaultRoute !== undefined) out.defaultRoute = e.defaultRoute;
  return out;
}

function str(v: unknown, where: string): string {
  if (typeof v !== 'string') throw new ModelValidationError(where, 'not a string');
  return v;
}

function strings(v: unknown, where: string): string[] {
  if (!Array.isArray(v)) throw new ModelValidationError(where, 'not a list of strings');
  return v.map((x, i) => str(x, `${where}[${i}]`));
}
