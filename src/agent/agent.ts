/**
 * The agent program's wiring: one object per node that owns the OVS connection, the pod
 * informer, the CNI server and the background tasks, and decides when ADD may be served. Why it
 * is built this way: DEL must work whatever else is down, so the CNI server starts first; ADD
 * waits until OVS is set up, ODL confirmed the node's subnet, the CNI config is written and
 * the start-up reconcile removed what pods deleted meanwhile left behind. The work itself
 * lives elsewhere: pod-attach.ts (ADD/DEL), reconcile.ts, node-setup.ts, node-subnet.ts, cni/.
 */
import { dirname, join } from 'node:path';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Backoff, sleep } from '../common/backoff.js';
import { Latch } from '../common/latch.js';
import { Liveness } from '../common/liveness.js';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import type { Registry } from '../common/metrics.js';
import { startOpsServer, type OpsServer } from '../common/ops-server.js';
import { supervise } from '../common/supervise.js';
import { KubeEventRecorder } from '../k8s/event-recorder.js';
import { Informer } from '../k8s/informer.js';
import { KubeClient } from '../k8s/kube-client.js';
import { kubeletPodUid } from '../k8s/pod-uid.js';
import { nodeInternalIp } from '../netvirt/kube.js';
import { nodeNetworkName } from '../netvirt/node-network.js';
import { OdlModelsError, optionalModels, readModels, type OdlModels } from '../odl/models.js';
import { Ovs } from '../ovs/ovs.js';
import type { RestconfAuth } from '../restconf/auth.js';
import { RestconfClient } from '../restconf/client.js';
import { AttachmentRecordWaiter } from './attachment-record.js';
import { OdlOperWait, restconfOperStatus } from './odl-oper-wait.js';
import { PodChecksumOffload } from './checksum-offload.js';
import { CniBinDir, SHIM_SOURCE } from './cni/bin-dir.js';
import { ipamRange, readConflistSubnet, renderConflist, writeFileAtomic } from './cni/conflist.js';
import { CNI_ERROR, CniError } from './cni/error.js';
import { replayPendingDels } from './cni/pending-del.js';
import { startCniServer, type CniServer } from './cni/server.js';
import { CniService } from './cni/service.js';
import { restconfClientOptions } from '../restconf/settings.js';
import { ifaceNamingOf, type AgentConfig } from './config.js';
import { HostLocalIpam, HostLocalLeaseStore } from './ipam.js';
import { KeyedLock } from './keyed-lock.js';
import { AgentMetrics } from './metrics.js';
import { setupNodeOvs } from './node-setup.js';
import { NodeGateway } from './node-gateway.js';
import { fetchNodeSubnet, type FoundNodeSubnet } from './node-subnet.js';
import { PodAttacher, type IpamState } from './pod-attach.js';
import { parsePodSubnet, podRoutes, type PodSubnet } from './pod-subnet.js';
import { reconcileNodeAttachments } from './reconcile.js';

export interface AgentDeps {
  kubeConfig: KubeConfig;
  /** The compiled shim `cni.binDir` gets; default dist/cni/odlcoe.js of this build. */
  shimSource?: string;
  odlAuth?: RestconfAuth;
  registry: Registry;
  logger: Logger;
  /**
   * ODL is not what the agent can work with (a told profile ODL contradicts, no NetVirt): main
   * exits. Absent: the agent stays not ready and says why.
   */
  onFatal?: (err: Error) => void;
}

/** The Events the agent records (an extra interface refused) name it as their source. */
export const AGENT_EVENT_COMPONENT = 'odlcoe-agent';

/** How often DELs the shim queued while the agent was away are retried. */
const PENDING_DEL_INTERVAL_MS = 30_000;
const RETRY = { initialMs: 500, maxMs: 30_000 } as const;

/**
 * The node IP the agent matches its k8s-node entry by. It must be the very address the watcher
 * writes into `internal-ip-address` (and names ELANs after), so both use the one rule in
 * src/netvirt/kube.ts: an InternalIP, IPv4 first. Re-exported for the cross-component tests.
 */
export { nodeInternalIp };

/**
 * odlcoe-agent: one per node. Serves CNI from the start (DEL must work whatever else is
 * down), and in the background: finds its node's IP, prepares OVS, learns the pod subnet from
 * ODL and writes the CNI config, and, once the pod informer has synced, removes what belongs
 * to pods that disappeared while it was away. ADD is answered only when all of that is done.
 */
export class Agent {
  private readonly logger: Logger;
  private readonly metrics: AgentMetrics;
  private readonly ovs: Ovs;
  private readonly lock = new KeyedLock();
  private readonly restconf: RestconfClient;
  private readonly kube: KubeClient;
  private readonly informer: Informer<V1Pod>;
  /** Warning Events on pods whose extra interface could not be attached. */
  private readonly events: KubeEventRecorder;
  private readonly attacher: PodAttacher;
  private readonly checksumOffload: PodChecksumOffload;
  /** With Services on: the node's OVS internal port into the pod network (node-gateway.ts). */
  private readonly gateway: NodeGateway;
  private readonly service: CniService;
  /** What the agent installs into `cni.binDir`, when it is set. */
  private readonly binDir: CniBinDir | undefined;
  private readonly abort = new AbortController();
  private readonly tasks: Promise<void>[] = [];
  private cniServer: CniServer | undefined;
  private opsServer: OpsServer | undefined;
  private readonly registry: Registry;
  private ipam: IpamState | undefined;
  private state = { ovsReady: false, subnetConfirmed: false, configWritten: false, reconciled: false };
  /** Background tasks and the OVS connection report here; `/healthz` fails when one stays down. */
  private readonly liveness: Liveness;
  private readonly nodeIp = new Latch<string>();
  private readonly ovsSetUp = new Latch();
  private readonly subnetKnown = new Latch();
  /** What ODL has (its module list, read once before the subnet). */
  private models: OdlModels | undefined;
  /** Why the agent cannot work with this ODL at all. */
  private fatal: string | undefined;
  private readonly onFatal: ((err: Error) => void) | undefined;

  constructor(
    readonly config: AgentConfig,
    deps: AgentDeps,
  ) {
    this.logger = deps.logger;
    this.registry = deps.registry;
    this.onFatal = deps.onFatal;
    this.metrics = new AgentMetrics(deps.registry);
    this.ovs = new Ovs({
      ...(config.ovs.dbSocket ? { dbSocket: config.ovs.dbSocket } : {}),
      timeoutSeconds: config.ovs.timeoutSeconds,
      logger: this.logger,
    });
    this.liveness = new Liveness(config.health.failAfterSeconds * 1000);
    this.restconf = new RestconfClient(
      restconfClientOptions(config.odl, {
        ...(deps.odlAuth ? { auth: deps.odlAuth } : {}),
        // The subnet loop has its own backoff; a few quick retries ride out a blip.
        retry: { maxAttempts: 3 },
        logger: this.logger,
      }),
    );
    this.kube = new KubeClient(deps.kubeConfig);
    this.informer = new Informer<V1Pod>({
      name: 'pods',
      kubeConfig: deps.kubeConfig,
      path: '/api/v1/pods',
      fieldSelector: `spec.nodeName=${config.nodeName}`,
      registry: deps.registry,
      logger: this.logger,
    });
    this.checksumOffload = new PodChecksumOffload({
      ovs: this.ovs,
      bridge: config.ovs.bridge,
      logger: this.logger,
    });
    this.gateway = new NodeGateway({
      ovs: this.ovs,
      bridge: config.ovs.bridge,
      nodeName: config.nodeName,
      mtu: config.cni.mtu,
      serviceCidrs: config.services.cidrs,
      clusterCidrs: config.services.clusterCidrs,
      naming: ifaceNamingOf(config),
      offload: this.checksumOffload,
      leaseDir: join(config.ipam.dataDir, config.cni.networkName),
      metrics: this.metrics,
      logger: this.logger,
    });
    this.events = new KubeEventRecorder(deps.kubeConfig, this.logger, config.nodeName, AGENT_EVENT_COMPONENT);
    this.attacher = new PodAttacher({
      records: new AttachmentRecordWaiter(
        {
          get: (key) => this.informer.get(key),
          onChange: (fn) => {
            this.informer.on('add', fn).on('update', fn);
            return () => this.informer.off('add', fn).off('update', fn);
          },
        },
        config.cni.attachmentWaitSeconds * 1000,
      ),
      events: this.events,
      checksumOffload: this.checksumOffload,
      naming: ifaceNamingOf(config),
      operWait: new OdlOperWait({
        mode: config.odl.operWait,
        timeoutMs: config.odl.operWaitTimeoutSeconds * 1000,
        read: restconfOperStatus(this.restconf),
        logger: this.logger,
      }),
      ovs: this.ovs,
      bridge: config.ovs.bridge,
      mtu: config.cni.mtu,
      ipamState: () => this.ipam,
      leaseStore: new HostLocalLeaseStore({
        pluginPath: config.ipam.pluginPath,
        dataDir: config.ipam.dataDir,
        networkName: config.cni.networkName,
      }),
      pods: {
        hasSynced: () => this.informer.hasSynced(),
        uidOf: (ns, name) => {
          const pod = this.informer.get(`${ns}/${name}`);
          return pod ? kubeletPodUid(pod) : undefined;
        },
      },
      metrics: this.metrics,
      logger: this.logger,
    });
    this.binDir = config.cni.binDir
      ? new CniBinDir({
          dir: config.cni.binDir,
          shimSource: deps.shimSource ?? SHIM_SOURCE,
          pluginDir: dirname(config.ipam.pluginPath),
          logger: this.logger,
        })
      : undefined;
    this.service = new CniService({
      attacher: this.attacher,
      lock: this.lock,
      metrics: this.metrics,
      logger: this.logger,
      requestTimeoutMs: config.cni.requestTimeoutSeconds * 1000,
      addReadiness: () => this.notReadyReason(),
      status: () => this.status(),
    });
  }

  get confPath(): string {
    return join(this.config.cni.confDir, this.config.cni.confFile);
  }

  /** Why ADD cannot be served now, or undefined. */
  notReadyReason(): string | undefined {
    if (this.fatal) return this.fatal;
    if (!this.state.ovsReady) return 'Open vSwitch is not set up yet';
    const offload = this.checksumOffload.notReadyReason();
    if (offload) return offload;
    if (!this.state.subnetConfirmed)
      return `the pod subnet of node ${this.config.nodeName} is not known in ODL yet`;
    if (!this.state.configWritten) return 'the CNI config is not written yet';
    if (!this.state.reconciled)
      return 'the start-up reconcile has not finished (waiting for the pod informer)';
    return undefined;
  }

  /** CNI STATUS: 51 when OVS is unreachable (existing pods are affected too), 50 otherwise. */
  private async status(): Promise<void> {
    try {
      await this.ovs.ping();
    } catch (err) {
      throw new CniError(
        CNI_ERROR.pluginNotAvailableExistingDegraded,
        `Open vSwitch is unreachable: ${errorMessage(err)}`,
      );
    }
    const reason = this.notReadyReason();
    if (reason) throw new CniError(CNI_ERROR.pluginNotAvailable, reason);
    const free = await this.ipam?.ipam.available();
    if (free === 0)
      throw new CniError(
        CNI_ERROR.pluginNotAvailable,
        `pod subnet ${this.ipam?.subnet.cidr} has no free address`,
      );
  }

  /** Starts serving; the node set-up continues in the background (see `/readyz`). */
  async start(): Promise<void> {
    const last = await readConflistSubnet(this.confPath);
    if (last) {
      try {
        this.useSubnet(parsePodSubnet(last, this.gateway.enabled));
        this.logger.info('using the pod subnet of the existing CNI config until ODL confirms it', {
          subnet: last,
        });
      } catch (err) {
        this.logger.warn('existing CNI config has an unusable subnet; ignoring it', {
          subnet: last,
          error: errorMessage(err),
        });
      }
    }
    this.cniServer = await startCniServer({
      socketPath: this.config.cni.socket,
      handle: (env, stdin) => this.service.handle(env, stdin),
      logger: this.logger,
    });
    this.opsServer = await startOpsServer({
      host: this.config.metrics.host,
      port: this.config.metrics.port,
      registry: this.registry,
      readiness: [
        { name: 'ovs', check: async () => this.state.ovsReady && (await this.ovs.ping().then(() => true)) },
        { name: 'subnet', check: () => this.state.subnetConfirmed },
        { name: 'cni-config', check: () => this.state.configWritten },
        { name: 'reconciled', check: () => this.state.reconciled },
        { name: 'checksum-offload', check: () => this.checksumOffload.ready() },
        { name: 'cni-loopback', check: () => this.binDir?.ready() ?? true },
        { name: 'node-gateway', check: () => this.gateway.ready() },
      ],
      liveness: () => this.liveness.report(),
      logger: this.logger,
    });
    await this.binDir?.install();
    this.informer.start();
    const options = { signal: this.abort.signal, logger: this.logger, liveness: this.liveness };
    this.tasks.push(
      supervise('ovs', (signal) => this.ovsProbe(signal), options),
      supervise('node', (signal, up) => this.nodeTask(signal, up), options),
      supervise('subnet', (signal, up) => this.subnetTask(signal, up), options),
      supervise('reconcile', (signal, up) => this.reconcileTask(signal, up), options),
    );
  }

  /** The ops server's port (for tests that pass port 0). */
  get metricsPort(): number | undefined {
    return this.opsServer?.port;
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error('agent stopping'));
    await Promise.allSettled(this.tasks);
    await this.informer.stop();
    await this.cniServer?.close();
    await this.events.flush();
    await this.opsServer?.close();
    this.restconf.close();
    this.ovs.close();
  }

  /** Retries `fn` with backoff until it succeeds or the agent stops. */
  private async retry<T>(what: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const backoff = new Backoff(RETRY);
    for (;;) {
      signal.throwIfAborted();
      try {
        return await fn();
      } catch (err) {
        // ODL is not what the agent can work with: retrying cannot change that.
        if (signal.aborted || err instanceof OdlModelsError) throw err;
        const delay = backoff.next();
        this.logger.warn(`${what} failed; retrying`, {
          error: errorMessage(err),
          retryInMs: delay,
          attempt: backoff.attempts,
        });
        await sleep(delay, signal);
      }
    }
  }

  /**
   * Watches the OVSDB connection: the `ovs` part is down while ovsdb-server cannot be reached
   * (each ping also reconnects the client after a restart of ovsdb-server).
   */
  private async ovsProbe(signal: AbortSignal): Promise<void> {
    const everyMs = Math.min(5_000, Math.max(250, (this.config.health.failAfterSeconds * 1000) / 4));
    let reachable: boolean | undefined;
    for (;;) {
      try {
        await this.ovs.ping();
        if (reachable === false) this.logger.info('Open vSwitch is reachable again');
        reachable = true;
        this.liveness.up('ovs');
      } catch (err) {
        signal.throwIfAborted();
        if (reachable !== false)
          this.logger.error('Open vSwitch is unreachable', { error: errorMessage(err) });
        reachable = false;
        this.liveness.down('ovs', err);
      }
      await sleep(everyMs, signal);
    }
  }

  /** Finds this node's IP, sets up OVS, then re-applies the set-up (an OVS restarted with a fresh database). */
  private async nodeTask(signal: AbortSignal, up: () => void): Promise<void> {
    const nodeIp = await this.retry('reading this node from the Kubernetes API', signal, async () => {
      const node = await this.kube.request<V1Node>(
        'GET',
        `/api/v1/nodes/${encodeURIComponent(this.config.nodeName)}`,
        { signal },
      );
      const ip = nodeInternalIp(node);
      if (!ip) throw new Error(`node ${this.config.nodeName} has no InternalIP address yet`);
      return ip;
    });
    if (!this.nodeIp.isOpen) this.logger.info('found this node', { node: this.config.nodeName, ip: nodeIp });
    this.nodeIp.open(nodeIp);
    const ovsSettings = {
      bridge: this.config.ovs.bridge,
      managers: this.config.ovs.managers,
      controllers: this.config.ovs.controllers,
      tunnelIp: this.config.ovs.tunnelIp ?? nodeIp,
      ...(this.config.ovs.datapathType ? { datapathType: this.config.ovs.datapathType } : {}),
      ...(this.config.ovs.failMode ? { failMode: this.config.ovs.failMode } : {}),
    };
    await this.retry('setting up Open vSwitch', signal, () =>
      this.metrics.count(this.metrics.ovsErrors, 'node_setup', async () => {
        await setupNodeOvs(this.ovs, ovsSettings);
        await this.checksumOffload.refresh();
      }),
    );
    if (!this.state.ovsReady)
      this.logger.info('Open vSwitch ready', { bridge: ovsSettings.bridge, tunnelIp: ovsSettings.tunnelIp });
    this.state.ovsReady = true;
    this.ovsSetUp.open();
    // Services off: an earlier configuration's gateway port goes (no subnet needed for that).
    if (!this.gateway.enabled) await this.syncGateway();
    up();
    for (;;) {
      await sleep(this.config.odl.subnetRefreshSeconds * 1000, signal);
      // An unreachable OVS is the `ovs` part's business; this only repairs what is reachable.
      const repaired = await setupNodeOvs(this.ovs, ovsSettings)
        .then(() => this.checksumOffload.refresh())
        .then(
          () => true,
          (err: unknown) => {
            this.metrics.ovsErrors.inc({ operation: 'node_setup' });
            this.logger.error('re-applying the Open vSwitch set-up failed', { error: errorMessage(err) });
            return false;
          },
        );
      // The gateway port deleted by hand, or re-created by a restarted ovs-vswitchd without its
      // address and routes.
      if (repaired && (this.state.subnetConfirmed || !this.gateway.enabled)) await this.syncGateway();
      up();
    }
  }

  /**
   * ODL's release and models, from its module list (retried until ODL answers); undefined when
   * the agent cannot work with this ODL (a told profile ODL contradicts, no NetVirt): retrying
   * cannot change that, so main exits (in-process the agent stays not ready with the reason).
   */
  private async detectModels(signal: AbortSignal): Promise<OdlModels | undefined> {
    try {
      const models = await this.retry('reading ODL’s module list', signal, () =>
        readModels(this.restconf, this.config.odl.profile, this.config.odl.url, { signal }),
      );
      this.logger.info('ODL models', {
        profile: models.profile,
        detected: models.source === 'odl',
        optional: optionalModels(models),
      });
      return models;
    } catch (err) {
      if (!(err instanceof OdlModelsError)) throw err;
      this.fatal = err.message;
      this.logger.error('cannot work with this ODL', { error: err.message });
      this.onFatal?.(err);
      return undefined;
    }
  }

  /**
   * Reads ODL's models, then waits (with backoff, reporting not ready) until ODL has a subnet
   * for this node, writes the CNI config, then reads the subnet again and keeps the config
   * written (a conflist deleted by hand). ODL being unreachable is only retried; failing to
   * write the config fails the task.
   */
  private async subnetTask(signal: AbortSignal, up: () => void): Promise<void> {
    const nodeIp = await this.nodeIp.wait(signal);
    const models = (this.models ??= await this.detectModels(signal));
    if (!models) return;
    const subnet = await this.retry('reading the node pod subnet from ODL', signal, async () => {
      const found = await this.readSubnet(nodeIp, models);
      if (!found)
        throw new Error(
          `ODL has no network ${nodeNetworkName(this.config.nodeName)} with an allocation-pool${models.coe ? ` and no k8s-nodes entry with internal-ip-address ${nodeIp} and a pod-cidr` : ''} yet`,
        );
      this.logger.debug('node pod subnet read', { from: found.from, subnet: found.podCidr });
      return parsePodSubnet(found.podCidr, this.gateway.enabled);
    });
    this.adoptSubnet(subnet);
    await this.writeConfig();
    await this.ovsSetUp.wait(signal);
    await this.syncGateway();
    up();
    for (;;) {
      await sleep(this.config.odl.subnetRefreshSeconds * 1000, signal);
      const fresh = await this.readSubnet(nodeIp, models).catch((err: unknown) => {
        this.logger.warn('re-reading the pod subnet failed', { error: errorMessage(err) });
        return undefined;
      });
      if (fresh) this.adoptSubnet(parsePodSubnet(fresh.podCidr, this.gateway.enabled));
      await this.writeConfig();
      up();
    }
  }

  /** This node's subnet in ODL: its network, else its k8s-node entry where ODL has the COE models. */
  private async readSubnet(nodeIp: string, models: OdlModels): Promise<FoundNodeSubnet | undefined> {
    const found = await fetchNodeSubnet(
      this.restconf,
      { name: this.config.nodeName, ip: nodeIp },
      { k8sNodes: models.coe },
    );
    if (found?.gateway !== undefined) {
      const expected = parsePodSubnet(found.podCidr).gateway;
      if (found.gateway !== expected)
        this.logger.warn('the node network names another gateway; pods use the first address', {
          network: found.from,
          gateway: found.gateway,
          used: expected,
        });
    }
    return found;
  }

  /**
   * A node's subnet never changes under running pods: a different one from ODL while leases
   * exist is reported and ignored; with no lease it is taken.
   */
  private adoptSubnet(subnet: PodSubnet): void {
    const current = this.ipam?.subnet;
    if (current && current.cidr !== subnet.cidr) {
      this.logger.error('ODL now has a different pod subnet for this node; keeping the one pods use', {
        current: current.cidr,
        odl: subnet.cidr,
      });
      if (this.state.subnetConfirmed) return;
      // Not yet confirmed: the old value came from the conflist on disk; ODL is the authority.
      this.logger.warn('replacing the subnet of the old CNI config with the one ODL holds', {
        old: current.cidr,
        subnet: subnet.cidr,
      });
    }
    if (!current || current.cidr !== subnet.cidr) this.useSubnet(subnet);
    if (!this.state.subnetConfirmed)
      this.logger.info('pod subnet known', { subnet: subnet.cidr, gateway: subnet.gateway });
    this.state.subnetConfirmed = true;
  }

  /** The node gateway for the subnet ODL confirmed (node-gateway.ts; never throws). */
  private syncGateway(): Promise<void> {
    return this.gateway.sync(this.state.subnetConfirmed ? this.ipam?.subnet.cidr : undefined);
  }

  /** The routes of this node's pods: one rule for the conflist and the IPAM the agent runs. */
  private podRoutes(subnet: PodSubnet): { dst: string }[] {
    return podRoutes(subnet, this.config.services.clusterCidrs, this.config.services.cidrs);
  }

  private useSubnet(subnet: PodSubnet): void {
    this.ipam = {
      subnet,
      ipam: new HostLocalIpam({
        pluginPath: this.config.ipam.pluginPath,
        dataDir: this.config.ipam.dataDir,
        networkName: this.config.cni.networkName,
        range: ipamRange(subnet),
        routes: this.podRoutes(subnet),
      }),
    };
    this.subnetKnown.open();
  }

  private async writeConfig(): Promise<void> {
    if (!this.ipam) return;
    const content = renderConflist({
      cniVersion: this.config.cni.cniVersion,
      networkName: this.config.cni.networkName,
      socketPath: this.config.cni.socket,
      mtu: this.config.cni.mtu,
      subnet: this.ipam.subnet,
      routes: this.podRoutes(this.ipam.subnet),
      ipamDataDir: this.config.ipam.dataDir,
      pendingDelDir: this.config.cni.pendingDelDir,
      ...(this.config.cni.logFile ? { logFile: this.config.cni.logFile } : {}),
    });
    if (await writeFileAtomic(this.confPath, content))
      this.logger.info('wrote CNI config', { path: this.confPath });
    this.state.configWritten = true;
  }

  private async reconcileTask(signal: AbortSignal, up: () => void): Promise<void> {
    await this.informer.waitForSync(signal);
    await this.ovsSetUp.wait(signal);
    const reconcile = async () => {
      const result = await this.retry('start-up reconcile', signal, async () => {
        const r = await reconcileNodeAttachments({
          ovs: this.ovs,
          bridge: this.config.ovs.bridge,
          attacher: this.attacher,
          ipamState: () => this.ipam,
          pods: this.informer.list(),
          metrics: this.metrics,
          logger: this.logger,
        });
        if (r.failures > 0) throw new Error(`${r.failures} stale attachment(s) could not be removed`);
        return r;
      });
      this.logger.info('start-up reconcile done', {
        removedPorts: result.ports,
        releasedLeases: result.leases,
        leasesChecked: result.leasesChecked,
      });
      return result;
    };
    const first = await reconcile();
    // DELs the shim queued while the agent was away run before ADDs are served, so that the
    // addresses they free are available again.
    const replay = () =>
      replayPendingDels(
        this.config.cni.pendingDelDir,
        (env, stdin) => this.service.handle(env, stdin),
        this.logger,
      ).catch((err: unknown) =>
        this.logger.warn('replaying pending DELs failed', { error: errorMessage(err) }),
      );
    await replay();
    if (!first.leasesChecked) {
      // No subnet yet, so the leases of pods deleted while the agent was away were not looked
      // at. Once ODL (or a rewritten conflist) gives one, reconcile again, still before any ADD
      // is served (ADD waits for `reconciled`): no ADD is then in flight whose fresh lease,
      // not yet on a port nor in the pod's status, would look stale.
      await this.subnetKnown.wait(signal);
      await reconcile();
    }
    this.state.reconciled = true;
    up();
    for (;;) {
      await sleep(PENDING_DEL_INTERVAL_MS, signal);
      await replay();
      up();
    }
  }
}
