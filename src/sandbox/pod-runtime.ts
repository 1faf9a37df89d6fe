/**
 * What the kubelet stand-in (kubelet.ts) asks of a container runtime: set up a pod sandbox's
 * network and tear it down. Two runtimes:
 *
 * - `CniPodRuntime`: what containerd's CRI plugin does for real. A network namespace per pod,
 *   the odlcoe CNI plugin (the shim, exec'd) with the environment and CNI_ARGS containerd
 *   builds, the network config taken from the conflist the node's agent wrote, the ADD result
 *   kept and handed back as `prevResult` on DEL (libcni's cache).
 * - `AddressPodRuntime`: for nodes without an agent (the sandbox without root): no data path,
 *   only an address from the node's pod CIDR, so the pod's status looks as it would.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import ipaddr from 'ipaddr.js';
import { CommandError, run } from '../common/exec.js';
import { createNetns, removeNetns, type NamedNetns } from './netns.js';
import { programCommand } from './programs.js';

export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
  /**
   * Its extra interfaces, in the order of its `k8s.v1.cni.cncf.io/networks` selection: what
   * Multus would delegate after the pod's own network (the kubelet stand-in resolves them).
   */
  attachments?: ExtraAttachment[];
}

/** One extra interface as Multus delegates it: the NAD's config, the interface, the request. */
export interface ExtraAttachment {
  /** `CNI_IFNAME` (`net1`, or the selection's `interface`). */
  ifName: string;
  /** The NetworkAttachmentDefinition's `spec.config`, parsed. */
  config: Record<string, unknown>;
  /** Static `ips` / `mac` of the selection (handed on only for the capabilities the config declares). */
  ips?: string[];
  mac?: string;
}

/** An extra interface that is up: what its DEL needs. */
export interface ExtraInterface {
  ifName: string;
  /** The stdin of its ADD (without prevResult). */
  config: Record<string, unknown>;
  result: Record<string, unknown>;
}

export interface PodSandbox {
  pod: PodRef;
  /** The sandbox (pause container) id: 64 hex digits, as containerd makes them. */
  containerId: string;
  /** The pod's network namespace, when it has a data path. */
  netns?: { name: string; path: string };
  /** Pod IPs, first the primary one. */
  ips: string[];
  /** The pod interface's MAC, when it has a data path. */
  mac?: string;
  /** The host end of the pod's veth (an OVS port), when it has a data path. */
  hostInterface?: string;
  /** The CNI ADD result (prevResult of the DEL). */
  cniResult?: Record<string, unknown>;
  /** Extra interfaces (Multus attachments), in ADD order. */
  extra?: ExtraInterface[];
}

export interface PodRuntime {
  /** Sets up the pod's network; throws (and leaves nothing behind) when it cannot. */
  add(pod: PodRef): Promise<PodSandbox>;
  /** Tears it down; succeeds when it is already gone. */
  remove(sandbox: PodSandbox): Promise<void>;
}

/** A CNI error answer (`{code, msg, details}` on the plugin's stdout). */
export class CniCallError extends Error {
  override name = 'CniCallError';
  constructor(
    readonly command: string,
    readonly code: number | undefined,
    message: string,
  ) {
    super(`CNI ${command} failed${code !== undefined ? ` (code ${code})` : ''}: ${message}`);
  }

  /** Code 11: the plugin asks to be called again later (agent not ready yet). */
  get tryAgainLater(): boolean {
    return this.code === 11;
  }
}

/** The interface name inside the pod, as kubelet asks for it. */
export const POD_IFNAME = 'eth0';
/** kubelet's CRI request timeout. */
const CNI_TIMEOUT_MS = 120_000;

export function newContainerId(): string {
  return randomBytes(32).toString('hex');
}

/** CNI_ARGS exactly as containerd's CRI plugin builds them for a pod sandbox. */
export function kubeletCniArgs(pod: PodRef, containerId: string): string {
  return podCniArgs(pod, containerId, '1');
}

/** CNI_ARGS as Multus builds them for a delegate (`IgnoreUnknown=true`, the pod's K8S_* args). */
export function multusCniArgs(pod: PodRef, containerId: string): string {
  return podCniArgs(pod, containerId, 'true');
}

function podCniArgs(pod: PodRef, containerId: string, ignoreUnknown: '1' | 'true'): string {
  return [
    `IgnoreUnknown=${ignoreUnknown}`,
    `K8S_POD_NAMESPACE=${pod.namespace}`,
    `K8S_POD_NAME=${pod.name}`,
    `K8S_POD_INFRA_CONTAINER_ID=${containerId}`,
    `K8S_POD_UID=${pod.uid}`,
  ].join(';');
}

/**
 * The config Multus hands a delegate: the NAD's config, `runtimeConfig` `ips`/`mac` only for the
 * capabilities it declares, and (the sandbox's stand-in for the node's defaults) the agent's
 * socket, DEL spool and log file where the config names none.
 */
export function delegateConfig(
  a: ExtraAttachment,
  defaults: Record<string, unknown>,
): Record<string, unknown> {
  const caps = (a.config.capabilities ?? {}) as Record<string, unknown>;
  const runtimeConfig: Record<string, unknown> = {};
  if (caps.ips === true && a.ips?.length) runtimeConfig.ips = a.ips;
  if (caps.mac === true && a.mac) runtimeConfig.mac = a.mac;
  return {
    ...defaults,
    ...a.config,
    ...(Object.keys(runtimeConfig).length > 0 ? { runtimeConfig } : {}),
  };
}

/**
 * One plugin's network config as libcni hands it to the plugin: the conflist's `cniVersion`
 * and `name` merged into the plugin entry (and `prevResult` for DEL/CHECK).
 */
export function pluginConfig(conflist: unknown, prevResult?: Record<string, unknown>): string {
  const doc = conflist as { cniVersion?: unknown; name?: unknown; plugins?: unknown };
  if (
    typeof doc !== 'object' ||
    doc === null ||
    typeof doc.cniVersion !== 'string' ||
    typeof doc.name !== 'string'
  )
    throw new Error('the conflist has no cniVersion or name');
  const plugins = Array.isArray(doc.plugins) ? doc.plugins : [];
  const plugin = plugins[0] as Record<string, unknown> | undefined;
  if (plugins.length !== 1 || typeof plugin !== 'object' || plugin === null || plugin.type !== 'odlcoe')
    throw new Error('the conflist must hold exactly one plugin, of type odlcoe');
  return JSON.stringify({
    cniVersion: doc.cniVersion,
    name: doc.name,
    ...plugin,
    ...(prevResult ? { prevResult } : {}),
  });
}

interface CniAddResult {
  interfaces?: { name?: string; mac?: string; sandbox?: string }[];
  ips?: { address?: string; interface?: number }[];
}

/** The pod's addresses, MAC and host interface from an ADD result. */
export function parseAddResult(result: unknown): { ips: string[]; mac?: string; hostInterface?: string } {
  const r = result as CniAddResult;
  const ips = (r.ips ?? [])
    .map((ip) => ip.address?.split('/')[0])
    .filter((a): a is string => typeof a === 'string' && ipaddr.isValid(a));
  if (ips.length === 0) throw new Error(`the CNI ADD result has no IP address: ${JSON.stringify(result)}`);
  const podIf = r.interfaces?.[r.ips?.[0]?.interface ?? -1];
  const hostIf = r.interfaces?.find((i) => i.sandbox === undefined || i.sandbox === '');
  return {
    ips,
    ...(podIf?.mac ? { mac: podIf.mac } : {}),
    ...(hostIf?.name ? { hostInterface: hostIf.name } : {}),
  };
}

export interface CniPodRuntimeOptions {
  /** The conflist the node's agent writes (read on every call, as a runtime does). */
  conflistPath: string;
  /** Label of the pod namespaces' names (the node name). */
  label: string;
}

export class CniPodRuntime implements PodRuntime {
  constructor(private readonly options: CniPodRuntimeOptions) {}

  async add(pod: PodRef): Promise<PodSandbox> {
    const containerId = newContainerId();
    const netns: NamedNetns = await createNetns(`${this.options.label}-pod`);
    const base = { pod, containerId, netns: { name: netns.name, path: netns.path } };
    const extra: ExtraInterface[] = [];
    let primary: Record<string, unknown> | undefined;
    try {
      primary = await this.call('ADD', base);
      // Multus: the pod's own network first, then each attachment in selection order.
      const conflist = await this.pluginDefaults();
      for (const a of pod.attachments ?? []) {
        const config = delegateConfig(a, conflist);
        extra.push({ ifName: a.ifName, config, result: await this.callExtra('ADD', base, a.ifName, config) });
      }
      return { ...base, ...parseAddResult(primary), cniResult: primary, extra };
    } catch (err) {
      // As a runtime does after a failed ADD: DEL (the plugin must clean up), then drop the netns.
      const failed = pod.attachments?.[extra.length];
      if (primary && failed)
        await this.callExtra(
          'DEL',
          base,
          failed.ifName,
          delegateConfig(failed, await this.pluginDefaults()),
        ).catch(() => undefined);
      for (const x of [...extra].reverse())
        await this.callExtra('DEL', base, x.ifName, { ...x.config, prevResult: x.result }).catch(
          () => undefined,
        );
      await this.call('DEL', base).catch(() => undefined);
      await netns.remove();
      throw err;
    }
  }

  async remove(sandbox: PodSandbox): Promise<void> {
    // Multus: attachments in reverse order, then the pod's own network.
    for (const x of [...(sandbox.extra ?? [])].reverse())
      await this.callExtra('DEL', sandbox, x.ifName, { ...x.config, prevResult: x.result });
    await this.call('DEL', sandbox);
    if (sandbox.netns) await removeNetns(sandbox.netns.name);
  }

  /**
   * What the node's installation gives a NAD config that names none: the agent's socket, DEL
   * spool and log file. A real node has them at the agent's defaults; the sandbox's simulated
   * nodes each have their own, named in the conflist their agent wrote.
   */
  private async pluginDefaults(): Promise<Record<string, unknown>> {
    const conflist = JSON.parse(await readFile(this.options.conflistPath, 'utf8')) as {
      cniVersion?: string;
      plugins?: Record<string, unknown>[];
    };
    const plugin = conflist.plugins?.[0] ?? {};
    const out: Record<string, unknown> = { cniVersion: conflist.cniVersion };
    for (const key of ['socket', 'pendingDelDir', 'logFile'])
      if (plugin[key] !== undefined) out[key] = plugin[key];
    return out;
  }

  /** One extra interface's CNI call, as Multus makes it. */
  private callExtra(
    command: 'ADD' | 'DEL',
    sandbox: Pick<PodSandbox, 'pod' | 'containerId' | 'netns'>,
    ifName: string,
    config: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    return this.exec(
      command,
      {
        CNI_CONTAINERID: sandbox.containerId,
        CNI_NETNS: sandbox.netns?.path ?? '',
        CNI_IFNAME: ifName,
        CNI_ARGS: multusCniArgs(sandbox.pod, sandbox.containerId),
      },
      JSON.stringify(config),
    );
  }

  /** Execs the plugin as a runtime does: CNI_* in a clean environment, the config on stdin. */
  private async call(
    command: 'ADD' | 'DEL',
    sandbox: Pick<PodSandbox, 'pod' | 'containerId' | 'netns' | 'cniResult'>,
  ): Promise<Record<string, unknown>> {
    const conflist = JSON.parse(await readFile(this.options.conflistPath, 'utf8')) as unknown;
    const stdin = pluginConfig(conflist, command === 'DEL' ? sandbox.cniResult : undefined);
    return this.exec(
      command,
      {
        CNI_CONTAINERID: sandbox.containerId,
        CNI_NETNS: sandbox.netns?.path ?? '',
        CNI_IFNAME: POD_IFNAME,
        CNI_ARGS: kubeletCniArgs(sandbox.pod, sandbox.containerId),
      },
      stdin,
    );
  }

  /** Execs the plugin: CNI_* in a clean environment, the config on stdin. */
  private async exec(
    command: 'ADD' | 'DEL',
    cni: { CNI_CONTAINERID: string; CNI_NETNS: string; CNI_IFNAME: string; CNI_ARGS: string },
    stdin: string,
  ): Promise<Record<string, unknown>> {
    const shim = programCommand('cni/odlcoe');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      CNI_COMMAND: command,
      ...cni,
      CNI_PATH: '/opt/cni/bin:/usr/lib/cni',
    };
    let stdout: string;
    try {
      stdout = (await run(shim.command, shim.args, { env, input: stdin, timeoutMs: CNI_TIMEOUT_MS })).stdout;
    } catch (err) {
      if (err instanceof CommandError) {
        const answer = parseJson(err.stdout) as { code?: number; msg?: string; details?: string } | undefined;
        if (answer?.msg !== undefined)
          throw new CniCallError(
            command,
            answer.code,
            `${answer.msg}${answer.details ? ` (${answer.details})` : ''}`,
          );
        throw new CniCallError(command, undefined, err.message);
      }
      throw err;
    }
    if (stdout.trim() === '') return {};
    const result = parseJson(stdout);
    if (typeof result !== 'object' || result === null)
      throw new CniCallError(command, undefined, `not a JSON result: ${stdout}`);
    return result as Record<string, unknown>;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Addresses from a node's pod CIDR without any data path: the subnet's first address is the
 * gateway (as the agent configures host-local), the network and broadcast addresses are
 * skipped, and an address is reused only after it was released.
 */
export class AddressPodRuntime implements PodRuntime {
  private readonly network: number;
  private readonly size: number;
  private readonly used = new Set<number>();
  private next = 2;

  constructor(readonly podCidr: string) {
    let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
    try {
      parsed = ipaddr.parseCIDR(podCidr);
    } catch {
      throw new Error(`pod CIDR ${JSON.stringify(podCidr)} is not a CIDR`);
    }
    const [address, prefix] = parsed;
    if (address.kind() !== 'ipv4' || prefix > 30)
      throw new Error(
        `pod CIDR ${podCidr}: the address-only runtime needs an IPv4 subnet of at least 4 addresses`,
      );
    const bytes = (address as ipaddr.IPv4).toByteArray();
    const value =
      ((bytes[0] ?? 0) << 24) | ((bytes[1] ?? 0) << 16) | ((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0);
    this.size = 2 ** (32 - prefix);
    this.network = (value >>> 0) - ((value >>> 0) % this.size);
  }

  async add(pod: PodRef): Promise<PodSandbox> {
    // Offsets 2 .. size-2: not the network (0), the gateway (1) or the broadcast address.
    for (let tried = 0; tried < this.size - 3; tried += 1) {
      const offset = this.next;
      this.next = this.next + 1 > this.size - 2 ? 2 : this.next + 1;
      if (this.used.has(offset)) continue;
      this.used.add(offset);
      const v = this.network + offset;
      const ip = [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
      return { pod, containerId: newContainerId(), ips: [ip] };
    }
    throw new Error(`pod CIDR ${this.podCidr} has no free address`);
  }

  async remove(sandbox: PodSandbox): Promise<void> {
    const ip = sandbox.ips[0];
    if (!ip || !ipaddr.IPv4.isValid(ip)) return;
    const b = ipaddr.IPv4.parse(ip).toByteArray();
    const v = (((b[0] ?? 0) << 24) | ((b[1] ?? 0) << 16) | ((b[2] ?? 0) << 8) | (b[3] ?? 0)) >>> 0;
    this.used.delete(v - this.network);
  }
}
