/**
 * The agent's Prometheus metrics: request latency per CNI command and result, the duration of
 * each step of ADD and DEL (so a slow pod start points at IPAM, `ip`, OVSDB or ovs-vswitchd),
 * and errors per OVS and IPAM operation.
 */
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, LATENCY_BUCKETS, metric, type Registry } from '../common/metrics.js';

/**
 * The steps of a CNI request, as `step` label values of
 * `odlcoe_agent_cni_step_duration_seconds`.
 *
 * ADD: `replaced_check` (ports an older pod of the same name left), then `ipam` (host-local
 * ADD) and `veth_create` (the pair, one `ip`) at the same time, the latter followed by
 * `checksum_offload` on a userspace datapath (one `nsenter ethtool`), `pod_config` (the pod end's
 * MAC, addresses, routes: one `nsenter ip -batch`), `ovs_add_port` (the OVSDB insert),
 * `ovs_attach` (until ovs-vswitchd reports the OpenFlow port or an error), with `odl.operWait`
 * on `odl_oper_wait` (until ODL reports the pod's interface oper-status up, or the timeout),
 * and `rollback` when it failed. An extra interface's ADD (a Multus attachment) starts with
 * `attachment_wait` (until the watcher's allocation is in the pod annotation) and has neither
 * `ipam` nor `odl_oper_wait`.
 *
 * DEL: `ovs_del_port` (ownership check and removal in one transaction), then `veth_delete`
 * and `ipam` (host-local DEL) at the same time.
 *
 * `lock_wait`: the time a request waited for its sandbox's lock, for the holder of the lock
 * to record.
 */
export type CniStep =
  | 'lock_wait'
  | 'attachment_wait'
  | 'replaced_check'
  | 'ipam'
  | 'veth_create'
  | 'checksum_offload'
  | 'pod_config'
  | 'ovs_add_port'
  | 'ovs_attach'
  | 'odl_oper_wait'
  | 'rollback'
  | 'ovs_del_port'
  | 'veth_delete';

/** Steps take from well under a millisecond (an OVSDB round trip) to seconds (a wedged daemon). */
const STEP_BUCKETS = [0.00025, 0.0005, ...LATENCY_BUCKETS.filter((b) => b <= 10)];

/**
 * The durations of one request's steps: each is observed in the step histogram as it ends,
 * and kept (in milliseconds) for the request's debug log line.
 */
export class StepTimer {
  readonly steps: Partial<Record<CniStep, number>> = {};

  constructor(
    private readonly histogram: Histogram<'command' | 'step'>,
    private readonly command: string,
  ) {}

  /** Runs `op` as `step`, recording its duration whether it succeeds or fails. */
  async time<T>(step: CniStep, op: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await op();
    } finally {
      this.record(step, performance.now() - start);
    }
  }

  /** Records a step measured elsewhere (e.g. a lock wait), in milliseconds. */
  record(step: CniStep, ms: number): void {
    this.histogram.observe({ command: this.command, step }, ms / 1000);
    this.steps[step] = Math.round(((this.steps[step] ?? 0) + ms) * 100) / 100;
  }
}

/** The agent's own metrics (the CNI server, OVS and IPAM adapters' failures, reconcile). */
export class AgentMetrics {
  readonly cniDuration: Histogram<'command' | 'result'>;
  readonly cniStepDuration: Histogram<'command' | 'step'>;
  readonly ovsErrors: Counter<'operation'>;
  readonly ipamErrors: Counter<'operation'>;
  readonly reconcileRemoved: Counter<'kind'>;
  readonly extraInterfaceRefusals: Counter<'reason'>;
  readonly gatewayUp: Gauge;
  readonly gatewayRepairs: Counter<'what'>;

  constructor(registry: Registry) {
    this.cniDuration = metric(
      registry,
      'odlcoe_agent_cni_request_duration_seconds',
      () =>
        new Histogram({
          name: 'odlcoe_agent_cni_request_duration_seconds',
          help: 'CNI requests served by the agent, by command and result (ok or the CNI error code)',
          labelNames: ['command', 'result'] as const,
          buckets: LATENCY_BUCKETS,
          registers: [],
        }),
    );
    this.cniStepDuration = metric(
      registry,
      'odlcoe_agent_cni_step_duration_seconds',
      () =>
        new Histogram({
          name: 'odlcoe_agent_cni_step_duration_seconds',
          help: 'Steps of CNI ADD and DEL requests in the agent, by command and step',
          labelNames: ['command', 'step'] as const,
          buckets: STEP_BUCKETS,
          registers: [],
        }),
    );
    this.ovsErrors = metric(
      registry,
      'odlcoe_agent_ovs_errors_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_ovs_errors_total',
          help: 'Failed Open vSwitch operations, by operation',
          labelNames: ['operation'] as const,
          registers: [],
        }),
    );
    this.ipamErrors = metric(
      registry,
      'odlcoe_agent_ipam_errors_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_ipam_errors_total',
          help: 'Failed host-local IPAM operations, by operation',
          labelNames: ['operation'] as const,
          registers: [],
        }),
    );
    this.reconcileRemoved = metric(
      registry,
      'odlcoe_agent_reconcile_removed_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_reconcile_removed_total',
          help: 'Stale attachments removed by reconcile and GC, by kind (port, lease)',
          labelNames: ['kind'] as const,
          registers: [],
        }),
    );
    this.extraInterfaceRefusals = metric(
      registry,
      'odlcoe_agent_extra_interface_refusals_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_extra_interface_refusals_total',
          help: "Extra interfaces (Multus attachments) whose ADD failed before anything was made, by reason: the watcher's refusal (ip-taken, ip-outside-subnet, malformed-mac, unknown-network, ...), timeout (no allocation in time), unusable (a record the kernel would refuse)",
          labelNames: ['reason'] as const,
          registers: [],
        }),
    );
    this.gatewayUp = metric(
      registry,
      'odlcoe_agent_node_gateway_up',
      () =>
        new Gauge({
          name: 'odlcoe_agent_node_gateway_up',
          help: 'The node gateway (OVS port, address, routes) is complete: 1; missing or broken: 0; absent while Services are off',
          registers: [],
        }),
    );
    this.gatewayRepairs = metric(
      registry,
      'odlcoe_agent_node_gateway_repairs_total',
      () =>
        new Counter({
          name: 'odlcoe_agent_node_gateway_repairs_total',
          help: 'What the agent had to (re)make of the node gateway, by what (port, link, address, route, offload, removed)',
          labelNames: ['what'] as const,
          registers: [],
        }),
    );
  }

  /** A timer for the steps of one request of `command` (ADD, DEL). */
  stepTimer(command: string): StepTimer {
    return new StepTimer(this.cniStepDuration, command);
  }

  /** Runs `op`, counting a failure under `counter{operation}` before rethrowing it. */
  async count<T>(counter: Counter<'operation'>, operation: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      counter.inc({ operation });
      throw err;
    }
  }
}
