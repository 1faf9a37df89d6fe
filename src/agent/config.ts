import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import {
  list,
  number,
  oneOf,
  setting,
  SettingsScheme,
  text,
  type SettingsSources,
  type ValuesOf,
} from '../common/settings-scheme.js';
import { errorMessage } from '../common/log.js';
import { checkClusterName, parseCidr } from '../netvirt/names.js';
import { WATCHER_SETTINGS } from '../config/watcher-settings.js';
import type { IfaceNaming } from './iface-id.js';
import { ovsdbSocketPath } from '../ovs/ovs.js';
import { profileSetting } from '../netvirt/profile.js';
import { OPER_WAIT_MODES } from './odl-oper-wait.js';
import { odlConnectionSettings } from '../restconf/settings.js';

/**
 * The agent's settings: one declaration from which its flags, environment variables, file
 * keys, defaults, validation and docs table derive (src/common/settings-scheme.ts).
 * Precedence: defaults < config file (`--config`, YAML or JSON) < environment < command-line
 * flags. The table is in docs/configuration.md.
 */
const absolutePath = text(z.string().refine((p) => p.startsWith('/'), 'must be an absolute path'));
const ovsTarget = z
  .string()
  .regex(/^(tcp|ssl|ptcp|pssl|unix|punix):\S+$/, 'must be an OVS target such as tcp:10.0.0.1:6640');
const fileName = (pattern: RegExp, message?: string) => text(z.string().regex(pattern, message));
/** ovsdb-server's local socket, as a path or `unix:<path>`; the value is the path. */
const ovsdbSocket = text(
  z.string().transform((target, ctx) => {
    try {
      return ovsdbSocketPath(target);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: errorMessage(err) });
      return z.NEVER;
    }
  }),
);

/** A network address with its prefix (`10.96.0.0/12`, not `.5/12`). */
const networkCidr = z.string().superRefine((cidr, ctx) => {
  try {
    parseCidr(cidr);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: errorMessage(err) });
  }
});

export const AGENT_SETTINGS = {
  // The watcher's own declaration (flag, environment, values, default), documented for the agent.
  backend: {
    ...WATCHER_SETTINGS.backend,
    doc: "the watcher's `backend`; decides the `iface-id` of pod and gateway ports, the interface name ODL binds them by: `netvirt` `<namespace>:<pod>`, `coe-northbound` `<cluster UUID>:<pod>` as Sodium's COE renderer names it (needs `clusterName`; the gateway port also gets `is-service-gateway`)",
  },
  clusterName: setting(text(), {
    flag: '--cluster-name <name>',
    env: 'ODLCOE_CLUSTER_NAME',
    doc: "the watcher's `clusterName`; required with `backend: coe-northbound` (its UUID is the first half of every iface-id)",
  }),
  nodeName: setting(text(), {
    flag: '--node-name <name>',
    env: 'NODE_NAME',
    required: true,
    doc: 'this Kubernetes node',
  }),
  kubeconfig: setting(absolutePath, {
    flag: '--kubeconfig <file>',
    env: 'KUBECONFIG',
    defaultText: 'see right',
    doc: 'absolute path. Absent: `~/.kube/config` if it exists, else the in-cluster service account',
  }),
  parentPid: setting(number(z.number().int().min(1)), {
    flag: '--parent-pid <pid>',
    doc: 'stop cleanly once this process is gone (the supervisor that started the agent)',
  }),
  odl: {
    ...odlConnectionSettings(absolutePath, ', an absolute path'),
    profile: profileSetting(),
    subnetRefreshSeconds: setting(number(z.number().int().min(5)), {
      default: 60,
      doc: 'integer ≥ 5: re-read of the subnet, re-application of the OVS set-up and the conflist',
    }),
    operWait: setting(oneOf(OPER_WAIT_MODES), {
      flag: '--odl-oper-wait <mode>',
      default: 'off',
      doc: "whether a CNI ADD waits, after the OVS port is attached, until ODL reports the pod's interface operational (Genius `interfaces-state`, `oper-status up`): `off` (answer at once, no request to ODL), `wait` (at the timeout answer success and log a warning), `wait-and-fail` (at the timeout fail with code 105 and undo the ADD). [agent.md](agent.md#waiting-for-odl-to-see-the-port)",
    }),
    operWaitTimeoutSeconds: setting(number(z.number().int().min(1).max(100)), {
      default: 10,
      doc: '1..100: how long an ADD waits for `oper-status up` with `operWait` on; keep it below `cni.requestTimeoutSeconds` (that deadline ends the wait first, code 11)',
    }),
  },
  ovs: {
    dbSocket: setting(ovsdbSocket, {
      flag: '--ovs-db <socket>',
      env: 'ODLCOE_OVS_DB',
      defaultText: '`$OVS_RUNDIR/db.sock`, else `/var/run/openvswitch/db.sock`',
      doc: "ovsdb-server's unix socket: an absolute path or `unix:<absolute path>`; other OVSDB targets (`tcp:`, `ssl:`) are refused",
    }),
    bridge: setting(text(z.string().min(1).max(15)), {
      flag: '--bridge <name>',
      default: 'br-int',
      doc: 'the integration bridge, 1..15 characters',
    }),
    datapathType: setting(oneOf(['system', 'netdev'] as const), {
      flag: '--datapath-type <type>',
      defaultText: 'unchanged',
      doc: '`system` or `netdev` (userspace); a new bridge gets the kernel datapath',
    }),
    failMode: setting(oneOf(['secure', 'standalone'] as const), {
      defaultText: 'unchanged',
      doc: '`secure` or `standalone`',
    }),
    managers: setting(list(ovsTarget), {
      flag: '--odl-manager <target>',
      default: [],
      defaultText: '`[]` = leave as is',
      doc: 'OVSDB managers (NetVirt’s southbound, e.g. `tcp:<odl>:6640`): OVS targets (`tcp:`, `ssl:`, `ptcp:`, `pssl:`, `unix:`, `punix:`); **replaces** all managers',
    }),
    controllers: setting(list(ovsTarget), {
      flag: '--odl-controller <target>',
      default: [],
      defaultText: '`[]` = leave to ODL',
      doc: 'OpenFlow controllers of the bridge; replaces them (ODL normally sets them itself)',
    }),
    tunnelIp: setting(text(z.string().refine((ip) => ipaddr.isValid(ip), 'must be an IP address')), {
      flag: '--tunnel-ip <ip>',
      env: 'ODLCOE_TUNNEL_IP',
      defaultText: "the node's InternalIP",
      doc: '`other_config:local_ip`, the VXLAN tunnel endpoint',
    }),
    timeoutSeconds: setting(number(z.number().int().min(1).max(120)), {
      default: 10,
      doc: '1..120: the deadline of one OVS operation (OVSDB transaction or ovs-vsctl call), including the wait for ovs-vswitchd to attach a port',
    }),
  },
  cni: {
    confDir: setting(absolutePath, {
      flag: '--cni-conf-dir <dir>',
      default: '/etc/cni/net.d',
      doc: 'where the conflist is written; absolute path',
    }),
    confFile: setting(
      fileName(/^[A-Za-z0-9][A-Za-z0-9_.-]*\.conflist$/, 'must be a file name ending in .conflist'),
      { default: '10-odlcoe.conflist', doc: 'file name ending in `.conflist`' },
    ),
    binDir: setting(absolutePath, {
      flag: '--cni-bin-dir <dir>',
      defaultText: 'not installed',
      doc: 'where the shim is installed (`odlcoe`, `odlcoe-shim.mjs`, mode 0755), and `loopback` from the directory of `ipam.pluginPath` unless one is there ([agent.md](agent.md#files-written))',
    }),
    networkName: setting(fileName(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/), {
      default: 'odlcoe',
      doc: "conflist `name`; host-local's lease directory name",
    }),
    cniVersion: setting(oneOf(['0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const), {
      flag: '--cni-version <version>',
      default: '1.0.0',
      doc: 'cniVersion of the written conflist: `0.3.1`, `0.4.0`, `1.0.0`, `1.1.0` (1.0.0 because containerd 1.6 refuses 1.1.0; [compatibility.md](compatibility.md#cni-and-container-runtimes))',
    }),
    socket: setting(absolutePath, {
      flag: '--socket <path>',
      default: '/run/odlcoe/cni.sock',
      doc: "the agent's CNI server unix socket (mode 0600)",
    }),
    mtu: setting(number(z.number().int().min(576).max(9216)), {
      flag: '--mtu <bytes>',
      default: 1450,
      doc: 'pod interface MTU, 576..9216 (1450: VXLAN under a 1500-byte underlay)',
    }),
    logFile: setting(absolutePath, {
      flag: '--cni-log-file <file>',
      defaultText: "the shim's stderr",
      doc: "absolute path; the shim's JSON log",
    }),
    pendingDelDir: setting(absolutePath, {
      default: '/var/lib/odlcoe/pending-del',
      doc: 'where the shim spools DELs while the agent is away',
    }),
    requestTimeoutSeconds: setting(number(z.number().int().min(5).max(110)), {
      default: 90,
      doc: "5..110: deadline of one CNI request (kubelet's CRI timeout is 2 min)",
    }),
  },
  ipam: {
    dataDir: setting(absolutePath, {
      flag: '--ipam-data-dir <dir>',
      default: '/var/lib/cni/networks',
      doc: 'host-local leases: `<dataDir>/<networkName>/<ip>`',
    }),
    pluginPath: setting(absolutePath, {
      default: '/usr/lib/cni/host-local',
      doc: "host-local binary (Debian's path; the image has it); its directory is where `loopback` is taken from",
    }),
  },
  services: {
    cidrs: setting(list(networkCidr), {
      flag: '--service-cidrs <cidrs>',
      env: 'ODLCOE_SERVICE_CIDRS',
      default: [],
      defaultText: '`[]` = no node gateway',
      doc: "the Service ranges, the watcher's `services.cidrs`. Non-empty: the node gateway (an OVS internal port with the node subnet's second address, [agent.md](agent.md#the-node-gateway)) is made and these ranges are routed through it; host-local starts at the third address. Empty: an existing node gateway port is removed",
    }),
    clusterCidrs: setting(list(networkCidr), {
      flag: '--cluster-cidrs <cidrs>',
      env: 'ODLCOE_CLUSTER_CIDRS',
      default: [],
      defaultText: "`[]` = the node's own subnet only",
      doc: "with `services.cidrs`: the ranges every node's pod subnet lies in (kube-controller-manager's `--cluster-cidr`, the watcher's `subnets.clusterCidr`), routed through the node gateway so the node reaches pods on other nodes",
    }),
  },
  metrics: {
    host: setting(text(), { default: '0.0.0.0', doc: 'ops server address' }),
    port: setting(number(z.number().int().min(0).max(65535)), {
      flag: '--metrics-port <port>',
      env: 'ODLCOE_METRICS_PORT',
      default: 9102,
      doc: 'ops server port (`/metrics`, `/healthz`, `/readyz`); 0..65535, 0 picks a free port',
    }),
  },
  health: {
    failAfterSeconds: setting(number(z.number().int().min(1).max(3600)), {
      flag: '--health-fail-after <seconds>',
      env: 'ODLCOE_HEALTH_FAIL_AFTER',
      default: 60,
      doc: '`/healthz` fails (so that kubelet restarts the agent) once the OVS connection or a background task (node set-up, subnet, reconcile) has been down this long; 1..3600',
    }),
  },
};

export const AGENT_SCHEME = new SettingsScheme(AGENT_SETTINGS, {
  title: 'agent configuration',
  configFile: { flag: '--config <file>', doc: 'YAML/JSON file with the keys below; unknown keys are errors' },
});

/** The configuration file's schema (every key optional; unknown keys are errors). */
export const agentConfigSchema = AGENT_SCHEME.fileSchema;

export type AgentConfig = ValuesOf<typeof AGENT_SETTINGS>;

/**
 * Merges the layers and validates the result; throws a ConfigError naming every bad value.
 * `flags` holds commander's parsed options (only the ones given on the command line).
 */
export function buildAgentConfig(layers: SettingsSources): AgentConfig {
  return AGENT_SCHEME.load({ env: {}, ...layers }, (v, c) => {
    const s = AGENT_SETTINGS;
    if (v.backend === 'coe-northbound' && v.clusterName === undefined)
      c.problem(`${c.label(s.clusterName)} is required with ${c.label(s.backend)} coe-northbound`);
    if (v.clusterName !== undefined) c.check(s.clusterName, () => checkClusterName(v.clusterName ?? ''));
  });
}

/** How the agent names the interfaces ODL binds its ports by (the `iface-id`s), from its settings. */
export function ifaceNamingOf(config: Pick<AgentConfig, 'backend' | 'clusterName'>): IfaceNaming {
  return config.backend === 'coe-northbound'
    ? { backend: 'coe-northbound', clusterName: config.clusterName ?? '' }
    : { backend: 'netvirt' };
}
