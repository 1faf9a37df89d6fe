import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { parseConfig, readConfigFile } from '../common/config-file.js';

/**
 * The agent's settings. Precedence: defaults < config file (`--config`, YAML or JSON) <
 * environment < command-line flags. Every key is documented in docs/agent.md.
 */
const absolutePath = z.string().refine((p) => p.startsWith('/'), 'must be an absolute path');
const ovsTarget = z
  .string()
  .regex(/^(tcp|ssl|ptcp|pssl|unix|punix):\S+$/, 'must be an OVS target such as tcp:10.0.0.1:6640');

export const agentConfigSchema = z
  .object({
    /** The Kubernetes node this agent serves. */
    nodeName: z.string().min(1, 'is required (--node-name or NODE_NAME)'),
    /** Kubeconfig file; absent: in-cluster service account, else $KUBECONFIG / ~/.kube/config. */
    kubeconfig: absolutePath.optional(),
    /** Stop when this process is gone (the supervisor that started the agent); absent: never. */
    parentPid: z.number().int().min(1).optional(),
    odl: z
      .object({
        url: z.string().url('must be an http(s) URL such as http://odl:8181'),
        // The same default as the watcher's: RFC 8040 is served by every release odlcoe supports.
        dialect: z.enum(['bierman02', 'rfc8040']).default('rfc8040'),
        user: z.string().min(1).optional(),
        passwordFile: absolutePath.optional(),
        caFile: absolutePath.optional(),
        insecureSkipVerify: z.boolean().default(false),
        /** How often the node's subnet entry is read again once known (the config is re-checked too). */
        subnetRefreshSeconds: z.number().int().min(5).default(60),
      })
      .strict(),
    ovs: z
      .object({
        /** ovsdb-server unix socket; absent: the system one. */
        dbSocket: absolutePath.optional(),
        bridge: z.string().min(1).max(15).default('br-int'),
        /** `netdev` for a userspace datapath; absent: leave as is (new bridge: kernel datapath). */
        datapathType: z.enum(['system', 'netdev']).optional(),
        failMode: z.enum(['secure', 'standalone']).optional(),
        /** OVSDB managers, e.g. tcp:<odl>:6640 (NetVirt's southbound); empty: left as they are. */
        managers: z.array(ovsTarget).default([]),
        /** OpenFlow controllers of the bridge; empty: left to ODL (it sets them through OVSDB). */
        controllers: z.array(ovsTarget).default([]),
        /** other_config:local_ip; absent: the node's InternalIP. */
        tunnelIp: z
          .string()
          .refine((ip) => ipaddr.isValid(ip), 'must be an IP address')
          .optional(),
        timeoutSeconds: z.number().int().min(1).max(120).default(10),
      })
      .strict()
      .default({ bridge: 'br-int', managers: [], controllers: [], timeoutSeconds: 10 }),
    cni: z
      .object({
        confDir: absolutePath.default('/etc/cni/net.d'),
        confFile: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*\.conflist$/, 'must be a file name ending in .conflist')
          .default('10-odlcoe.conflist'),
        /** Where the shim is installed; absent: not installed by the agent. */
        binDir: absolutePath.optional(),
        networkName: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/)
          .default('odlcoe'),
        /** The conflist's cniVersion; 1.0.0 because containerd 1.6 refuses 1.1.0. */
        cniVersion: z.enum(['0.3.1', '0.4.0', '1.0.0', '1.1.0']).default('1.0.0'),
        socket: absolutePath.default('/run/odlcoe/cni.sock'),
        mtu: z.number().int().min(576).max(9216).default(1450),
        logFile: absolutePath.optional(),
        pendingDelDir: absolutePath.default('/var/lib/odlcoe/pending-del'),
        requestTimeoutSeconds: z.number().int().min(5).max(110).default(90),
      })
      .strict()
      .default({
        confDir: '/etc/cni/net.d',
        confFile: '10-odlcoe.conflist',
        networkName: 'odlcoe',
        cniVersion: '1.0.0',
        socket: '/run/odlcoe/cni.sock',
        mtu: 1450,
        pendingDelDir: '/var/lib/odlcoe/pending-del',
        requestTimeoutSeconds: 90,
      }),
    ipam: z
      .object({
        dataDir: absolutePath.default('/var/lib/cni/networks'),
        pluginPath: absolutePath.default('/usr/lib/cni/host-local'),
      })
      .strict()
      .default({ dataDir: '/var/lib/cni/networks', pluginPath: '/usr/lib/cni/host-local' }),
    metrics: z
      .object({
        host: z.string().min(1).default('0.0.0.0'),
        /** 0 picks a free port (tests). */
        port: z.number().int().min(0).max(65535).default(9102),
      })
      .strict()
      .default({ host: '0.0.0.0', port: 9102 }),
  })
  .strict();

export type AgentConfig = z.output<typeof agentConfigSchema>;

type Kind = 'string' | 'number' | 'list';

/** One setting reachable from a flag (commander's camelCase name) and maybe an env variable. */
interface Setting {
  flag: string;
  path: readonly string[];
  env?: string;
  kind?: Kind;
}

export const SETTINGS: readonly Setting[] = [
  { flag: 'nodeName', path: ['nodeName'], env: 'NODE_NAME' },
  { flag: 'kubeconfig', path: ['kubeconfig'], env: 'KUBECONFIG' },
  { flag: 'parentPid', path: ['parentPid'], kind: 'number' },
  { flag: 'odlUrl', path: ['odl', 'url'], env: 'ODLCOE_ODL_URL' },
  { flag: 'odlUser', path: ['odl', 'user'], env: 'ODLCOE_ODL_USER' },
  { flag: 'odlPasswordFile', path: ['odl', 'passwordFile'], env: 'ODLCOE_ODL_PASSWORD_FILE' },
  { flag: 'odlCaFile', path: ['odl', 'caFile'], env: 'ODLCOE_ODL_CA_FILE' },
  { flag: 'dialect', path: ['odl', 'dialect'], env: 'ODLCOE_DIALECT' },
  { flag: 'ovsDb', path: ['ovs', 'dbSocket'], env: 'ODLCOE_OVS_DB' },
  { flag: 'bridge', path: ['ovs', 'bridge'] },
  { flag: 'datapathType', path: ['ovs', 'datapathType'] },
  { flag: 'odlManager', path: ['ovs', 'managers'], kind: 'list' },
  { flag: 'odlController', path: ['ovs', 'controllers'], kind: 'list' },
  { flag: 'tunnelIp', path: ['ovs', 'tunnelIp'], env: 'ODLCOE_TUNNEL_IP' },
  { flag: 'cniConfDir', path: ['cni', 'confDir'] },
  { flag: 'cniBinDir', path: ['cni', 'binDir'] },
  { flag: 'cniVersion', path: ['cni', 'cniVersion'] },
  { flag: 'socket', path: ['cni', 'socket'] },
  { flag: 'mtu', path: ['cni', 'mtu'], kind: 'number' },
  { flag: 'cniLogFile', path: ['cni', 'logFile'] },
  { flag: 'ipamDataDir', path: ['ipam', 'dataDir'] },
  { flag: 'metricsPort', path: ['metrics', 'port'], env: 'ODLCOE_METRICS_PORT', kind: 'number' },
];

function convert(value: string | string[], kind: Kind | undefined): unknown {
  if (kind === 'list')
    return (Array.isArray(value) ? value : [value])
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter(Boolean);
  const text = Array.isArray(value) ? (value[value.length - 1] ?? '') : value;
  // A non-numeric string stays a string so that zod reports it precisely.
  if (kind === 'number') return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
  return text;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

/**
 * Merges the layers and validates the result; throws a ConfigError naming every bad key.
 * `flags` holds commander's parsed options (only the ones given on the command line).
 */
export function buildAgentConfig(layers: {
  file?: string;
  env?: NodeJS.ProcessEnv;
  flags?: Record<string, string | string[] | undefined>;
}): AgentConfig {
  const raw = layers.file ? readConfigFile(layers.file) : {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return parseConfig(agentConfigSchema, raw, layers.file ?? 'configuration');
  }
  const merged = structuredClone(raw) as Record<string, unknown>;
  const sources: string[] = layers.file ? [layers.file] : [];
  for (const s of SETTINGS) {
    const value = s.env ? layers.env?.[s.env] : undefined;
    if (value !== undefined && value !== '') {
      setPath(merged, s.path, convert(value, s.kind));
      if (!sources.includes('environment')) sources.push('environment');
    }
  }
  for (const s of SETTINGS) {
    const value = layers.flags?.[s.flag];
    if (value !== undefined) {
      setPath(merged, s.path, convert(value, s.kind));
      if (!sources.includes('flags')) sources.push('flags');
    }
  }
  return parseConfig(agentConfigSchema, merged, sources.join(' + ') || 'defaults');
}
